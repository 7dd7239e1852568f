"""What the page draws, as JSON: a result's numbers in the words the reports use.

The numbers are the result's own (:meth:`Result.summary_rows`: the same the text and
JSON reports print); the words are the reports' and plots' (``attacker wins``,
``Decided after (strikes)``, each column described by its ruleset). Curves are step
functions from the exact histograms of the tally, given at the values where they step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError
from ..report.tables import wave_table
from ..results.result import Result
from ..results.stats import OUTCOMES, Histogram, wilson
from ..results.steps import STATES
from ..rulesets import ExactResult
from ..rulesets.words import won
from ..running.unfolding import StepResult
from ..version import __version__

#: The state after a step in the words of the text report's table (``run --by-round``).
STATE_WORDS = {
    "attacker": "attacker won",
    "defender": "defender won",
    "draw": "drawn",
    "attacker_withdrew": "attacker withdrew",
    "defender_withdrew": "defender withdrew",
    "fighting": "still fighting",
}


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _survival(h: Histogram) -> dict[str, list[float]]:
    """``P(X > t)`` just after each value ``t`` the histogram holds (it steps there)."""
    values = np.asarray(h.values, dtype=np.int64)
    order = np.argsort(values)
    counts = np.asarray(h.counts, dtype=np.float64)[order]
    above = 1.0 - np.cumsum(counts) / max(h.n, 1)
    return {"t": values[order].tolist(), "p": np.clip(above, 0.0, 1.0).round(6).tolist()}


def _at_most(h: Histogram) -> dict[str, list[float]]:
    """``P(X <= v)`` at each value ``v`` the histogram holds."""
    values = np.asarray(h.values, dtype=np.int64)
    order = np.argsort(values)
    counts = np.asarray(h.counts, dtype=np.float64)[order]
    return {
        "lost": values[order].tolist(),
        "p": np.clip(np.cumsum(counts) / max(h.n, 1), 0.0, 1.0).round(6).tolist(),
    }


def _forces(result: Result) -> dict[str, int]:
    """Men of each type of each side at the start, by the casualty columns' names
    (``attacker.soldier``; empty where the ruleset cannot say)."""
    ruleset = rulesets.get(result.scenario.ruleset)
    try:
        forces = ruleset.forces(result.scenario.model)
    except BattleOddsError:
        return {}
    men: dict[str, int] = {}
    for side, kind, count in forces:
        men[f"{side}.{kind}"] = men.get(f"{side}.{kind}", 0) + int(count)
    return men


def payload(result: Result, running: bool, planned: int | None) -> dict[str, Any]:
    """The page's JSON of ``result`` (``running``: battles are still being added)."""
    ruleset = rulesets.get(result.scenario.ruleset)
    unit = ruleset.step_unit
    rows = result.summary_rows()
    win = [
        {
            "outcome": r.metric,
            "words": won(r.metric),
            "p": r.mean,
            "low": r.low,
            "high": r.high,
        }
        for r in rows
        if r.group == "win"
    ]
    steps = [
        {
            "outcome": r.metric,
            "words": "all" if r.metric == "all" else won(r.metric),
            "mean": _finite(r.mean),
            "q10": _finite(r.q10),
            "q50": _finite(r.q50),
            "q90": _finite(r.q90),
        }
        for r in rows
        if r.group == "steps"
    ]
    men = _forces(result)
    casualties = []
    for r in (r for r in rows if r.group == "casualties"):
        histogram = result.tally.columns[f"casualties.{r.metric}"]
        row: dict[str, Any] = {
            "metric": r.metric,
            "words": ruleset.describe_column(f"casualties.{r.metric}"),
            "mean": _finite(r.mean),
            "q10": _finite(r.q10),
            "q50": _finite(r.q50),
            "q90": _finite(r.q90),
        }
        if r.metric in men:
            row["start"] = men[r.metric]
            row["at_most"] = _at_most(histogram)
        casualties.append(row)
    extras = []
    for r in (r for r in rows if r.group == "extra"):
        flag = r.metric in result.flags
        extras.append(
            {
                "metric": r.metric,
                "words": ("P(" if flag else "")
                + ruleset.describe_column(r.metric)
                + (")" if flag else ""),
                "probability": flag,
                "mean": _finite(r.mean),
                "low": _finite(r.low) if flag else None,
                "high": _finite(r.high) if flag else None,
                "q10": None if flag else _finite(r.q10),
                "q50": None if flag else _finite(r.q50),
                "q90": None if flag else _finite(r.q90),
            }
        )
    survival = [
        {"words": f"{won(o)} ({h.n:,})", "outcome": o, **_survival(h)}
        for o, h in zip(OUTCOMES, result.tally.steps_by_outcome, strict=True)
        if h.n
    ]
    if result.tally.steps.n:
        survival.append(
            {
                "words": f"all battles ({result.tally.steps.n:,})",
                "outcome": "all",
                **_survival(result.tally.steps),
            }
        )
    notes = list(result.notes)
    if result.turn_limit_battles:
        notes.append(
            f"{result.turn_limit_battles:,} of {result.n:,} battles reached the turn limit "
            "undecided and count as draws"
        )
    precision = result.extra.get("precision")
    waves = wave_table(result)
    return {
        "running": running,
        "partial": result.partial,
        "battles": result.n,
        "planned": planned,
        "seconds": round(result.seconds, 3),
        "scenario": result.scenario.name,
        "ruleset": result.scenario.ruleset,
        "scenario_hash": result.scenario.hash,
        "seed": result.seed,
        "version": __version__,
        "kernel": result.kernel,
        "step_unit": unit,
        "titles": {
            "steps": f"Decided after ({ruleset.step_words()})",
            "survival": "Break timing",
            "survival_axis": "P(still undecided after t)",
            "casualties": "Casualties per type",
            "survivors": "P(at least k survive)",
            "extras": "Other outcomes",
        },
        "win": win,
        "steps": steps,
        "survival": survival,
        "casualties": casualties,
        "extras": extras,
        "notes": notes,
        "precision": str(precision) if precision is not None else None,
        # A scenario with waves ([[attacker.waves]]): the table run prints, cell by cell.
        "waves": None
        if waves is None
        else {"title": waves[0], "columns": waves[1], "rows": waves[2], "note": waves[3]},
    }


def _spread(h: Histogram) -> dict[str, float | None]:
    return {
        "mean": _finite(h.mean()),
        "q10": _finite(h.quantile(0.1)),
        "q50": _finite(h.quantile(0.5)),
        "q90": _finite(h.quantile(0.9)),
    }


def steps_payload(steps: StepResult, answered: int) -> dict[str, Any]:
    """The page's JSON of the battle as it unfolds (the step slider): for each step the
    state after it (each outcome decided by then, still fighting, with 95% intervals)
    and the men left of each side and type, in the words of ``run --by-round``'s table;
    ``answered``: the battles of the answer it unfolds (it may cover fewer)."""
    scenario = steps.scenario
    ruleset = rulesets.get(scenario.ruleset)
    # The outcomes as the text report shows them (the withdrawals where a side has a
    # stop rule), then still fighting.
    shown = [*steps.decided, STATES[-1]]
    brought = steps.tally.brought
    rows = []
    for step, counts in steps.tally.steps.items():
        n = counts.battles
        states = []
        for state in shown:
            p, low, high = wilson(int(counts.states[STATES.index(state)]), n)
            states.append(
                {"state": state, "words": STATE_WORDS[state], "p": p, "low": low, "high": high}
            )
        men = [
            {
                "key": side,
                "words": f"{side}'s men left",
                "start": sum(m for k, m in brought.items() if k.split(".", 1)[0] == side),
                **_spread(counts.men_left[side]),
            }
            for side in ("attacker", "defender")
        ]
        men += [
            {
                "key": key,
                "words": ruleset.describe_column(f"casualties.{key}").replace(" lost by ", " of "),
                "start": brought[key],
                **_spread(counts.men_left[key]),
            }
            for key in brought
        ]
        rows.append({"step": step, "battles": n, "states": states, "men_left": men})
    counted = steps.tally.battles
    notes = list(steps.notes)
    if steps.partial and not counted:
        notes.append("stopped before the state after each step was worked out")
    elif steps.partial:
        notes.append(f"stopped: the state after each step is that of the first {counted:,} battles")
    elif counted < answered:
        notes.append(
            f"the state after each step is that of the first {counted:,} of the "
            f"{answered:,} battles"
        )
    return {
        "title": "The battle as it unfolds",
        "unit": ruleset.step_unit,
        "step_words": ruleset.step_words(),
        "battles": counted,
        "partial": steps.partial,
        "seconds": round(steps.seconds, 3),
        "steps": rows,
        "notes": notes,
    }


def exact_payload(answer: ExactResult) -> dict[str, Any]:
    """The page's JSON of an exact answer, in the words of ``battle-odds exact``."""
    ruleset = rulesets.get(answer.scenario.ruleset)
    return {
        "states": answer.states,
        "seconds": round(answer.seconds, 3),
        "win": [{"outcome": o, "words": won(o), "p": p} for o, p in answer.win.items()],
        "expected": [
            {"words": f"{ruleset.step_unit} until decided", "value": answer.expected_steps},
            *(
                {"words": ruleset.describe_column(name), "value": v}
                for name, v in answer.casualties.items()
            ),
        ],
    }
