"""Progress of long runs, the same for every command that runs battles: a bar with what
it counts, the total and the time left on a terminal; in a pipe or a notebook, plain
lines on stderr once the run will take more than a minute (then every half minute).
Nothing for a short run in pipes, files or CI logs."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, ParamSpec, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from ..results.result import Result
from ..scenario.scenario import Scenario
from .chunking import CallTimes
from .compiling import announce_compiles
from .plan import DEFAULT_CHUNK, RunPlan
from .plan import Progress as ProgressCallback
from .runner import run_chunks

#: In a pipe, a run estimated to take longer than this (seconds) says so on stderr.
ETA_NOTICE_SECONDS = 60.0
#: A search counted in probes or looks has no time left to show until a probe is done (the
#: first may take minutes): in a pipe it says it runs this many seconds after its start.
RUNNING_NOTICE_SECONDS = 2.0
#: In a pipe, after the first notice, a line of progress at most this often (seconds).
PIPE_EVERY_SECONDS = 30.0
#: Pieces of work that fit no cost per call are timed this long (seconds), then their mean
#: rate is the estimate.
AVERAGE_AFTER_SECONDS = 5.0
#: The rate of battles is timed over at least this long (seconds) before it is trusted.
TIMED_SECONDS = 0.5


class Estimate:
    """Seconds left of a run, timed on its battles rather than on per-call costs.

    Each report after the first ends a piece of work of ``n`` battles that took ``t``
    seconds; ``t = a + b * n`` is fitted over the pieces (:class:`CallTimes`; the first
    piece, which also pays for loading or compiling the kernel, is left out). The calls
    still to come are sized to take ``T`` seconds (:mod:`simulator.chunking`): ``n =
    (T - a) / b`` battles, at most the chunk size, so each of their battles costs
    ``b + a / n``: the time left is that times the battles left. A rate timed on the
    small first calls alone (``t / n``) counts their fixed cost as battles, and said a
    quarter of an hour for a run of seconds. The estimate
    waits for ``min_span`` seconds of timed pieces and for ``b`` to be known within a
    quarter; pieces all of one size (the points of a sweep) give their mean time."""

    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, min_span: float | None = None
    ) -> None:
        self.clock = clock
        self.min_span = TIMED_SECONDS if min_span is None else min_span
        self.last: tuple[float, int] | None = None
        self.times = CallTimes()
        self.skipped_first = False

    def left(self, done: int, total: int) -> float | None:
        """Seconds left after ``done`` of ``total`` (None until there is a timing)."""
        now = self.clock()
        last, self.last = self.last, (now, done)
        if last is None:
            return None  # the call before any work (done may be > 0: a resumed run)
        if done > last[1]:
            if self.skipped_first:
                self.times.add(done - last[1], now - last[0])
            self.skipped_first = True
        per_battle = self.per_battle()
        if per_battle is None or self.times.seconds < self.min_span:
            return None
        return max(total - done, 0) * per_battle

    def per_battle(self) -> float | None:
        """Seconds a battle of the calls still to come takes (None: not known yet)."""
        calls = self.times.calls
        # Three pieces at least: one call of one battle may be mostly fixed cost.
        if len(calls) >= 3 and self.times.one_size:
            return self.times.seconds / self.times.battles
        fitted = self.times.fit()
        if (
            fitted is None
            or fitted[2] > fitted[1] / 4
            or 4 * fitted[1] * self.times.largest < fitted[0]
        ):
            # b not known within a quarter, or battles under a fifth of the largest call
            # (a slope over calls that are all fixed cost is noise). Pieces that are not
            # calls (a study's scenarios side by side, reported every half second) may
            # never fit: after AVERAGE_AFTER_SECONDS of them, their mean rate.
            if self.times.seconds >= AVERAGE_AFTER_SECONDS:
                return self.times.seconds / max(self.times.battles, 1)
            return None
        a, b, _ = fitted
        # The calls to come: as many battles as fit in the time a call should take, at
        # most the chunk size (or the size the calls settled at, two alike in a row).
        size = min((self.times.call_seconds() - a) / b, DEFAULT_CHUNK)
        if len(calls) >= 2 and calls[-1][0] == calls[-2][0]:
            size = min(size, calls[-1][0])
        return b + a / max(size, 1.0)


def format_seconds(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``, ``2.1 days``: an estimate's precision, no more."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@contextmanager
def progress_bar(
    console: Console,
    label: str,
    unit: str = "battles",
    notice_after: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    running_after: float = RUNNING_NOTICE_SECONDS,
    open_ended: bool = False,
) -> Iterator[ProgressCallback]:
    """Yield a ``progress(done, total, detail="")`` callback for ``console``: ``done`` of
    ``total`` ``unit`` (battles, matchups, ...; ``open_ended``: no total is known, and
    ``total`` is ignored), ``detail`` what the work is at (``look 3 of 8: 412 armies left
    in the race``).

    On a terminal it draws a transient bar with the time left (it disappears when the
    run ends and the tables are printed). Elsewhere (a pipe, a notebook, a CI log) it
    prints plain lines: one when the estimated time left exceeds ``notice_after``
    seconds (default ETA_NOTICE_SECONDS), then one every PIPE_EVERY_SECONDS with what is
    done of how many and the time left; work counted in another ``unit`` than battles
    (probes, looks), or open-ended, also says ``running_after`` seconds after its start
    that it runs.
    """
    estimate = Estimate(clock)

    def line(text: str) -> None:
        console.print(text, highlight=False, markup=False, soft_wrap=True)

    if not console.is_terminal:
        limit = ETA_NOTICE_SECONDS if notice_after is None else notice_after
        told: float | None = None
        running: threading.Timer | None = None

        def say(text: str) -> None:
            line(f"battle-odds: {label}: {text}")

        if unit != "battles" or open_ended:
            running = threading.Timer(
                running_after,
                lambda: say(f"running, counted in {unit} (Ctrl-C stops with the answer so far)"),
            )
            running.daemon = True
            running.start()

        def notice(done: int, total: int, detail: str = "") -> None:
            nonlocal told
            left = None if open_ended else estimate.left(done, total)
            # The estimate read the clock: the same instant (a test's clock ticks per read).
            now = clock() if open_ended or estimate.last is None else estimate.last[0]
            if told is None:
                if left is not None and left > limit:
                    told = now
                    say(
                        f"about {format_seconds(left)} left for {total - done:,} more {unit} "
                        "(Ctrl-C stops with the result so far)"
                    )
                elif open_ended:
                    told = now
                return
            if now - told >= PIPE_EVERY_SECONDS:
                told = now
                count = f"{done:,} {unit}" if open_ended else f"{done:,} of {total:,} {unit}"
                time_left = "" if left is None else f", about {format_seconds(left)} left"
                say(count + (f" ({detail})" if detail else "") + time_left)

        try:
            with announce_compiles(line):  # the notice names the program itself
                yield notice
        finally:
            if running is not None:
                running.cancel()
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("eta {task.fields[eta]}"),
        TextColumn("{task.fields[detail]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        # A long scenario name would squeeze the bar and the ETA out of an 80-column line.
        short = label if len(label) <= 28 else label[:27] + "…"
        task = bar.add_task(short, total=None, eta="…", detail="")

        def update(done: int, total: int, detail: str = "") -> None:
            if open_ended:
                bar.update(task, completed=done, detail=detail)
                return
            left = estimate.left(done, total)
            eta = "…" if left is None else format_seconds(left)
            bar.update(task, description=short, completed=done, total=total, eta=eta, detail=detail)

        def compiled(functions: int) -> None:
            # A first run compiles for tens of seconds before any battle: the count moves.
            bar.update(task, description=f"compiling: {functions} functions done")

        with announce_compiles(line, compiled):
            yield update


@contextmanager
def or_plain_lines(
    progress: ProgressCallback | None, label: str, unit: str = "battles", open_ended: bool = False
) -> Iterator[ProgressCallback]:
    """``progress``, or when the caller gave none (the Python API: a notebook, a script)
    the plain lines of :func:`progress_bar` on stderr: nothing for a short study, the time
    left and then a line every half minute for a long one."""
    if progress is not None:
        yield progress
        return
    console = Console(stderr=True, force_terminal=False, force_jupyter=False)
    with progress_bar(console, label, unit, open_ended=open_ended) as plain:
        yield plain


P = ParamSpec("P")
R = TypeVar("R")


def plain_lines_by_default(
    label: str, unit: str | Callable[[dict[str, Any]], str] = "battles"
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A study of the Python API (``progress`` keyword-only) that, called without a
    ``progress``, reports to the plain lines of :func:`or_plain_lines` under ``label``:
    in a notebook or a script a long study says its time left, as on the command line.
    ``unit``: what it counts, or a function of the call's keywords that says it (a
    sweep counts battles, or points when run to a precision)."""

    def wrap(study: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(study)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            if kwargs.get("progress") is not None:
                return study(*args, **kwargs)
            counted = unit(kwargs) if callable(unit) else unit
            with or_plain_lines(None, label, counted) as lines:
                kwargs["progress"] = lines
                return study(*args, **kwargs)

        return run

    return wrap


def quiet(done: int, total: int, detail: str = "") -> None:
    """No progress: a study run inside another (the outer one reports)."""


def run_battles(
    scenario: Scenario,
    plan: RunPlan,
    *,
    console: Console | None = None,
    scheduler: str | None = None,
) -> Result:
    """What ``run``, ``odds`` and ``plot`` do: the run of ``plan`` (a fixed number of
    battles, or with ``plan.precision`` as many as it takes), with a progress bar on a
    terminal, on this machine or on the Dask cluster at ``scheduler``."""
    from .distributed import executor_for
    from .precision import run_to_precision

    console = console if console is not None else Console(stderr=True)
    with ExitStack() as stack:
        executor = stack.enter_context(executor_for(scheduler))
        progress = stack.enter_context(progress_bar(console, scenario.name))
        if executor is not None:
            plan = plan.on(executor)
        if plan.precision is None:
            return run_chunks(scenario, plan, progress)
        return run_to_precision(scenario, plan, progress)
