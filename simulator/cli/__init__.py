"""``battle-odds``: the command line. Thin: parse options, call the library, print.

:mod:`.app` holds the typer app and the table of commands, :mod:`.options` what the
commands share; each other module is one group of commands, registered on the app when
imported. A command's module is imported when the command runs (:class:`.app.OneLineErrors`),
not at start: most import Numba and the kernels, which ``--version``, ``--help`` and the
other commands should not pay for.
"""

from __future__ import annotations

from ..startup import run_command
from .app import COMMANDS, app

__all__ = ["COMMANDS", "app", "main"]


def main() -> None:
    """The ``battle-odds`` program: runs the command line (Ctrl-C before and after a
    command's work, failures no layer expected and an answer standard output cannot take:
    each one line, never a traceback; simulator.startup) and ends the process."""
    run_command(app)
