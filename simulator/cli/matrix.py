"""``battle-odds matrix``: who beats whom at equal cost.

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from ..report.tables import print_title
from ..scenario.scenario import DEFAULT_SEED
from ..studies.machinery.one_type import settings_text
from ..studies.matrix import DEFAULT_BATTLES, Matrix
from .app import app
from .one_type import fight_matrix, type_words
from .options import (
    DEFAULT_DPI,
    BattleSettings,
    CostsFile,
    Dpi,
    Json,
    MaxTotal,
    PlotOutput,
    RulesetName,
    Scheduler,
    Threads,
    out,
    print_json,
    runs_battles,
    say_partial,
    say_written,
    user_errors,
    written,
)


@app.command()
@user_errors
@runs_battles
def matrix(
    budget: Annotated[
        str, typer.Option(help="What each army may spend, in the unit table's costs (e.g. 20).")
    ],
    ruleset: RulesetName = "olympia",
    types: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated unit types, e.g. knight,pikeman,archer "
            "(default: every type that can fight alone)."
        ),
    ] = None,
    costs: CostsFile = None,
    battles: Annotated[
        int, typer.Option("--battles", "-n", min=1, help="Battles per pair of types.")
    ] = DEFAULT_BATTLES,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", "-s", min=0, max=2**63 - 1, help="Random seed, the same for every pair."
        ),
    ] = DEFAULT_SEED,
    setting: BattleSettings = None,
    output: PlotOutput = None,
    dpi: Dpi = DEFAULT_DPI,
    json: Json = False,
    threads: Threads = None,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """Who beats whom at equal cost: each pair of unit types, P(attacker wins) with its
    95% interval."""
    from ..report import plots

    result = fight_matrix(
        "matrix",
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
    note = f"{sum(c.result.n > 0 for c in result.cells)} pairs run" if result.partial else None
    if output is not None:
        figure = plots.matrix_figure(result, dpi=dpi)
        written("-o", output, lambda: plots.save(figure, output, partial=note))
    if json:
        print_json(result.to_dict())
        return
    _table(result)
    say_partial(result.partial, json, note or "")
    say_written(output, "heat map")


#: Width of a compact cell (``100\u00b110``) and the space after it.
_COMPACT = 6
#: The first column's header: the matrix's sense, said in every layout.
SENSE = "attacker \u2193\ndefender \u2192"


def _compact_width(name: str) -> int:
    """A compact column's width with the type's name as its (wrapped) header."""
    return max(_COMPACT - 1, *(len(w) for w in type_words(name).split()))


def _table(result: Matrix) -> None:
    """Rows attacker types, columns defender types (the first column's header says so in
    every layout). Where the names fit across the console, each cell is p over its
    interval; else each cell is p and the interval's larger half-width in points, under
    the types' names in words (wrapped at their spaces) when those fit in one table, else
    under names shortened to the cell's width (a line under the table spells them out),
    the columns split over several tables if they still do not fit."""
    types = result.types
    label_width = max(10, *(len(type_words(t)) for t in types)) + 2
    wide = label_width + 12 + sum(max(len(t), 11) + 2 for t in types) <= out.width
    named = label_width + sum(_compact_width(t) + 1 for t in types) <= out.width
    title = (
        f"{result.ruleset}: P(attacker wins) at equal cost, rows attack and columns defend, "
        f"budget {result.budget:g}, {result.battles:,} battles a pair, seed {result.seed}"
        + (f", --set {settings_text(result.settings)}" if result.settings else "")
    )
    if wide or named:
        short = {t: type_words(t) for t in types}
        groups = [list(range(len(types)))]
    else:
        short = shortened(types, _COMPACT - 1)
        per_table = max(1, (out.width - label_width) // _COMPACT)
        groups = [
            list(range(first, min(first + per_table, len(types))))
            for first in range(0, len(types), per_table)
        ]
    if not wide:
        title += " (cells: % \u00b1 95% half-width)"
    for number, group in enumerate(groups):
        first, last = short[types[group[0]]], short[types[group[-1]]]
        print_title(out, title if number == 0 else f"(continued: columns {first} to {last})")
        table = Table(
            box=box.SIMPLE_HEAVY,
            show_lines=wide,
            padding=(0, 1) if wide else (0, 0),
            collapse_padding=not wide,
        )
        table.add_column(SENSE, no_wrap=True)
        for j in group:
            kind = types[j]
            header = f"{type_words(kind)}\n{result.men[kind]} men" if wide else short[kind]
            table.add_column(
                header,
                justify="right",
                no_wrap=not named or wide,
                min_width=_compact_width(kind) if named and not wide else _COMPACT - 1,
                max_width=None if wide or not named else _compact_width(kind),
            )
        for a in types:
            cells = [_cell(result, a, types[j], wide) for j in group]
            men = f"{result.men[a]} men, cost {result.costs[a]:g}"
            table.add_row(f"{type_words(a)}\n{men}" if wide else type_words(a), *cells)
        out.print(table)
    spelt = [f"{s} = {type_words(t)}" for t, s in short.items() if s != type_words(t)]
    if spelt:
        out.print("columns: " + ", ".join(spelt), highlight=False)
    if not wide:
        alike: dict[tuple[int, float], list[str]] = {}
        for t in types:
            alike.setdefault((result.men[t], result.costs[t]), []).append(type_words(t))
        out.print(
            "men a side: "
            + "; ".join(
                f"{men} (cost {cost:g}): " + ("every type" if len(alike) == 1 else ", ".join(ts))
                for (men, cost), ts in alike.items()
            ),
            highlight=False,
        )
    if not wide and any(math.isnan(result.cell(a, d).win[0]) for a in types for d in types):
        out.print("?: not yet known (the pair fought no battle)", highlight=False)
    for note in result.notes:
        out.print(note, highlight=False)


def shortened(names: Sequence[str], width: int) -> dict[str, str]:
    """Each name in at most ``width`` characters, all different: whole if it fits, else
    the initials of its first words and the start of its last ("blessed_soldier" is
    "b.sol"), a number on the end where two would be the same."""
    short: dict[str, str] = {}
    for name in names:
        *first, last = name.split("_")
        text = name if len(name) <= width else ("".join(f"{w[0]}." for w in first) + last)[:width]
        candidate, n = text, 2
        while candidate in short.values():
            candidate = f"{text[: width - len(str(n))]}{n}"
            n += 1
        short[name] = candidate
    return short


def _cell(result: Matrix, attacker: str, defender: str, wide: bool) -> str:
    p, low, high = result.cell(attacker, defender).win
    if math.isnan(p):  # a pair not fought before Ctrl-C: 0 battles
        return "not yet\nknown" if wide else "?"
    if wide:
        return f"{100 * p:.1f}%\n{100 * low:.1f}-{100 * high:.1f}"
    half = max(p - low, high - p)
    return f"{100 * p:.0f}\u00b1{math.ceil(100 * half):.0f}"
