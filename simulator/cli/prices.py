"""``battle-odds prices`` (a fair price list) and ``battle-odds meta`` (what players will
build at those prices).

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from ..atomic import write_atomically
from ..running.output_paths import check_output_path
from ..running.progress import progress_bar
from ..scenario.scenario import DEFAULT_SEED
from ..studies.machinery.one_type import settings_text
from ..studies.machinery.price_list import Prices
from ..studies.matrix import DEFAULT_BATTLES as MATRIX_BATTLES
from ..studies.meta import DEFAULT_BOOTSTRAP, Meta
from ..studies.prices import DEFAULT_BATTLES, DEFAULT_BUDGETS
from .app import app
from .one_type import fight_matrix, type_words
from .options import (
    DEFAULT_DPI,
    BattleSettings,
    Dpi,
    Json,
    MaxTotal,
    PlotOutput,
    RulesetName,
    Scheduler,
    Threads,
    battle_settings,
    err,
    out,
    print_json,
    runs_battles,
    say_partial,
    say_written,
    user_errors,
    written,
)

Types = Annotated[
    str | None,
    typer.Option(
        help="Comma-separated unit types, e.g. knight,pikeman,archer "
        "(default: every type that can fight alone)."
    ),
]
Seed = Annotated[
    int,
    typer.Option(
        "--seed", "-s", min=0, max=2**63 - 1, help="Random seed, the same for every pair."
    ),
]


def _costs_option(help_text: str) -> object:
    return typer.Option(exists=True, dir_okay=False, readable=True, help=help_text)


@app.command()
@user_errors
@runs_battles
def prices(
    ruleset: RulesetName = "olympia",
    types: Types = None,
    base: Annotated[
        str | None,
        typer.Option(help="The type prices are counted in (costs 1; default: the first type)."),
    ] = None,
    budgets: Annotated[
        str,
        typer.Option(help="Comma-separated budgets, in men of the base type, e.g. 10,20,40."),
    ] = ",".join(f"{b:g}" for b in DEFAULT_BUDGETS),
    costs: Annotated[
        Path | None,
        _costs_option("TOML file of `type = cost` lines: the prices to start from."),
    ] = None,
    battles: Annotated[
        int, typer.Option("--battles", "-n", min=20, help="Battles per pair of counts of men.")
    ] = DEFAULT_BATTLES,
    seed: Seed = DEFAULT_SEED,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.9999, help="Level of the price intervals.")
    ] = 0.95,
    setting: BattleSettings = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            dir_okay=False,
            help="Write the prices as a --costs file (for matrix, meta and best); "
            "not written when Ctrl-C stops the search.",
        ),
    ] = None,
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    max_total: MaxTotal = None,
    scheduler: Scheduler = None,
) -> None:
    """What should each unit cost? A fair price list, with each type's break-even prices."""
    from ..running.distributed import executor_for
    from ..studies.prices import fair_prices

    settings = battle_settings(setting)
    if output is not None:
        from ..report import plots

        plots.check_output(output)
    if write is not None:
        check_output_path(write, "--write")
    with (
        executor_for(scheduler) as executor,
        progress_bar(err, "prices", "pairs of counts fought", open_ended=True) as progress,
    ):
        result = fair_prices(
            ruleset,
            types,
            base,
            budgets,
            costs,
            battles,
            seed,
            confidence=confidence,
            threads=threads,
            progress=progress,
            settings=settings,
            max_total=max_total,
            executor=executor,
        )
    # A partial price list is no --costs file: matrix, meta and best would read it as
    # fair prices. It is printed, drawn and marked; the file is left as it was.
    if write is not None and result.partial:
        err.print(f"{write}: not written: the prices are partial", highlight=False, soft_wrap=True)
        write = None
    elif write is not None:
        price_list = result.costs_toml()
        written("--write", write, lambda: write_atomically(write, price_list))
    note = f"{result.cells:,} pairs of counts fought" if result.partial else None
    if output is not None:
        from ..report import plots
        from ..report.price_plots import prices_figure

        figure = prices_figure(result, dpi=dpi)
        written("-o", output, lambda: plots.save(figure, output, partial=note))
    if json:
        print_json(result.to_dict())
        return
    _prices_table(result)
    say_partial(result.partial, json, note or "")
    for path, what in ((write, "costs file"), (output, "plot")):
        say_written(path, what)


def _prices_table(result: Prices) -> None:
    table = Table(
        title=f"{result.ruleset}: fair prices in {result.base}s, budgets "
        f"{', '.join(f'{b:g}' for b in result.budgets)}, {result.battles:,} battles a "
        f"matchup, seed {result.seed}"
        + (f", --set {settings_text(result.settings)}" if result.settings else ""),
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("type", no_wrap=True)
    table.add_column("price", justify="right")
    table.add_column(f"{100 * result.confidence:g}% interval", justify="right")
    table.add_column("break-even against others (cheapest .. dearest)")
    for kind, p in result.prices.items():
        if kind == result.base:
            interval = "base"
        else:
            interval = "-" if math.isnan(p.low) else f"{p.low:.3g}..{p.high:.3g}"
        spread = ""
        if p.pairwise:
            cheap = min(p.pairwise, key=lambda q: q.price)
            dear = max(p.pairwise, key=lambda q: q.price)
            spread = (
                f"{_edge(cheap.price, cheap.beyond)} vs {cheap.against} .. "
                f"{_edge(dear.price, dear.beyond)} vs {dear.against}"
            )
        table.add_row(kind, f"{p.price:.3g}", interval, spread)
    out.print(table)
    state = "converged" if result.converged else "NOT CONVERGED"
    out.print(
        (
            f"{state} after {result.sweeps} sweeps and {result.evaluations} evaluations of "
            "the whole system"
            if result.solved
            else "INTERRUPTED during the search"
        )
        + f" ({result.cells:,} pairs of counts fought); "
        "a type whose break-even prices spread widely is a counter-pick, not a mispriced unit",
        highlight=False,
    )
    for note in result.notes:
        out.print(note, highlight=False)


def _reply(kind: str, score: float) -> str:
    """The best reply to a type and its score: a counter above 0, the least bad below."""
    return f"{type_words(kind)} {score + 0.0:+.2f}" if kind else ""


def _edge(price: float, beyond: str | None) -> str:
    return {None: "", "above": ">", "below": "<"}[beyond] + f"{price:.3g}"


@app.command()
@user_errors
@runs_battles
def meta(
    budget: Annotated[
        str, typer.Option(help="What each army may spend, in the unit table's costs (e.g. 20).")
    ],
    ruleset: RulesetName = "olympia",
    types: Types = None,
    costs: Annotated[
        Path | None,
        _costs_option("TOML file of `type = cost` lines (e.g. written by prices --write)."),
    ] = None,
    battles: Annotated[
        int, typer.Option("--battles", "-n", min=1, help="Battles per pair of types.")
    ] = MATRIX_BATTLES,
    seed: Seed = DEFAULT_SEED,
    bootstrap: Annotated[
        int, typer.Option(min=0, max=100_000, help="Redrawn games for the support shares.")
    ] = DEFAULT_BOOTSTRAP,
    setting: BattleSettings = None,
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """What will players build? The Nash equilibrium of the equal-cost matrix."""
    from ..studies.meta import check_game, meta_of

    check_game(types, bootstrap)
    fought = fight_matrix(
        "meta",
        budget,
        ruleset,
        types,
        costs,
        battles,
        seed,
        output,
        threads,
        scheduler,
        setting,
        max_total,
    )
    result = meta_of(fought, bootstrap=bootstrap)
    note = result.partial_note()
    if output is not None:
        from ..report import plots
        from ..report.price_plots import meta_figure

        if result.types:
            figure = meta_figure(result, dpi=dpi)
        else:  # no two types fought each other: an empty figure says so
            from ..report.figures import new_figure

            figure = new_figure(dpi=dpi)
            figure.text(0.5, 0.5, "no game: fewer than two types fought", ha="center")
        written("-o", output, lambda: plots.save(figure, output, partial=note))
    if json:
        print_json(result.to_dict())
        return
    if result.types:
        _meta_table(result)
    say_partial(result.partial, json, note or "")
    say_written(output, "plot")


def _meta_table(result: Meta) -> None:
    m = result.matrix
    assert m is not None
    table = Table(
        title=f"{m.ruleset}: the equal-cost game at budget {m.budget:g} (both roles), "
        f"{m.battles:,} battles a pair, seed {m.seed}"
        + (f", --set {settings_text(m.settings)}" if m.settings else ""),
        box=box.SIMPLE_HEAVY,
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    # Type names as words wrap at their spaces: a narrow terminal folds a name, never cuts it.
    word = max(len(w) for t in result.types for w in type_words(t).split())
    for column, justify, width in (
        ("type, men", "left", word + 4),
        ("weight", "right", 6),
        ("in mix*", "right", 7),
        ("vs mix", "right", 6),
        ("best reply", "left", word + 6),
        ("dominated by", "left", word + 5),
    ):
        table.add_column(
            column,
            justify=justify,  # type: ignore[arg-type]
            no_wrap=justify == "right",
            min_width=width,
        )
    scores = result.against_mix()
    for i in sorted(range(len(result.types)), key=lambda i: -result.weights[i]):
        kind = result.types[i]
        beaten = result.dominated_by.get(kind)
        table.add_row(
            f"{type_words(kind)} {m.men[kind]}",
            f"{100 * result.weights[i]:.1f}%",
            f"{100 * result.support[i]:.0f}%" if result.bootstrap else "-",
            f"{scores[i]:+.2f}",
            _reply(*result.counter(kind)),
            ""
            if beaten is None
            else f"{type_words(beaten)} {100 * result.dominated_share[kind]:.0f}%",
        )
    out.print(table)
    mix = ", ".join(f"{type_words(t)} {100 * w:.0f}%" for t, w in result.mix.items())
    out.print(
        f"the mix: {mix}; value {result.value + 0.0:+.3f} (a symmetric game: 0). "
        "Scores are P(win) - P(loss) over both roles; 'best reply': the type that does "
        "best against it, with its score (below 0 it is only the least bad reply: every type "
        "loses to it); 'dominated by': in the share of redrawn games shown. *in mix: share "
        f"of {result.bootstrap} "
        "redrawn games with the type in the mix; a weight whose type is there in well under "
        "100% of them rests on noise",
        highlight=False,
    )
    for note in m.notes:
        out.print(note, highlight=False)
