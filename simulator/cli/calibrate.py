"""``battle-odds calibrate``: the model scored against battles that were fought."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from .. import rulesets
from ..running.plan import MAX_BATTLES
from ..running.progress import progress_bar
from ..studies import calibrate as calibration
from .app import app
from .help import default_words
from .options import (
    Dpi,
    Json,
    PlotOutput,
    Threads,
    err,
    out,
    print_json,
    runs_battles,
    say_partial,
    say_written,
    seed_option,
    user_errors,
    written,
)

DEFAULT_DPI = 100


@app.command()
@user_errors
@runs_battles
def calibrate(
    file: Annotated[
        Path,
        typer.Argument(
            help="Calibration file of real battles (TOML; docs/calibration.md).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    battles: Annotated[
        int,
        typer.Option(
            "--battles",
            "-n",
            min=1,
            max=MAX_BATTLES,
            help=f"Battles run for each real battle {default_words(calibration.DEFAULT_BATTLES)}.",
        ),
    ] = calibration.DEFAULT_BATTLES,
    seed: Annotated[
        int, seed_option(f"Random seed {default_words(calibration.DEFAULT_SEED)}.")
    ] = calibration.DEFAULT_SEED,
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
) -> None:
    """How well the model predicted real battles: Brier score, log loss, coverage of the
    real losses, worst-predicted battles first (Ctrl-C: the battles scored so far)."""
    from functools import partial

    from ..running.runner import simulate

    if output is not None:
        from ..report.figures import check_output  # matplotlib: only for -o

        check_output(output)
    run = partial(simulate, threads=threads, interruptible=True)
    with progress_bar(err, "calibrate") as progress:
        answer = calibration.calibrate(file, battles, seed, run=run, progress=progress)
    if output is not None:
        from ..report.calibration_plots import calibration_figure
        from ..report.figures import save
        from ..running.interrupt import stop_reason

        figure = calibration_figure(answer, dpi)
        note = stop_reason() if answer.partial else None
        written("-o", output, lambda: save(figure, output, dpi, partial=note))
    if json:
        print_json(answer.to_dict())
        return
    render(answer)
    say_partial(answer.partial, json, f"{len(answer.rows)} real battles scored")
    say_written(output, "reliability diagram and PIT histogram")


def _table(title: str) -> Table:
    return Table(
        title=title, box=box.SIMPLE, title_justify="left", pad_edge=False, collapse_padding=True
    )


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.0%}"


def _number(x: float) -> str:
    return f"{x:g}"


def render(answer: calibration.Calibration) -> None:
    out.print(
        escape(
            f"{answer.path}: {len(answer.rows)} real battles scored, "
            f"{len(answer.skipped)} skipped; seed {answer.seed}"
        ),
        highlight=False,
    )
    scores = _table("Winners (lower is better)")
    for column in ("predictor", "Brier", "log loss"):
        scores.add_column(column, justify="right" if column != "predictor" else "left")
    scores.add_row("the model", f"{answer.brier:.4f}", f"{answer.log_loss:.4f}")
    for base in answer.baselines:
        scores.add_row(base.name, f"{base.brier:.4f}", f"{base.log_loss:.4f}")
    out.print(scores)
    out.print(
        f"Recorded losses: {answer.losses}; inside the model's 5-95% band "
        f"{_pct(answer.coverage)}, below it {_pct(answer.below)}, above it "
        f"{_pct(answer.above)} (a calibrated model: 90%, 5%, 5%)",
        highlight=False,
    )
    if answer.losses:
        out.print(
            "Where they fell in the model's distributions, by tenths (even when "
            "calibrated): " + " ".join(str(c) for c in answer.pit_counts),
            highlight=False,
        )
    # One battle a paragraph, not a table: the figures of a battle fit any width.
    out.print(
        "[bold]Battles, worst predicted first[/bold] (each real figure, then the model's "
        "5% / 50% / 95%)"
    )
    for number, row in enumerate(answer.rows, 1):
        out.print(
            escape(
                f"{number}. {row.name}: {_won(row.winner)}; the model gave it "
                f"{row.p[row.winner]:.1%}"
            ),
            highlight=False,
        )
        for x in _figures(row):
            out.print(escape(f"   {_placed_words(row, x)}"), highlight=False)
    for skipped in answer.skipped:
        out.print(
            f"skipped {skipped.name}: {skipped.reason}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


def _won(winner: str) -> str:
    if winner.endswith("_withdrew"):
        return f"the {winner.replace('_', ' ')}"
    return "a draw" if winner == "draw" else f"the {winner} won"


def _figures(row: calibration.Prediction) -> list[calibration.Placed]:
    return [*row.losses, *([row.steps] if row.steps is not None else [])]


def _placed_words(row: calibration.Prediction, x: calibration.Placed) -> str:
    ruleset = rulesets.get(row.ruleset) if row.ruleset else None
    what = (
        f"{ruleset.step_unit if ruleset else 'steps'}"
        if x.what == "steps"
        else (ruleset.describe_column(x.what) if ruleset else x.what)
    )
    mark = "" if x.place == "inside" else f", {x.place} the band"
    return f"{what}: {x.real} ({_number(x.low)} / {_number(x.median)} / {_number(x.high)}){mark}"
