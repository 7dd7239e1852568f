"""A progress bar for long runs: on a terminal only, never in pipes, files or CI logs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .errors import BattleOddsError
from .results import Result
from .runner import DEFAULT_CHUNK, simulate
from .runner import Progress as ProgressCallback
from .scenario import Scenario


@contextmanager
def progress_bar(
    console: Console, label: str, unit: str = "battles"
) -> Iterator[ProgressCallback | None]:
    """Yield a ``progress(done, total)`` callback drawing on ``console``, or None.

    None when the console is not a terminal, so redirected output stays clean. The
    bar is transient: it disappears when the run ends and the tables are printed.
    """
    if not console.is_terminal:
        yield None
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        # A long scenario name would squeeze the bar and the ETA out of an 80-column line.
        short = label if len(label) <= 28 else label[:27] + "…"
        task = bar.add_task(short, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def run_battles(
    scenario: Scenario,
    battles: int | None,
    seed: int | None,
    *,
    threads: int | None = None,
    precision: float | None = None,
    max_battles: int | None = None,
    console: Console | None = None,
    scheduler: str | None = None,
    checkpoint: Path | None = None,
    keep_battles: bool | None = None,
    chunk: int = DEFAULT_CHUNK,
) -> Result:
    """What ``run`` and ``odds`` do: a fixed number of battles, or with ``precision`` as
    many as it takes (at most ``max_battles``), with a progress bar on a terminal, on
    this machine or on a Dask cluster (``scheduler``). Ctrl-C ends the run after the
    chunk in progress with a partial result."""
    from .precision import DEFAULT_MAX_BATTLES, simulate_to_precision

    console = console if console is not None else Console(stderr=True)
    if precision is None and max_battles is not None:
        raise BattleOddsError(
            "--max-battles caps a --precision run: give --precision too, or use --battles"
        )
    if precision is not None and battles is not None:
        raise BattleOddsError(
            "--battles and --precision: give one (with --precision, --max-battles caps the battles)"
        )
    if precision is not None and checkpoint is not None:
        raise BattleOddsError(
            "--checkpoint resumes a run of a fixed size: use --battles, not --precision"
        )
    from .distributed import executor_for

    with ExitStack() as stack:
        executor = stack.enter_context(executor_for(scheduler))
        progress = stack.enter_context(progress_bar(console, scenario.name))
        if precision is None:
            return simulate(
                scenario,
                battles,
                seed,
                threads=threads,
                progress=progress,
                executor=executor,
                checkpoint=checkpoint,
                keep_battles=keep_battles,
                interruptible=True,
                chunk=chunk,
            )
        return simulate_to_precision(
            scenario,
            precision,
            seed,
            threads=threads,
            chunk=chunk,
            max_battles=max_battles or DEFAULT_MAX_BATTLES,
            progress=progress,
            executor=executor,
            interruptible=True,
            keep_battles=keep_battles,
        )
