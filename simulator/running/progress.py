"""Progress of long runs: a bar with the time left on a terminal; in a pipe, one line
on stderr when the run will take more than a minute. Nothing else in pipes, files or CI
logs."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

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
from .plan import Progress as ProgressCallback
from .plan import RunPlan
from .runner import run_chunks

#: In a pipe, a run estimated to take longer than this (seconds) says so on stderr.
ETA_NOTICE_SECONDS = 60.0
#: The rate of battles is timed over at least this long (seconds) before it is trusted.
TIMED_SECONDS = 0.5


class Estimate:
    """Seconds left of a run, from its rate since the first piece of work reported.

    The first piece pays for loading or compiling the kernel, so the rate is timed from
    its end, over at least ``min_span`` seconds (a few small chunks time one-off costs
    more than battles): with small first chunks (``runner.FIRST_CHUNK``) the estimate
    comes within a second or so, or after the second chunk of a slow scenario, and
    sharpens with every chunk."""

    def __init__(
        self, clock: Callable[[], float] = time.perf_counter, min_span: float | None = None
    ) -> None:
        self.clock = clock
        self.min_span = TIMED_SECONDS if min_span is None else min_span
        self.updates = 0
        self.since: tuple[float, int] | None = None

    def left(self, done: int, total: int) -> float | None:
        """Seconds left after ``done`` of ``total`` (None until there is a rate)."""
        now = self.clock()
        self.updates += 1
        if self.since is None:
            # The call before any work (done may be > 0: a resumed run) and the first
            # piece of work only set the start of the timing.
            if self.updates >= 2:
                self.since = (now, done)
            return None
        start, start_done = self.since
        if done <= start_done or now - start < self.min_span:
            return None
        return (total - done) * (now - start) / (done - start_done)


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
) -> Iterator[ProgressCallback | None]:
    """Yield a ``progress(done, total)`` callback for ``console``.

    On a terminal it draws a transient bar with the time left (it disappears when the
    run ends and the tables are printed). Elsewhere it prints one line, once, when the
    estimated time left exceeds ``notice_after`` seconds (default ETA_NOTICE_SECONDS).
    """
    estimate = Estimate(clock)
    if not console.is_terminal:
        limit = ETA_NOTICE_SECONDS if notice_after is None else notice_after
        told = False

        def notice(done: int, total: int) -> None:
            nonlocal told
            left = estimate.left(done, total)
            if not told and left is not None and left > limit:
                told = True
                console.print(
                    f"battle-odds: {label}: about {format_seconds(left)} left for "
                    f"{total - done:,} more {unit} (Ctrl-C stops with the result so far)",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )

        yield notice
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("eta {task.fields[eta]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        # A long scenario name would squeeze the bar and the ETA out of an 80-column line.
        short = label if len(label) <= 28 else label[:27] + "…"
        task = bar.add_task(short, total=None, eta="…")

        def update(done: int, total: int) -> None:
            left = estimate.left(done, total)
            eta = "…" if left is None else format_seconds(left)
            bar.update(task, completed=done, total=total, eta=eta)

        yield update


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
