"""``battle-odds retreat``: the best retreat rule of one side, exactly or simulated
(docs/retreat.md).

Registered on the one typer app by importing this module (app.COMMANDS)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import BattleOddsError
from ..scenario.scenario import load_scenario
from ..studies.retreat import BOTH
from .app import app
from .options import (
    CostsFile,
    Json,
    ScenarioPath,
    err,
    out,
    print_json,
    runs_battles,
    say_file_line,
    say_partial,
    user_errors,
)

Side = Annotated[
    str,
    typer.Option(
        "--side",
        help="The side whose retreat rule is found: attacker or defender; both: each "
        "side's rule against the other's, by alternate best responses (exact or simulated).",
    ),
]
WinValue = Annotated[
    float | None,
    typer.Option(
        "--win-value",
        help="What a win is worth, in the units of the fighters' cost, more than 0 "
        "(default: what the other side's army costs).",
    ),
]
MapOutput = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the retreat map (.png, .svg, .pdf or .jpg)."),
]
Method = Annotated[
    str | None,
    typer.Option(
        "--method",
        help="exact (small olympia battles: backward induction over the exact chain) or "
        "simulated (any ruleset: Longstaff-Schwartz, valued on fresh battles with 95% "
        "intervals); default: exact where the exact solver reaches, else simulated.",
    ),
]
Paths = Annotated[
    int | None,
    typer.Option("--paths", help="Simulated: battles the rule is fitted on (default 20,000)."),
]
DualBattles = Annotated[
    int | None,
    typer.Option(
        "--dual-battles",
        help="Simulated, one side: an Andersen-Broadie upper bound on the best rule's "
        "value from this many fresh battles, a nested simulation after each strike that "
        "changes the men left (olympia battles of men alone; seconds per hundred battles).",
    ),
]
FreshBattles = Annotated[
    int | None,
    typer.Option(
        "--battles",
        "-n",
        help="Simulated: fresh battles the rules are valued on (default 20,000).",
    ),
]
SeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        "-s",
        min=0,
        max=2**63 - 1,
        help="Simulated: the training battles' seed (default: the scenario's); the fresh "
        "battles draw from another stream derived from it.",
    ),
]
Threads = Annotated[
    int | None, typer.Option("--threads", min=1, help="Simulated: threads (default: all).")
]


@app.command(name="retreat")
@user_errors
def retreat_command(
    scenario: ScenarioPath,
    side: Side = "attacker",
    win_value: WinValue = None,
    method: Method = None,
    paths: Paths = None,
    battles: FreshBattles = None,
    seed: SeedOption = None,
    threads: Threads = None,
    costs: CostsFile = None,
    json: Json = False,
    output: MapOutput = None,
    dual_battles: DualBattles = None,
) -> None:
    """When should I stop? The best retreat rule of one side and its value (exact or
    simulated).

    Ctrl-C: the simulated rule so far, marked partial, exit 130."""
    from ..report.figures import check_output
    from ..studies.retreat import best_retreat, check_given_win_value, check_retreat_options

    check_retreat_options(side, win_value, method if side == BOTH else None)
    check_given_win_value(win_value)
    if output is not None:
        check_output(output)
    if side == BOTH and output is not None:
        raise BattleOddsError("--output: the retreat map is drawn for one side's rule")
    battle = load_scenario(scenario)
    simulated: dict[str, Any] = {
        "paths": paths,
        "battles": battles,
        "seed": seed,
        "threads": threads,
        "dual_battles": dual_battles,
    }
    if method == "exact" or (
        method is None
        and battle.ruleset == "olympia"
        and costs is None
        and all(v is None for v in simulated.values())
    ):
        # Ctrl-C: the exact solve runs in slices of kernel calls; the command line's own
        # handler ends the process between two (one line, exit 130): no partial rule.
        try:
            result = best_retreat(battle, side, win_value, method="exact", costs=costs, **simulated)
        except BattleOddsError:
            if method == "exact":
                raise
        else:
            _say(result, json, output)
            return
    if method not in (None, "exact", "simulated"):
        best_retreat(battle, side, win_value, method=method)  # its one line
    _simulated(battle, side, win_value, costs, json, output, **simulated)


@runs_battles
def _simulated(
    battle: Any,
    side: str,
    win_value: float | None,
    costs: Path | None,
    json: bool,
    output: Path | None,
    **simulated: Any,
) -> None:
    """The simulated rule, with progress; Ctrl-C stops between blocks of battles and
    the rule so far is printed, marked partial (exit 130)."""
    from ..running.progress import progress_bar
    from ..studies.retreat import best_retreat

    with progress_bar(err, "retreat") as progress:
        result = best_retreat(
            battle,
            side,
            win_value,
            method="simulated",
            costs=costs,
            progress=progress,
            **simulated,
        )
    _say(result, json, output)


def _say(result: Any, json: bool, output: Path | None) -> None:
    if json:
        print_json(result.to_dict())
    else:
        from ..report.retreat import both_sides_lines, retreat_lines

        said = both_sides_lines if result.side == BOTH else retreat_lines
        for line in said(result, out.width):
            out.print(line, highlight=False, soft_wrap=True, markup=False)
        say_partial(
            getattr(result, "partial", False),
            json,
            "the rule is fitted and valued on the battles run so far",
        )
    if output is not None:
        from ..report.figures import save
        from ..report.retreat_plots import retreat_figure

        path = save(retreat_figure(result), output)
        say_file_line(f"{path}: retreat map written")
