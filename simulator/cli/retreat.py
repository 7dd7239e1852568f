"""``battle-odds retreat``: the best retreat rule of one side, exactly (docs/retreat.md).

Registered on the one typer app by importing this module (app.COMMANDS)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..scenario.scenario import load_scenario
from .app import app
from .options import Json, ScenarioPath, out, print_json, say_file_line, user_errors

Side = Annotated[
    str,
    typer.Option("--side", help="The side whose retreat rule is found: attacker or defender."),
]
WinValue = Annotated[
    float | None,
    typer.Option(
        "--win-value",
        help="What a win is worth, in the units of the fighters' cost (default: what the "
        "other side's army costs).",
    ),
]
MapOutput = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the retreat map (.png, .svg, .pdf or .jpg)."),
]


@app.command(name="retreat")
@user_errors
def retreat_command(
    scenario: ScenarioPath,
    side: Side = "attacker",
    win_value: WinValue = None,
    json: Json = False,
    output: MapOutput = None,
) -> None:
    """When should I stop? The best retreat rule of one side and its value (olympia, exact)."""
    from ..report.figures import check_output
    from ..studies.machinery.sides import check_side
    from ..studies.retreat import best_retreat, check_win_value

    check_side(side)
    check_win_value(win_value)
    if output is not None:
        check_output(output)
    # Ctrl-C: the solve runs in slices of kernel calls; the command line's own handler
    # ends the process between two (one line, exit 130): there is no partial rule.
    result = best_retreat(load_scenario(scenario), side, win_value)
    if json:
        print_json(result.to_dict())
    else:
        from ..report.retreat import retreat_lines

        for line in retreat_lines(result, out.width):
            out.print(line, highlight=False, soft_wrap=True, markup=False)
    if output is not None:
        from ..report.figures import save
        from ..report.retreat_plots import retreat_figure

        path = save(retreat_figure(result), output)
        say_file_line(f"{path}: retreat map written")
