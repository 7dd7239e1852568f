"""The one typer app of ``battle-odds``: its one-line error handling and ``--version``.

Commands are registered on :data:`app` by the modules of :mod:`simulator.cli`, which
import it from here; :mod:`simulator.cli` imports them all.
"""

from __future__ import annotations

import sys
from importlib import metadata
from typing import Annotated, Any

import typer
import typer.core
from typer.core import TyperGroup

from .help import tidy
from .options import err, out, print_error

# typer parses with click, or (from 0.25) with its own copy of it: take the exceptions
# from whichever its group class uses.
_click: Any = getattr(typer.core, "_click", None) or typer.core.click  # type: ignore[attr-defined]
ClickException = _click.exceptions.ClickException
UsageError = _click.exceptions.UsageError
NoArgsIsHelpError = getattr(_click.exceptions, "NoArgsIsHelpError", ())


class OneLineErrors(TyperGroup):
    """Usage errors (an option out of range, a missing file, an unknown option) get
    the same one line and exit status 2 as every other bad input, instead of click's
    boxed usage message; every command's help is tidied (:mod:`.help`)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return tidy(command) if command is not None else None

    def format_help(self, ctx: Any, formatter: Any) -> None:
        tidy(self)
        super().format_help(ctx, formatter)

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
            where = exc.ctx.command_path if getattr(exc, "ctx", None) else "battle-odds"
            print_error(f"{exc.format_message()} (see '{where} --help')")
            sys.exit(2 if isinstance(exc, UsageError) else exc.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            err.print("aborted", highlight=False)
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
        out.print(f"battle-odds {installed_version()}", highlight=False)
        raise typer.Exit()


def installed_version() -> str:
    """The version in the installed package's metadata (the source's when not installed)."""
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
