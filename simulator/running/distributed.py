"""Battles on a Dask cluster: :class:`Cluster`, the one object that submits to Dask, for
runs, studies and the page alike.

A chunk is (scenario data, seed, first battle, count); a worker rebuilds the scenario,
runs the kernel and sends back the chunk's mergeable :class:`~simulator.results.stats.Tally`,
never its rows. Battle i of seed s is the same battle on any worker, so a chunk re-run
after a worker is lost gives the same statistics, and the merged result equals a
local run with the same seed, bit for bit (the merge adds integer histograms, so its
order does not matter).

Chunks are sized by time as in this process (:mod:`simulator.running.chunking`, from
the time the workers measure), a few per worker thread in flight, and handed on in
battle order, so that Ctrl-C is answered at once: the client stops waiting, cancels
the chunks in flight (a worker is busy a quarter of a second more at most) and the
answer so far is battles ``first .. first + n - 1``, as a local run's is. A study's
tasks (chunks of a group of scenarios, or a few scenarios' battles each) go through the
same loop, with the same retries and the same one-line answer to a cluster's failure.

``--scheduler tcp://host:8786`` connects to a running cluster; ``--scheduler local:N``
starts a cluster of N worker processes on this machine (loopback only).
"""

from __future__ import annotations

import logging
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ..errors import BattleOddsError, ParameterError, Source
from ..results.stats import Tally
from ..startup import is_the_command_line
from .chunking import ChunkSizes, chunk_ranges
from .interrupt import Interrupted, stop_requested, stop_with_failure

#: Scenarios per task of :meth:`Cluster.each`.
TASK_SCENARIOS = 32
#: Times a chunk is retried after the worker running it is lost.
RETRIES = 5
#: Chunks sent ahead per worker thread: one runs while the next is on its way.
IN_FLIGHT_PER_THREAD = 2
#: Chunks finished but not yet handed on (they wait for an earlier one), per worker
#: thread, before no more are sent: a chunk held up by a lost worker should not let the
#: others run far ahead, since Ctrl-C drops what follows the first unfinished chunk.
AHEAD_PER_THREAD = 8
#: How often (seconds) the client looks for Ctrl-C while chunks run.
POLL_SECONDS = 0.1
#: How often (seconds) the client counts the cluster's worker threads during a run.
THREADS_EVERY = 2.0
#: Seconds a run waits on a cluster with no worker left (a local cluster's workers take
#: a few seconds to come back) before it ends with the chunks that finished.
NO_WORKERS_SECONDS = 20.0
#: Seconds a question to the scheduler (how many threads) may take before the scheduler
#: counts as lost.
ASK_SECONDS = 5.0
#: Seconds a chunk reported done may take to hand over its tally: one done and then lost
#: with its worker is run again, and waiting for it without a bound hung the command.
RESULT_SECONDS = 1.0
#: Seconds the command waits for its local cluster to close.
CLOSE_SECONDS = 10.0
#: Seconds to connect to a scheduler, and to learn that an address is not one.
CONNECT_SECONDS = 10.0
_LOCAL = re.compile(r"^local:(\d+)$")
T = TypeVar("T")
#: The kernels that ran in this worker process: a kernel's first call also loads it.
_loaded: set[tuple[str, str]] = set()


@lru_cache(maxsize=8)
def _prepared(ruleset: str, canonical: str) -> Any:
    """A worker prepares each scenario once, however many of its chunks it runs."""
    import json

    from ..scenario.scenario import from_data, prepare

    scenario = from_data(json.loads(canonical), Source("distributed"))
    return prepare(scenario)


def chunk_tally(
    ruleset: str, canonical: str, seed: int, first: int, count: int, threads: int | None
) -> tuple[Tally, float | None]:
    """Runs on a worker: the statistics of battles ``first .. first+count-1`` and the
    seconds the kernel took (None on the kernel's first call here, which loads it)."""
    from .runner import thread_count

    prepared = _prepared(ruleset, canonical)
    kernel = (ruleset, prepared.kernel)
    with thread_count(threads):
        started = time.perf_counter()
        tally = Tally.of(prepared.run(seed, first, count))
        seconds = time.perf_counter() - started
    if kernel not in _loaded:
        _loaded.add(kernel)
        return tally, None
    return tally, seconds


#: A study's scenarios prepared on this worker (many: the armies of a race), apart from
#: a run's (a study sets its group's kernel on them).
_study_prepared = lru_cache(maxsize=4096)(_prepared.__wrapped__)


def _prepared_on(ruleset: str, canonical: str, kernel: str | None) -> Any:
    prepared = _study_prepared(ruleset, canonical)
    if kernel is not None:
        prepared.use_kernel(kernel)  # a study's one kernel for its group
    return prepared


def scenario_each(
    scenarios: list[tuple[str, str]],
    kernel: str | None,
    seed: int,
    first: int,
    count: int,
    summarise: Callable[[Any], Any],
) -> tuple[list[Any], float]:
    """Runs on a worker for :meth:`simulator.running.scenarios.ScenarioBattles.each`:
    ``summarise`` of battles ``first .. first + count - 1`` of each scenario (its ruleset
    and canonical data) in one call of its kernel on one thread, and the seconds the
    kernels took."""
    from .runner import thread_count

    started = time.perf_counter()
    with thread_count(1):
        summaries = [
            summarise(_prepared_on(ruleset, canonical, kernel).run(seed, first, count))
            for ruleset, canonical in scenarios
        ]
    return summaries, time.perf_counter() - started


def scenario_summary(
    scenarios: list[tuple[str, str]],
    kernel: str | None,
    seed: int,
    first: int,
    count: int,
    summarise: Callable[[list[Mapping[str, np.ndarray]]], Any],
) -> tuple[Any, float]:
    """Runs on a worker for :meth:`simulator.running.scenarios.ScenarioBattles.tallies`:
    ``summarise`` of battles ``first .. first + count - 1`` of each scenario, and the
    seconds the kernels took."""
    prepared = [_prepared_on(ruleset, c, kernel) for ruleset, c in scenarios]
    started = time.perf_counter()
    columns = [p.run(seed, first, count) for p in prepared]
    return summarise(columns), time.perf_counter() - started


def in_background(build: Any, seconds: float | None, what: str) -> Any:
    """``build()`` in a thread, while this thread looks for Ctrl-C every POLL_SECONDS:
    a cluster that takes seconds to start or an address that never answers does not make
    Ctrl-C wait.

    Returns what ``build`` returned, or None when Ctrl-C asked the work to stop first:
    then ``build``'s thread closes what it built once it has built it (the process ends
    after that). Any exception of ``build`` is raised here; a build that takes longer
    than ``seconds`` is one line naming ``what``."""
    box: dict[str, Any] = {}
    abandoned = threading.Event()

    def target() -> None:
        # Ctrl-C is this thread's to see (Python runs signal handlers in it alone).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            box["built"] = build()
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
            return
        if abandoned.is_set():
            _close_quietly(box["built"])

    thread = threading.Thread(target=target, name=f"battle-odds {what}", daemon=seconds is not None)
    deadline = None if seconds is None else time.monotonic() + seconds
    thread.start()
    while thread.is_alive():
        thread.join(POLL_SECONDS)
        if stop_requested() and thread.is_alive():
            abandoned.set()
            return None
        if deadline is not None and time.monotonic() > deadline and thread.is_alive():
            abandoned.set()
            raise BattleOddsError(f"{what}: no answer within {seconds:g} s")
    if "error" in box:
        if stop_requested():
            # Ctrl-C reaches every process of the command: a worker that was starting
            # may die of it before its first line ignores it, and the cluster then fails
            # to start. The command was asked to stop, and it stops.
            return None
        raise box["error"]
    return box["built"]


def workers_ignore_ctrl_c() -> None:
    """The worker processes a local cluster starts, now and when it restarts one, ignore
    Ctrl-C from their first line: a terminal sends Ctrl-C to every process of the
    command, and each worker would print a KeyboardInterrupt traceback (the command
    stops them itself). Python runs a spawned process as ``python -c PROGRAM``; the
    program is prefixed with ``signal(SIGINT, SIG_IGN)``. Ignoring SIGINT in this
    process while they start, as they would then inherit it, would lose a Ctrl-C that
    comes meanwhile, and a cluster takes seconds to start."""
    from multiprocessing import spawn, util

    command_line = spawn.get_command_line
    if getattr(command_line, "ignores_ctrl_c", False):
        return

    def ignoring(**kwargs: Any) -> list[str]:
        line = list(command_line(**kwargs))
        if "-c" in line:
            at = line.index("-c") + 1
            line[at] = (
                "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); " + line[at]
            )
        return line

    launch = util.spawnv_passfds

    def born_deaf(*args: Any, **kwargs: Any) -> Any:
        # The child is born with Ctrl-C blocked (a signal mask survives exec): one that
        # comes while its interpreter starts, before the first line ignores it, would
        # kill it in `import site` with a traceback. This process still sees it: its
        # other threads, the main one among them, do not block it.
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return launch(*args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)

    ignoring.ignores_ctrl_c = True  # type: ignore[attr-defined]
    spawn.get_command_line = ignoring
    util.spawnv_passfds = born_deaf


def _close_quietly(thing: Any) -> None:
    """Close a client or a cluster within CLOSE_SECONDS: one whose workers or scheduler
    died may never report itself closed. A failure to close has nothing to tell."""
    if isinstance(thing, tuple):  # a cluster and its client: the client first
        for part in reversed(thing):
            _close_quietly(part)
        return
    with suppress(Exception):
        thing.close(timeout=CLOSE_SECONDS)


class ClusterFailed(BattleOddsError):
    """A cluster that could not be started or reached: not bad input, but one line all
    the same (exit status 2, as an address that is not a scheduler). Also what a study
    called from Python (outside a command) raises when its cluster fails under it
    (:class:`Cluster`): its answer could not say that it was cut short."""


@contextmanager
def connect(scheduler: str) -> Iterator[Any]:
    """A Dask client for ``tcp://host:port`` or a new local cluster for ``local:N``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # the [distributed] extra is optional for single-machine users
        raise ParameterError(
            "scheduler", scheduler, 'Dask is not installed: pip install -e ".[distributed]"'
        ) from None
    if is_the_command_line():
        workers_ignore_ctrl_c()
        # A cluster that loses its workers or its scheduler logs tracebacks of its own
        # (tasks of the client's loop that end in AllExit or a closed comm) at any time,
        # even after the command answered: its failure reaches the command through its
        # futures, and the command says it in one line.
        quiet = ("asyncio", "distributed", "tornado")
        for name in [*quiet, *logging.root.manager.loggerDict]:
            if name.split(".")[0] in quiet:  # Dask gives some of its loggers a level
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    local = _LOCAL.match(scheduler)
    if local:
        workers = int(local.group(1))
        if not 1 <= workers <= 64:
            raise ParameterError("scheduler", scheduler, "expected local:N with N in 1..64")

        def start() -> Any:
            # Loopback only; the scheduler's HTTP endpoint takes any free port rather
            # than 8787, which another cluster on the machine may hold.
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                # Errors too: a worker whose scheduler closed first (the command's end,
                # or its Ctrl-C) logs a heartbeat failure with a traceback; a failure
                # of a chunk reaches the command through its future, not the log.
                silence_logs=logging.CRITICAL,
            )
            try:
                return cluster, Client(cluster)
            except BaseException:
                cluster.close()
                raise

        # Ctrl-C while the cluster starts (seconds) stops the command at once: the
        # cluster is closed once it has started, and the run has no chunk to run.
        try:
            started = in_background(start, None, f"--scheduler {scheduler}")
        except Exception as exc:  # a worker that died while starting, ports, memory
            raise ClusterFailed(
                f"--scheduler {scheduler}: the local cluster did not start "
                f"({type(exc).__name__}: {_one_line(exc)})"
            ) from None
        if started is None:
            yield None
            return
        cluster, client = started
        try:
            yield client
        finally:
            _close_quietly(client)
            _close_quietly(cluster)
        return
    if not re.match(r"^(tcp|tls|inproc|ucx)://", scheduler):
        raise ParameterError("scheduler", scheduler, "expected tcp://HOST:PORT or local:N")
    where = f"--scheduler {scheduler}"
    try:
        # In a thread with a deadline of its own: a service that is not a Dask scheduler
        # may never answer the handshake (Dask's own timeout then waits for ever), or
        # answer with bytes Dask reads as a frame of exbibytes.
        client = in_background(
            lambda: Client(scheduler, timeout=f"{CONNECT_SECONDS:g}s"),
            CONNECT_SECONDS + 0.5,
            f"{where}: not a Dask scheduler, or not answering",
        )
    except BattleOddsError:
        raise
    except OSError as exc:
        raise BattleOddsError(f"{where}: cannot connect ({_one_line(exc)})") from None
    except Exception:  # what Dask makes of a service that is not a scheduler speaking
        raise BattleOddsError(f"{where}: not a Dask scheduler (it answered, not as one)") from None
    if client is None:  # Ctrl-C while connecting
        yield None
        return
    try:
        yield client
    finally:
        _close_quietly(client)


def _one_line(exc: BaseException, most: int = 160) -> str:
    """An exception's message on one line of at most ``most`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= most else text[: most - 1] + "…"


@contextmanager
def executor_for(scheduler: str | None) -> Iterator[Cluster | None]:
    """The cluster of ``--scheduler`` (None: run in this process)."""
    if scheduler is None:
        yield None
        return
    with connect(scheduler) as client:
        yield Cluster(client)


class Group(NamedTuple):
    """Scenarios of a study that run the same battles: each one's ruleset and canonical
    data (what a worker needs of it), the kernel they share and the seed."""

    scenarios: list[tuple[str, str]]
    kernel: str | None
    seed: int


class Cluster:
    """The one object that submits battles to a Dask cluster, for runs
    (:meth:`__call__`: the ``executor`` of ``simulate`` and of every study), for studies
    (:meth:`summaries` and :meth:`each`, for :class:`~simulator.running.scenarios.
    ScenarioBattles`) and for the page's runs (:func:`~simulator.running.stream.
    stream_battles`).

    Each of them is one loop (:meth:`_in_order`): tasks sent a few per worker thread
    ahead, each retried RETRIES times when its worker is lost, handed on in order. When
    the cluster fails (the scheduler lost, no worker left, a task failed every retry) the
    work ends with the tasks handed on so far and ``failure`` says why in one line; inside
    a command that line stops the work as Ctrl-C would
    (:func:`~simulator.running.interrupt.stop_with_failure`): the answer so far, marked
    partial, then the line. A run ends partial with the line as a note, here or in a
    Python caller; a study in a Python caller cannot say it was cut short by a failure, so
    it raises :class:`ClusterFailed` with the line instead. Ctrl-C ends the loop too, and
    cancels the tasks in flight."""

    def __init__(self, client: Any, threads: int | None = 1) -> None:
        self.client = client
        #: Threads of a run's kernel on a worker (a study's run on one each).
        self.threads = threads
        #: Why the last loop ended before its last task (None: it did not).
        self.failure: str | None = None

    # -- a run's chunks ------------------------------------------------------------

    def __call__(
        self,
        ruleset: str,
        canonical: str,
        seed: int,
        ranges: list[tuple[int, int]],
        sizes: ChunkSizes,
    ) -> Iterator[tuple[int, int, Tally]]:
        """``(first, count, tally)`` of each chunk of ``ranges`` of the scenario
        ``canonical``, sized by the time the workers measure, in battle order."""
        from ..scenario.scenario import content_hash

        def task(first: int, count: int) -> tuple[Any, ...]:
            return (chunk_tally, ruleset, canonical, seed, first, count, self.threads)

        name = f"{content_hash(canonical)}-{seed}"
        yield from self._in_order(chunk_ranges(ranges, sizes), task, name, sizes.timed)

    # -- a study's battles ---------------------------------------------------------

    def summaries(
        self, group: Group, battles: range, summarise: Callable[[Any], T], sizes: ChunkSizes
    ) -> Iterator[tuple[int, int, T, float]]:
        """``(first, count, summary, seconds)`` of chunks of ``battles`` of every scenario
        of ``group``, in battle order, sized by ``sizes`` from the time the workers
        measure; ``summarise`` (a module-level function) of their outcome columns (one
        dict of columns a scenario). Ends early at Ctrl-C, or at a failure inside a
        command; raises :class:`ClusterFailed` at a failure outside one."""
        scenarios, kernel, seed = group

        def task(at: int, n: int) -> tuple[Any, ...]:
            return (scenario_summary, scenarios, kernel, seed, at, n, summarise)

        chunks = chunk_ranges([(battles.start, len(battles))], sizes)
        yield from self._in_order(chunks, task, f"study-{seed}", sizes.timed, with_seconds=True)
        self._failed_study()

    def each(
        self, group: Group, battles: range, summarise: Callable[[Any], T]
    ) -> Iterator[tuple[int, list[T], float]]:
        """``(i, summaries, seconds)`` of ``battles`` of the scenarios of ``group`` from
        its ``i``-th on, TASK_SCENARIOS to a task, in their order: ``summarise`` of each
        one's outcome columns. Raises :class:`~simulator.running.interrupt.Interrupted`
        at Ctrl-C or at a failure inside a command, and :class:`ClusterFailed` at a
        failure outside one."""
        scenarios, kernel, seed = group
        first, count = battles.start, len(battles)

        def task(start: int, n: int) -> tuple[Any, ...]:
            some = scenarios[start : start + n]
            return (scenario_each, some, kernel, seed, first, count, summarise)

        starts = range(0, len(scenarios), TASK_SCENARIOS)
        tasks = ((start, min(TASK_SCENARIOS, len(scenarios) - start)) for start in starts)
        done = self._in_order(tasks, task, f"study-{seed}", with_seconds=True, what="scenarios")
        for start, _, summaries, seconds in done:
            yield start, summaries, seconds
        self._failed_study()
        if stop_requested():
            raise Interrupted

    def _failed_study(self) -> None:
        """A study's work that the cluster's failure ended: inside a command, the stop
        request it made ends the study with its answer so far; outside one, this error."""
        if self.failure is not None and not stop_requested():
            raise ClusterFailed(self.failure)

    # -- the one loop --------------------------------------------------------------

    def _in_order(
        self,
        tasks: Iterator[tuple[int, int]],
        task: Callable[[int, int], tuple[Any, ...]],
        name: str,
        timed: Callable[[int, float], None] | None = None,
        with_seconds: bool = False,
        what: str = "battles",
    ) -> Iterator[Any]:
        """``(first, count, answer)`` (with ``with_seconds``, ``(first, count, answer,
        seconds)``) of each of ``tasks`` (``(first, count)`` each, drawn when sent) in
        their order: ``task(first, count)`` is the function and arguments a worker runs,
        which returns ``(answer, seconds)`` (seconds None: a kernel's first call there);
        ``timed(count, seconds)`` hears each time as the task finishes. ``what`` the tasks'
        ``first .. first + count - 1`` number, for the line of a failure."""
        # Keys name the loop too: the chunks of two runs of one scenario and seed (a
        # warm-up and the run, a notebook cell run twice) are alike, and cancelling the
        # first run's futures at its end would cancel the second's under the same key.
        self.failure = None
        if self.client is None or stop_requested():  # Ctrl-C while the cluster started
            return
        key = f"battle-odds-{name}-{{}}-{{}}-{uuid.uuid4().hex[:8]}"
        running: dict[Any, tuple[int, int]] = {}
        order: list[tuple[int, int]] = []  # sent and not handed on, in order
        finished: dict[int, tuple[Any, float | None]] = {}  # of those, the ones done
        threads, counted = self._threads(), time.monotonic()
        workers_seen = time.monotonic()  # when the cluster last had a worker
        try:
            while not stop_requested():
                if threads < 0:
                    self._fail("lost the connection to the Dask scheduler")
                    return
                if threads == 0 and time.monotonic() - workers_seen > NO_WORKERS_SECONDS:
                    self._fail(f"no Dask worker left for {NO_WORKERS_SECONDS:g} s")
                    return
                if self.client.status not in ("running", "connecting"):
                    self._fail("lost the connection to the Dask scheduler")
                    return
                room = max(threads, 1)  # tasks wait on the scheduler for workers to come
                while len(running) < IN_FLIGHT_PER_THREAD * room and (
                    len(order) - len(running) < AHEAD_PER_THREAD * room
                ):
                    sent = next(tasks, None)
                    if sent is None:
                        break
                    future = self.client.submit(
                        *task(*sent), key=key.format(*sent), retries=RETRIES, pure=False
                    )
                    running[future] = sent
                    order.append(sent)
                if not order:  # every task sent and handed on
                    return
                for future in _first_done(running):
                    first, count = running.pop(future)
                    try:
                        finished[first] = future.result(timeout=RESULT_SECONDS)
                    except TimeoutError:
                        # Done, then lost with the worker that held it (being run again):
                        # waited for below, with the cluster's workers counted meanwhile.
                        running[future] = (first, count)
                        continue
                    except Exception as exc:  # retried RETRIES times, or the scheduler lost
                        self._fail(
                            f"{what} {first:,}..{first + count - 1:,} failed on the Dask "
                            f"cluster ({type(exc).__name__}: {_one_line(exc)})"
                        )
                        return
                    seconds = finished[first][1]
                    if timed is not None and seconds is not None:
                        timed(count, seconds)
                while order and order[0][0] in finished:
                    first, count = order.pop(0)
                    answer, seconds = finished.pop(first)
                    if with_seconds:
                        yield first, count, answer, seconds
                    else:
                        yield first, count, answer
                if time.monotonic() - counted > THREADS_EVERY:
                    threads, counted = self._threads(), time.monotonic()
                    if threads > 0:
                        workers_seen = counted
        finally:
            if running and self.client.status == "running":
                # A scheduler lost meanwhile has nothing left to cancel.
                with suppress(Exception):
                    self.client.cancel(list(running))

    def _fail(self, message: str) -> None:
        """End the work with the tasks handed on so far: a one-line failure after the
        answer (:func:`~simulator.running.interrupt.stop_with_failure`)."""
        self.failure = f"{message}: the answer is that of the chunks that finished"
        stop_with_failure(self.failure, "the Dask cluster failed")

    def _threads(self) -> int:
        """The cluster's worker threads now (workers may join or leave during a run);
        -1 when the scheduler does not answer within ASK_SECONDS."""
        try:
            return sum(self.client.nthreads(callback_timeout=ASK_SECONDS).values())
        except Exception:  # a scheduler gone: the connection closed, or no answer
            return -1


def _first_done(running: dict[Any, tuple[int, int]]) -> list[Any]:
    """The futures of ``running`` done within POLL_SECONDS (often none): a short nap,
    not ``as_completed``, so that Ctrl-C never waits for a chunk."""
    from distributed import wait

    try:
        done, _ = wait(list(running), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
    except TimeoutError:
        return []
    except Exception:  # the scheduler lost: a cancelled future is done, its result says why
        return [future for future in running if future.done()]
    return list(done)
