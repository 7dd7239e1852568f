"""Each wave's answer, from a run of a scenario with waves (docs/unfolding.md, "Waves").

The run's tally holds each wave's columns (``wave.<k>.winner``, ``.steps``,
``.casualties.<side>.<type>``, ``.left.<side>.<type>``; -1 in the battles the wave did
not fight): a wave's odds are counted over all the run's battles (P(wave 2 fights and
wins): the waves' add up to the whole battle's), its losses and what remains over the
battles it fought.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from ..scenario.waves import NOT_FOUGHT, WAVE_PREFIX, Waves
from .stats import Histogram, wilson

if TYPE_CHECKING:
    import pandas as pd

    from .result import Result

#: Winner codes and their JSON names (the whole battle's ``win`` keys).
OUTCOME_NAMES = ("attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew")
_COLUMN = re.compile(r"^wave\.(\d+)\.(.+)$")


def waves_of(result: Result) -> Waves | None:
    model = result.scenario.model
    return model if isinstance(model, Waves) else None


def _fought(h: Histogram) -> Histogram:
    keep = h.values != NOT_FOUGHT
    return Histogram(h.values[keep], h.counts[keep])


def _spread(h: Histogram) -> dict[str, float]:
    if h.n == 0:
        return {}
    mean = h.mean()
    half = 1.959963984540054 * h.std() / math.sqrt(h.n) if h.n > 1 else math.nan
    numbers = {
        "mean": mean,
        "low": mean - half,
        "high": mean + half,
        "q10": h.quantile(0.1),
        "q50": h.quantile(0.5),
        "q90": h.quantile(0.9),
    }
    return {k: float(v) for k, v in numbers.items() if not math.isnan(v)}


def _chance(successes: int, n: int) -> dict[str, float | None]:
    p, low, high = wilson(successes, n)
    return {"p": p if n else None, "low": low, "high": high}


def wave_summaries(result: Result) -> list[dict[str, Any]]:
    """Each wave's summary, wave 1 (the side's first army) first: ``fought`` (the chance
    it fights), ``win`` (the chance it fights and the battle ends so, each outcome),
    ``win_when_fought`` (the same among the battles it fought), and over those battles
    ``steps``, ``casualties`` and ``left`` (each side's men of each type after it, keyed
    ``"defender.spearman"``). Empty for a scenario without waves."""
    waves = waves_of(result)
    if waves is None:
        return []
    battles = result.tally.battles
    columns = result.tally.columns
    summaries = []
    for k in range(1, waves.count + 1):
        winner = columns.get(f"wave.{k}.winner", Histogram())
        counts = dict(zip(winner.values.tolist(), winner.counts.tolist(), strict=True))
        fought = battles - counts.get(NOT_FOUGHT, 0)
        per: dict[str, dict[str, Histogram]] = {"casualties": {}, "left": {}}
        for name, h in columns.items():
            match = _COLUMN.match(name)
            if match and int(match.group(1)) == k:
                what, _, key = match.group(2).partition(".")
                if what in per:
                    per[what][key] = _fought(h)
        summaries.append(
            {
                "wave": k,
                "side": waves.side,
                "fought": _chance(fought, battles),
                "win": {o: _chance(counts.get(c, 0), battles) for c, o in enumerate(OUTCOME_NAMES)},
                "win_when_fought": {
                    o: _chance(counts.get(c, 0), fought) for c, o in enumerate(OUTCOME_NAMES)
                },
                "steps": _spread(_fought(columns.get(f"wave.{k}.steps", Histogram()))),
                "casualties": {key: _spread(h) for key, h in per["casualties"].items()},
                "left": {key: _spread(h) for key, h in per["left"].items()},
            }
        )
    return summaries


def wave_rows(result: Result) -> pd.DataFrame:
    """One row per battle and wave that fought (tidy, with the seed): ``battle``,
    ``seed``, ``scenario``, ``wave``, ``winner``, ``steps``, then the wave's
    ``casualties.<side>.<type>`` and ``left.<side>.<type>`` (0 for a type it did not
    field). Needs the run's rows (``keep_battles``)."""
    import pandas as pd

    waves = waves_of(result)
    if waves is None:
        raise ValueError("the scenario has no waves ([[attacker.waves]])")
    if result.rows is None:
        raise ValueError("per-battle rows were not kept for this run (run with keep_battles=True)")
    battle = np.arange(result.first, result.first + len(result.rows["winner"]))
    frames = []
    for k in range(1, waves.count + 1):
        prefix = f"{WAVE_PREFIX}{k}."
        fought = result.rows[f"{prefix}winner"] != NOT_FOUGHT
        frame = {
            "battle": battle[fought],
            "seed": result.seed,
            "scenario": result.scenario.name,
            "wave": k,
        }
        for name, column in result.rows.items():
            if name.startswith(prefix):
                frame[name[len(prefix) :]] = column[fought]
        frames.append(pd.DataFrame(frame))
    tidy = pd.concat(frames, ignore_index=True).fillna(0)
    tidy = tidy.sort_values(["battle", "wave"], kind="stable", ignore_index=True)
    measured = [c for c in tidy.columns if c not in ("battle", "seed", "scenario", "wave")]
    return tidy.astype({c: np.int64 for c in measured})
