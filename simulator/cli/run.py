"""``battle-odds run``, ``odds``, ``exact``, ``validate``, ``units`` and ``replay``: the
commands about one battle."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from .. import rulesets
from ..atomic import write_atomically
from ..errors import BattleOddsError
from ..rulesets import InlineQuery
from ..running.front import run_battles
from ..running.output_paths import CSV, check_output_path
from ..running.plan import DEFAULT_CHUNK, RunPlan
from ..scenario.scenario import from_query, load_scenario
from .app import app
from .options import (
    After,
    AttackerRetreat,
    Battles,
    ByRound,
    DefenderRetreat,
    FromStep,
    Json,
    MaxBattles,
    MaxTotal,
    OddsBattles,
    OddsSeed,
    Precision,
    RulesetName,
    ScenarioPath,
    ScenarioSettings,
    Scheduler,
    Seed,
    Threads,
    compile_notice_first,
    err,
    key_values,
    out,
    print_json,
    runs_battles,
    say_file_line,
    user_errors,
    written,
)
from .unfolding import (
    check_given,
    check_unfolding,
    given_values,
    stop_rule_notes,
    unfolding,
    with_given,
)


def _show(result: Any, as_json: bool, steps: Any = None) -> None:
    if as_json:
        if steps is None:
            sys.stdout.write(result.to_json() + "\n")
        else:
            print_json({**result.to_dict(), **steps.to_dict()}, provenance=False)
    else:
        # rich's tables load only to draw one (0.01 s of a query that prints JSON).
        from ..report.tables import render

        render(result, out)
        if steps is not None:
            from ..report.unfolding import render_steps

            render_steps(steps, out)


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
    max_total: MaxTotal = None,
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
    by_round: ByRound = False,
    after: After = None,
    from_step: FromStep = None,
    attacker_retreat: AttackerRetreat = None,
    defender_retreat: DefenderRetreat = None,
    option: ScenarioSettings = None,
) -> None:
    """Run a scenario file and print the odds (Ctrl-C: stop, print what is done)."""
    if keep_battles is not None:
        check_output_path(keep_battles, "--keep-battles", CSV)
    if checkpoint is not None:
        check_output_path(checkpoint, "--checkpoint")
    given = given_values(from_step, attacker_retreat, defender_retreat, key_values(option))
    loaded = with_given(load_scenario(scenario), given)
    check_unfolding(loaded, by_round, after)
    plan = RunPlan.of(
        loaded,
        battles,
        seed,
        chunk=chunk,
        threads=threads,
        checkpoint=checkpoint,
        # The report is made from the tally: rows are kept only to be written.
        keep_battles=keep_battles is not None,
        precision=precision,
        max_battles=max_battles,
        interruptible=True,
    )
    plan.check_total(max_total)
    result = run_battles(loaded, plan, console=err, scheduler=scheduler)
    steps = None if result.partial else unfolding(loaded, result, by_round, after)
    _show(result, json, steps)  # first: a file that cannot be written takes nothing from it
    if keep_battles is not None and result.rows is not None:
        rows = result.battles.to_csv(index=False)
        written("--keep-battles", keep_battles, lambda: write_atomically(keep_battles, rows))


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
        list[str] | None,
        typer.Option(
            "--set",
            help="Ruleset option KEY=VALUE, or a scenario value PATH=VALUE at a dotted path "
            "(attacker.retreat.at_most=5) (repeatable).",
        ),
    ] = None,
    battles: OddsBattles = None,
    seed: OddsSeed = None,
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
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
    by_round: ByRound = False,
    after: After = None,
    from_step: FromStep = None,
    attacker_retreat: AttackerRetreat = None,
    defender_retreat: DefenderRetreat = None,
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
    settings = key_values(option)
    # A dotted KEY is a scenario data path, set after the armies are built; the others
    # are the ruleset's options.
    options.update({k: v for k, v in settings.items() if "." not in k})
    paths = {k: v for k, v in settings.items() if "." in k}
    given = given_values(from_step, attacker_retreat, defender_retreat, paths)
    query = InlineQuery(attacker, defender, {k: v for k, v in options.items() if v is not None})
    scenario = from_query(ruleset, query)
    if given:
        check_given(scenario, given)
        scenario = from_query(ruleset, query, given)
    if exact and by_round:
        raise BattleOddsError("--exact: every step is simulated; drop --by-round")
    if exact:
        _show_exact(scenario, json, after)
        return
    check_unfolding(scenario, by_round, after)
    plan = RunPlan.of(
        scenario,
        battles,
        seed,
        threads=threads,
        keep_battles=False,  # the report is made from the tally
        precision=precision,
        max_battles=max_battles,
        interruptible=True,
    )
    plan.check_total(max_total)
    result = run_battles(scenario, plan, console=err, scheduler=scheduler)
    steps = None if result.partial else unfolding(scenario, result, by_round, after)
    _show(result, json, steps)


def _show_exact(scenario: Any, as_json: bool, after: int | None = None) -> None:
    if after is not None:
        if after < 1:
            raise BattleOddsError(f"--after {after}: expected a step 1 or more")
        from ..report.unfolding import render_exact_state
        from ..studies.exact import exact_after

        state = exact_after(scenario, after)
        if as_json:
            print_json(state.to_dict())
        else:
            render_exact_state(state, out)
        return
    from ..report.tables import render_exact
    from ..studies.exact import exact as solve

    answer = solve(scenario)
    if as_json:
        print_json(answer.to_dict())
    else:
        render_exact(answer, out)


@app.command(name="exact")
@user_errors
def exact_command(scenario: ScenarioPath, json: Json = False, after: After = None) -> None:
    """Exact odds of a small battle (rulesets with a solver): probabilities and expectations."""
    # Said before the solver's state space is built (before it compiles), naming the solver.
    with compile_notice_first({}, kernel="exact"):
        _show_exact(load_scenario(scenario), json, after)


@app.command()
@user_errors
def validate(scenario: ScenarioPath) -> None:
    """Check a scenario file without running it."""
    loaded = load_scenario(scenario)
    say_file_line(f"{scenario}: ok ({loaded.ruleset}, '{loaded.name}', hash {loaded.hash})")
    # Legal but worth a word (a blocks block with both knights and harry): the notes a
    # run prints under its results; and a stop rule true from the start, or both sides'
    # rules that can hold at once.
    for note in (*getattr(loaded.model, "notes", ()), *stop_rule_notes(loaded)):
        out.print(f"note: {escape(note)}", highlight=False)


@app.command()
@user_errors
def units(
    ruleset: Annotated[str | None, typer.Option(help="Only this ruleset.")] = None,
    json: Json = False,
) -> None:
    """List the unit types of each ruleset."""
    if ruleset:
        names = [rulesets.get(ruleset, "--ruleset").name]
    else:
        names = list(rulesets.available())
        for problem in rulesets.problems():
            err.print(f"warning: {escape(problem)}", highlight=False, soft_wrap=True)
    tables = {name: rulesets.get(name).units() for name in names}
    if json:
        # One object, each ruleset's rows under its name (and nothing else under it).
        print_json(
            {
                name: frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
                for name, frame in tables.items()
            },
            provenance=False,
        )
        return
    for name, frame in tables.items():
        shown, notes_below, left_out = _unit_layout(frame, out.width)
        out.print(f"[bold]{name} unit types[/bold]", highlight=False)
        out.print(_unit_table(frame[shown]))
        if notes_below:
            # Too narrow for a notes column: each type's note below the table, whole.
            for kind, note in zip(frame["type"], frame["notes"], strict=True):
                if note:
                    out.print(f"  {kind}: {escape(str(note))}", highlight=False)
        if left_out:
            out.print(
                f"  (not shown at {out.width} columns: {', '.join(left_out)}; a wider "
                f"terminal or `battle-odds units --ruleset {name} --json` shows them)",
                highlight=False,
            )
        out.print()


#: Columns of prose (wrapped when narrow) are at least this wide; notes narrower than
#: ``NOTES_WIDTH`` go below the table instead.
PROSE_WIDTH, NOTES_WIDTH = 16, 30


def _is_prose(frame: Any, column: str) -> bool:
    values = [_unit_cell(v) for v in frame[column]]
    return (
        column != "type" and max(map(len, values), default=0) > 20 and any(" " in v for v in values)
    )


def _width(frame: Any, column: str) -> int:
    """The column's width on screen: its widest cell or header (prose: its narrowest)."""
    whole = max(len(str(column)), *(len(_unit_cell(v)) for v in frame[column]))
    return min(whole, PROSE_WIDTH) if _is_prose(frame, column) else whole


def _unit_layout(frame: Any, width: int) -> tuple[list[str], bool, list[str]]:
    """Which columns fit ``width`` (two spaces between columns), whether the notes go
    below the table, and the columns left out (from the right, never ``type``)."""
    columns = [c for c in frame.columns if c != "notes"]
    left_out: list[str] = []
    while sum(_width(frame, c) + 2 for c in columns) > width + 1 and len(columns) > 1:
        left_out.insert(0, columns.pop())
    has_notes = "notes" in frame and any(frame["notes"])
    room = width - sum(_width(frame, c) + 2 for c in columns)
    beside = has_notes and room >= NOTES_WIDTH
    return [*columns, *(["notes"] if beside else [])], has_notes and not beside, left_out


def _unit_table(frame: Any) -> Any:
    """The unit table: names whole (they are copied into scenarios), numbers right-aligned,
    prose wrapped, no rules between columns."""
    from rich.table import Table

    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold underline")
    for col in frame.columns:
        prose = col == "notes" or _is_prose(frame, col)
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in frame[col])
        table.add_column(
            str(col),
            justify="right" if numeric else "left",
            no_wrap=not prose,
            min_width=PROSE_WIDTH if prose else _width(frame, col),
        )
    for row in frame.itertuples(index=False):
        table.add_row(*(_unit_cell(v) for v in row))
    return table


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

    from ..rulesets.skirmish.replay import replay as replay_battle

    replayed = replay_battle(load_scenario(scenario), battle, seed, battles)
    if json:
        sys.stdout.write(json_module.dumps(replayed.to_dict()) + "\n")
        return
    import textwrap

    # A log line longer than the terminal wraps at a space, its rest indented under it.
    for line in replayed.lines():
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        wrapped = textwrap.wrap(line, out.width, subsequent_indent=indent, drop_whitespace=True)
        sys.stdout.write("\n".join(wrapped or [""]) + "\n")
