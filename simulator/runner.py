"""Running battles: chunks of battle indices through a ruleset's kernel, merged.

Battle ``i`` of seed ``s`` is the same battle whatever the chunk size or thread
count, so a run is defined by (scenario, seed, battles) alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
import numpy as np

from . import rulesets
from .errors import BattleOddsError
from .results import Result
from .scenario import Scenario
from .stats import Tally

#: Battles per kernel call: large enough to amortise the call, small enough that the
#: outcome rows of a chunk stay a few tens of MB.
DEFAULT_CHUNK = 1 << 17
#: Per-battle rows are kept (``Result.battles``) up to this many battles by default.
KEEP_ROWS_LIMIT = 2_000_000

Progress = Callable[[int, int], None]


@contextmanager
def thread_count(threads: int | None) -> Iterator[None]:
    if threads is None:
        yield
        return
    if not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise BattleOddsError(
            f"--threads {threads}: expected 1..{numba.config.NUMBA_NUM_THREADS} on this machine")
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def simulate(
    scenario: Scenario,
    battles: int | None = None,
    seed: int | None = None,
    *,
    threads: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    keep_battles: bool | None = None,
    first: int = 0,
    progress: Progress | None = None,
) -> Result:
    """Run ``battles`` battles of ``scenario`` (defaults from the scenario file).

    Returns a :class:`Result` with ``.summary()`` and, unless the run is larger than
    ``KEEP_ROWS_LIMIT`` or ``keep_battles=False``, ``.battles`` (one row per battle).
    """
    battles = scenario.battles if battles is None else battles
    seed = scenario.seed if seed is None else seed
    if battles < 1:
        raise BattleOddsError(f"battles: {battles}: expected at least 1")
    if not 0 <= seed < 2**63:
        raise BattleOddsError(f"seed: {seed}: expected 0..2**63-1")
    if chunk < 1:
        raise BattleOddsError(f"chunk: {chunk}: expected at least 1")
    keep = battles <= KEEP_ROWS_LIMIT if keep_battles is None else keep_battles
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    tally = Tally()
    kept: list[dict[str, np.ndarray]] = []
    started = time.perf_counter()
    with thread_count(threads):
        done = 0
        while done < battles:
            count = min(chunk, battles - done)
            outcomes = prepared.run(seed, first + done, count)
            tally = tally.merge(Tally.of(outcomes))
            if keep:
                kept.append(outcomes)
            done += count
            if progress is not None:
                progress(done, battles)
    rows = None
    if keep:
        rows = {name: np.concatenate([k[name] for k in kept]) for name in kept[0]}
    return Result(
        scenario=scenario,
        seed=seed,
        first=first,
        tally=tally,
        rows=rows,
        kernel=prepared.kernel,
        notes=prepared.notes,
        flags=prepared.flags,
        seconds=time.perf_counter() - started,
    )
