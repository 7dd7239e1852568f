"""A run that shows itself while it runs: the result so far, every fraction of a second.

``battle-odds serve`` answers a question in a page whose intervals narrow while the
battles run. :func:`stream_battles` runs the same chunks as
:func:`~simulator.running.runner.run_chunks` (or, with a precision target, the rounds of
:func:`~simulator.running.precision.precision_rounds`, as a run's) and yields a
:class:`~simulator.results.result.Result` of the battles done so far at most every
``every`` seconds, then the whole answer. Battle ``i`` is the same battle whatever the
chunking, so the last result is, bit for bit, the one ``run_battles`` returns for the
same plan, and a run stopped after ``n`` battles equals ``simulate(scenario, n, seed)``.

The caller stops it with ``stop`` (checked after every kernel call, which takes at most
about a quarter of a second): a page's stop button, a closed tab or a time limit. No
signal handler is involved, so it runs in any thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..results.result import Result
from ..results.stats import Tally
from ..scenario.scenario import Scenario, prepare
from .capabilities import check_capabilities
from .chunking import ChunkSizes
from .plan import RunPlan
from .precision import precision_report, precision_rounds, widest_half_width
from .runner import local_chunks

if TYPE_CHECKING:
    from .distributed import Cluster

#: Seconds between two results so far.
EVERY = 0.2


class _Serialised:
    """A prepared scenario whose kernel calls take ``lock`` first: Numba's default
    threading layer runs one parallel kernel at a time in a process, so runs in
    several threads take turns, call by call."""

    def __init__(self, prepared: Any, lock: threading.Lock | None) -> None:
        self.prepared = prepared
        self.lock = lock

    def run(self, seed: int, first: int, count: int) -> Mapping[str, np.ndarray]:
        with self.lock if self.lock is not None else nullcontext():
            return self.prepared.run(seed, first, count)


class Sofar(NamedTuple):
    """The result of the battles done so far; ``final``: the run's whole answer."""

    result: Result
    final: bool


def stream_battles(
    scenario: Scenario,
    plan: RunPlan,
    *,
    stop: Callable[[], bool] = lambda: False,
    every: float = EVERY,
    lock: threading.Lock | None = None,
    clock: Callable[[], float] = time.perf_counter,
    executor: Cluster | None = None,
) -> Iterator[Sofar]:
    """Results of ``plan``'s battles so far, at most every ``every`` seconds, and last
    the whole answer (``final``) (``partial`` when ``stop()`` ended it early). Kernel calls hold
    ``lock`` (if given) while they run; ``executor`` runs the chunks on a Dask
    :class:`~simulator.running.distributed.Cluster` (one per run: its ``failure`` is its
    last run's), and a failure it reports ends the run with the battles done, partial,
    the failure a note."""
    prepared = prepare(scenario)
    check_capabilities(prepared, scenario.ruleset)
    kernel = _Serialised(prepared, lock)
    flags = prepared.flags
    started = last = clock()
    tally = Tally()
    sizes = ChunkSizes(plan.chunk, seconds=prepared.call_seconds)
    precise = plan.precision is not None
    stopped = False
    failed: tuple[str, ...] = ()

    def result(partial: bool) -> Result:
        extra: dict[str, Any] = {}
        if precise:
            widest = widest_half_width(tally, flags) if tally.battles else 1.0
            extra["precision"] = precision_report(plan, widest, tally.battles)
        return Result(
            scenario=scenario,
            seed=plan.seed,
            first=plan.first,
            tally=tally,
            kernel=prepared.kernel,
            notes=(*prepared.notes, *failed),
            flags=flags,
            seconds=clock() - started,
            partial=partial,
            extra=extra,
            stop_rules=prepared.has_stop_rules,
        )

    def said() -> tuple[Tally, frozenset[str]]:
        return tally, flags

    rounds = precision_rounds(plan, said) if precise else iter([(0, plan.battles)])
    for done, count in rounds:
        target = done + count
        ranges = [(plan.first + done, count)]
        if executor is None:
            chunks = local_chunks(kernel, plan.seed, ranges, None, sizes)
        else:
            chunks = executor(scenario.ruleset, scenario.canonical, plan.seed, ranges, sizes)
        for _, _, chunk_tally in chunks:
            tally = tally.merge(chunk_tally)
            if stop():
                stopped = tally.battles < target
                break
            if clock() - last >= every and tally.battles < target:
                last = clock()
                yield Sofar(result(partial=False), final=False)
        if hasattr(chunks, "close"):
            chunks.close()  # a generator left after a stop
        failure = None if executor is None else executor.failure
        if failure and tally.battles < target:
            stopped, failed = True, (failure,)
        if stopped:
            break
    yield Sofar(result(partial=stopped), final=True)
