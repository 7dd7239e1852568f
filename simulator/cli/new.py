"""``battle-odds new``: write a commented starter scenario for a ruleset.

The starters are package data (``simulator/rulesets/<ruleset>/starter.toml``; a plugin's
beside its ruleset's module, see ``Ruleset.starter``), each a complete scenario that
validates and runs, with every common key shown and explained.

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import rulesets
from ..atomic import write_atomically
from ..errors import BattleOddsError
from ..running.output_paths import check_output_path
from .app import app
from .options import RULESET_HELP, say_file_line, user_errors


def starter_text(ruleset: str) -> str:
    """The starter scenario of ``ruleset`` (an unknown name is a user error)."""
    return rulesets.get(ruleset, "--ruleset").starter()


@app.command()
@user_errors
def new(
    scenario: Annotated[Path, typer.Argument(help="Scenario file to write, e.g. my_battle.toml.")],
    ruleset: Annotated[str, typer.Option(help=RULESET_HELP)] = "olympia",
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the file if it exists.")
    ] = False,
) -> None:
    """Write a commented starter scenario that validates and runs; edit it from there."""
    text = starter_text(ruleset)
    if scenario.is_dir():
        raise BattleOddsError(f"{scenario}: is a directory, expected a .toml file name")
    check_output_path(scenario, "")
    if scenario.exists() and not force:
        raise BattleOddsError(f"{scenario}: already exists; use --force to overwrite it")
    try:
        write_atomically(scenario, text)
    except OSError as exc:
        raise BattleOddsError(f"{scenario}: cannot write ({exc.strerror})") from None
    say_file_line(
        f"{scenario}: {ruleset} starter written; edit it, then: battle-odds run {scenario}"
    )


@app.command(name="new-ruleset")
@user_errors
def new_ruleset(
    name: Annotated[
        str, typer.Argument(help="The ruleset's name: a lowercase Python identifier, e.g. dice.")
    ],
    path: Annotated[
        Path,
        typer.Option(
            exists=True,
            file_okay=False,
            help="The folder to write the package folder NAME into.",
        ),
    ] = Path("."),
) -> None:
    """Write the skeleton of a ruleset package (installs, passes its tests, answers odds)."""
    from ..skeleton import write

    folder = write(name, path)
    say_file_line(
        f"{folder}: ruleset package written; then: pip install -e {folder}, "
        f"pytest {folder / 'tests'}, battle-odds odds --ruleset {name} --attacker 5 --defender 4"
    )
