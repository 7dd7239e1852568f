"""``battle-odds``: the command line. Thin: parse options, call the library, print."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from . import report, rulesets
from .errors import BattleOddsError
from .rulesets import InlineQuery
from .runner import simulate
from .scenario import from_data, load_scenario

app = typer.Typer(
    name="battle-odds",
    help="Monte Carlo battle odds: win probabilities with intervals, break timing, casualties.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])

ScenarioPath = Annotated[
    Path, typer.Argument(help="Scenario TOML file.", exists=True, dir_okay=False, readable=True)
]
Battles = Annotated[int | None, typer.Option("--battles", "-n", min=1,
                                              help="Number of battles (default: the scenario's).")]
Seed = Annotated[int | None, typer.Option("--seed", "-s", min=0, max=2**63 - 1,
                                           help="Random seed (default: the scenario's).")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]
Threads = Annotated[int | None, typer.Option("--threads", min=1,
                                              help="Threads for the kernel (default: all cores).")]


def user_errors(command: F) -> F:
    """Bad input: one line on stderr and exit status 2, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BattleOddsError as exc:
            # The message may hold TOML like [[attacker.units]]: it is text, not markup.
            err.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False,
                      soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def _show(result: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(report.to_json(result) + "\n")
    else:
        report.render(result, out)


@app.command()
@user_errors
def run(scenario: ScenarioPath, battles: Battles = None, seed: Seed = None, json: Json = False,
        threads: Threads = None) -> None:
    """Run a scenario file and print the odds."""
    loaded = load_scenario(scenario)
    _show(simulate(loaded, battles, seed, threads=threads), json)


@app.command()
@user_errors
def odds(
    attacker: Annotated[str, typer.Option(help='Attacking army, e.g. "noble, 20 soldier, 10 archer@1; noble, 5 knight".')],
    defender: Annotated[str, typer.Option(help='Defending army, e.g. "noble, 30 pikeman".')],
    ruleset: Annotated[str, typer.Option(help="Rule system: " + ", ".join(rulesets.names()))] = "olympia",
    terrain: Annotated[str | None, typer.Option(help="Terrain (olympia: land, swamp, ship).")] = None,
    weather: Annotated[str | None, typer.Option(help="Comma-separated: wind, rain.")] = None,
    structure: Annotated[str | None, typer.Option(help="Defender's structure KIND:DEFENSE[:DAMAGE], e.g. tower:40.")] = None,
    attacker_structure: Annotated[str | None, typer.Option(help="Attacker's structure (sea battles), e.g. galley:10.")] = None,
    strike_order: Annotated[str | None, typer.Option(help="random (source text) or alternating (released engine).")] = None,
    attacker_break: Annotated[int | None, typer.Option(min=0, max=100, help="Attacker's break point, % of starting value lost.")] = None,
    defender_break: Annotated[int | None, typer.Option(min=0, max=100, help="Defender's break point, % of starting value lost.")] = None,
    option: Annotated[list[str] | None, typer.Option("--set", help="Ruleset option KEY=VALUE (repeatable).")] = None,
    battles: Battles = None,
    seed: Seed = None,
    json: Json = False,
    threads: Threads = None,
) -> None:
    """Odds for two armies written on one line, no file needed."""
    options: dict[str, Any] = {
        "terrain": terrain, "weather": weather, "structure": structure,
        "attacker_structure": attacker_structure, "strike_order": strike_order,
        "attacker_break": attacker_break, "defender_break": defender_break,
    }
    for pair in option or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise BattleOddsError(f"--set '{pair}': expected KEY=VALUE")
        options[key.strip()] = value.strip()
    rs = rulesets.get(ruleset, "--ruleset")
    data = rs.inline(InlineQuery(attacker, defender, {k: v for k, v in options.items() if v is not None}))
    from .errors import Source

    scenario = from_data(data, Source("odds"))
    _show(simulate(scenario, battles, seed, threads=threads), json)


@app.command()
@user_errors
def validate(scenario: ScenarioPath) -> None:
    """Check a scenario file without running it."""
    loaded = load_scenario(scenario)
    out.print(f"{scenario}: ok ({loaded.ruleset}, '{loaded.name}', hash {loaded.hash})", highlight=False)


@app.command()
@user_errors
def units(
    ruleset: Annotated[str | None, typer.Option(help="Only this ruleset.")] = None,
    json: Json = False,
) -> None:
    """List the unit types of each ruleset."""
    from rich.table import Table

    names = [rulesets.get(ruleset, "--ruleset").name] if ruleset else list(rulesets.names())
    for name in names:
        frame = rulesets.get(name).units()
        if json:
            sys.stdout.write(frame.to_json(orient="records") + "\n")
            continue
        table = Table(title=f"{name} unit types", title_justify="left")
        for col in frame.columns:
            # Names must stay whole to be copied into a scenario; only notes may wrap.
            table.add_column(str(col), no_wrap=col != "notes")
        for row in frame.itertuples(index=False):
            table.add_row(*("" if v is None else str(v) for v in row))
        out.print(table)


@app.command()
@user_errors
def replay(
    scenario: ScenarioPath,
    battle: Annotated[int, typer.Option("--battle", "-k", min=0,
                                        help="Battle K of the run (counted from 0).")] = 0,
    seed: Seed = None,
    json: Json = False,
) -> None:
    """Move log of one battle of a run, as (participant, target, move_type, effect) (skirmish)."""
    import json as json_module

    from .rulesets.skirmish.replay import replay as replay_battle

    replayed = replay_battle(load_scenario(scenario), battle, seed)
    if json:
        sys.stdout.write(json_module.dumps(replayed.to_dict()) + "\n")
    else:
        sys.stdout.write("\n".join(replayed.lines()) + "\n")


def main() -> None:
    app()
