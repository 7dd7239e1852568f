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
from ..results.result import Result
from ..results.stats import OUTCOMES, Histogram
from ..rulesets import ExactResult
from ..rulesets.words import won
from ..version import __version__


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
        {"outcome": r.metric, "words": won(r.metric), "p": r.mean, "low": r.low, "high": r.high}
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
