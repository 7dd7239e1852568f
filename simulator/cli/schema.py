"""``battle-odds schema``: the JSON Schema of a ruleset's scenario files.

Generated from the same key definitions the validator reads, so an editor checking a
scenario against it agrees with ``battle-odds validate``.

Registered on the one typer app when imported, which the app does when one of its
commands is asked for (``simulator.cli.app.COMMANDS``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import rulesets
from ..atomic import write_atomically
from ..errors import BattleOddsError
from ..rulesets import keys
from ..running.output_paths import check_output_path
from .app import app
from .options import say_file_line, user_errors


@app.command()
@user_errors
def schema(
    ruleset: Annotated[
        str | None, typer.Option(help="The ruleset whose scenario files it describes.")
    ] = None,
    calibration: Annotated[
        bool,
        typer.Option(
            "--calibration",
            help="The schema of calibration files (battle-odds calibrate) instead.",
        ),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", dir_okay=False, help="Write it to this file instead of stdout."
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of a ruleset's scenario files (for editors: see
    docs/scenario-schema.md)."""
    if calibration == (ruleset is not None):
        raise BattleOddsError(
            "schema: give either --ruleset NAME (scenario files) or --calibration "
            "(calibration files)"
        )
    if ruleset is not None:
        name = rulesets.get(ruleset, "--ruleset").name
        text = json.dumps(keys.schema(name), indent=2) + "\n"
        what = f"{name} scenario files"
    else:
        from ..studies.calibrate import schema as calibration_schema

        text = json.dumps(calibration_schema(), indent=2) + "\n"
        what = "calibration files"
    if output is None:
        sys.stdout.write(text)
        return
    check_output_path(output, "--output", (".json",))
    try:
        write_atomically(output, text)
    except OSError as exc:
        raise BattleOddsError(f"--output {output}: cannot write ({exc.strerror})") from None
    say_file_line(f"{output}: JSON Schema of {what} written")
