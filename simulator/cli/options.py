"""What the commands share: the option types (``Annotated``), the consoles, the one-line
error for bad input and the ``--json`` printer."""

from __future__ import annotations

import contextlib
import functools
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import tomllib
import typer
from rich.console import Console
from rich.markup import escape

from .. import rulesets
from ..errors import BattleOddsError, ParameterError, printable
from ..rulesets.keys import DEFAULT_BATTLES, DEFAULT_SEED
from ..running.bounds import DEFAULT_MAX_TOTAL
from ..running.interrupt import (
    EXIT_INTERRUPTED,
    fail_after_the_answer,
    stop_on_interrupt,
    stop_reason,
)
from ..running.plan import DEFAULT_MAX_BATTLES, MAX_BATTLES, MIN_PRECISION
from .help import default_words, when_drawn

out = Console()
err = Console(stderr=True)
# Measured when each command prints (the terminal, or COLUMNS), not frozen at import.
out.width = err.width = None  # type: ignore[assignment]


def print_error(message: str) -> None:
    """``error: ...`` on stderr, on one line whatever the message holds."""
    # The message may hold TOML like [[attacker.units]]: it is text, not markup.
    line = printable(" ".join(message.split()))
    err.print(f"[bold red]error:[/bold red] {escape(line)}", highlight=False, soft_wrap=True)


def say_file_line(text: str) -> None:
    """A line of the answer that names a file (``PATH: ... written``), on stdout, wrapped
    between words at the terminal's width (or COLUMNS) as any text, but never inside a
    word: rich folds a word longer than the width, and a long path was cut mid-name, two
    halves that neither a copy from the terminal nor a script could use. A path longer
    than the width stands whole on a line of its own. Text, not markup (``[`` in a path)."""
    width = out.width
    for line in textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False):
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def print_json(
    data: dict[str, Any],
    provenance: bool = True,
    *,
    default: Callable[[Any], Any] | None = None,
    allow_nan: bool = False,
) -> None:
    """A command's ``--json`` answer (:func:`simulator.results.answer_json.answer_json`:
    indented, and never the non-standard NaN unless ``allow_nan``); with the package
    version beside the seed and scenario hashes the answer carries (provenance: what
    reproduces it). A listing keyed by name (``units``: one key per ruleset) is not an
    answer and takes no extra key (``provenance=False``), nor do a sweep's and the
    baseline report's answers, which never had one."""
    from ..results.answer_json import answer_json
    from ..version import __version__

    if provenance:
        data = {**data, "version": data.get("version", __version__)}
    sys.stdout.write(answer_json(data, default=default, allow_nan=allow_nan) + "\n")


F = TypeVar("F", bound=Callable[..., Any])

ScenarioPath = Annotated[
    Path, typer.Argument(help="Scenario TOML file.", exists=True, dir_okay=False, readable=True)
]


def battles_option(help: str) -> Any:
    """``--battles/-n``: how many battles, its help saying the default for the command."""
    return typer.Option("--battles", "-n", min=1, max=MAX_BATTLES, help=help)


def seed_option(help: str) -> Any:
    """``--seed/-s``: the random seed, its help saying the default for the command."""
    return typer.Option("--seed", "-s", min=0, max=2**63 - 1, help=help)


Battles = Annotated[int | None, battles_option("Number of battles (default: the scenario's).")]
Seed = Annotated[int | None, seed_option("Random seed (default: the scenario's).")]
#: ``odds`` has no scenario file: its defaults are the ones a file left without them gets.
OddsBattles = Annotated[
    int | None, battles_option(f"Number of battles {default_words(DEFAULT_BATTLES)}.")
]
OddsSeed = Annotated[int | None, seed_option(f"Random seed (default {DEFAULT_SEED}).")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]
ByRound = Annotated[
    bool,
    typer.Option(
        "--by-round",
        help="Also the state after each step (round, strike, turn) to the longest battle: "
        "outcomes so far, men left.",
    ),
]
After = Annotated[
    int | None,
    typer.Option(
        "--after",
        help="Also the state after step N alone, with both sides' men left together.",
    ),
]
FromStep = Annotated[
    int | None,
    typer.Option(
        "--from-step",
        help="A battle in progress: the step it has reached (the armies as the scenario "
        "gives them now); the odds from here, steps counted from the battle's start.",
    ),
]
AttackerRetreat = Annotated[
    str | None,
    typer.Option(
        "--attacker-retreat",
        help='The attacker\'s stop rule, e.g. "at most 5, after 3": at most N (or P%), '
        "after N, gone TYPE, outnumbered X; the first that holds.",
    ),
]
DefenderRetreat = Annotated[
    str | None,
    typer.Option(
        "--defender-retreat",
        help='The defender\'s stop rule, e.g. "gone knight" (as --attacker-retreat).',
    ),
]
ScenarioSettings = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="A scenario value PATH=VALUE for this run, e.g. attacker.retreat.at_most=5; "
        "VALUE as a scenario file writes it (repeatable).",
    ),
]
Threads = Annotated[
    int | None,
    typer.Option("--threads", min=1, help="Threads for the kernel (default: all cores)."),
]
Precision = Annotated[
    float | None,
    typer.Option(
        min=MIN_PRECISION,
        max=0.5,
        help="Add battles until every probability's 95% half-width is below this "
        "(e.g. 0.002), instead of --battles.",
    ),
]
#: ``--ruleset``'s help: the registered names, plugins' included, listed when drawn.
RULESET_HELP = when_drawn(lambda: "Rule system: " + ", ".join(rulesets.names()))
RulesetName = Annotated[str, typer.Option("--ruleset", help=RULESET_HELP)]
MaxBattles = Annotated[
    int | None,
    typer.Option(
        "--max-battles",
        min=1,
        max=MAX_BATTLES,
        help=f"Cap of a --precision run {default_words(DEFAULT_MAX_BATTLES)}.",
    ),
]


Scheduler = Annotated[
    str | None,
    typer.Option(
        help="Run chunks on a Dask cluster: tcp://HOST:PORT, or local:N for N local workers."
    ),
]


#: The flags whose names are not their Python parameter's with ``--`` and dashes: the
#: one table by which an error naming a library's parameter names the command's flag.
FLAGS = {
    "caps": "--max",
    "executor": "--scheduler",
    "in_": "--in",
    "max_n": "--max",
    "settings": "--set",
}


def flag_of(parameter: str) -> str:
    """The flag of a library's parameter: ``max_battles`` -> ``--max-battles``,
    ``max_n`` -> ``--max`` (:data:`FLAGS`)."""
    return FLAGS.get(parameter) or "--" + parameter.replace("_", "-")


def error_words(error: BattleOddsError) -> str:
    """A library's error in the command line's words: a parameter named by its flag."""
    return error.words(flag_of) if isinstance(error, ParameterError) else str(error)


def user_errors(command: F) -> F:
    """Bad input: one line on stderr and exit status 2, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BattleOddsError as exc:  # a parameter said as the command's flag
            print_error(error_words(exc))
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def runs_battles(command: F) -> F:
    """The Ctrl-C contract of a command that runs battles (see
    :mod:`simulator.running.interrupt`): the first Ctrl-C stops the kernels, the command
    prints and writes its answer so far marked partial, and exits with status 130; a
    second Ctrl-C exits at once."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        code = None
        _not_written.clear()
        with stop_on_interrupt(ending=True) as stop, compile_notice_first(kwargs):
            try:
                answer = command(*args, **kwargs)
            except typer.Exit as exit_:  # regress's verdict, or its own Ctrl-C
                answer, code = None, exit_.exit_code
        # The answer is printed; then what failed on the way (a cluster lost, a file not
        # written), one line each.
        failed = [stop.failure] if stop.failure is not None else []
        for problem in [*failed, *stop.problems]:
            print_error(problem)
        if code == EXIT_INTERRUPTED:
            raise typer.Exit(code)
        if stop.requested and not failed:
            err.print("interrupted: the answer printed is the answer so far", highlight=False)
            raise typer.Exit(EXIT_INTERRUPTED)
        if failed or stop.problems:
            raise typer.Exit(1)
        if code is not None:
            raise typer.Exit(code)
        return answer

    return wrapper  # type: ignore[return-value]


def _say_notice(text: str) -> None:
    # As the progress bar says it (simulator/running/progress.py): wrapped between words
    # on a terminal, one line in a pipe or a log.
    err.print(text, highlight=False, markup=False, soft_wrap=not err.is_terminal)


@contextlib.contextmanager
def compile_notice_first(options: dict[str, Any], kernel: str | None = None) -> Iterator[None]:
    """A first run says that it compiles within a second of its start: as soon as its
    ruleset is known (a ``--ruleset`` option, or a scenario file read and valid), when
    nothing of that ruleset's kernels is in Numba's cache; not with its first compile,
    which a study reaches only once it has built every variation or pair. A ruleset with
    something cached says it with that compile, as before. ``kernel``: the one kernel
    module the command runs, where it knows (``exact``), named with its own estimate.
    A cold command whose battle compiles in a second process (kernels/_aside.py) starts
    that process then, while it prepares."""
    from ..running.compiling import forget_said_before, prestart_aside, say_before_compiling
    from ..scenario.scenario import LOADED, Scenario

    checked: set[str] = set()  # regress reads dozens of scenarios: each ruleset once

    def cold(ruleset: str) -> None:
        if say_before_compiling(ruleset, _say_notice, kernel) and kernel is None:
            prestart_aside(ruleset)

    def loaded(scenario: Scenario) -> None:
        if scenario.ruleset not in checked:
            checked.add(scenario.ruleset)
            cold(scenario.ruleset)

    named = options.get("ruleset")
    if isinstance(named, str) and rulesets.known(named):
        cold(named)
    LOADED.append(loaded)
    try:
        yield
    finally:
        LOADED.remove(loaded)
        forget_said_before()
        if "kernels._aside" in sys.modules:  # a second process started ahead, unused
            sys.modules["kernels._aside"].drop_spare()


T = TypeVar("T")


def written(option: str, path: Path, write: Callable[[], T]) -> T | None:
    """``write()`` an output file of a command that runs battles; when the system refuses
    (a full disk, a read-only file system), the command still prints its answer, then
    one line saying what was not written, and exits with status 1. The writers write
    through a temporary file, so nothing partial is left and an old file stays whole."""
    try:
        return write()
    except OSError as exc:
        message = f"{option} {path}: not written ({exc.strerror or exc})".replace("  ", " ")
        if not fail_after_the_answer(message.strip()):
            raise
        _not_written.add(Path(path))
        return None


#: The files of this command that :func:`written` could not write.
_not_written: set[Path] = set()


def say_written(path: Path | None, what: str) -> None:
    """``PATH: WHAT written`` after a command's answer, for a file it did write."""
    if path is not None and Path(path) not in _not_written:
        say_file_line(f"{path}: {what} written")


def say_partial(partial: bool, as_json: bool, what: str) -> None:
    """The text answer's mark of a partial answer (JSON has ``"partial": true``)."""
    if partial and not as_json:
        out.print(f"PARTIAL: {stop_reason()}: {what}", highlight=False, markup=False)


MaxTotal = Annotated[
    int | None,
    typer.Option(
        "--max-total",
        min=1,
        help=f"Most battles the whole command may fight {default_words(DEFAULT_MAX_TOTAL)}.",
    ),
]
#: ``-o`` of the commands whose answer is also a picture (worth, sensitivity, matrix, ...).
PlotOutput = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        dir_okay=False,
        help="Also draw the answer's plot: .png, .svg, .pdf or .jpg.",
    ),
]
Dpi = Annotated[int, typer.Option(min=20, max=1200, help="Resolution of a .png (dots per inch).")]
#: A figure's resolution when -o is given without --dpi: the figures' own default
#: (simulator.report.figures.new_figure, which imports matplotlib: tests compare them).
DEFAULT_DPI = 100
#: ``--costs`` of the commands that spend a budget (matrix, best).
CostsFile = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        readable=True,
        help="TOML file of `type = cost` lines overriding the unit table's costs.",
    ),
]


#: ``--set`` of the studies that build their own battles (matrix, prices, meta).
BattleSettings = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="A [battle] setting KEY=VALUE for every battle, e.g. rules=engine (skirmish) or "
        "strike_order=alternating (olympia); VALUE as a scenario file writes it (true, 3) "
        "or plain text (repeatable).",
    ),
]


def key_values(pairs: Sequence[str] | None) -> dict[str, str]:
    """Repeated ``--set KEY=VALUE`` as ``{KEY: VALUE}`` (text; a later KEY wins)."""
    answer: dict[str, str] = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise BattleOddsError(f"--set '{pair}': expected KEY=VALUE")
        answer[key.strip()] = value.strip()
    return answer


def battle_settings(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--set`` of ``matrix``, ``prices`` and ``meta``: keys of the ``[battle]`` table,
    each VALUE read as a TOML value where it is one (``true``, ``3``, ``["rain"]``), as a
    scenario file would hold it, else as text (``engine``); the ruleset checks them."""
    return {key: toml_value(value) for key, value in key_values(pairs).items()}


def toml_value(text: str) -> Any:
    """VALUE of ``--set KEY=VALUE`` as a scenario file would hold it (``true``, ``3``,
    ``["rain"]``), else as text (``engine``, ``30%``)."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
