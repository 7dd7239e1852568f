"""``battle-odds``: the command line. Thin: parse options, call the library, print.

:mod:`.app` holds the typer app, :mod:`.options` what the commands share; each other
module is one group of commands, registered on the app when imported here (in the order
``--help`` lists them).
"""

from __future__ import annotations

# Imported for their commands, in the order `--help` lists them.
from . import run, regress, balance, designer, matrix, best, prices, new, schema, serve  # noqa: F401  # isort: skip
from ..startup import run_command
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    # Ctrl-C before and after a command's work, failures no layer expected and an answer
    # standard output cannot take: each one line, never a traceback (simulator.startup).
    run_command(app)
