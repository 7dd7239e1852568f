"""How a run is made, as one frozen value handed down whole.

The command line or the Python API builds a :class:`RunPlan` once (:meth:`RunPlan.of`
fills the scenario's battles and seed and checks every number); the front of a run
(:func:`simulator.running.progress.run_battles`), the precision rounds and the chunk
runner read it and pass it on, instead of a dozen loose arguments beside the seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BattleOddsError

if TYPE_CHECKING:
    from ..results.stats import Tally
    from ..scenario.scenario import Scenario
    from .chunking import ChunkSizes

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

#: (battles done, battles planned) as chunks finish.
Progress = Callable[[int, int], None]
#: (ruleset, canonical scenario data, seed, ranges of battles, the sizes of their chunks)
#: -> (first, count, tally) of each chunk, in battle order; it stops early once Ctrl-C
#: asked the run to stop.
ChunkExecutor = Callable[
    [str, str, int, list[tuple[int, int]], "ChunkSizes"], Iterator[tuple[int, int, "Tally"]]
]


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
    executor: ChunkExecutor | None = None
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
        executor: ChunkExecutor | None = None,
        checkpoint: str | Path | None = None,
        keep_battles: bool | None = None,
        precision: float | None = None,
        max_battles: int | None = None,
        interruptible: bool = False,
    ) -> RunPlan:
        """The plan of a run of ``scenario``: battles and seed default to the scenario's;
        every number and combination is checked here, once."""
        if precision is None and max_battles is not None:
            raise BattleOddsError(
                "--max-battles caps a --precision run: give --precision too, or use --battles"
            )
        if precision is not None:
            if battles is not None:
                raise BattleOddsError(
                    "--battles and --precision: give one "
                    "(with --precision, --max-battles caps the battles)"
                )
            if checkpoint is not None:
                raise BattleOddsError(
                    "--checkpoint resumes a run of a fixed size: use --battles, not --precision"
                )
            if not 0 < precision < 0.5:
                raise BattleOddsError(
                    f"--precision {precision}: expected a half-width between 0 and 0.5, e.g. 0.002"
                )
        cap = DEFAULT_MAX_BATTLES if max_battles is None else max_battles
        if not 1 <= cap <= MAX_BATTLES:
            raise BattleOddsError(f"--max-battles {cap}: expected 1..{MAX_BATTLES:,}")
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

    def round(self, first: int, battles: int, keep_battles: bool) -> RunPlan:
        """One fixed-size round of a precision run: the battles after the ``first`` done."""
        return replace(self, first=first, battles=battles, keep_battles=keep_battles)

    def on(self, executor: ChunkExecutor | None) -> RunPlan:
        """The same run with its chunks sent to ``executor`` (None: this process)."""
        return replace(self, executor=executor)
