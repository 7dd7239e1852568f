"""Battles of many scenarios on one seed: the engine of every study.

A study asks questions of many scenarios (armies of ``best``, cells of ``prices`` and
``matrix``, the two sides of ``compare``) on the same battles: battle ``i`` of every
scenario runs on stream ``i`` of one seed (common random numbers). The engine keeps, for
the whole study:

* each scenario built once and prepared once, in a cache keyed by what changes from
  one scenario to the next (an army, a pair of counts: the caller's key);
* one kernel for every group of scenarios that must draw battle ``i`` alike (a race, a
  comparison, a study's cells), by one rule (:func:`simulator.rulesets.base.common_kernel`):
  two olympia scenarios either side of the chain kernel's size limit would otherwise
  run different kernels and the common random numbers would be lost;
* calls of the kernels sized by time (:mod:`simulator.running.chunking`), so Ctrl-C is
  answered between them with :class:`~simulator.running.interrupt.Interrupted`;
* threads of this process, or a Dask cluster through the plan's
  :class:`~simulator.running.distributed.Cluster` (the object runs use too, with their
  retries and their one-line answer to a failed cluster; a worker keeps one cache of
  prepared scenarios, as this process does).

Two ways to ask: :meth:`ScenarioBattles.wins` (which battles of a range each scenario's
side won: the races) and :meth:`ScenarioBattles.tallies` (mergeable per-chunk summaries
of a range of battles of a group: everything else).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numba
import numpy as np

from ..results.stats import Tally
from ..rulesets.base import Prepared, known_common_kernel, use_common_kernel
from ..scenario.scenario import Scenario, prepare
from .capabilities import check_capabilities
from .chunking import CALL_SECONDS, GROWTH, ChunkSizes, sized_chunks
from .distributed import Group
from .interrupt import check_stop, stop_requested
from .memory import Estimate, available_bytes, battles_per_call, check_memory
from .plan import DEFAULT_CHUNK, StudyPlan
from .runner import thread_count

if TYPE_CHECKING:
    from .distributed import Cluster

#: How often (seconds) the battles done inside blocks running side by side are reported.
PROGRESS_SECONDS = 0.5
#: A scenario's battles run in one call when the last scenario's rate says they take at
#: most CALL_SECONDS / ONE_CALL_HEADROOM: Ctrl-C is still answered within a call's time
#: if the new scenario is this many times slower a battle.
ONE_CALL_HEADROOM = 100
#: Outcome columns of one chunk of battles of a group: one dict of columns per scenario.
Columns = list[Mapping[str, np.ndarray]]
#: What :meth:`ScenarioBattles.add_later` builds: a scenario, or a scenario with its
#: prepared arrays made already, exactly as preparing it would make them (a price
#: search's cell filled in from another of its types, Ruleset.fill_in).
Built = Scenario | tuple[Scenario, Prepared]
T = TypeVar("T")


class ScenarioBattles:
    """Battles of many scenarios on the seed of ``plan`` (of any rulesets: a group of
    two rulesets shares no kernel, and each runs its own).

    Scenarios are added under a key (:meth:`add`, or :meth:`add_built` for one built on
    first use from others); each is validated when added and prepared at its first
    battles. ``kernel_seconds`` counts the time inside the kernels (all threads) and
    ``battles`` the battles fought (each scenario's counted)."""

    def __init__(self, plan: StudyPlan) -> None:
        self.plan = plan
        self.seed = plan.seed
        #: The cluster of the plan (None: battles run on this process's threads).
        self.cluster: Cluster | None = plan.executor
        with thread_count(plan.threads):  # checks the count
            self.workers = numba.get_num_threads()
        self._scenarios: dict[Hashable, Scenario] = {}
        #: Scenarios kept to be built at first use (add_later).
        self._later: dict[Hashable, Callable[[], Built]] = {}
        #: Prepared arrays built with their scenario (add_later), not checked yet.
        self._made: dict[Hashable, Prepared] = {}
        self._prepared: dict[Hashable, Prepared] = {}
        self._pool: ThreadPoolExecutor | None = None
        #: Each scenario's call sizes; a new one starts near the last one's (the
        #: scenarios of a study are alike), a quarter of it in case it is larger.
        self._sizes: dict[Hashable, ChunkSizes] = {}
        self._last_size = 1
        #: Seconds a battle of the last scenario's block took (unknown at first).
        self._last_rate = float("inf")
        #: The memory a scenario's kernel call may use, read once for the study.
        self._memory: tuple[int, str] | None = None
        self.kernel_seconds = 0.0
        self.battles = 0
        #: Called (in the calling thread) each time battles are done: a study's progress.
        self.on_battles: Callable[[], None] | None = None

    def __enter__(self) -> ScenarioBattles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    # -- the scenarios -------------------------------------------------------------

    def add(self, key: Hashable, scenario: Scenario) -> Hashable:
        """Keep ``scenario`` under ``key`` (a key added before keeps its scenario)."""
        if key not in self._later:
            self._scenarios.setdefault(key, scenario)
        return key

    def add_built(self, key: Hashable, build: Callable[[], Scenario]) -> Scenario:
        """The scenario of ``key``, built by ``build`` (and so checked) the first time."""
        if key not in self._scenarios:
            self._scenarios[key] = build()
        return self._scenarios[key]

    def add_later(self, key: Hashable, build: Callable[[], Built]) -> Hashable:
        """Keep ``build`` under ``key``: the scenario is built (and so checked) where it
        is first used, which may be a worker thread of :meth:`each` (a study of
        thousands of small scenarios builds each beside the others' battles). An error
        of the building is raised where the scenario is used. A build that makes the
        prepared arrays too hands them over (:data:`Built`): they are checked as the
        engine's own are."""
        if key not in self._scenarios:
            self._later[key] = build
        return key

    def __contains__(self, key: Hashable) -> bool:
        return key in self._scenarios or key in self._later

    def scenario(self, key: Hashable) -> Scenario:
        if key not in self._scenarios:
            # Two threads never build one key at once: a group's keys are distinct, and
            # only the groups of one call of the engine run at a time.
            built = self._later[key]()
            if isinstance(built, tuple):
                built, made = built
                self._made[key] = made
            self._scenarios[key] = built
            del self._later[key]
        return self._scenarios[key]

    def prepared(self, key: Hashable) -> Prepared:
        """The scenario of ``key`` prepared, once."""
        if key not in self._prepared:
            scenario = self.scenario(key)
            made = self._made.pop(key, None)
            prepared = prepare(scenario) if made is None else made
            check_capabilities(prepared, scenario.ruleset)
            # A scenario of many columns runs fewer battles a call; one the machine
            # cannot run a call of is refused before its first battle.
            per_call = battles_per_call(prepared, DEFAULT_CHUNK)
            call = prepared.memory_bytes(per_call)
            if self._memory is None:
                self._memory = available_bytes()
            check_memory(
                Estimate(call, (f"{per_call:,} battles a call of {scenario.name}",)),
                "a smaller scenario",
                self._memory,
            )
            self._prepared[key] = prepared
            self._sizes[key] = ChunkSizes(per_call, max(1, self._last_size // GROWTH))
        return self._prepared[key]

    def _threads(self) -> ThreadPoolExecutor:
        """The plan's threads, each running kernels on one thread."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                self.workers, initializer=numba.set_num_threads, initargs=(1,)
            )
        return self._pool

    def forget(self, key: Hashable) -> None:
        """Drop the prepared scenario of ``key`` (its tables), keeping its scenario: a
        study that keeps what the battles said needs no more of them."""
        self._prepared.pop(key, None)
        self._made.pop(key, None)

    def drop(self, key: Hashable) -> None:
        """Drop the scenario of ``key`` with its tables (adding it again brings it back):
        a price search keeps its cells' scores, and its 8,000 cells' scenarios kept
        alive made every pass of Python's garbage collector longer (half a second of
        the search)."""
        for held in (self._scenarios, self._later, self._made, self._prepared, self._sizes):
            held.pop(key, None)

    def settle(self, keys: Sequence[Hashable], battles: int | None = None) -> str | None:
        """The one kernel of the group ``keys`` (the randomness contract: battle i is the
        same battle only within one kernel), set on each of them; hand it to
        :meth:`each`, :meth:`wins` and :meth:`tallies` of the group, which set it again
        (a scenario may belong to several groups). ``battles``: about how many battles
        each will run, for a kernel worth its set-up (Prepared.kernel_choices)."""
        prepared = [self.prepared(k) for k in keys]

        def choices(p: Prepared) -> tuple[str, ...]:
            check_stop()  # a table may take a second: Ctrl-C is answered between them
            return p.kernel_choices(battles)

        # What each can run may need its tables built (olympia's chain table): built
        # side by side, as its battles would be; none where the kernel is known without.
        known = known_common_kernel(prepared, battles)
        if known is None:
            if self.cluster is None and self.workers > 1 and len(prepared) > 1:
                list(self._threads().map(choices, prepared))
            else:
                for p in prepared:
                    choices(p)
        return use_common_kernel(prepared, battles, known)

    def _on(self, key: Hashable, kernel: str | None) -> Prepared:
        prepared = self.prepared(key)
        if kernel is not None:
            prepared.use_kernel(kernel)
        return prepared

    # -- each scenario on its own ------------------------------------------------

    def each(
        self,
        keys: Sequence[Hashable],
        first: int,
        count: int,
        kernel: str | None,
        summarise: Callable[[Mapping[str, np.ndarray]], T],
        combine: Callable[[list[T]], T],
    ) -> Iterator[tuple[int, T]]:
        """``(i, summary)`` of battles ``first .. first + count - 1`` of the scenario of
        ``keys[i]``, for every ``i``, in the order they finish: ``summarise`` turns a
        call's outcome columns into something ``combine`` joins (where the battles ran:
        here, or on a worker, where both must be module-level functions).

        Each scenario's battles run in calls sized by time; the scenarios side by side
        on the plan's threads, each kernel on one thread (a kernel's own threads would
        meet at a barrier at every call of a few thousand battles, which on a busy
        machine costs more than the battles), a single scenario on all of them; or on
        the cluster (:meth:`~simulator.running.distributed.Cluster.each`). A scenario
        not prepared yet is prepared (and one kept by :meth:`add_later` built) on the
        thread that runs its battles.
        Raises :class:`Interrupted` within about a second of Ctrl-C, after the
        summaries finished before it."""
        check_stop()
        keys = list(keys)
        if self.cluster is not None:
            yield from self._each_on_cluster(keys, first, count, kernel, summarise)
            return
        for i, _, summary in self._each_here(keys, first, count, kernel, summarise, combine):
            yield i, cast(T, summary)  # never None without ``able``

    def each_able(
        self,
        keys: Sequence[Hashable],
        first: int,
        count: int,
        kernel: str,
        summarise: Callable[[Mapping[str, np.ndarray]], T],
        combine: Callable[[list[T]], T],
    ) -> Iterator[tuple[int, tuple[str, ...], T | None]]:
        """:meth:`each` of scenarios whose kernels are not known yet: ``(i, choices,
        summary)``, where ``choices`` are the kernels the scenario of ``keys[i]`` can run
        (:meth:`Prepared.kernel_choices`, every one that can: olympia's chain table
        built) and ``summary`` is None when ``kernel`` is not among them (no battles
        run). The choices are found on the thread that runs the battles: a study of
        thousands of small scenarios (a price search's cells) builds one's table beside
        the others' battles instead of before them."""
        check_stop()
        keys = list(keys)
        if self.cluster is None:
            yield from self._each_here(keys, first, count, kernel, summarise, combine, True)
            return
        choices = []
        for key in keys:
            check_stop()  # a table may take a second: Ctrl-C is answered between them
            choices.append(self.prepared(key).kernel_choices())
        able = [i for i, c in enumerate(choices) if kernel in c]
        for i, c in enumerate(choices):
            if kernel not in c:
                yield i, c, None
        ran = self._each_on_cluster([keys[i] for i in able], first, count, kernel, summarise)
        for j, summary in ran:
            yield able[j], choices[able[j]], summary

    def _each_here(
        self,
        keys: list[Hashable],
        first: int,
        count: int,
        kernel: str | None,
        summarise: Callable[[Mapping[str, np.ndarray]], T],
        combine: Callable[[list[T]], T],
        able: bool = False,
    ) -> Iterator[tuple[int, tuple[str, ...], T | None]]:
        """:meth:`each` (and with ``able`` :meth:`each_able`) on this process's threads."""
        #: Battles of the blocks done so far, all blocks together (written by their
        #: threads under the lock, read here): one count, where a sum over every block
        #: at every report was quadratic in the blocks of a race's look.
        fought = [0]
        counting = threading.Lock()
        reported = 0

        def block(i: int) -> tuple[tuple[str, ...], T | None, float]:
            started = time.perf_counter()
            # Prepared here, on the block's thread: a table's kernel runs without the
            # interpreter's lock, beside the other blocks' battles.
            prepared = self.prepared(keys[i])
            choices = prepared.kernel_choices() if able else ()
            if able and kernel not in choices:
                return choices, None, time.perf_counter() - started
            if kernel is not None:
                prepared.use_kernel(kernel)
            run, sizes = prepared.run, self._sizes[keys[i]]
            if sizes.calls == 0:
                # A scenario's first calls start near the last one's (a quarter of it),
                # as of when its battles start: a group is prepared before any of its
                # battles, so at preparing every scenario of a race or a matrix started
                # from one battle and spent seven calls of a few battles each growing.
                sizes.size = max(sizes.size, min(sizes.cap, self._last_size // GROWTH))
                if self._last_rate * count * ONE_CALL_HEADROOM <= CALL_SECONDS:
                    # Battles the last scenario ran in a hundredth of a call's time: one
                    # call (a price search's cells, a thousand battles each, took two,
                    # and a call's own cost was a tenth of the cell's).
                    sizes.size = max(sizes.size, min(sizes.cap, count))
            parts = []
            began = time.perf_counter()
            for _, n, columns in sized_chunks(
                [(first, count)], sizes, lambda a, n: _checked(run, self.seed, a, n)
            ):
                parts.append(summarise(columns))
                with counting:
                    fought[0] += n
            self._last_size = sizes.size
            self._last_rate = (time.perf_counter() - began) / max(count, 1)
            summary = parts[0] if len(parts) == 1 else combine(parts)
            return choices, summary, time.perf_counter() - started

        def report() -> None:
            """The battles done since the last report, within blocks too: a study's
            progress moves (and knows its time left) long before a block ends."""
            nonlocal reported
            now = fought[0]
            if now > reported:
                self._done(now - reported)
                reported = now

        if self.workers > 1 and len(keys) > 1:
            pool = self._threads()
            # Each block hands its summary (or its error) to this queue as it ends: one
            # wait per block, where waiting on the set of futures still running would
            # cost a pass over all of them per block (a price search's fight runs
            # hundreds of blocks of a millisecond each).
            Handed = tuple[int, tuple[str, ...], Any, float, BaseException | None]
            finished: queue.SimpleQueue[Handed] = queue.SimpleQueue()

            # Each of the plan's threads takes the next block not taken until none is
            # left: one task a thread, where a task a block cost a future, a pass
            # through the pool's queue and a wake-up per block.
            taking = threading.Lock()
            left = iter(range(len(keys)))
            #: Set when the caller stops reading (an error, Ctrl-C): no block is taken.
            abandoned = threading.Event()

            def take() -> None:
                while not abandoned.is_set():
                    with taking:
                        i = next(left, None)
                    if i is None:
                        return
                    try:
                        choices, summary, seconds = block(i)
                    except BaseException as error:  # handed to the calling thread
                        finished.put((i, (), None, 0.0, error))
                        return
                    finished.put((i, choices, summary, seconds, None))

            takers = [pool.submit(take) for _ in range(min(self.workers, len(keys)))]
            try:
                for _ in range(len(keys)):
                    while True:
                        try:
                            i, choices, summary, seconds, error = finished.get(
                                timeout=PROGRESS_SECONDS
                            )
                            break
                        except queue.Empty:
                            report()
                    if error is not None:
                        raise error
                    self.kernel_seconds += seconds
                    report()
                    yield i, choices, summary
            finally:
                # At Ctrl-C the blocks raise Interrupted at their next call: the ones not
                # begun are left, the others end within a call.
                abandoned.set()
                wait(takers)
        else:
            with thread_count(1 if len(keys) > 1 else self.plan.threads):
                for i in range(len(keys)):
                    choices, summary, seconds = block(i)
                    self.kernel_seconds += seconds
                    report()
                    yield i, choices, summary

    def _each_on_cluster(
        self,
        keys: list[Hashable],
        first: int,
        count: int,
        kernel: str | None,
        summarise: Callable[[Mapping[str, np.ndarray]], T],
    ) -> Iterator[tuple[int, T]]:
        assert self.cluster is not None
        group, battles = self._group(keys, kernel), range(first, first + count)
        for start, summaries, seconds in self.cluster.each(group, battles, summarise):
            self.kernel_seconds += seconds
            self._done(count * len(summaries))
            for offset, summary in enumerate(summaries):
                yield start + offset, summary

    def _done(self, battles: int) -> None:
        self.battles += battles
        if self.on_battles is not None:
            self.on_battles()

    # -- the races -----------------------------------------------------------------

    def wins(
        self, keys: Sequence[Hashable], outcome: int, first: int, count: int, kernel: str | None
    ) -> np.ndarray:
        """A ``count x len(keys)`` bool array: True where battle ``first + row`` of the
        scenario of the column ended with ``outcome`` (0 attacker, 1 defender won), the
        scenarios side by side (:meth:`each`). Raises :class:`Interrupted` at Ctrl-C."""
        # Column by column: each scenario's battles are written (and read by a race) as
        # one contiguous column.
        won = np.empty((count, len(keys)), bool, order="F")
        summarise = _WON[outcome]
        for column, column_won in self.each(keys, first, count, kernel, summarise, joined):
            won[:, column] = column_won
        return won

    def _group(self, keys: list[Hashable], kernel: str | None) -> Group:
        """What a worker needs of the scenarios of ``keys`` (each one's ruleset and
        canonical data), with their kernel and the study's seed."""
        scenarios = [(self.scenario(k).ruleset, self.scenario(k).canonical) for k in keys]
        return Group(scenarios, kernel, self.seed)

    # -- mergeable tallies ---------------------------------------------------------

    def tallies(
        self,
        keys: Sequence[Hashable],
        first: int,
        count: int,
        summarise: Callable[[Columns], T],
        kernel: str | None,
        chunk: int = DEFAULT_CHUNK,
    ) -> Iterator[tuple[int, int, T]]:
        """``(first, count, summarise(columns))`` of chunks of battles ``first ..
        first + count - 1`` of every scenario of ``keys``, in battle order: a chunk runs
        the same battles of each scenario and ``summarise`` turns their outcome columns
        into something mergeable (a :class:`~simulator.results.stats.Tally` each, a
        comparison's paired sums), where the battles ran (here or on a worker:
        ``summarise`` must then be a module-level function). Calls are sized by time (as
        the group's first scenario's calls were), at most ``chunk`` battles; the iterator
        ends early once Ctrl-C asked to stop."""
        keys = list(keys)
        if self.cluster is not None:
            yield from self._tallies_on_cluster(keys, first, count, summarise, kernel, chunk)
            return
        prepared = [self._on(k, kernel) for k in keys]
        sizes = self._sizes[keys[0]]
        sizes.cap = min(sizes.cap, chunk)

        def run(at: int, n: int) -> T:
            started = time.perf_counter()
            columns = [p.run(self.seed, at, n) for p in prepared]
            self.kernel_seconds += time.perf_counter() - started
            return summarise(columns)

        with thread_count(self.plan.threads):
            for at, n, summary in sized_chunks([(first, count)], sizes, run):
                self._done(n * len(keys))
                self._last_size = sizes.size
                yield at, n, summary
                if stop_requested():
                    return

    def _tallies_on_cluster(
        self,
        keys: list[Hashable],
        first: int,
        count: int,
        summarise: Callable[[Columns], T],
        kernel: str | None,
        chunk: int,
    ) -> Iterator[tuple[int, int, T]]:
        """Chunks as tasks of the cluster, sized by the time the workers measure."""
        assert self.cluster is not None
        battles = range(first, first + count)
        chunks = self.cluster.summaries(
            self._group(keys, kernel), battles, summarise, ChunkSizes(chunk)
        )
        for chunk_first, n, summary, seconds in chunks:
            self.kernel_seconds += seconds
            self._done(n * len(keys))
            yield chunk_first, n, summary


def attacker_won(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """Which battles the attacker won."""
    return np.asarray(columns["winner"] == 0)


def defender_won(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """Which battles the defender won."""
    return np.asarray(columns["winner"] == 1)


_WON = (attacker_won, defender_won)


def joined(parts: list[np.ndarray]) -> np.ndarray:
    """The columns of consecutive calls as one."""
    return np.concatenate(parts)


def merged(parts: list[Tally]) -> Tally:
    """The tallies of consecutive calls as one."""
    total = parts[0]
    for part in parts[1:]:
        total = total.merge(part)
    return total


def winner(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """The ``winner`` column of a call."""
    return columns["winner"]


def tally(columns: Mapping[str, np.ndarray]) -> Tally:
    """A call's :class:`~simulator.results.stats.Tally`."""
    return Tally.of(columns)


def tally_each(columns: Columns) -> list[Tally]:
    """Each scenario's :class:`~simulator.results.stats.Tally` of a chunk (a
    :meth:`ScenarioBattles.tallies` summary)."""
    return [Tally.of(c) for c in columns]


def _checked(
    run: Callable[[int, int, int], Mapping[str, np.ndarray]], seed: int, first: int, count: int
) -> Mapping[str, np.ndarray]:
    """A kernel call, unless Ctrl-C asked to stop (then :class:`Interrupted`)."""
    check_stop()
    return run(seed, first, count)
