"""``battle-odds worth`` and ``sensitivity``: the designer's questions.

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..report.question import question
from ..rulesets.words import plural
from ..running.interrupt import stop_reason
from ..running.plan import MAX_BATTLES
from ..running.progress import progress_bar
from ..scenario.scenario import load_scenario
from ..studies import sensitivity as studied
from ..studies.worth import worth as worth_study
from .app import app
from .help import default_of, default_words
from .options import (
    DEFAULT_DPI,
    Dpi,
    Json,
    MaxTotal,
    PlotOutput,
    ScenarioPath,
    Scheduler,
    Seed,
    Threads,
    err,
    out,
    print_json,
    runs_battles,
    say_partial,
    say_written,
    user_errors,
    written,
)

Side = Annotated[str, typer.Option(help="Whose win probability: attacker or defender.")]


def _interval(p: float, low: float, high: float) -> str:
    return "-" if math.isnan(p) else f"{100 * p:.1f} ({100 * low:.1f}..{100 * high:.1f})"


def _change(d: float, low: float, high: float) -> str:
    return "-" if math.isnan(d) else f"{100 * d:+.1f} ({100 * low:+.1f}..{100 * high:+.1f})"


def _plot_and_json(answer: Any, panel: str, output: Path | None, dpi: int, json: bool) -> bool:
    """Draw ``plots.<panel>(answer)`` to ``output`` when asked (marked when the answer is
    partial), and print the ``--json`` answer when asked; True when that was the answer
    (no table follows). Plots (matplotlib, a second or more to import) are imported
    here, after the battles: a command that imported them first answered Ctrl-C late."""
    if output is not None:
        from ..report import plots

        note = stop_reason() if answer.partial else None
        figure = plots.figure_of(getattr(plots, panel)(answer))
        written("-o", output, lambda: plots.save(figure, output, dpi, partial=note))
    if json:
        print_json(answer.to_dict())
    return json


def _table(title: str) -> Table:
    # Compact padding: the tables fit an 80-column terminal without wrapping.
    return Table(
        title=title, box=box.SIMPLE, title_justify="left", pad_edge=False, collapse_padding=True
    )


@app.command()
@user_errors
@runs_battles
def worth(
    scenario: ScenarioPath,
    add: Annotated[str, typer.Option(help="What to price: a count and a type, e.g. '1 knight'.")],
    in_: Annotated[str, typer.Option("--in", help="The unit type to price it in, e.g. soldier.")],
    side: Side = "attacker",
    battles: Annotated[
        int | None,
        typer.Option(
            "--battles",
            "-n",
            min=1,
            help="Battles of each probe's first look, doubled until sure "
            f"{default_words(default_of(worth_study, 'battles'))}.",
        ),
    ] = None,
    max_battles: Annotated[
        int | None,
        typer.Option(
            "--max-battles",
            min=1,
            max=MAX_BATTLES,
            help="Most battles a probe fights, its looks doubling up to it "
            f"{default_words(default_of(worth_study, 'max_battles'))}.",
        ),
    ] = None,
    seed: Seed = None,
    confidence: Annotated[
        float,
        typer.Option(help="Confidence that every comparison of the search is on the right side."),
    ] = default_of(worth_study, "confidence"),
    max_n: Annotated[
        int, typer.Option("--max", min=1, help="The most men of the --in type to try.")
    ] = default_of(worth_study, "max_n"),
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    max_total: MaxTotal = None,
    scheduler: Scheduler = None,
) -> None:
    """How many men of one type win as often as X added to a side (e.g. 1 knight)."""
    from ..running.distributed import executor_for

    limits: dict[str, Any] = {}
    if battles is not None:
        limits["battles"] = battles
    if max_battles is not None:
        limits["max_battles"] = max_battles
    loaded = load_scenario(scenario)
    if output is not None:
        from ..report.figures import check_output  # matplotlib: only for -o

        check_output(output)
    with (
        executor_for(scheduler) as executor,
        progress_bar(err, "worth", f"numbers of {in_} tried", at_most=True) as progress,
    ):
        answer = worth_study(
            loaded,
            side=side,
            add=add,
            in_=in_,
            seed=seed,
            confidence=confidence,
            max_n=max_n,
            threads=threads,
            progress=progress,
            max_total=max_total,
            executor=executor,
            **limits,
        )
    if _plot_and_json(answer, "worth_panel", output, dpi, json):
        return
    out.print(escape(question(loaded)), highlight=False)
    table = _table(
        f"{loaded.name}: P({side} wins) in %, intervals at z = {answer.z:.2f} "
        f"({answer.confidence:.0%} for the whole search), seed {answer.seed}"
    )
    for column in (
        f"{plural(answer.in_)} added",
        "P % (interval)",
        f"P - P with {add}",
        "verdict",
        "battles",
    ):
        table.add_column(column, justify="right")
    for row in answer.frame.to_dict("records"):
        table.add_row(
            str(row["n"]),
            _interval(row["p"], row["low"], row["high"]),
            _change(row["diff"], row["diff_low"], row["diff_high"]),
            row["verdict"],
            f"{row['battles']:,}",
        )
    out.print(table)
    if answer.max_n < max_n:
        out.print(f"(--max {max_n} lowered to {answer.max_n}: the room the {side} has left)")
    out.print(answer.sentence(), highlight=False)
    say_partial(answer.partial, json, f"{len(answer.probes)} probes run")
    say_written(output, "plot of the probes")


@app.command()
@user_errors
@runs_battles
def sensitivity(
    scenario: ScenarioPath,
    side: Side = "attacker",
    battles: Annotated[
        int | None,
        typer.Option(
            "--battles",
            "-n",
            min=1,
            help=f"Battles per change {default_words(studied.DEFAULT_BATTLES)}.",
        ),
    ] = None,
    seed: Seed = None,
    count_step: Annotated[
        int, typer.Option(help="Men added and taken away per count.")
    ] = default_of(studied.sensitivity, "count_step"),
    rating_step: Annotated[
        float,
        typer.Option(help="Fraction of a rating to move it by (rounded as the rating requires)."),
    ] = default_of(studied.sensitivity, "rating_step"),
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    max_total: MaxTotal = None,
    scheduler: Scheduler = None,
) -> None:
    """Which number matters: each count and rating one step down and up, on common random
    numbers, sorted by effect."""
    from ..running.distributed import executor_for
    from ..studies.sensitivity import sensitivity as run_sensitivity

    loaded = load_scenario(scenario)
    if output is not None:
        from ..report.figures import check_output  # matplotlib: only for -o

        check_output(output)
    with executor_for(scheduler) as executor, progress_bar(err, "sensitivity") as progress:
        result = run_sensitivity(
            loaded,
            battles,
            seed,
            side=side,
            count_step=count_step,
            rating_step=rating_step,
            threads=threads,
            progress=progress,
            max_total=max_total,
            executor=executor,
        )
    if _plot_and_json(result, "tornado_panel", output, dpi, json):
        return
    base = "not yet known" if math.isnan(result.base) else f"{100 * result.base:.2f}%"
    out.print(escape(question(loaded)), highlight=False)
    table = _table(
        f"{loaded.name}: P({side} wins) = {base}; change in points "
        f"per step (paired 95% interval), {result.battles:,} battles each, seed {result.seed}"
    )
    for column in ("number", "now", "down", "change", "up", "change "):
        table.add_column(column, justify="left" if column == "number" else "right")
    frame = result.frame
    # Stopped before the first change: no rows (and no columns to group by).
    for knob, rows in frame.groupby("knob", sort=False) if len(frame) else ():
        by = {r["direction"]: r for r in rows.to_dict("records")}
        cells = [str(knob), f"{by['down']['from']:g}"]
        for direction in ("down", "up"):
            r = by[direction]
            cells.append(f"{r['to']:g}")
            cells.append(r["note"] or _change(r["diff"], r["low"], r["high"]))
        table.add_row(*cells)
    out.print(table)
    say_partial(result.partial, json, f"{len(result.rows)} of the changes run")
    say_written(output, "tornado plot")
