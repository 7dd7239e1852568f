"""``battle-odds regress``: balance numbers against a baseline, for CI."""

from __future__ import annotations

import json as jsonlib
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import BattleOddsError
from ..running.interrupt import EXIT_INTERRUPTED, Interrupted
from ..running.output_paths import TOML, XML, check_output_path
from ..running.progress import progress_bar
from .app import app
from .options import (
    Json,
    MaxTotal,
    Scheduler,
    battles_option,
    err,
    out,
    print_error,
    runs_battles,
    say_partial,
)


@app.command()
@runs_battles
def regress(
    paths: Annotated[list[Path], typer.Argument(help="Scenario folders or files.", exists=True)],
    baseline: Annotated[
        Path, typer.Option(help="Baseline file of balance numbers (TOML).", dir_okay=False)
    ],
    update: Annotated[
        bool, typer.Option("--update", help="Rewrite the baseline from this run.")
    ] = False,
    battles: Annotated[int | None, battles_option("With --update: battles per scenario.")] = None,
    level: Annotated[
        float | None,
        typer.Option(min=1e-9, max=0.5, help="With --update: family-wise false-alarm level."),
    ] = None,
    json: Json = False,
    junit: Annotated[
        Path | None, typer.Option(help="Also write a JUnit XML report here.", dir_okay=False)
    ] = None,
    max_total: MaxTotal = None,
    scheduler: Scheduler = None,
) -> None:
    """Compare balance numbers with a baseline: exit 0 within noise, 1 moved, 2 bad input
    (Ctrl-C: the scenarios checked so far, exit 130)."""
    from functools import partial

    from ..atomic import write_atomically
    from ..running.distributed import executor_for
    from ..running.runner import simulate
    from ..studies import regress as regression

    stack = ExitStack()
    try:
        executor = stack.enter_context(executor_for(scheduler))
        run = partial(simulate, executor=executor)
        if junit is not None:
            check_output_path(junit, "--junit", XML)
        if update:
            check_output_path(baseline, "--baseline", TOML)
            with progress_bar(err, "regress --update") as progress:
                written = regression.update(
                    paths,
                    baseline,
                    battles=battles,
                    level=level,
                    max_total=max_total,
                    progress=progress,
                    run=run,
                )
            out.print(
                f"{baseline}: baseline of {len(written.entries)} scenarios written", highlight=False
            )
            return
        read = regression.read_baseline(baseline)
        with progress_bar(err, "regress") as progress:
            report = regression.check(
                paths, read, baseline, max_total=max_total, progress=progress, run=run
            )
    except BattleOddsError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    except Interrupted:
        err.print(
            f"{baseline}: not written (interrupted before every scenario ran)",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        stack.close()
    if junit is not None:
        write_atomically(junit, report.junit())
    if json:
        sys.stdout.write(jsonlib.dumps(report.to_dict(), indent=2) + "\n")
    else:
        render_regression(report)
        say_partial(report.partial, json, "the scenarios after the last one shown were not run")
    if not report.partial:
        raise typer.Exit(0 if report.passed else 1)


def render_regression(report: Any) -> None:
    from rich.table import Table

    table = Table(
        title=f"Balance regression (Holm, family-wise level {report.level})", title_justify="left"
    )
    for column in ("scenario", "status"):
        table.add_column(column, overflow="fold")
    for scenario, status in report.statuses.items():
        style = "green" if status == "ok" else "bold red"
        table.add_row(scenario, f"[{style}]{status}[/{style}]")
    out.print(table)
    if report.moved:
        # One line per number, never wrapped: CI logs are read with grep.
        out.print("[bold]What moved[/bold] (baseline -> now, change, p-value <= Holm threshold):")
        for c in report.moved:
            out.print(
                f"  {c.scenario}  {c.number}  {c.baseline:.4g} -> {c.now:.4g}  "
                f"({c.change:+.4g}, p={c.p:.2g} <= {c.threshold:.2g})",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
    out.print(
        f"{len(report.comparisons)} numbers compared; "
        + ("all within noise" if report.passed else "[bold red]balance moved[/bold red]")
    )
