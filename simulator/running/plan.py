"""How a run is made, as one frozen value handed down whole.

The command line or the Python API builds a :class:`RunPlan` once (:meth:`RunPlan.of`
fills the scenario's battles and seed and checks every number); the front of a run
(:func:`simulator.running.front.run_battles`), the precision rounds and the chunk
runner read it and pass it on, instead of a dozen loose arguments beside the seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BattleOddsError, ParameterError
from .bounds import DEFAULT_MAX_TOTAL

if TYPE_CHECKING:
    from ..scenario.scenario import Scenario
    from .distributed import Cluster

#: Battles per kernel call: large enough to amortise the call, small enough that the
#: outcome rows of a chunk stay a few tens of MB and Ctrl-C is answered within a second
#: or so.
DEFAULT_CHUNK = 1 << 17
#: Most battles of one run (``--battles``, a scenario's ``battles``): 10**11 battles take
#: days on one machine, and keep every tally's counts (and sums of outcome values up to
#: 10**7 per battle) far inside int64 and the float64 exact-integer range.
MAX_BATTLES = 10**11
#: Seeds are 0..2**63-1: a kernel's seed is a signed 64-bit integer.
MAX_SEED = 2**63 - 1
#: Default cap on the battles a precision run may spend.
DEFAULT_MAX_BATTLES = 10_000_000
#: Smallest precision target (a 95% half-width): one of 10**-6 takes some 10**12 battles,
#: beyond any cap; below it the rounds' arithmetic fails (10**-300 divides by zero).
MIN_PRECISION = 1e-6

#: The one progress callback of a run and of every study: ``progress(done, total,
#: detail="")``, ``done`` of ``total`` (battles as chunks finish; a search's values or
#: armies tried, ``total`` then the most it may come to; 0: not known, a price search's
#: pairs of counts fought), ``detail`` what the work is at, in words
#: (simulator.running.progress.progress_bar draws one). A callback of fewer arguments
#: (``lambda done, total: ...``) is called with as many
#: (simulator.running.progress.called_as_it_is_written).
Progress = Callable[..., None]


def check_run(battles: int, seed: int) -> None:
    """A battle count and seed any kernel and tally can take."""
    if not 1 <= battles <= MAX_BATTLES:
        raise BattleOddsError(f"battles: {battles}: expected 1..{MAX_BATTLES:,}")
    if not 0 <= seed <= MAX_SEED:
        raise BattleOddsError(f"seed: {seed}: expected 0..2**63-1")


@dataclass(frozen=True)
class RunPlan:
    """Which battles a run fights and how: battles ``first .. first + battles - 1`` of
    ``seed``, in chunks of at most ``chunk``, on ``threads`` threads (None: all) here or
    through ``executor`` (a Dask cluster, :mod:`simulator.running.distributed`).

    ``precision``: instead of a fixed count, rounds of battles until every reported
    probability's 95% half-width is below it, at most ``max_battles``. ``checkpoint``:
    record progress in this file and resume from it. ``keep_battles``: keep one row per
    battle (None: when the run is small). ``interruptible``: the first Ctrl-C ends the run
    after the chunk in progress, with a partial result.
    """

    battles: int
    seed: int
    first: int = 0
    chunk: int = DEFAULT_CHUNK
    threads: int | None = None
    executor: Cluster | None = None
    checkpoint: Path | None = None
    keep_battles: bool | None = None
    precision: float | None = None
    max_battles: int = DEFAULT_MAX_BATTLES
    interruptible: bool = False

    @classmethod
    def of(
        cls,
        scenario: Scenario,
        battles: int | None = None,
        seed: int | None = None,
        *,
        first: int = 0,
        chunk: int = DEFAULT_CHUNK,
        threads: int | None = None,
        executor: Cluster | None = None,
        checkpoint: str | Path | None = None,
        keep_battles: bool | None = None,
        precision: float | None = None,
        max_battles: int | None = None,
        interruptible: bool = False,
    ) -> RunPlan:
        """The plan of a run of ``scenario``: battles and seed default to the scenario's;
        every number and combination is checked here, once."""
        if precision is None and max_battles is not None:
            raise ParameterError(
                "max_battles",
                None,
                "{max_battles} caps a {precision} run: give {precision} too, or use {battles}",
                whole=True,
            )
        if precision is not None:
            if battles is not None:
                raise ParameterError(
                    "precision",
                    None,
                    "{battles} and {precision}: give one "
                    "(with {precision}, {max_battles} caps the battles)",
                    whole=True,
                )
            if checkpoint is not None:
                raise ParameterError(
                    "checkpoint",
                    None,
                    "{checkpoint} resumes a run of a fixed size: use {battles}, not {precision}",
                    whole=True,
                )
            if not MIN_PRECISION <= precision < 0.5:
                raise ParameterError(
                    "precision",
                    precision,
                    f"expected a half-width between {MIN_PRECISION:g} and 0.5, e.g. 0.002",
                )
        cap = DEFAULT_MAX_BATTLES if max_battles is None else max_battles
        if not 1 <= cap <= MAX_BATTLES:
            raise ParameterError("max_battles", cap, f"expected 1..{MAX_BATTLES:,}")
        plan = cls(
            battles=scenario.battles if battles is None else battles,
            seed=scenario.seed if seed is None else seed,
            first=first,
            chunk=chunk,
            threads=threads,
            executor=executor,
            checkpoint=None if checkpoint is None else Path(checkpoint),
            keep_battles=keep_battles,
            precision=precision,
            max_battles=cap,
            interruptible=interruptible,
        )
        check_run(plan.battles, plan.seed)
        if chunk < 1:
            raise BattleOddsError(f"chunk: {chunk}: expected at least 1")
        return plan

    @property
    def most_battles(self) -> int:
        """The most battles the run may fight: its battles, or a precision run's cap."""
        return self.battles if self.precision is None else self.max_battles

    def check_total(self, max_total: int | None) -> None:
        """Refuse a run of more than ``max_total`` battles."""
        from .bounds import check_total

        check_total(f"{self.most_battles:,} battles", self.most_battles, max_total)

    def round(self, first: int, battles: int, keep_battles: bool) -> RunPlan:
        """One fixed-size round of a precision run: the battles after the ``first`` done."""
        return replace(self, first=first, battles=battles, keep_battles=keep_battles)

    def on(self, executor: Cluster | None) -> RunPlan:
        """The same run with its chunks sent to ``executor`` (None: this process)."""
        return replace(self, executor=executor)


#: The error of a plan's number out of range (its parameter named in the caller's words).
PlanError = ParameterError


@dataclass(frozen=True)
class StudyPlan:
    """How a study runs its battles, beside :class:`RunPlan` for a single run: the
    ``seed`` of every scenario's battles from ``first`` on; ``battles`` a scenario (a
    race's first look), at most ``max_battles`` (a race's cap); ``confidence`` of its
    intervals and guarantees; at most ``max_total`` battles in all, checked before the
    first; ``threads`` (None: all) here or ``executor`` (a Dask
    :class:`~simulator.running.distributed.Cluster`); ``progress`` the study's
    ``(done, total)`` callback. Built by :meth:`of`, which checks every number once."""

    seed: int
    battles: int
    max_battles: int
    first: int = 0
    threads: int | None = None
    executor: Cluster | None = None
    progress: Callable[..., None] | None = None
    max_total: int = DEFAULT_MAX_TOTAL
    confidence: float = 0.95

    @classmethod
    def of(
        cls,
        *,
        seed: int,
        battles: int,
        max_battles: int | None = None,
        first: int = 0,
        threads: int | None = None,
        executor: Cluster | None = None,
        progress: Callable[..., None] | None = None,
        max_total: int | None = None,
        confidence: float = 0.95,
    ) -> StudyPlan:
        """The plan, every number checked (a :class:`PlanError` names the parameter)."""
        cap = battles if max_battles is None else max_battles
        if not 1 <= battles <= MAX_BATTLES:
            raise PlanError("battles", f"{battles:,}", f"expected 1..{MAX_BATTLES:,}")
        if not battles <= cap <= MAX_BATTLES:
            raise PlanError(
                "max_battles", f"{cap:,}", f"expected {{battles}} ({battles:,}) or more"
            )
        if not 0 <= seed <= MAX_SEED:
            raise PlanError("seed", seed, "expected 0..2**63-1")
        if not 0 <= first <= MAX_BATTLES:
            raise PlanError("first", f"{first:,}", f"expected 0..{MAX_BATTLES:,}")
        if not 0 < confidence < 1:
            raise PlanError("confidence", confidence, "expected a probability, e.g. 0.95")
        total = DEFAULT_MAX_TOTAL if max_total is None else max_total
        if total < 1:
            raise PlanError("max_total", total, "expected at least 1")
        if threads is not None:
            import numba

            available = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
            if not 1 <= threads <= available:
                raise PlanError("threads", threads, f"expected 1..{available} on this machine")
        return cls(seed, battles, cap, first, threads, executor, progress, total, confidence)

    def check_total(self, what: str, battles: int) -> None:
        """Refuse a study of ``battles`` in all (``what``: how they add up) beyond
        ``max_total``, before its first battle."""
        if battles > self.max_total:
            raise PlanError(
                "max_total",
                self.max_total,
                f"{what} = {battles:,} battles in all, more than {{max_total}} "
                f"{self.max_total:,}: fewer values or battles, or raise {{max_total}}",
                whole=True,
            )
