"""``battle-odds matrix``: who beats whom at equal cost.

Registered on the one typer app by importing this module at the end of ``cli.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from ..errors import BattleOddsError
from ..report.tables import print_title
from ..running.progress import progress_bar
from ..scenario.scenario import DEFAULT_SEED
from ..studies.machinery.one_type import settings_text
from ..studies.matrix import DEFAULT_BATTLES, Matrix, equal_cost_matrix
from .app import app
from .options import (
    BattleSettings,
    CostsFile,
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
    user_errors,
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
    dpi: Dpi = 100,
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
        plots.save(plots.matrix_figure(result, dpi=dpi), output, partial=note)
    if json:
        print_json(result.to_dict())
        return
    _table(result)
    say_partial(result.partial, json, note or "")
    if output is not None:
        out.print(f"{output}: heat map written", highlight=False)


def fight_matrix(
    command: str,
    budget: str,
    ruleset: str,
    types: str | None,
    costs: Path | None,
    battles: int,
    seed: int,
    output: Path | None,
    threads: int | None,
    scheduler: str | None,
    setting: list[str] | None,
    max_total: int | None = None,
) -> Matrix:
    """The equal-cost matrix a command (``matrix``, ``meta``) asks for, its ``--set``
    settings in every battle's ``[battle]`` table, with a progress bar; a plot's path is
    checked before the battles, not after."""
    from ..running.distributed import executor_for

    spend = _budget(budget)
    settings = battle_settings(setting)
    if output is not None:
        from ..report import plots

        plots.check_output(output)
    with executor_for(scheduler) as executor, progress_bar(err, command) as progress:
        return equal_cost_matrix(
            ruleset,
            spend,
            types,
            costs,
            battles,
            seed,
            threads=threads,
            progress=progress,
            executor=executor,
            max_total=max_total,
            settings=settings,
        )


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BattleOddsError(f"--budget '{text}': expected a number, e.g. 20") from None
    if not (math.isfinite(value) and value > 0):
        raise BattleOddsError(f"--budget {text}: expected a finite number > 0")
    return value


#: Width of a compact cell (``100\u00b110``) and the space after it.
_COMPACT = 6


def _table(result: Matrix) -> None:
    """Rows attacker types, columns defender types. Where the names fit across the
    console, each cell is p over its interval; where they do not, a column is headed by
    its type's name shortened to the cell's width (a line under the table spells out the
    shortened ones), a cell is p and the interval's larger half-width in points, and the
    columns are split over several tables if they still do not fit."""
    types = result.types
    label_width = max(map(len, types)) + 2
    wide = label_width + 12 + sum(max(len(t), 11) + 2 for t in types) <= out.width
    title = (
        f"{result.ruleset}: P(attacker wins) at equal cost, budget {result.budget:g}, "
        f"{result.battles:,} battles a pair, seed {result.seed}"
        + (f", --set {settings_text(result.settings)}" if result.settings else "")
    )
    short = {t: t for t in types} if wide else shortened(types, _COMPACT - 1)
    if wide:
        groups = [list(range(len(types)))]
    else:
        title += " (cells: % \u00b1 95% half-width)"
        per_table = max(1, (out.width - label_width) // _COMPACT)
        groups = [
            list(range(first, min(first + per_table, len(types))))
            for first in range(0, len(types), per_table)
        ]
    for number, group in enumerate(groups):
        first, last = short[types[group[0]]], short[types[group[-1]]]
        print_title(out, title if number == 0 else f"(continued: columns {first} to {last})")
        table = Table(box=box.SIMPLE_HEAVY, show_lines=wide, padding=(0, 1) if wide else (0, 0))
        table.add_column("attacker \u2193  defender \u2192" if wide else "", no_wrap=True)
        for j in group:
            header = f"{types[j]}\n{result.men[types[j]]} men" if wide else short[types[j]]
            table.add_column(header, justify="right", no_wrap=True, min_width=_COMPACT - 1)
        for a in types:
            cells = [_cell(result, a, types[j], wide) for j in group]
            men = f"{result.men[a]} men, cost {result.costs[a]:g}"
            table.add_row(f"{a}\n{men}" if wide else a, *cells)
        out.print(table)
    spelt = [f"{s} = {t}" for t, s in short.items() if s != t]
    if spelt:
        out.print("columns: " + ", ".join(spelt), highlight=False)
    if not wide:
        alike: dict[tuple[int, float], list[str]] = {}
        for t in types:
            alike.setdefault((result.men[t], result.costs[t]), []).append(t)
        out.print(
            "men a side: "
            + "; ".join(
                f"{men} (cost {cost:g}): " + ("every type" if len(alike) == 1 else ", ".join(ts))
                for (men, cost), ts in alike.items()
            ),
            highlight=False,
        )
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
    if wide:
        return f"{100 * p:.1f}%\n{100 * low:.1f}-{100 * high:.1f}"
    half = max(p - low, high - p)
    return f"{100 * p:.0f}\u00b1{math.ceil(100 * half):.0f}"
