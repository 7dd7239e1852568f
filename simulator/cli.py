"""``battle-odds``: the command line. Thin: parse options, call the library, print."""

from __future__ import annotations

import functools
import json as jsonlib
import math
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
import typer.core
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from . import report, rulesets
from .atomic import write_atomically
from .bounds import DEFAULT_MAX_TOTAL
from .errors import BattleOddsError
from .interrupt import EXIT_INTERRUPTED, stop_on_interrupt
from .output_paths import CSV, TOML, XML, check_output_path
from .progress import run_battles
from .rulesets import InlineQuery
from .runner import DEFAULT_CHUNK, MAX_BATTLES
from .scenario import from_query, load_scenario

out = Console()
err = Console(stderr=True)

# typer parses with click, or (from 0.25) with its own copy of it: take the exceptions
# from whichever its group class uses.
_click: Any = getattr(typer.core, "_click", None) or typer.core.click  # type: ignore[attr-defined]
ClickException = _click.exceptions.ClickException
UsageError = _click.exceptions.UsageError
NoArgsIsHelpError = getattr(_click.exceptions, "NoArgsIsHelpError", ())


def print_error(message: str) -> None:
    """``error: ...`` on stderr, on one line whatever the message holds."""
    # The message may hold TOML like [[attacker.units]]: it is text, not markup.
    line = " ".join(message.split())
    err.print(f"[bold red]error:[/bold red] {escape(line)}", highlight=False, soft_wrap=True)


class OneLineErrors(TyperGroup):
    """Usage errors (an option out of range, a missing file, an unknown option) get
    the same one line and exit status 2 as every other bad input, instead of click's
    boxed usage message."""

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


def print_json(data: dict[str, Any]) -> None:
    """A command's ``--json`` answer: indented, and never the non-standard NaN."""
    sys.stdout.write(jsonlib.dumps(data, indent=2, allow_nan=False) + "\n")


def _print_version(value: bool) -> None:
    if value:
        out.print(f"battle-odds {installed_version()}", highlight=False)
        raise typer.Exit()


def installed_version() -> str:
    """The version in the installed package's metadata (the source's when not installed)."""
    try:
        return metadata.version("battle-odds")
    except metadata.PackageNotFoundError:
        from . import __version__

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


F = TypeVar("F", bound=Callable[..., Any])

ScenarioPath = Annotated[
    Path, typer.Argument(help="Scenario TOML file.", exists=True, dir_okay=False, readable=True)
]
Battles = Annotated[
    int | None,
    typer.Option(
        "--battles",
        "-n",
        min=1,
        max=MAX_BATTLES,
        help=f"Number of battles, 1..{MAX_BATTLES:,} (default: the scenario's).",
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed", "-s", min=0, max=2**63 - 1, help="Random seed (default: the scenario's)."
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]
Threads = Annotated[
    int | None,
    typer.Option("--threads", min=1, help="Threads for the kernel (default: all cores)."),
]
Precision = Annotated[
    float | None,
    typer.Option(
        min=1e-6,
        max=0.5,
        help="Add battles until every probability's 95% half-width is below this "
        "(e.g. 0.002), instead of --battles.",
    ),
]
RulesetName = Annotated[
    str, typer.Option("--ruleset", help="Rule system: " + ", ".join(rulesets.names()))
]
MaxBattles = Annotated[
    int | None,
    typer.Option(
        "--max-battles",
        min=1,
        max=MAX_BATTLES,
        help="Cap of a --precision run (default 10,000,000).",
    ),
]


def user_errors(command: F) -> F:
    """Bad input: one line on stderr and exit status 2, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BattleOddsError as exc:
            print_error(str(exc))
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def runs_battles(command: F) -> F:
    """The Ctrl-C contract of a command that runs battles (see :mod:`simulator.interrupt`):
    the first Ctrl-C stops the kernels, the command prints and writes its answer so far
    marked partial, and exits with status 130; a second Ctrl-C exits at once."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with stop_on_interrupt() as stop:
            answer = command(*args, **kwargs)
        if stop.requested:
            err.print("interrupted: the answer printed is the answer so far", highlight=False)
            raise typer.Exit(EXIT_INTERRUPTED)
        return answer

    return wrapper  # type: ignore[return-value]


def say_partial(partial: bool, as_json: bool, what: str) -> None:
    """The text answer's mark of a partial answer (JSON has ``"partial": true``)."""
    if partial and not as_json:
        out.print(f"PARTIAL: interrupted by Ctrl-C: {what}", highlight=False, markup=False)


MaxTotal = Annotated[
    int | None,
    typer.Option(
        "--max-total",
        min=1,
        help=f"Most battles the whole command may fight (default {DEFAULT_MAX_TOTAL:,}).",
    ),
]


def _show(result: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(report.to_json(result) + "\n")
    else:
        report.render(result, out)


Scheduler = Annotated[
    str | None,
    typer.Option(
        help="Run chunks on a Dask cluster: tcp://HOST:PORT, or local:N for N local workers."
    ),
]


@app.command()
@user_errors
@runs_battles
def run(
    scenario: ScenarioPath,
    battles: Battles = None,
    seed: Seed = None,
    json: Json = False,
    threads: Threads = None,
    precision: Precision = None,
    max_battles: MaxBattles = None,
    scheduler: Scheduler = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="Record progress here; run again with it to resume."),
    ] = None,
    keep_battles: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False, help="Write one row per battle to this CSV file (limited size)."
        ),
    ] = None,
    chunk: Annotated[
        int, typer.Option(min=1, help="Battles per kernel call (and per Dask task).")
    ] = DEFAULT_CHUNK,
) -> None:
    """Run a scenario file and print the odds (Ctrl-C: stop, print what is done)."""
    if keep_battles is not None:
        check_output_path(keep_battles, "--keep-battles", CSV)
    if checkpoint is not None:
        check_output_path(checkpoint, "--checkpoint")
    loaded = load_scenario(scenario)
    result = run_battles(
        loaded,
        battles,
        seed,
        threads=threads,
        precision=precision,
        max_battles=max_battles,
        console=err,
        scheduler=scheduler,
        checkpoint=checkpoint,
        keep_battles=True if keep_battles else None,
        chunk=chunk,
    )
    if keep_battles is not None and result.rows is not None:
        write_atomically(keep_battles, result.battles.to_csv(index=False))
    _show(result, json)


@app.command()
@user_errors
@runs_battles
def odds(
    attacker: Annotated[
        str,
        typer.Option(
            help='Attacking army, e.g. "noble, 20 soldier, 10 archer@1; noble, 5 knight".'
        ),
    ],
    defender: Annotated[str, typer.Option(help='Defending army, e.g. "noble, 30 pikeman".')],
    ruleset: RulesetName = "olympia",
    terrain: Annotated[
        str | None,
        typer.Option(
            help="Terrain (olympia: land, swamp, ship; age_of_gods also forest, mountain, city)."
        ),
    ] = None,
    weather: Annotated[str | None, typer.Option(help="Comma-separated: wind, rain.")] = None,
    structure: Annotated[
        str | None, typer.Option(help="Defender's structure KIND:DEFENSE[:DAMAGE], e.g. tower:40.")
    ] = None,
    attacker_structure: Annotated[
        str | None, typer.Option(help="Attacker's structure (sea battles), e.g. galley:10.")
    ] = None,
    strike_order: Annotated[
        str | None, typer.Option(help="random (source text) or alternating (released engine).")
    ] = None,
    attacker_break: Annotated[
        int | None,
        typer.Option(min=0, max=100, help="Attacker's break point, % of starting value lost."),
    ] = None,
    defender_break: Annotated[
        int | None,
        typer.Option(min=0, max=100, help="Defender's break point, % of starting value lost."),
    ] = None,
    ability: Annotated[
        str | None,
        typer.Option(
            help="confrontation: one exchange with this ability (attack, bombard, strike)."
        ),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--set", help="Ruleset option KEY=VALUE (repeatable).")
    ] = None,
    battles: Battles = None,
    seed: Seed = None,
    json: Json = False,
    threads: Threads = None,
    precision: Precision = None,
    max_battles: MaxBattles = None,
    exact: Annotated[
        bool,
        typer.Option(
            "--exact",
            help="Solve exactly instead of simulating (small battles; rulesets with an "
            "exact solver, e.g. olympia).",
        ),
    ] = False,
) -> None:
    """Odds for two armies written on one line, no file needed."""
    options: dict[str, Any] = {
        "terrain": terrain,
        "weather": weather,
        "structure": structure,
        "attacker_structure": attacker_structure,
        "strike_order": strike_order,
        "attacker_break": attacker_break,
        "defender_break": defender_break,
        "ability": ability,
    }
    for pair in option or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise BattleOddsError(f"--set '{pair}': expected KEY=VALUE")
        options[key.strip()] = value.strip()
    query = InlineQuery(attacker, defender, {k: v for k, v in options.items() if v is not None})
    scenario = from_query(ruleset, query)
    if exact:
        _show_exact(scenario, json)
        return
    result = run_battles(
        scenario,
        battles,
        seed,
        threads=threads,
        precision=precision,
        max_battles=max_battles,
        console=err,
    )
    _show(result, json)


def _show_exact(scenario: Any, as_json: bool) -> None:
    from .exact import exact as solve
    from .exact import render_exact

    answer = solve(scenario)
    if as_json:
        print_json(answer.to_dict())
    else:
        render_exact(answer, out)


@app.command(name="exact")
@user_errors
def exact_command(scenario: ScenarioPath, json: Json = False) -> None:
    """Exact odds of a small battle (rulesets with a solver): probabilities and expectations."""
    _show_exact(load_scenario(scenario), json)


@app.command()
@user_errors
def validate(scenario: ScenarioPath) -> None:
    """Check a scenario file without running it."""
    loaded = load_scenario(scenario)
    out.print(
        f"{scenario}: ok ({loaded.ruleset}, '{loaded.name}', hash {loaded.hash})", highlight=False
    )


@app.command()
@user_errors
def units(
    ruleset: Annotated[str | None, typer.Option(help="Only this ruleset.")] = None,
    json: Json = False,
) -> None:
    """List the unit types of each ruleset."""
    from rich.table import Table

    if ruleset:
        names = [rulesets.get(ruleset, "--ruleset").name]
    else:
        names = list(rulesets.available())
        for problem in rulesets.problems():
            err.print(f"warning: {escape(problem)}", highlight=False, soft_wrap=True)
    for name in names:
        frame = rulesets.get(name).units()
        if json:
            sys.stdout.write(frame.to_json(orient="records") + "\n")
            continue
        table = Table(title=f"{name} unit types", title_justify="left")
        for col in frame.columns:
            # Names must stay whole to be copied into a scenario; only notes may wrap.
            whole = max(len(str(col)), *(len(str(v)) for v in frame[col])) if col == "type" else 0
            table.add_column(str(col), no_wrap=col != "notes", min_width=whole or None)
        for row in frame.itertuples(index=False):
            table.add_row(*(_unit_cell(v) for v in row))
        out.print(table)


def _unit_cell(value: Any) -> str:
    """A unit-table value as text: no cost is blank, a whole cost has no decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@app.command()
@user_errors
def replay(
    scenario: ScenarioPath,
    battle: Annotated[
        int, typer.Option("--battle", "-k", min=0, help="Battle K of the run (counted from 0).")
    ] = 0,
    seed: Seed = None,
    battles: Battles = None,
    json: Json = False,
) -> None:
    """Move log of one battle of a run, as (participant, target, move_type, effect) (skirmish)."""
    import json as json_module

    from .rulesets.skirmish.replay import replay as replay_battle

    replayed = replay_battle(load_scenario(scenario), battle, seed, battles)
    if json:
        sys.stdout.write(json_module.dumps(replayed.to_dict()) + "\n")
    else:
        sys.stdout.write("\n".join(replayed.lines()) + "\n")


@app.command()
@runs_battles
def regress(
    paths: Annotated[list[Path], typer.Argument(help="Scenario folders or files.", exists=True)],
    baseline: Annotated[
        Path, typer.Option(help="Baseline file of balance numbers (TOML).", dir_okay=False)
    ],
    update: Annotated[
        bool, typer.Option("--update", help="Rewrite the baseline from this run.")
    ] = False,
    battles: Annotated[
        int | None,
        typer.Option(
            "--battles", "-n", min=1, max=MAX_BATTLES, help="With --update: battles per scenario."
        ),
    ] = None,
    level: Annotated[
        float | None,
        typer.Option(min=1e-9, max=0.5, help="With --update: family-wise false-alarm level."),
    ] = None,
    json: Json = False,
    junit: Annotated[
        Path | None, typer.Option(help="Also write a JUnit XML report here.", dir_okay=False)
    ] = None,
    max_total: MaxTotal = None,
) -> None:
    """Compare balance numbers with a baseline: exit 0 within noise, 1 moved, 2 bad input
    (Ctrl-C: the scenarios checked so far, exit 130)."""
    from . import regress as regression
    from .atomic import write_atomically
    from .interrupt import Interrupted
    from .progress import progress_bar

    try:
        if junit is not None:
            check_output_path(junit, "--junit", XML)
        if update:
            check_output_path(baseline, "--baseline", TOML)
            with progress_bar(err, "regress --update") as progress:
                written = regression.update(
                    paths,
                    baseline,
                    battles=battles,
                    level=level,
                    max_total=max_total,
                    progress=progress,
                )
            out.print(
                f"{baseline}: baseline of {len(written.entries)} scenarios written", highlight=False
            )
            return
        read = regression.read_baseline(baseline)
        with progress_bar(err, "regress") as progress:
            report = regression.check(paths, read, baseline, max_total=max_total, progress=progress)
    except BattleOddsError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    except Interrupted:
        err.print(f"{baseline}: not written (interrupted before every scenario ran)")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if junit is not None:
        write_atomically(junit, report.junit())
    if json:
        sys.stdout.write(jsonlib.dumps(report.to_dict(), indent=2) + "\n")
    else:
        render_regression(report)
        say_partial(report.partial, json, "the scenarios after the last one shown were not run")
    if not report.partial:
        raise typer.Exit(0 if report.passed else 1)


def render_regression(report: Any) -> None:
    from rich.table import Table

    table = Table(
        title=f"Balance regression (Holm, family-wise level {report.level})", title_justify="left"
    )
    for column in ("scenario", "status"):
        table.add_column(column, overflow="fold")
    for scenario, status in report.statuses.items():
        style = "green" if status == "ok" else "bold red"
        table.add_row(scenario, f"[{style}]{status}[/{style}]")
    out.print(table)
    if report.moved:
        # One line per number, never wrapped: CI logs are read with grep.
        out.print("[bold]What moved[/bold] (baseline -> now, change, p-value <= Holm threshold):")
        for c in report.moved:
            out.print(
                f"  {c.scenario}  {c.number}  {c.baseline:.4g} -> {c.now:.4g}  "
                f"({c.change:+.4g}, p={c.p:.2g} <= {c.threshold:.2g})",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
    out.print(
        f"{len(report.comparisons)} numbers compared; "
        + ("all within noise" if report.passed else "[bold red]balance moved[/bold red]")
    )


# Registers the commands of the other CLI modules on ``app`` (imported last: they import
# from here): plot, compare, sweep (cli_balance); worth, sensitivity (cli_designer); matrix;
# new; schema.
from . import cli_balance, cli_designer, cli_matrix, cli_new, cli_schema  # noqa: E402, F401


def main() -> None:
    app()
