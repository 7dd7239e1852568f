"""Mergeable statistics: counts and exact integer histograms.

A run of any size is summarised by a :class:`Tally` that chunks, threads, processes
and Dask workers can add together exactly. Every per-battle output is an integer,
so its distribution is an integer histogram, and means, quantiles and survival
curves computed from histograms equal those computed from the rows themselves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from kernels import tally as tally_kernel

from ..rulesets.outcomes import Outcomes

Z95 = 1.959963984540054
#: How a battle ends, by its ``winner`` code: attacker 0, defender 1, draw 2, and a side
#: withdrew by its stop rule (kernels/stops.py: 3, 4), an outcome of its own.
OUTCOMES = ("attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew")
#: The outcomes of a battle fought to its end: every scenario reports them.
FOUGHT_OUT = OUTCOMES[:3]
#: The withdrawals: reported where a side has a stop rule or a battle withdrew.
WITHDRAWALS = OUTCOMES[3:]
#: A histogram is counted densely when its values span at most the rows plus this.
DENSE_MARGIN = 4096


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
    """Exact distribution of an integer quantity: sorted distinct values and counts.

    One outcome column (a battle's length, a casualty count, a 0/1 flag) over some
    battles: ``counts[i]`` battles had the value ``values[i]``. Nothing is binned or
    rounded, so the mean, quantiles and survival curve are those of the rows themselves.

    Invariants: ``values`` and ``counts`` are int64 arrays of one length; ``values`` is
    strictly increasing and every count is positive (``of`` and ``merge`` keep only the
    values seen); ``n``, the sum of the counts, is the battles described. The empty
    histogram (no battles) has empty arrays; its mean and quantiles are NaN.

    Merging: ``a.merge(b)`` is the histogram of a's battles and b's together: the values
    of both, the counts of equal values added. It is exact, commutative and associative,
    with the empty histogram as identity, so chunks merged in any order, on any threads,
    processes or workers, give the same histogram bit for bit. Neither operand changes;
    the result is a new histogram, or one operand itself when the other is empty.
    """

    values: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def of(cls, data: np.ndarray) -> Histogram:
        column = np.ascontiguousarray(data, dtype=np.int64).reshape(-1, 1)
        return histograms(column, [Slot(0)])[0]

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
    """Everything the summary needs, from any number of battles, mergeable exactly.

    ``battles`` is how many battles; ``wins[k]`` how many ended in ``OUTCOMES[k]``
    (attacker, defender, draw, attacker withdrew, defender withdrew);
    ``steps_by_outcome[k]`` the :class:`Histogram` of the
    ``steps`` column (how long a battle lasted, in the ruleset's unit) over the battles
    of outcome k, and ``steps`` their merge; ``columns`` one histogram for each other
    outcome column (casualties, flags, the ruleset's extras), in the order the ruleset
    returned them.

    Invariants: ``wins.sum() == battles`` and ``steps_by_outcome[k].n == wins[k]``;
    in a tally of one scenario every histogram of ``columns`` counts each battle once
    (``n == battles``). ``of`` refuses a winner other than 0 .. 4.

    Merging: ``a.merge(b)`` adds the battles and wins and merges each histogram, the
    columns of both (a's first, in order); it is exact and associative, commutative up
    to the order of the columns, and the empty tally is its identity. So the chunks of a
    run, from threads, processes, Dask workers, a checkpoint or the rounds of a
    precision run, merge in any order into the tally one call over all those battles
    gives. Tallies of one scenario are merged (the same columns); merging others is not
    refused, and a column then counts only the battles that had it. ``to_dict`` and
    ``from_dict`` carry a tally exactly (checkpoints, stored reference samples), so a
    resumed run merges bit for bit; a tally without withdrawals is written as before
    stop rules (three outcomes), and such a tally (a checkpoint, a stored sample) reads
    with none.
    """

    battles: int = 0
    wins: np.ndarray = field(default_factory=lambda: np.zeros(len(OUTCOMES), np.int64))
    steps_by_outcome: list[Histogram] = field(
        default_factory=lambda: [Histogram() for _ in OUTCOMES]
    )
    columns: dict[str, Histogram] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: Mapping[str, np.ndarray]) -> Tally:
        """The tally of one run's outcome columns (:meth:`Prepared.run`'s answer): the
        rows of :class:`~simulator.rulesets.outcomes.Outcomes` in one pass over the
        kernel's matrix, any other column in a pass of its own."""
        tables = _tables(outcomes)
        found: dict[str, Histogram] = {}
        steps_by_outcome: list[Histogram] = []
        for matrix, places in tables:
            names = [name for name in places if name != "steps"]
            slots = [Slot(places[name]) for name in names]
            if "winner" in places:
                winner, steps = places["winner"], places["steps"]
                slots += [Slot(steps, winner, k) for k in range(len(FOUGHT_OUT))]
            made = histograms(matrix, slots)
            found.update(zip(names, made, strict=False))
            if "winner" in places:
                steps_by_outcome = made[len(names) :]
        wins = found.pop("winner")
        if wins.n and (wins.values[0] < 0 or wins.values[-1] >= len(OUTCOMES)):
            raise ValueError(f"winner: values {wins.values.tolist()}, expected 0 .. 4")
        counts = np.zeros(len(OUTCOMES), np.int64)
        counts[wins.values] = wins.counts
        # The withdrawals' steps in a second pass, only where a battle withdrew: a run
        # without stop rules counts as many slots as before they existed.
        if counts[len(FOUGHT_OUT) :].any():
            matrix, places = tables[0]
            winner, steps = places["winner"], places["steps"]
            slots = [Slot(steps, winner, k) for k in range(len(FOUGHT_OUT), len(OUTCOMES))]
            steps_by_outcome = [*steps_by_outcome, *histograms(matrix, slots)]
        else:
            steps_by_outcome = [*steps_by_outcome, *(Histogram() for _ in WITHDRAWALS)]
        return cls(
            battles=wins.n,
            wins=counts,
            steps_by_outcome=steps_by_outcome,
            columns={name: found[name] for name in outcomes if name in found},
        )

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

    @property
    def withdrawals(self) -> int:
        """How many battles a side withdrew from."""
        return int(self.wins[len(FOUGHT_OUT) :].sum())

    def to_dict(self) -> dict[str, object]:
        """Plain data (for checkpoints): exact, so a resumed run merges bit for bit. No
        battle withdrew: the three outcomes alone, as written before stop rules."""
        kept = len(OUTCOMES) if self.withdrawals else len(FOUGHT_OUT)
        return {
            "battles": self.battles,
            "wins": self.wins[:kept].tolist(),
            "steps_by_outcome": [h.to_dict() for h in self.steps_by_outcome[:kept]],
            "columns": {name: h.to_dict() for name, h in self.columns.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Tally:
        steps = data["steps_by_outcome"]
        columns = data["columns"]
        wins = data["wins"]
        assert isinstance(steps, list) and isinstance(columns, dict) and isinstance(wins, list)
        # Written without withdrawals (before stop rules, or none withdrew): none.
        if len(wins) == len(steps) == len(FOUGHT_OUT):
            wins = [*wins, *(0 for _ in WITHDRAWALS)]
            steps = [*steps, *({"values": [], "counts": []} for _ in WITHDRAWALS)]
        return cls(
            battles=int(data["battles"]),  # type: ignore[call-overload]
            wins=np.asarray(wins, np.int64),
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

    def seen_outcomes(self) -> tuple[str, ...]:
        """The outcomes a summary of these battles reports at least: the three of a battle
        fought out, and a withdrawal once a battle ended in it."""
        return FOUGHT_OUT + tuple(
            o for k, o in enumerate(WITHDRAWALS, len(FOUGHT_OUT)) if self.wins[k]
        )

    def max_half_width(self) -> float:
        """The widest half-width of the outcome intervals (for precision targets): a
        withdrawal no battle ended in has the narrowest, and is left out."""
        widths = [(hi - lo) / 2 for _, lo, hi in (self.win(o) for o in self.seen_outcomes())]
        return max(widths)


#: The two columns every battle has, counted together: steps by outcome.
_WINNER_STEPS = ("winner", "steps")


def _tables(outcomes: Mapping[str, np.ndarray]) -> list[tuple[np.ndarray, dict[str, int]]]:
    """The int64 matrices ``outcomes``' columns are read from, each with its columns'
    names and places; the first holds ``winner`` and ``steps`` (the steps of each
    outcome are one column counted on the rows where the other has a value).

    :class:`Outcomes` gives its kernel's rows as they are, then each derived column;
    any other mapping gives ``winner`` and ``steps`` side by side (a copy of two
    columns), then each other column as a matrix of its own (a view where it is
    contiguous int64 already)."""
    rows, placed, loose = np.zeros((0, 0), np.int64), {}, outcomes
    if isinstance(outcomes, Outcomes):
        rows, placed, loose = outcomes.matrix, dict(outcomes.places), outcomes.derived
    tables: list[tuple[np.ndarray, dict[str, int]]] = []
    if all(name in placed for name in _WINNER_STEPS):
        tables.append((rows, placed))
    else:
        both = np.column_stack([outcomes[name] for name in _WINNER_STEPS]).astype(np.int64)
        tables.append((both, {name: j for j, name in enumerate(_WINNER_STEPS)}))
        kept = {name: at for name, at in placed.items() if name not in _WINNER_STEPS}
        if kept:
            tables.append((rows, kept))
    for name, values in loose.items():
        if name not in tables[0][1]:
            column = np.ascontiguousarray(values, dtype=np.int64).reshape(-1, 1)
            tables.append((column, {name: 0}))
    return tables


class Slot(NamedTuple):
    """One histogram :func:`histograms` counts: the values of a matrix's ``column`` on
    the rows whose column ``among`` equals ``key`` (``among`` -1: every row)."""

    column: int
    among: int = -1
    key: int = 0


def histograms(matrix: np.ndarray, slots: Sequence[Slot]) -> list[Histogram]:
    """One histogram per :class:`Slot` of a C-contiguous int64 matrix: the values of its
    ``column`` on the rows whose column ``among`` equals its ``key``.

    One jitted pass over the rows counts every slot of modest spread; a slot whose
    values spread wider than the rows (plus a margin) is counted by sorting instead.
    """
    if not slots:
        return []
    columns, filters, keys = (np.array(part, np.int64) for part in zip(*slots, strict=True))
    seen, lo, offsets, counts = tally_kernel.slot_histograms(
        matrix, columns, filters, keys, matrix.shape[0] + DENSE_MARGIN
    )
    made = []
    for s, (column, where, key) in enumerate(slots):
        if seen[s] == 0:
            made.append(Histogram())
        elif offsets[s + 1] > offsets[s]:
            dense = counts[offsets[s] : offsets[s + 1]]
            present = np.flatnonzero(dense)
            made.append(Histogram(present.astype(np.int64) + lo[s], dense[present]))
        else:
            data = matrix[:, column] if where < 0 else matrix[matrix[:, where] == key, column]
            values, value_counts = np.unique(data, return_counts=True)
            made.append(Histogram(values.astype(np.int64), value_counts.astype(np.int64)))
    return made
