"""Battles of many armies on one seed, for the races of ``best``: each army's scenario
built and prepared once, a block of battles of an army in time-sized calls of its kernel
(Ctrl-C is answered between them), the armies of a block side by side on threads, or on
a Dask cluster."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numba
import numpy as np

from .. import rulesets
from ..errors import Source
from ..results.stats import OUTCOMES
from ..running.chunking import GROWTH, ChunkSizes, winners
from ..running.interrupt import Interrupted, check_stop, stop_requested
from ..running.plan import MAX_BATTLES
from ..running.runner import thread_count
from ..scenario.scenario import Scenario
from .armies import Army, Offer
from .worth import reinforced

#: Armies per Dask task.
TASK_ARMIES = 32


class ArmyBattles:
    """Battles of many armies on one seed: a :data:`.racing.WinsOf` for the races.

    Each army's scenario is built (and validated) once, from the scenario of its
    smaller prefix (armies share them), and prepared once; a block of battles of an army
    runs in calls of its kernel sized by time (:mod:`simulator.running.chunking`), and
    once Ctrl-C asks to stop every thread leaves its block after the call in progress
    and the block raises :class:`~simulator.running.interrupt.Interrupted`. The armies
    of a block run side by side on ``workers`` threads, each kernel on one thread: a
    kernel's own threads would meet at a barrier at every call of a few thousand
    battles, and on a busy machine that costs more than the battles. ``kernel_seconds``
    counts the time inside the kernels (all threads)."""

    def __init__(
        self,
        scenario: Scenario,
        side: str,
        offer: Offer,
        seed: int,
        workers: int = 1,
        client: Any = None,
    ) -> None:
        self.scenario, self.side, self.offer, self.seed = scenario, side, offer, seed
        self.ruleset = rulesets.get(scenario.ruleset)
        self.client = client
        self.armies: list[Army] = []
        self.number: dict[Army, int] = {}
        self._scenarios: dict[Army, Scenario] = {(0,) * len(offer.types): scenario}
        self._prepared: dict[int, Any] = {}
        from concurrent.futures import ThreadPoolExecutor

        self._pool = (
            ThreadPoolExecutor(workers, initializer=numba.set_num_threads, initargs=(1,))
            if workers > 1 and client is None
            else None
        )
        self.kernel_seconds = 0.0
        self.battles = 0
        #: Each army's call sizes; a new army starts near the last one's (the armies of
        #: a race are alike), a quarter of it in case it is larger.
        self._sizes: dict[int, ChunkSizes] = {}
        self._last_size = 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()

    def register(self, army: Army) -> int:
        """The army's number, building (and so checking) its scenario the first time."""
        if army not in self.number:
            self.scenario_of(army)
            self.number[army] = len(self.armies)
            self.armies.append(army)
        return self.number[army]

    def scenario_of(self, army: Army) -> Scenario:
        if army in self._scenarios:
            return self._scenarios[army]
        last = max(i for i, n in enumerate(army) if n)
        prefix = tuple(n if i < last else 0 for i, n in enumerate(army))
        kind, count = self.offer.types[last], army[last]
        built = reinforced(self.scenario_of(prefix), self.side, kind, count, f"+{count} {kind}")
        self._scenarios[army] = built
        return built

    def __call__(self, ids: list[int], first: int, count: int) -> np.ndarray:
        check_stop()
        if self.client is not None:
            won = self._on_cluster(ids, first, count)
            self.battles += count * len(ids)
            return won
        for i in ids:
            if i not in self._prepared:
                self._prepared[i] = self.ruleset.prepare(self.scenario_of(self.armies[i]).model)
                self._sizes[i] = ChunkSizes(MAX_BATTLES, max(1, self._last_size // GROWTH))
        winner = OUTCOMES.index(self.side)

        def block(i: int) -> tuple[np.ndarray, float]:
            started = time.perf_counter()
            prepared, sizes = self._prepared[i], self._sizes[i]
            won = winners(lambda at, n: prepared.run(self.seed, at, n), first, count, sizes)
            self._last_size = sizes.size
            return won == winner, time.perf_counter() - started

        if self._pool is None:
            with thread_count(1):
                blocks = [block(i) for i in ids]
        else:
            blocks = list(self._pool.map(block, ids))
        # At Ctrl-C the blocks raise Interrupted at their next call: map() re-raises the
        # first and cancels the blocks not begun, and close() waits for the others.
        self.kernel_seconds += sum(seconds for _, seconds in blocks)
        self.battles += count * len(ids)
        won = np.empty((count, len(ids)), bool)
        for column, (column_won, _) in enumerate(blocks):
            won[:, column] = column_won
        return won

    def _on_cluster(self, ids: list[int], first: int, count: int) -> np.ndarray:
        groups = [ids[i : i + TASK_ARMIES] for i in range(0, len(ids), TASK_ARMIES)]
        futures = [
            self.client.submit(
                army_wins,
                self.scenario.ruleset,
                [self.scenario_of(self.armies[i]).canonical for i in group],
                OUTCOMES.index(self.side),
                self.seed,
                first,
                count,
                pure=False,
                retries=5,
            )
            for group in groups
        ]
        # Wait in short naps, not in gather(): Ctrl-C cancels the tasks and stops.
        while not all(future.done() for future in futures):
            if stop_requested():
                self.client.cancel(futures)
                raise Interrupted
            time.sleep(0.1)
        packed = self.client.gather(futures)
        return np.concatenate(
            [np.unpackbits(p, axis=0, count=count).astype(bool) for p in packed], axis=1
        )


@lru_cache(maxsize=4096)
def _prepared_on_worker(ruleset: str, canonical: str) -> Any:
    import json

    from ..scenario.scenario import from_data

    scenario = from_data(json.loads(canonical), Source("distributed"))
    return rulesets.get(ruleset).prepare(scenario.model)


def army_wins(
    ruleset: str, canonicals: list[str], winner: int, seed: int, first: int, count: int
) -> np.ndarray:
    """Runs on a Dask worker: which of battles ``first ..`` each army's side won, as bits
    packed along the battles (one column per army)."""
    won = np.empty((count, len(canonicals)), bool)
    with thread_count(1):
        for column, canonical in enumerate(canonicals):
            outcomes = _prepared_on_worker(ruleset, canonical).run(seed, first, count)
            np.equal(outcomes["winner"], winner, out=won[:, column])
    return np.packbits(won, axis=0)
