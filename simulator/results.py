"""Results of a run: the merged statistics, optional per-battle rows, and the summary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import __version__
from .stats import OUTCOMES, Histogram, Tally, wilson

if TYPE_CHECKING:
    from .scenario import Scenario

QUANTILES = (0.1, 0.5, 0.9)


@dataclass
class Result:
    scenario: Scenario
    seed: int
    tally: Tally
    rows: dict[str, np.ndarray] | None = None
    kernel: str = ""
    notes: tuple[str, ...] = ()
    #: Extras that are yes/no (0/1) and are reported as probabilities.
    flags: frozenset[str] = frozenset()
    seconds: float = 0.0
    first: int = 0
    partial: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.tally.battles

    def win(self, outcome: str = "attacker") -> tuple[float, float, float]:
        """``(p, low, high)``: the estimate and its 95% Wilson interval."""
        return self.tally.win(outcome)

    @property
    def battles(self) -> pd.DataFrame:
        """One row per battle (Mesa style: with the seed and scenario, ready for pandas)."""
        if self.rows is None:
            raise ValueError("per-battle rows were not kept for this run "
                             "(run with keep_battles=True, or fewer battles)")
        frame = pd.DataFrame(self.rows)
        frame.insert(0, "battle", np.arange(self.first, self.first + len(frame)))
        frame.insert(1, "seed", self.seed)
        frame.insert(2, "scenario", self.scenario.name)
        frame["winner"] = pd.Categorical.from_codes(frame["winner"].to_numpy(), categories=list(OUTCOMES))
        return frame

    def summary(self) -> pd.DataFrame:
        """Tidy summary, one row per reported number.

        ``group`` is win / steps / casualties / extra; ``metric`` names it; ``mean`` is the
        probability or mean; ``low`` / ``high`` the 95% interval (Wilson for
        probabilities, normal for means); ``q10`` / ``q50`` / ``q90`` the quantiles.
        """
        rows: list[dict[str, Any]] = []
        for outcome in OUTCOMES:
            p, lo, hi = self.win(outcome)
            rows.append(_row("win", outcome, p, lo, hi))
        rows.append(_dist_row("steps", "all", self.tally.steps))
        for outcome, h in zip(OUTCOMES, self.tally.steps_by_outcome, strict=True):
            if h.n:
                rows.append(_dist_row("steps", outcome, h))
        for name, h in self.tally.columns.items():
            group = "casualties" if name.startswith("casualties.") else "extra"
            metric = name.removeprefix("casualties.")
            if name in self.flags:
                p, lo, hi = wilson(int(h.counts[h.values == 1].sum()), h.n)
                rows.append(_row(group, metric, p, lo, hi))
            else:
                rows.append(_dist_row(group, metric, h))
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: ``win`` holds ``{outcome: {p, low, high}}``."""
        from . import rulesets

        summary = self.summary()

        def section(group: str) -> dict[str, Any]:
            out = {}
            for r in summary[summary.group == group].itertuples():
                out[r.metric] = {k: _clean(getattr(r, k)) for k in ("mean", "low", "high", "q10", "q50", "q90")
                                 if not (isinstance(getattr(r, k), float) and math.isnan(getattr(r, k)))}
            return out

        win = {o: {"p": v["mean"], "low": v["low"], "high": v["high"]} for o, v in section("win").items()}
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "seed": self.seed,
            "battles": self.n,
            "first_battle": self.first,
            "partial": self.partial,
            "kernel": self.kernel,
            "version": __version__,
            "step_unit": rulesets.get(self.scenario.ruleset).step_unit,
            "win": win,
            "steps": section("steps"),
            "casualties": section("casualties"),
            "extras": section("extra"),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
            **self.extra,
        }


def _clean(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return float(value)
    return value


def _row(group: str, metric: str, p: float, lo: float, hi: float) -> dict[str, Any]:
    return {"group": group, "metric": metric, "mean": p, "low": lo, "high": hi,
            "q10": math.nan, "q50": math.nan, "q90": math.nan}


def _dist_row(group: str, metric: str, h: Histogram) -> dict[str, Any]:
    mean = h.mean()
    half = 1.959963984540054 * h.std() / math.sqrt(h.n) if h.n > 1 else math.nan
    row = {"group": group, "metric": metric, "mean": mean, "low": mean - half, "high": mean + half}
    for q in QUANTILES:
        row[f"q{round(q * 100)}"] = h.quantile(q)
    return row
