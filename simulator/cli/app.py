"""The one typer app of ``battle-odds``: its commands, loaded when run, its one-line
error handling and ``--version``.

Commands are registered on :data:`app` by the modules of :mod:`simulator.cli`, which
import it from here; :data:`COMMANDS` says which module defines each, and the app imports
it when the command is asked for. Nothing heavy is imported here: ``--version`` and
``--help`` load typer and rich, not Numba, pandas or SciPy (tests/test_startup.py).
"""

from __future__ import annotations

import importlib
import sys
from difflib import get_close_matches
from typing import Annotated, Any

import typer
import typer.core
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_command_name

from . import coercion
from .help import tidy

coercion.install()  # plain option values read without importing pydantic

# typer parses with click, or (from 0.25) with its own copy of it: take the exceptions
# from whichever its group class uses.
_click: Any = getattr(typer.core, "_click", None) or typer.core.click  # type: ignore[attr-defined]
ClickException = _click.exceptions.ClickException
UsageError = _click.exceptions.UsageError
NoArgsIsHelpError = getattr(_click.exceptions, "NoArgsIsHelpError", ())

#: Every command, in the order ``--help`` lists them: the module of :mod:`simulator.cli`
#: that defines it and its one-line help (its docstring's, which tests/test_startup.py
#: checks), so that ``--help`` lists them without importing them.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "Run a scenario file and print the odds (Ctrl-C: stop, print what is done)."),
    "odds": ("run", "Odds for two armies written on one line, no file needed."),
    "exact": (
        "run",
        "Exact odds of a small battle (rulesets with a solver): probabilities and expectations.",
    ),
    "retreat": (
        "retreat",
        "When should I stop? The best retreat rule of one side and its value (exact or simulated).",
    ),
    "validate": ("run", "Check a scenario file without running it."),
    "units": ("run", "List the unit types of each ruleset."),
    "replay": (
        "run",
        "Move log of one battle of a run, as (participant, target, move_type, effect) (skirmish).",
    ),
    "regress": (
        "regress",
        "Compare balance numbers with a baseline: exit 0 within noise, 1 moved, 2 bad input "
        "(Ctrl-C: the scenarios checked so far, exit 130).",
    ),
    "plot": (
        "balance",
        "Run a scenario and write one figure: outcomes, break timing, casualties.",
    ),
    "compare": (
        "balance",
        "Two scenarios on common random numbers: each win probability and B - A.",
    ),
    "sweep": (
        "balance",
        "Win probability as one or two values vary (a curve or a heat map), or --target.",
    ),
    "worth": (
        "designer",
        "How many men of one type win as often as X added to a side (e.g. 1 knight).",
    ),
    "sensitivity": (
        "designer",
        "Which number matters: each count and rating one step down and up, on common "
        "random numbers, sorted by effect.",
    ),
    "matrix": (
        "matrix",
        "Who beats whom at equal cost: each pair of unit types, P(attacker wins) with its "
        "95% interval.",
    ),
    "best": (
        "best",
        "What should I bring? The likeliest army to win within a budget (or the cheapest to "
        "reach --target), with a guarantee, and the best army found at every cost.",
    ),
    "prices": (
        "prices",
        "What should each unit cost? A fair price list, with each type's break-even prices.",
    ),
    "meta": (
        "prices",
        "What will players build? The Nash equilibrium of the equal-cost matrix.",
    ),
    "calibrate": (
        "calibrate",
        "How well the model predicted real battles: Brier score, log loss, coverage of the "
        "real losses, worst-predicted battles first (Ctrl-C: the battles scored so far).",
    ),
    "new": (
        "new",
        "Write a commented starter scenario that validates and runs; edit it from there.",
    ),
    "new-ruleset": (
        "new",
        "Write the skeleton of a ruleset package (installs, passes its tests, answers odds).",
    ),
    "schema": (
        "schema",
        "Print the JSON Schema of a ruleset's scenario files (for editors: see "
        "docs/scenario-schema.md).",
    ),
    "warm": (
        "warm",
        "Compile every kernel once (after install), so that no later first run waits.",
    ),
    "serve": (
        "serve",
        "A calculator page: armies in, odds while the battles run, a link that reproduces them.",
    ),
}


class OneLineErrors(TyperGroup):
    """Usage errors (an option out of range, a missing file, an unknown option) get
    the same one line and exit status 2 as every other bad input, instead of click's
    boxed usage message; every command's help is tidied (:mod:`.help`)."""

    #: True while the group's own help is drawn: commands not loaded are listed from
    #: COMMANDS instead of imported.
    listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            if self.listing:
                return tidy(typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][1]))
            self.load(COMMANDS[cmd_name][0])
        command = super().get_command(ctx, cmd_name)
        return tidy(command) if command is not None else None

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            # typer suggests from the commands loaded; suggest from all of them.
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in exc.message:
                suggestions = ", ".join(f"{m!r}" for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def load(self, module: str) -> None:
        """Import the module of :mod:`simulator.cli` that defines commands, and add
        what it registered on :data:`app`."""
        importlib.import_module(f"{__package__}.{module}")
        for info in app.registered_commands:
            name = info.name or get_command_name(info.callback.__name__)  # type: ignore[union-attr]
            if name not in self.commands:
                self.add_command(
                    get_command_from_info(
                        info,
                        pretty_exceptions_short=app.pretty_exceptions_short,
                        rich_markup_mode=app.rich_markup_mode,
                    ),
                    name,
                )

    def format_help(self, ctx: Any, formatter: Any) -> None:
        tidy(self)
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            if not standalone_mode:
                raise
            sys.stdout.write(exc.ctx.get_help() + "\n" if exc.ctx else str(exc))
            sys.exit(0)
        except ClickException as exc:
            if not standalone_mode:
                raise
            from .options import print_error

            where = exc.ctx.command_path if getattr(exc, "ctx", None) else "battle-odds"
            print_error(f"{exc.format_message()} (see '{where} --help')")
            sys.exit(2 if isinstance(exc, UsageError) else exc.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            sys.stderr.write("aborted\n")
            sys.exit(1)
        if not standalone_mode:
            return code
        # Commands return None; an explicit typer.Exit(n) comes back as n.
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="battle-odds",
    help="Monte Carlo battle odds: win probabilities with intervals, break timing, casualties.",
    cls=OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"battle-odds {installed_version()}\n")
        raise typer.Exit()


def installed_version() -> str:
    """The version in the installed package's metadata (the source's when not installed)."""
    from importlib import metadata

    try:
        return metadata.version("battle-odds")
    except metadata.PackageNotFoundError:
        from ..version import __version__

        return __version__


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    # Options of the program itself; the eager --version callback does all the work.
    return None
