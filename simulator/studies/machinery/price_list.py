"""A fair price list as ``battle-odds prices`` answers it: per type the price with its
interval and the pairwise break-even prices, as pandas frames, JSON and a ``--costs``
file (the search itself is :mod:`simulator.studies.prices`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...rulesets.keys import MAX_COST, MIN_COST
from .one_type import settings_columns, settings_text

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Pairwise:
    """The break-even price of ``type`` against ``against`` (at its fair price), at one
    budget and in one role: the price at which the two win equally often."""

    type: str
    against: str
    budget: float
    role: str
    price: float
    low: float
    high: float
    #: None, or "above" / "below": the break-even lies beyond ``price``, the edge of the
    #: search (one man already wins; the most men searched still lose).
    beyond: str | None
    #: Men of the other type, at its fair price (need not be whole: see the module text).
    against_men: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "against": self.against,
            "budget": self.budget,
            "role": self.role,
            "price": self.price,
            "low": self.low,
            "high": self.high,
            "beyond": self.beyond,
            "men": self.budget / self.price,
            "against_men": self.against_men,
        }


@dataclass
class TypePrice:
    type: str
    price: float
    low: float
    high: float
    #: The type's average net score at its fair price (0 when solved) and its error.
    score: float
    score_error: float
    pairwise: list[Pairwise] = field(default_factory=list)


@dataclass
class Prices:
    """A fair price list, its intervals and the pairwise break-even prices."""

    ruleset: str
    base: str
    types: tuple[str, ...]
    budgets: tuple[float, ...]
    battles: int
    seed: int
    confidence: float
    prices: dict[str, TypePrice]
    converged: bool
    #: Sweeps of type-by-type roots, and evaluations of the whole system (Newton steps).
    sweeps: int
    evaluations: int
    #: The largest |score| of a type at the prices found (0 when solved).
    residual: float
    #: Pairs of counts fought (each ``battles`` battles).
    cells: int
    notes: list[str] = field(default_factory=list)
    #: The ``[battle]`` settings every battle was fought under (``--set``).
    settings: dict[str, Any] = field(default_factory=dict)
    #: Interrupted by Ctrl-C: some types lack an interval (NaN), or, unless ``solved``,
    #: the prices are the search's last step.
    partial: bool = False
    solved: bool = True

    @property
    def frame(self) -> pd.DataFrame:
        """One row per type: price, interval, and the spread of its pairwise prices."""
        import pandas as pd

        rows = []
        for t, p in self.prices.items():
            pair = [q.price for q in p.pairwise]
            rows.append(
                {
                    "type": t,
                    "price": p.price,
                    "low": p.low,
                    "high": p.high,
                    "pairwise_min": min(pair) if pair else math.nan,
                    "pairwise_max": max(pair) if pair else math.nan,
                    "score": p.score,
                    "base": self.base,
                    **settings_columns(self.settings),
                }
            )
        return pd.DataFrame(rows)

    @property
    def pairwise_frame(self) -> pd.DataFrame:
        """One row per type, other type, budget and role: the break-even price."""
        import pandas as pd

        rows = [
            {"type": t, **q.to_dict(), **settings_columns(self.settings)}
            for t, p in self.prices.items()
            for q in p.pairwise
        ]
        return pd.DataFrame(rows)

    def costs(self) -> dict[str, float]:
        """The price list as ``--costs`` takes it, rounded to four significant figures."""
        return {t: _rounded(p.price) for t, p in self.prices.items()}

    def costs_toml(self) -> str:
        """A ``--costs`` file of the price list, for ``matrix``, ``meta`` and ``best``."""
        lines = [
            f"# Fair prices for {self.ruleset} in units of one {self.base}, from",
            f"# battle-odds prices (budgets {', '.join(f'{b:g}' for b in self.budgets)}, "
            f"{self.battles:,} battles a matchup, seed {self.seed}"
            + (f", --set {settings_text(self.settings)}" if self.settings else "")
            + ")"
            + ("" if self.converged else "; NOT CONVERGED"),
        ]
        lines += [f"{t} = {c:g}" for t, c in self.costs().items()]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "base": self.base,
            "types": list(self.types),
            "budgets": list(self.budgets),
            "battles": self.battles,
            "seed": self.seed,
            "confidence": self.confidence,
            "converged": self.converged if self.solved else None,
            "sweeps": self.sweeps if self.solved else None,
            "evaluations": self.evaluations if self.solved else None,
            "residual": _number(self.residual),
            "cells": self.cells,
            "settings": dict(self.settings),
            "prices": {
                t: {
                    "price": p.price,
                    "low": _number(p.low),
                    "high": _number(p.high),
                    "score": _number(p.score),
                    "pairwise": [q.to_dict() for q in p.pairwise],
                }
                for t, p in self.prices.items()
            },
            "notes": self.notes,
            "partial": self.partial,
        }


def _number(x: float) -> float | None:
    """JSON has no NaN: a number not computed is null."""
    return None if math.isnan(x) else x


def _rounded(x: float) -> float:
    return min(max(float(f"{x:.4g}"), MIN_COST), MAX_COST)
