"""The battles a price search reads: one-type armies by their counts of men, kept for the
whole search (``battle-odds prices``).

A cell is ``a`` men of one type attacking ``d`` men of another. Every cell is fought once,
on the same seed and battle indices as every other (common random numbers), and kept: a
search that comes back to a count reads the same battles, so the function it solves does
not change under it between iterations and a bracketing root finder converges.

Counts are whole but prices are not: a price that buys 4.35 men is read by linear
interpolation between 4 and 5 men, on both sides (bilinear in the two counts).

Each cell keeps its tallies in ``BATCHES`` blocks of consecutive battle indices. Any
linear reading of the cells (one matchup, or a type's average over many) is computed per
block; the spread of the blocks gives its standard error with the correlation that common
random numbers put between cells (batch means), which a binomial formula would ignore.

The cells run on the study engine (:mod:`simulator.running.scenarios`), in calls of
their kernel sized by time: Ctrl-C is answered between calls (the cell in progress is
dropped and :class:`~simulator.running.interrupt.Interrupted` raised). The bank fights at
most ``max_total`` battles in all: the search has no size known in advance, so
``prices`` checks a bound before it starts and the bank holds it.

One kernel for every cell (the randomness contract: battle i is the same luck in every
cell only within one kernel). The cells a search reads are not known in advance, so the
bank's kernel is the first choice of its first cell that every cell fought so far can
run; a cell that cannot run it (an olympia cell past the chain kernel's size limit)
moves the bank to the next kernel they share, and the cells fought before are fought
again on it when next read, so that the scores the search reads never mix kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import BattleOddsError, ParameterError
from ...rulesets import Army
from ...running.plan import StudyPlan
from ...running.scenarios import Built, ScenarioBattles, joined
from ...running.scenarios import winner as winner_of
from .one_type import checked_settings, ruleset_named
from .one_type_cells import OneTypeCells

if TYPE_CHECKING:
    from ...running.distributed import Cluster


#: Blocks of battle indices per cell, for batch-means standard errors.
BATCHES = 10
ROLES = ("attacker", "defender")
#: ``progress(cells_fought)``.
CellCount = Callable[[int], None]


@dataclass(frozen=True)
class Estimate:
    """A linear reading of the cells: its value and the value in each block of battles."""

    blocks: np.ndarray
    weights: np.ndarray

    @property
    def value(self) -> float:
        return float(np.dot(self.blocks, self.weights))

    @property
    def error(self) -> float:
        """Standard error from the spread of the blocks (batch means)."""
        return float(np.std(self.blocks, ddof=1) / math.sqrt(len(self.blocks)))

    def shifted(self, z: float) -> float:
        """``value + z * error``: the edge of an interval at ``z``."""
        return self.value + z * self.error


def block_z(confidence: float) -> float:
    """Student's t quantile for a two-sided ``confidence`` interval from BATCHES blocks."""
    # scipy.special's quantile, which scipy.stats.t.ppf calls: scipy.stats took a third
    # of a second more to import, at the end of every price search.
    from scipy.special import stdtrit

    return float(stdtrit(BATCHES - 1, 0.5 + confidence / 2))


class CellBank:
    """Fights and keeps cells of one ruleset on one seed, ``battles`` battles each, with
    ``settings`` in every battle's ``[battle]`` table."""

    def __init__(
        self,
        ruleset: str,
        battles: int,
        seed: int,
        *,
        threads: int | None = None,
        progress: CellCount | None = None,
        settings: Mapping[str, Any] | None = None,
        max_total: int | None = None,
        executor: Cluster | None = None,
    ) -> None:
        if battles < 2 * BATCHES:
            raise ParameterError("battles", battles, f"expected at least {2 * BATCHES}")
        self.ruleset = ruleset_named(ruleset)
        self.plan = StudyPlan.of(
            seed=seed, battles=battles, threads=threads, executor=executor, max_total=max_total
        )
        self.battles = battles
        self.seed = seed
        self.progress = progress
        self.settings = checked_settings(settings)
        self._made = OneTypeCells(self.ruleset, self.settings)
        self.starts = np.array([battles * b // BATCHES for b in range(BATCHES)])
        sizes = np.diff(np.append(self.starts, battles))
        self.weights = sizes / battles
        self.sizes = sizes.astype(float)
        #: (attacker type, men, defender type, men) -> per-block net score of the attacker.
        self._scores: dict[tuple[str, int, str, int], np.ndarray] = {}
        self.max_total = self.plan.max_total
        self.engine = ScenarioBattles(self.plan)
        #: The kernels every cell fought so far can run, the bank's kernel first.
        self._kernels: tuple[str, ...] | None = None
        #: Battles fought, cells fought again on a new kernel included.
        self.fought = 0

    @property
    def cells(self) -> int:
        return len(self._scores)

    @property
    def kernel(self) -> str | None:
        """The kernel of every cell (None before the first)."""
        return None if not self._kernels else self._kernels[0]

    def score(self, attacker: str, a_men: int, defender: str, d_men: int) -> np.ndarray:
        """Per block: P(attacker wins) - P(defender wins) of ``a_men`` against ``d_men``.
        A side of no men loses (a price above the budget buys nobody)."""
        if a_men <= 0 or d_men <= 0:
            return np.full(BATCHES, float(np.sign(a_men - d_men)))
        key = (attacker, a_men, defender, d_men)
        while key not in self._scores:  # a new kernel for the bank forgets the cells
            self.fight([key])
        return self._scores[key]

    def fight(self, keys: Iterable[tuple[str, int, str, int]]) -> None:
        """Fight the cells of ``keys`` not fought yet, side by side (each cell's kernel on
        one thread, the cells on the plan's threads: the kernels' own threads would meet
        at a barrier at every call of a cell's few thousand battles). Ctrl-C: the cells
        finished are kept, the others dropped, and :class:`Interrupted` raised."""
        new = [k for k in dict.fromkeys(keys) if k not in self._scores and k[1] > 0 and k[3] > 0]
        if not new:
            return
        if self.fought + len(new) * self.battles > self.max_total:
            raise ParameterError(
                "max_total",
                self.max_total,
                f"prices: the search needs more than {self.cells + len(new) - 1:,} pairs of "
                f"counts x {{battles=}}{self.battles:,}, more than {{max_total=}}"
                f"{self.max_total:,} battles: fewer types, budgets or battles, "
                "or raise {max_total}",
                whole=True,
            )
        for key in new:
            # Built where its battles run (a worker thread), beside the other cells'.
            self.engine.add_later(key, partial(self._cell, *key))
        if self._kernels is None:
            # The bank's kernel: the first choice of its first cell.
            self._share_kernel(self.engine.prepared(new[0]).kernel_choices())
        kernel = self.kernel
        assert kernel is not None
        # Each cell's kernel choices are found beside the other cells' battles, which
        # run on the bank's kernel meanwhile. Every kernel that can run the cell counts,
        # not only the ones worth their set-up for the cell's battles: a one-type cell's
        # chain table is small (a millisecond), and a bank moved to ``skip`` by one cell
        # would fight every cell on it, slower. A cell that cannot run the bank's kernel
        # moves the bank (the cells fought on the old one are forgotten, those of this
        # fight too) and the cells are fought again on the new one: what is kept is what
        # the cells' choices, all known before their battles, would have given.
        ran = self.engine.each_able(new, 0, self.battles, kernel, winner_of, joined)
        for i, choices, winner in ran:
            key = new[i]
            self._share_kernel(choices)
            if winner is not None:
                self.fought += self.battles
            if self.kernel != kernel:
                continue  # the bank moved: the cells of the old kernel are forgotten
            assert winner is not None  # it can run the bank's kernel
            self.engine.drop(key)  # the cell's scores are kept, not its scenario
            attacker_won = np.add.reduceat((winner == 0).astype(np.int64), self.starts)
            defender_won = np.add.reduceat((winner == 1).astype(np.int64), self.starts)
            self._scores[key] = (attacker_won - defender_won) / self.sizes
            if self.progress is not None:
                self.progress(len(self._scores))
        if self.kernel != kernel:
            self.fight(new)

    def _cell(self, attacker: str, a_men: int, defender: str, d_men: int) -> Built:
        """The scenario of a cell, validated (or filled in with its prepared arrays)."""
        return self._made.cell(Army(attacker, a_men), Army(defender, d_men))

    def cells_of(
        self, me: str, my_men: float, other: str, other_men: float, role: str
    ) -> list[tuple[str, int, str, int]]:
        """The cells :meth:`side_score` reads."""
        return [cell for cell, _ in _weighted_cells(me, my_men, other, other_men, role)]

    def _share_kernel(self, choices: tuple[str, ...]) -> None:
        """Keep the kernels a new cell can run among the bank's; when the bank's kernel is
        not one of them, forget the cells fought on it (they are fought again)."""
        if self._kernels is None:
            self._kernels = choices
            return
        shared = tuple(name for name in self._kernels if name in choices)
        if not shared:  # pragma: no cover - every cell of a ruleset runs its reference
            raise BattleOddsError(f"{self.ruleset.name}: cells with no kernel in common")
        if shared[0] != self._kernels[0]:
            self._scores.clear()
        self._kernels = shared

    def side_score(
        self, me: str, my_men: float, other: str, other_men: float, role: str
    ) -> np.ndarray:
        """Per block: P(``me`` wins) - P(``other`` wins), ``me`` in ``role``, at counts
        that need not be whole (bilinear between the neighbouring whole counts)."""
        # The cells and weights worked out once: a search reads 30,000 side scores.
        weighted = _weighted_cells(me, my_men, other, other_men, role)
        # Its cells not fought yet fought side by side, not one after the other.
        missing = [cell for cell, _ in weighted if cell not in self._scores]
        if missing:
            self.fight(missing)
        total = np.zeros(BATCHES)
        for cell, weight in weighted:
            s = self.score(*cell)
            total += weight * (s if role == "attacker" else -s)
        return total

    def estimate(self, blocks: np.ndarray) -> Estimate:
        return Estimate(blocks, self.weights)


def _weighted_cells(
    me: str, my_men: float, other: str, other_men: float, role: str
) -> list[tuple[tuple[str, int, str, int], float]]:
    """The cells of ``me`` in ``role`` at ``my_men`` against ``other`` at ``other_men``
    (whole counts around them), each with its weight in the bilinear reading."""
    return [
        (
            (me, mine, other, theirs) if role == "attacker" else (other, theirs, me, mine),
            w_mine * w_theirs,
        )
        for mine, w_mine in _neighbours(my_men)
        for theirs, w_theirs in _neighbours(other_men)
    ]


def _neighbours(men: float) -> list[tuple[int, float]]:
    """The whole counts around ``men`` with their interpolation weights."""
    # A hair of tolerance: 20 / (20 / 7) is 7 men, not 6.999... between 6 and 7.
    low = math.floor(men + 1e-9)
    fraction = men - low
    if fraction <= 1e-9:
        return [(low, 1.0)]
    return [(low, 1.0 - fraction), (low + 1, fraction)]
