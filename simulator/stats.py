"""Mergeable statistics: counts and exact integer histograms.

A run of any size is summarised by a :class:`Tally` that chunks, threads, processes
and Dask workers can add together exactly. Every per-battle output is an integer,
so its distribution is an integer histogram, and means, quantiles and survival
curves computed from histograms equal those computed from the rows themselves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

Z95 = 1.959963984540054
OUTCOMES = ("attacker", "defender", "draw")


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """Estimate and Wilson score interval for a binomial proportion."""
    if n <= 0:
        return (math.nan, 0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Rounding can put a bound a hair on the wrong side of p at 0 or n successes.
    return (p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


@dataclass
class Histogram:
    """Exact distribution of an integer quantity: sorted distinct values and counts."""

    values: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def of(cls, data: np.ndarray) -> Histogram:
        data = np.asarray(data, dtype=np.int64)
        if data.size == 0:
            return cls()
        lo, hi = int(data.min()), int(data.max())
        if hi - lo <= 4 * data.size + 4096:
            counts = np.bincount(data - lo, minlength=hi - lo + 1)
            nonzero = np.flatnonzero(counts)
            return cls(nonzero.astype(np.int64) + lo, counts[nonzero].astype(np.int64))
        values, counts = np.unique(data, return_counts=True)
        return cls(values.astype(np.int64), counts.astype(np.int64))

    def merge(self, other: Histogram) -> Histogram:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        values = np.concatenate([self.values, other.values])
        counts = np.concatenate([self.counts, other.counts])
        distinct, inverse = np.unique(values, return_inverse=True)
        return Histogram(distinct, np.bincount(inverse, weights=counts).astype(np.int64))

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def mean(self) -> float:
        n = self.n
        return float(np.dot(self.values, self.counts)) / n if n else math.nan

    def std(self) -> float:
        n = self.n
        if n < 2:
            return 0.0 if n == 1 else math.nan
        mean = self.mean()
        return math.sqrt(float(np.dot((self.values - mean) ** 2, self.counts)) / (n - 1))

    def quantile(self, q: float) -> float:
        """The lower q-quantile: the smallest value v with P(X <= v) >= q."""
        n = self.n
        if n == 0:
            return math.nan
        cumulative = np.cumsum(self.counts)
        index = int(np.searchsorted(cumulative, q * n, side="left"))
        return float(self.values[min(index, len(self.values) - 1)])

    def survival(self, upto: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``t`` and ``P(X > t)`` for t = 0 .. max (or ``upto``)."""
        top = int(self.values.max()) if self.n else 0
        top = top if upto is None else upto
        t = np.arange(top + 1)
        if self.n == 0:
            return t, np.zeros_like(t, dtype=float)
        at_or_below = np.cumsum(
            np.bincount(np.clip(self.values, 0, None), weights=self.counts, minlength=top + 1)[
                : top + 1
            ]
        )
        return t, 1.0 - at_or_below / self.n

    def to_dict(self) -> dict[str, list[int]]:
        return {"values": self.values.tolist(), "counts": self.counts.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, list[int]]) -> Histogram:
        return cls(np.asarray(data["values"], np.int64), np.asarray(data["counts"], np.int64))


@dataclass
class Tally:
    """Everything the summary needs, from any number of battles, mergeable exactly."""

    battles: int = 0
    wins: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))
    steps_by_outcome: list[Histogram] = field(
        default_factory=lambda: [Histogram() for _ in OUTCOMES]
    )
    columns: dict[str, Histogram] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: Mapping[str, np.ndarray]) -> Tally:
        winner = np.asarray(outcomes["winner"])
        steps = np.asarray(outcomes["steps"])
        tally = cls(
            battles=int(winner.size), wins=np.bincount(winner, minlength=3).astype(np.int64)
        )
        tally.steps_by_outcome = [Histogram.of(steps[winner == k]) for k in range(3)]
        tally.columns = {
            name: Histogram.of(values)
            for name, values in outcomes.items()
            if name not in ("winner", "steps")
        }
        return tally

    def merge(self, other: Tally) -> Tally:
        if other.battles == 0:
            return self
        if self.battles == 0:
            return other
        names = list(self.columns) + [c for c in other.columns if c not in self.columns]
        return Tally(
            battles=self.battles + other.battles,
            wins=self.wins + other.wins,
            steps_by_outcome=[
                a.merge(b)
                for a, b in zip(self.steps_by_outcome, other.steps_by_outcome, strict=True)
            ],
            columns={
                c: self.columns.get(c, Histogram()).merge(other.columns.get(c, Histogram()))
                for c in names
            },
        )

    def to_dict(self) -> dict[str, object]:
        """Plain data (for checkpoints): exact, so a resumed run merges bit for bit."""
        return {
            "battles": self.battles,
            "wins": self.wins.tolist(),
            "steps_by_outcome": [h.to_dict() for h in self.steps_by_outcome],
            "columns": {name: h.to_dict() for name, h in self.columns.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Tally:
        steps = data["steps_by_outcome"]
        columns = data["columns"]
        assert isinstance(steps, list) and isinstance(columns, dict)
        return cls(
            battles=int(data["battles"]),  # type: ignore[call-overload]
            wins=np.asarray(data["wins"], np.int64),
            steps_by_outcome=[Histogram.from_dict(h) for h in steps],
            columns={name: Histogram.from_dict(h) for name, h in columns.items()},
        )

    @property
    def steps(self) -> Histogram:
        total = Histogram()
        for h in self.steps_by_outcome:
            total = total.merge(h)
        return total

    def win(self, outcome: str) -> tuple[float, float, float]:
        return wilson(int(self.wins[OUTCOMES.index(outcome)]), self.battles)

    def max_half_width(self) -> float:
        """The widest half-width of the three outcome intervals (for precision targets)."""
        widths = [(hi - lo) / 2 for _, lo, hi in (self.win(o) for o in OUTCOMES)]
        return max(widths)
