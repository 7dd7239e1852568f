"""Running battles: chunks of battle indices through a ruleset's kernel, merged.

Battle ``i`` of seed ``s`` is the same battle whatever the chunk size, thread count,
process or machine, so a run is defined by (scenario, seed, first battle, battles)
alone. Chunks come back as exact, mergeable tallies (integer histograms), from this
process or from Dask workers, and the one merge below serves both: a run of 10**9
battles holds a few histograms, never 10**9 rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError, literal
from ..results.result import Result
from ..results.stats import FOUGHT_OUT, OUTCOMES, Tally
from ..scenario.scenario import Scenario, prepare
from ..version import __version__
from .capabilities import check_capabilities
from .checkpoint import Checkpoint
from .chunking import FIRST_CHUNK, ChunkSizes, sized_chunks
from .compiling import compile_clock, said_on_stderr
from .interrupt import StopRequest, fail_after_the_answer, stop_on_interrupt, stop_requested
from .memory import battles_per_call, check_memory, estimate, fits
from .plan import DEFAULT_CHUNK, Progress, RunPlan

if TYPE_CHECKING:
    from .distributed import Cluster

#: Per-battle rows are kept (``Result.battles``) up to this many battles unless asked.
KEEP_ROWS_LIMIT = 1_000_000
#: At most this many rows are kept even on request (about 250 MB of outcome columns).
MAX_KEPT_ROWS = 2_000_000
#: A checkpoint is written at most this often (seconds), and when the run stops.
CHECKPOINT_EVERY = 2.0
#: Names other modules take from here.
__all__ = ["FIRST_CHUNK", "Checkpoint", "StopRequest", "stop_on_interrupt"]


@contextmanager
def thread_count(threads: int | None) -> Iterator[None]:
    if threads is None:
        yield
        return
    import numba  # here: imported at start, before the kernels, it would load SciPy

    available = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    if not 1 <= threads <= available:
        raise ParameterError("threads", threads, f"expected 1..{available} on this machine")
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _saved(state: Checkpoint) -> Checkpoint | None:
    """``state`` after saving it, or None when the system refused the file (a full disk,
    a read-only file system): the run goes on without a checkpoint, its answer is
    whole, and the command says after it what was not written (exit status 1). The old
    file is left whole: checkpoints are written through a temporary file."""
    try:
        state.save()
    except OSError as exc:
        message = f"--checkpoint {state.path}: not written ({exc.strerror or exc})"
        if not fail_after_the_answer(message):
            said = literal(f"not written ({exc.strerror or exc})")
            raise ParameterError("checkpoint", state.path, said) from None
        return None
    return state


def outcome_ranges(
    prepared: Any, seed: int, first: int
) -> dict[str, tuple[int | None, int | None]]:
    """The outcome columns of ``prepared`` (as one battle shows them), and ``steps``, with
    the least and most value each can take: what a checkpoint's tally must keep to."""
    columns = Tally.of(prepared.run(seed, first, 1)).columns
    bounds = dict(prepared.column_bounds)
    # ``steps`` is tallied by outcome, apart from the columns: its bound travels with them.
    ranges: dict[str, tuple[int | None, int | None]] = {"steps": (0, prepared.step_limit)}
    # A withdrawal (winner 3 or 4) only where a side has a stop rule.
    ranges["winner"] = (0, len(OUTCOMES) - 1 if prepared.has_stop_rules else len(FOUGHT_OUT) - 1)
    for name in columns:
        if name in bounds:
            ranges[name] = bounds[name]
        elif name in prepared.flags:
            ranges[name] = (0, 1)
        elif name.startswith("casualties."):
            ranges[name] = (0, None)
        else:
            ranges[name] = (None, None)
    return ranges


def chunk_plan(first: int, battles: int, chunk: int) -> list[tuple[int, int]]:
    """``(first battle, count)`` of each chunk of a fixed plan, FIRST_CHUNK growing fourfold
    to ``chunk``, for the benchmarks that time kernel calls apart from their sizing (a run
    sizes its calls by time instead)."""
    plan = []
    offset = 0
    size = min(FIRST_CHUNK, chunk)
    while offset < battles:
        count = min(size, battles - offset)
        plan.append((first + offset, count))
        offset += count
        size = min(chunk, 4 * size)
    return plan


def local_chunks(
    prepared: Any,
    seed: int,
    ranges: list[tuple[int, int]],
    rows: list[Mapping[str, np.ndarray]] | None,
    sizes: ChunkSizes,
) -> Iterator[tuple[int, int, Tally]]:
    """The battles of ``ranges`` in order in this process, in calls sized by ``sizes``
    (appending their rows when asked)."""

    def run(first: int, count: int) -> Tally:
        outcomes = prepared.run(seed, first, count)
        if rows is not None:
            rows.append(outcomes)
        return Tally.of(outcomes)

    yield from sized_chunks(ranges, sizes, run)


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
    executor: Cluster | None = None,
    checkpoint: str | Path | None = None,
    interruptible: bool = False,
) -> Result:
    """Run ``battles`` battles of ``scenario`` (defaults from the scenario file).

    Returns a :class:`Result` with ``.summary()`` and, when kept, ``.battles`` (one row
    per battle): kept by default up to ``KEEP_ROWS_LIMIT`` battles, on request up to
    ``MAX_KEPT_ROWS``. ``executor`` runs chunks elsewhere (see
    :class:`simulator.running.distributed.Cluster`); ``checkpoint`` records progress in
    a file and resumes from it; ``interruptible`` turns Ctrl-C into a partial result.
    The options are those of :class:`~simulator.running.plan.RunPlan`.
    """
    plan = RunPlan.of(
        scenario,
        battles,
        seed,
        first=first,
        chunk=chunk,
        threads=threads,
        executor=executor,
        checkpoint=checkpoint,
        keep_battles=keep_battles,
        interruptible=interruptible,
    )
    if progress is not None:
        return run_chunks(scenario, plan, progress)
    with said_on_stderr(scenario.ruleset):  # a notebook's first run says it compiles
        return run_chunks(scenario, plan, progress)


def run_chunks(scenario: Scenario, plan: RunPlan, progress: Progress | None = None) -> Result:
    """The fixed-size run ``plan`` describes (its ``precision`` is for
    :func:`simulator.running.precision.run_to_precision`, which calls this per round)."""
    battles, seed, first, chunk = plan.battles, plan.seed, plan.first, plan.chunk
    keep_battles, executor, checkpoint = plan.keep_battles, plan.executor, plan.checkpoint
    keep = battles <= KEEP_ROWS_LIMIT if keep_battles is None else keep_battles
    if keep and battles > MAX_KEPT_ROWS:
        raise ParameterError(
            "keep_battles",
            None,
            f"{battles:,} battles is more rows than kept in memory "
            f"(at most {MAX_KEPT_ROWS:,}); the summary needs no rows: run without "
            "{keep_battles}, or keep fewer battles",
        )
    if keep and (executor is not None or checkpoint is not None):
        keep = keep_battles is True
        if keep:
            raise ParameterError(
                "keep_battles",
                None,
                "rows stay on the workers with {executor} and "
                "are not checkpointed with {checkpoint}; drop one of them",
            )
    state = None
    ranges = [(first, battles)]
    clock = compile_clock()
    compiled_before = clock.seconds
    prepared = prepare(scenario)
    # A stop rule or a battle in progress its ruleset does not declare: one line.
    check_capabilities(prepared, scenario.ruleset)
    # Fewer battles a call for a scenario of many columns, and the run's memory known
    # (and refused beyond the machine's) before any battle.
    chunk = battles_per_call(prepared, chunk)
    if keep and keep_battles is None and not fits(estimate(prepared, battles, chunk, True)):
        keep = False  # rows are kept unasked only where they fit: the summary needs none
    check_memory(
        estimate(prepared, battles, chunk, keep),
        "fewer battles kept ({keep_battles}), or a smaller scenario"
        if keep
        else "a smaller scenario",
    )
    if checkpoint is not None:
        state = Checkpoint.open(
            Path(checkpoint),
            {
                "scenario_hash": scenario.hash,
                "ruleset": scenario.ruleset,
                "seed": seed,
                "first": first,
                "battles": battles,
                "version": __version__,
            },
            outcome_ranges(prepared, seed, first),
        )
        ranges = state.remaining()
    tally = state.tally if state is not None else Tally()
    done_battles = tally.battles
    notes = prepared.notes
    if done_battles:
        notes += (
            f"resumed from {checkpoint}: {done_battles:,} of the {battles:,} battles were done "
            "before this run",
        )
    rows: list[Mapping[str, np.ndarray]] | None = [] if keep else None
    started = time.perf_counter()
    compiled_at_start = clock.seconds
    saved = started
    with thread_count(plan.threads), stop_on_interrupt(plan.interruptible):
        if progress is not None:
            progress(done_battles, battles)
        # Calls sized by time (at most ``chunk`` battles) here or on the workers: Ctrl-C
        # is answered within about a second either way.
        sizes = ChunkSizes(chunk, seconds=prepared.call_seconds)
        if executor is None:
            finished = local_chunks(prepared, seed, ranges, rows, sizes)
        else:
            finished = executor(scenario.ruleset, scenario.canonical, seed, ranges, sizes)
        for chunk_first, count, chunk_tally in finished:
            tally = tally.merge(chunk_tally)
            done_battles += count
            if state is not None:
                state.add(chunk_first, count, tally)
                # The first chunk is saved at once, so even a short run can resume.
                if len(state.done) == 1 or time.perf_counter() - saved > CHECKPOINT_EVERY:
                    state = _saved(state)
                    saved = time.perf_counter()
            if progress is not None:
                progress(done_battles, battles)
            if stop_requested():
                break
        # A Dask executor also ends, early, once Ctrl-C asked the run to stop, or when
        # the cluster failed (no worker left, the scheduler lost): the chunks so far.
        stopped = done_battles < battles
        failure = getattr(executor, "failure", None)
        if failure is not None:
            notes += (failure,)
        if hasattr(finished, "close"):
            finished.close()
        if state is not None:
            state = _saved(state)
        if checkpoint is not None and state is None:
            notes += (
                f"--checkpoint {checkpoint}: not kept up to date: a run resumed from it "
                "fights again the battles after its last save",
            )
    kept = None
    if rows:
        kept = {name: np.concatenate([r[name] for r in rows]) for name in rows[0]}
    return Result(
        scenario=scenario,
        seed=seed,
        first=first,
        tally=tally,
        rows=kept,  # an interrupted run keeps the rows of its first n battles
        kernel=prepared.kernel,
        notes=notes,
        flags=prepared.flags,
        # The battles' time: a first run's compiling is reported apart.
        seconds=time.perf_counter() - started - (clock.seconds - compiled_at_start),
        compile_seconds=clock.seconds - compiled_before,
        partial=stopped,
        stop_rules=prepared.has_stop_rules,
    )
