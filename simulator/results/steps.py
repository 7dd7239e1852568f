"""The battle as it unfolds: the state after each step, as exact, mergeable counts.

A run of battles each stopped after step t (``Prepared.run_until``) tells, for every
battle, whether it was decided by then (and how) or is still fighting, and the men each
side has left then (a battle decided before t counts with its final state). A
:class:`StepTally` keeps that for every step asked: the four outcome counts, an exact
histogram of the men left of each side's types and of each side's total, and the joint
histogram of the two sides' totals. Chunks of battles merge by adding counts, as the
run's own :class:`~simulator.results.stats.Tally` does.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kernels import step_tally
from kernels.state_counts import counts_by_value

from ..rulesets.outcomes import Recorded
from .stats import Histogram, Slot, histograms, wilson

#: What a battle is after a step: decided (each outcome) or still fighting. Its index is
#: the ``winner`` code of a stopped battle (``rulesets.base.FIGHTING`` is the last).
STATES = ("attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew", "fighting")
#: Men left are keyed as casualties are, without their ``casualties.`` prefix.
CASUALTIES = "casualties."


def men_brought(column_bounds: Mapping[str, tuple[int | None, int | None]]) -> dict[str, int]:
    """Each side's men of each type at the start, from the casualty columns' bounds
    (a ruleset declares a type's casualties at most the men of it a side brings):
    ``{"attacker.soldier": 20, ...}``."""
    brought = {}
    for name, (_, most) in column_bounds.items():
        if name.startswith(CASUALTIES) and most is not None:
            brought[name[len(CASUALTIES) :]] = int(most)
    return brought


def side_of(key: str) -> str:
    return key.split(".", 1)[0]


@dataclass
class StepCounts:
    """One step's counts: the battles in each of :data:`STATES`, a histogram of the men
    left of each type (``"attacker.soldier"``) and of each side (``"attacker"``), and the
    joint histogram of both sides' totals (``attacker * (defender's men + 1) + defender``)."""

    states: np.ndarray = field(default_factory=lambda: np.zeros(len(STATES), np.int64))
    men_left: dict[str, Histogram] = field(default_factory=dict)
    joint: Histogram = field(default_factory=Histogram)

    @property
    def battles(self) -> int:
        return int(self.states.sum())

    @classmethod
    def of(cls, outcomes: Mapping[str, np.ndarray], brought: Mapping[str, int]) -> StepCounts:
        """The counts of one run stopped after a step: ``outcomes`` its columns."""
        winner = np.asarray(outcomes["winner"], np.int64)
        n = winner.shape[0]
        keys = list(brought)
        sides = ("attacker", "defender")
        matrix = np.zeros((n, len(keys) + len(sides) + 1), np.int64)
        for j, key in enumerate(keys):
            matrix[:, j] = brought[key] - np.asarray(outcomes[CASUALTIES + key], np.int64)
        for s, side in enumerate(sides):
            members = [j for j, key in enumerate(keys) if side_of(key) == side]
            matrix[:, len(keys) + s] = matrix[:, members].sum(axis=1) if members else 0
        defender_most = sum(m for key, m in brought.items() if side_of(key) == "defender")
        a, d = len(keys), len(keys) + 1
        matrix[:, -1] = matrix[:, a] * (defender_most + 1) + matrix[:, d]
        made = histograms(matrix, [Slot(j) for j in range(matrix.shape[1])])
        states = np.bincount(winner, minlength=len(STATES)).astype(np.int64)
        if states.shape[0] > len(STATES):
            raise ValueError(
                f"winner: values {np.unique(winner).tolist()}, expected 0..{len(STATES) - 1}"
            )
        return cls(
            states=states,
            men_left=dict(zip([*keys, *sides], made[:-1], strict=True)),
            joint=made[-1],
        )

    @classmethod
    def by_step(
        cls,
        recorded: Mapping[str, np.ndarray],
        steps: Sequence[int],
        brought: Mapping[str, int],
    ) -> dict[int, StepCounts]:
        """The counts after each of ``steps`` from ``Prepared.run_through``'s columns
        (``(len(steps), count)`` each), the same as :meth:`of` of each step's columns: one
        pass over the kernel's record (:class:`Recorded`; a table made of the columns
        when they are not one) instead of a numpy pass per column and step."""
        keys = list(brought)
        table, where = _recorded_table(recorded, ["winner", *(CASUALTIES + k for k in keys)])
        count, n_steps = table.shape[0], table.shape[1]
        sides = ("attacker", "defender")
        defender_most = sum(m for key, m in brought.items() if side_of(key) == "defender")
        states = np.zeros((n_steps, len(STATES)), np.int64)
        width = len(keys) + len(sides) + 1
        matrix = np.empty((count, n_steps, width), np.int64)
        strays = step_tally.men_left_by_step(
            table,
            where[0],
            where[1:],
            np.array([brought[k] for k in keys], np.int64),
            np.array([side_of(k) == "defender" for k in keys], np.int64),
            defender_most + 1,
            states,
            matrix,
        )
        if strays:
            winner = np.asarray(recorded["winner"])
            raise ValueError(
                f"winner: values {np.unique(winner).tolist()}, expected 0..{len(STATES) - 1}"
            )
        # Every step's histograms in one pass over the battles' rows of men left.
        made = histograms(
            matrix.reshape(count, n_steps * width), [Slot(j) for j in range(n_steps * width)]
        )
        counted = {}
        for k, step in enumerate(steps):
            mine = made[k * width : (k + 1) * width]
            counted[step] = cls(
                states=states[k],
                men_left=dict(zip([*keys, *sides], mine[:-1], strict=True)),
                joint=mine[-1],
            )
        return counted

    def merge(self, other: StepCounts) -> StepCounts:
        if other.battles == 0:
            return self
        if self.battles == 0:
            return other
        return StepCounts(
            states=self.states + other.states,
            men_left={k: h.merge(other.men_left[k]) for k, h in self.men_left.items()},
            joint=self.joint.merge(other.joint),
        )

    def p(self, state: str) -> tuple[float, float, float]:
        """P(``state`` after this step) with its 95% Wilson interval."""
        return wilson(int(self.states[STATES.index(state)]), self.battles)

    def to_dict(self) -> dict[str, object]:
        return {
            "states": self.states.tolist(),
            "men_left": {k: h.to_dict() for k, h in self.men_left.items()},
            "joint": self.joint.to_dict(),
        }


def _merged_counts(counts: list[StepCounts]) -> StepCounts:
    """``counts`` merged (:meth:`StepCounts.merge` of each in turn), each histogram once."""
    counts = [c for c in counts if c.battles]
    if len(counts) <= 1:
        return counts[0] if counts else StepCounts()
    return StepCounts(
        states=np.sum([c.states for c in counts], axis=0),
        men_left={
            k: _merged_histogram([c.men_left[k] for c in counts]) for k in counts[0].men_left
        },
        joint=_merged_histogram([c.joint for c in counts]),
    )


def _merged_histogram(made: list[Histogram]) -> Histogram:
    """The histograms' battles together: one Histogram.merge of them all."""
    made = [h for h in made if h.n]
    if len(made) <= 1:
        return made[0] if made else Histogram()
    distinct, inverse = np.unique(np.concatenate([h.values for h in made]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([h.counts for h in made]))
    return Histogram(distinct, counts.astype(np.int64))


def _recorded_table(
    recorded: Mapping[str, np.ndarray], names: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The table ``(battles, steps, row)`` of int64 holding the columns ``names`` of
    ``recorded`` (``run_through``'s answer), and each one's index in a row: the
    kernel's own record when it is :class:`Recorded`, else a table made of the columns,
    in the order of ``names``."""
    if isinstance(recorded, Recorded):
        return recorded.table, np.array([recorded.places[n] for n in names], np.int64)
    stacked = np.stack([np.asarray(recorded[n], np.int64) for n in names], axis=-1)
    return np.ascontiguousarray(stacked.transpose(1, 0, 2)), np.arange(len(names), dtype=np.int64)


def _by_step(counts: np.ndarray, quantities: list[np.ndarray]) -> list[list[Histogram]]:
    """For each quantity (its value in each state), each step's histogram of it: the
    states weighted by their battles after step k, ``counts[:, k]``. Each quantity's
    values are numbered
    first (as many as the states at most), so its steps' counts are a table no larger
    than ``counts``."""
    distinct, numbered = [], []
    for values in quantities:
        seen, number = np.unique(values, return_inverse=True)
        distinct.append(seen.astype(np.int64))
        numbered.append(number)
    spans = np.array([d.shape[0] for d in distinct], np.int64)
    flat, offsets = counts_by_value(counts, np.array(numbered, np.int64), spans)
    made = []
    for q, seen in enumerate(distinct):
        by_value = flat[offsets[q] : offsets[q + 1]].reshape(counts.shape[1], spans[q])
        step, value = np.nonzero(by_value)  # by step, then value: each step's in order
        values, battles = seen[value], by_value[step, value]
        bounds = np.searchsorted(step, np.arange(counts.shape[1] + 1)).tolist()
        made.append(
            [Histogram(values[lo:hi], battles[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
        )
    return made


@dataclass
class StepTally:
    """The counts after each step asked (``steps``: step -> :class:`StepCounts`), and the
    men each side's types brought (what men left are counted from)."""

    brought: dict[str, int]
    steps: dict[int, StepCounts] = field(default_factory=dict)

    @classmethod
    def of_counts(
        cls,
        brought: dict[str, int],
        steps: Sequence[int],
        asked: Collection[int],
        counts: np.ndarray,
        states: Mapping[str, np.ndarray],
    ) -> StepTally:
        """The tally of battles counted by state (``Prepared.count_through``):
        ``counts[x, k]`` battles in state ``x`` after ``steps[k]``, ``states`` each
        state's ``winner`` and casualties (``Prepared.state_columns``). The steps past
        the first at which every battle is decided are kept only where ``asked`` (their
        state is the final one, as :meth:`after` counts it). The same counts as
        :meth:`StepCounts.of` of the battles' rows, worked out for every step at once:
        a state's men left once, not a battle's."""
        keys = list(brought)
        sides = ("attacker", "defender")
        left = [brought[key] - np.asarray(states[CASUALTIES + key], np.int64) for key in keys]
        zero = np.zeros(counts.shape[0], np.int64)
        totals = [
            sum((m for key, m in zip(keys, left, strict=True) if side_of(key) == side), zero)
            for side in sides
        ]
        defender_most = sum(m for key, m in brought.items() if side_of(key) == "defender")
        joint = totals[0] * (defender_most + 1) + totals[1]
        winner = np.asarray(states["winner"], np.int64)
        outcomes = np.zeros((counts.shape[1], len(STATES)), np.int64)
        for state in np.unique(winner):
            outcomes[:, state] = counts[winner == state].sum(axis=0)
        made = _by_step(counts, [*left, *totals, joint])
        tally = cls(dict(brought))
        ended = False
        for k, step in enumerate(steps):
            if ended and step not in asked:
                continue
            tally.steps[step] = StepCounts(
                states=outcomes[k],
                men_left=dict(zip([*keys, *sides], (h[k] for h in made[:-1]), strict=True)),
                joint=made[-1][k],
            )
            ended = ended or outcomes[k, -1] == 0
        return tally

    def merge(self, other: StepTally) -> StepTally:
        """Both tallies' battles. A tally whose battles were all decided by its last
        step counts the same after any later step (its final states): chunks recorded
        to their own longest battle merge exactly."""
        if not other.steps:
            return self
        if not self.steps:
            return other
        steps = sorted({*self.steps, *other.steps})
        return StepTally(self.brought, {t: self.after(t).merge(other.after(t)) for t in steps})

    @classmethod
    def merged(cls, brought: dict[str, int], tallies: Sequence[StepTally]) -> StepTally:
        """The tallies' battles, as merging them one after another gives, each step's
        histograms merged once: a run's blocks of battles (blocks' short battles made a
        tenth of ``--by-round``'s time merging, a histogram at a time)."""
        tallies = [t for t in tallies if t.steps]
        if len(tallies) <= 1:
            return tallies[0] if tallies else cls(brought)
        steps = sorted({t for tally in tallies for t in tally.steps})
        return cls(brought, {t: _merged_counts([c.after(t) for c in tallies]) for t in steps})

    def after(self, step: int) -> StepCounts:
        """The counts after ``step``: recorded, or past the last step recorded when no
        battle was still fighting then."""
        if step in self.steps:
            return self.steps[step]
        last = max(self.steps)
        if step > last and self.steps[last].states[-1] == 0:
            return self.steps[last]
        raise KeyError(f"step {step} was not recorded")

    @property
    def battles(self) -> int:
        """The battles counted at every step (a run stopped part way counts fewer at
        its later steps: the least)."""
        return min((c.battles for c in self.steps.values()), default=0)

    def joint(self, step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The joint distribution of both sides' men left after ``step``: the attacker's
        totals seen, the defender's, and P[attacker's index, defender's index]."""
        counts = self.steps[step]
        base = sum(m for key, m in self.brought.items() if side_of(key) == "defender") + 1
        attacker, defender = np.divmod(counts.joint.values, base)
        rows, a_index = np.unique(attacker, return_inverse=True)
        cols, d_index = np.unique(defender, return_inverse=True)
        p = np.zeros((rows.shape[0], cols.shape[0]))
        np.add.at(p, (a_index, d_index), counts.joint.counts / max(counts.battles, 1))
        return rows, cols, p
