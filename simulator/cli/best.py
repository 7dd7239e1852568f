"""``battle-odds best``: what should I bring?

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

import math
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..report.question import question
from ..running.progress import progress_bar
from ..scenario.scenario import load_scenario
from ..studies.best import best as find_best
from .app import app
from .help import default_of
from .options import (
    DEFAULT_DPI,
    CostsFile,
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

#: Frontier rows shown in the table (the cheapest and the dearest kept, the middle cut).
SHOWN = 30


@app.command()
@user_errors
@runs_battles
def best(
    scenario: ScenarioPath,
    budget: Annotated[
        float, typer.Option(help="What the added army may cost, in the unit costs (e.g. 24).")
    ],
    side: Annotated[str, typer.Option(help="The side the army joins: attacker or defender.")] = (
        "attacker"
    ),
    types: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated unit types to choose from, e.g. soldier,pikeman,knight "
            "(default: every type that can fight alone)."
        ),
    ] = None,
    costs: CostsFile = None,
    caps: Annotated[
        str | None,
        typer.Option("--max", help="The most men of some types, e.g. knight=8,archer=4."),
    ] = None,
    target: Annotated[
        float | None,
        typer.Option(
            help="Instead of the likeliest to win: the cheapest army that surely wins "
            "with at least this probability."
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option(help="Probability that the answer's guarantee holds.")
    ] = default_of(find_best, "confidence"),
    tolerance: Annotated[
        float,
        typer.Option(help="Armies this close in P(win) may be told apart no further."),
    ] = default_of(find_best, "tolerance"),
    battles: Annotated[
        int | None,
        typer.Option(
            "--battles",
            "-n",
            min=1,
            help="Battles of a race's first look: where every army is raced (default "
            "500), a search's races (default 2,000).",
        ),
    ] = default_of(find_best, "battles"),
    max_battles: Annotated[
        int,
        typer.Option(min=1, help="Most battles an army fights (its looks double up to it)."),
    ] = default_of(find_best, "max_battles"),
    seed: Seed = None,
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """What should I bring? The likeliest army to win within a budget (or the cheapest to
    reach --target), with a guarantee, and the best army found at every cost."""
    from ..running.distributed import executor_for

    loaded = load_scenario(scenario)
    if output is not None:
        from ..report import plots

        plots.check_output(output)
    with (
        executor_for(scheduler) as executor,
        progress_bar(err, "best", "battles of this race", at_most=True) as progress,
    ):
        answer = find_best(
            loaded,
            budget=budget,
            side=side,
            types=types,
            costs=costs,
            caps=caps,
            target=target,
            confidence=confidence,
            tolerance=tolerance,
            battles=battles,
            max_battles=max_battles,
            seed=seed,
            threads=threads,
            executor=executor,
            progress=progress,
            max_total=max_total,
        )
    note = f"{answer.evaluated:,} armies evaluated" if answer.partial else None
    if output is not None:
        from ..report.frontier import frontier_figure

        figure = frontier_figure(answer, dpi=dpi)
        written("-o", output, lambda: plots.save(figure, output, partial=note))
    if json:
        print_json(answer.to_dict())
        return
    out.print(escape(question(loaded)), highlight=False)
    table = Table(
        title=f"{loaded.name}: the best army found at each cost for the {side}, P({side} wins) "
        f"in % ({answer.confidence:.0%} interval), seed {answer.seed}",
        box=box.SIMPLE,
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    for column in ("cost", "army", "P % (interval)", "battles", ""):
        table.add_column(column, justify="left" if column in ("army", "") else "right")
    rows = answer.frontier.to_dict("records")
    if len(rows) > SHOWN:
        half = SHOWN // 2
        rows = [*rows[:half], {}, *rows[-half:]]
    for row in rows:
        if not row:
            table.add_row("...", "", "", "", "")
            continue
        table.add_row(
            f"{row['cost']:g}",
            row["army"],
            f"{100 * row['p']:.1f} ({100 * row['low']:.1f}..{100 * row['high']:.1f})",
            f"{row['battles']:,}",
            "<- chosen" if row["status"] == "chosen" else "",
        )
    out.print(table)
    out.print(answer.sentence(), highlight=False)
    if answer.tied:
        shown = ", ".join(answer.offer.label(a) for a in answer.tied[:8])
        more = len(answer.tied) - 8
        out.print(
            f"not told apart from it: {shown}" + (f" and {more} more" if more > 0 else ""),
            highlight=False,
        )
    out.print(answer.guarantee(), highlight=False)
    out.print(
        f"{answer.candidates:,} armies within budget, {answer.evaluated:,} evaluated, "
        f"{answer.battles:,} battles in {_seconds(answer.seconds)}",
        highlight=False,
    )
    for line in answer.notes:
        out.print(line, highlight=False)
    say_partial(answer.partial, json, note or "")
    say_written(output, "frontier plot")


def _seconds(seconds: float) -> str:
    return (
        f"{seconds:.1f} s"
        if seconds < 60
        else f"{math.floor(seconds / 60)} min {seconds % 60:.0f} s"
    )
