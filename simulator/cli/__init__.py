"""``battle-odds``: the command line. Thin: parse options, call the library, print.

:mod:`.app` holds the typer app, :mod:`.options` what the commands share; each other
module is one group of commands, registered on the app when imported here (in the order
``--help`` lists them).
"""

from __future__ import annotations

# Imported for their commands, in the order `--help` lists them.
from . import run, regress, balance, designer, matrix, best, prices, new, schema, serve  # noqa: F401  # isort: skip
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
