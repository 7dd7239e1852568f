"""``battle-odds plot``, ``compare`` and ``sweep``: the balance-study commands.

Registered on the one typer app when :mod:`simulator.cli` imports this module.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..errors import BattleOddsError
from ..report.question import question
from ..report.tables import print_title
from ..rulesets.words import won
from ..running.bounds import check_total
from ..running.front import run_battles
from ..running.interrupt import stop_reason
from ..running.plan import DEFAULT_MAX_BATTLES, MAX_BATTLES, RunPlan
from ..running.progress import progress_bar
from ..scenario.scenario import load_scenario
from ..studies.sweep import find_target
from .app import app
from .help import default_of, default_words
from .options import (
    DEFAULT_DPI,
    After,
    AttackerRetreat,
    Battles,
    ByRound,
    DefenderRetreat,
    Dpi,
    FromStep,
    Json,
    MaxBattles,
    MaxTotal,
    Precision,
    ScenarioPath,
    ScenarioSettings,
    Scheduler,
    Seed,
    Threads,
    battles_option,
    err,
    key_values,
    out,
    print_json,
    runs_battles,
    say_file_line,
    say_partial,
    seed_option,
    user_errors,
    written,
)
from .unfolding import check_unfolding, given_values, unfolding, with_given

Output = Annotated[
    Path,
    typer.Option(
        "--output", "-o", dir_okay=False, help="Image file to write: .png, .svg, .pdf or .jpg."
    ),
]
Outcome = Annotated[
    str,
    typer.Option(
        help="Whose probability: attacker, defender, draw (or attacker_withdrew, "
        "defender_withdrew where a side has a stop rule)."
    ),
]


def _pct(p: float) -> str:
    return "-" if math.isnan(p) else f"{100 * p:.2f}%"


def _signed_pct(p: float) -> str:
    return f"{100 * p:+.2f}%"


@app.command()
@user_errors
@runs_battles
def plot(
    scenario: ScenarioPath,
    output: Output,
    battles: Battles = None,
    seed: Seed = None,
    precision: Precision = None,
    max_battles: MaxBattles = None,
    threads: Threads = None,
    dpi: Dpi = DEFAULT_DPI,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
    by_round: ByRound = False,
    after: After = None,
    from_step: FromStep = None,
    attacker_retreat: AttackerRetreat = None,
    defender_retreat: DefenderRetreat = None,
    option: ScenarioSettings = None,
) -> None:
    """Run a scenario and write one figure: outcomes, break timing, casualties.

    With --by-round or --after N, the battle as it unfolds instead: men left after each
    step, and both sides' men left together after step N."""
    from ..report import plots

    plots.check_output(output)
    given = given_values(from_step, attacker_retreat, defender_retreat, key_values(option))
    loaded = with_given(load_scenario(scenario), given)
    check_unfolding(loaded, by_round, after)
    plan = RunPlan.of(
        loaded,
        battles,
        seed,
        threads=threads,
        precision=precision,
        max_battles=max_battles,
        interruptible=True,
    )
    plan.check_total(max_total)
    result = run_battles(loaded, plan, console=err, scheduler=scheduler)
    note = f"{stop_reason()} after {result.n:,} battles" if result.partial else None
    steps = None if result.partial else unfolding(loaded, result, by_round, after)
    if steps is not None:
        from ..report.unfolding_plots import unfolding_figure

        figure = unfolding_figure(steps, dpi=dpi)
        if steps.partial:
            note = f"{stop_reason()} while the steps were recorded"
    else:
        figure = plots.report_figure(result, dpi=dpi)
    saved = written("-o", output, lambda: plots.save(figure, output, partial=note))
    say_file_line(
        f"{saved or output}: {loaded.name}, {result.n:,} battles"
        + (" (PARTIAL)" if note else "")
        + ("" if saved else " (not written)")
    )


@app.command()
@user_errors
@runs_battles
def compare(
    a: Annotated[
        Path,
        typer.Argument(
            help="Scenario A (the baseline).", exists=True, dir_okay=False, readable=True
        ),
    ],
    b: Annotated[
        Path,
        typer.Argument(help="Scenario B (the change).", exists=True, dir_okay=False, readable=True),
    ],
    battles: Annotated[int | None, battles_option("Number of battles (default: A's).")] = None,
    seed: Annotated[int | None, seed_option("Random seed (default: A's).")] = None,
    json: Json = False,
    threads: Threads = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", dir_okay=False, help="Also plot the differences here."),
    ] = None,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """Two scenarios on common random numbers: each win probability and B - A."""
    from ..studies.compare import compare as run_comparison

    if output is not None:
        from ..report import plots

        plots.check_output(output)
    from ..running.distributed import executor_for

    first, second = load_scenario(a), load_scenario(b)
    total = first.battles if battles is None else battles
    check_total(f"compare: 2 scenarios x --battles {total:,}", 2 * total, max_total)
    label = f"{first.name} vs {second.name}"
    with executor_for(scheduler) as executor, progress_bar(err, label) as progress:
        comparison = run_comparison(
            first, second, total, seed, threads=threads, progress=progress, executor=executor
        )
    if output is not None:
        from ..report import plots

        figure = plots.figure_of(plots.comparison_panel(comparison))
        note = f"{stop_reason()} after {comparison.n:,} battles" if comparison.partial else None
        written("-o", output, lambda: plots.save(figure, output, partial=note))
    if json:
        print_json(comparison.to_dict())
        return
    render_comparison(comparison, a, b)
    say_partial(comparison.partial, json, f"{comparison.n:,} of {total:,} battles")
    if output is not None:
        say_file_line(f"{output}: plot of the differences written")


def _win_table(comparison: Any, independent: bool) -> Table:
    """Each outcome's probability in A and B, B - A and its paired 95% interval, and with
    ``independent`` the interval as two independent runs."""
    table = Table(box=box.SIMPLE_HEAVY, caption_justify="left", pad_edge=False)
    table.caption = "95% intervals of B - A, in points: paired, and as two independent runs"
    columns = ["outcome", "A", "B", "B - A", "paired"] + (["independent"] if independent else [])
    for column in columns:
        table.add_column(
            column, justify="left" if column == "outcome" else "right", no_wrap=column != "outcome"
        )
    for outcome in comparison.outcomes:
        d, ind = comparison.win(outcome), comparison.win_independent(outcome)
        cells = [
            won(outcome),
            _pct(d.a),
            _pct(d.b),
            _signed_pct(d.difference),
            f"{100 * d.low:+.2f} .. {100 * d.high:+.2f}",
        ]
        if independent:
            cells.append(f"{100 * ind.low:+.2f} .. {100 * ind.high:+.2f}")
        table.add_row(*cells)
    return table


def render_comparison(comparison: Any, a: Path, b: Path) -> None:
    """The comparison's tables: each outcome's probability in A and B with B - A and its
    intervals, then the means, every number on one line; the words of a row wrap where
    the terminal is narrow, the numbers never do."""
    from .. import rulesets
    from ..report.question import question

    first, second = comparison.a.scenario, comparison.b.scenario
    ruleset = rulesets.get(first.ruleset)
    say_file_line(f"A: {first.name} ({a})")
    out.print(f"   {escape(question(first))}", highlight=False)
    say_file_line(f"B: {second.name} ({b})")
    out.print(f"   {escape(question(second))}", highlight=False)
    print_title(
        out,
        f"B - A on common random numbers: {comparison.n:,} battles, seed {comparison.a.seed}"
        + (f" [PARTIAL: {stop_reason()}]" if comparison.partial else ""),
    )
    table = _win_table(comparison, independent=True)
    # Measured unbounded: a table's measure is capped at the width it is measured for.
    if out.measure(table, options=out.options.update_width(10_000)).maximum > out.width:
        # Too narrow for both intervals: rich would cut the numbers, so the independent one
        # is left out, and the caption says where it is.
        table = _win_table(comparison, independent=False)
        table.caption = (
            f"95% intervals of B - A, in points, paired (as two independent runs: not shown "
            f"at {out.width} columns; a wider terminal or --json shows it)"
        )
    out.print(table)
    print_title(out, "Means per battle (yes/no outcomes: how often, in %)")
    means = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold underline")
    for column in ("what", "A", "B", "B - A", "paired 95%"):
        means.add_column(
            column,
            justify="left" if column == "what" else "right",
            no_wrap=column != "what",
            ratio=1 if column == "what" else None,
        )
    flags = comparison.a.flags | comparison.b.flags
    for name in comparison.sums:
        d = comparison.mean(name)
        if name == "steps":
            said = f"{ruleset.step_unit} until decided"
        else:
            said = ruleset.describe_column(name)
        if name in flags:
            cells = (
                _pct(d.a),
                _pct(d.b),
                f"{100 * d.difference:+,.2f}",
                f"{100 * d.low:+,.2f} .. {100 * d.high:+,.2f}",
            )
        else:
            cells = (
                f"{d.a:,.2f}",
                f"{d.b:,.2f}",
                f"{d.difference:+,.3f}",
                f"{d.low:+,.3f} .. {d.high:+,.3f}",
            )
        means.add_row(escape(said), *cells)
    out.print(means)


@app.command()
@user_errors
@runs_battles
def sweep(
    scenario: ScenarioPath,
    vary: Annotated[
        list[str],
        typer.Option(
            help="PATH=LOW..HIGH[:STEP] or PATH=A,B,C, e.g. attacker.knight=1..40 or "
            "units.knight.attack=30..60:5. Twice for a grid."
        ),
    ],
    battles: Battles = None,
    seed: Seed = None,
    outcome: Outcome = "attacker",
    target: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Find the smallest value whose win probability reaches this "
            "(bisection; --battles is the first count per probe).",
        ),
    ] = None,
    precision: Precision = None,
    max_battles: Annotated[
        int | None,
        typer.Option(
            "--max-battles",
            min=1,
            max=MAX_BATTLES,
            help=f"Cap of each point's --precision run {default_words(DEFAULT_MAX_BATTLES)}, "
            "or of each --target probe, its looks doubling up to it "
            f"{default_words(default_of(find_target, 'max_battles'))}.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", dir_okay=False, help="Plot to this .png, .svg, .pdf or .jpg."
        ),
    ] = None,
    json: Json = False,
    threads: Threads = None,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """Win probability as one or two values vary (a curve or a heat map), or --target."""
    from ..running.distributed import executor_for

    if output is not None:
        from ..report import plots  # Matplotlib: a second's import, only for a plot

        plots.check_output(output)
    with executor_for(scheduler) as executor:
        _sweep(
            load_scenario(scenario),
            vary,
            battles,
            seed,
            outcome,
            target,
            precision,
            max_battles,
            output,
            json,
            threads,
            executor,
            max_total,
        )


def _sweep(
    loaded: Any,
    vary: list[str],
    battles: int | None,
    seed: int | None,
    outcome: str,
    target: float | None,
    precision: float | None,
    max_battles: int | None,
    output: Path | None,
    json: bool,
    threads: int | None,
    executor: Any,
    max_total: int | None,
) -> None:
    from ..studies import sweep as sweeping

    if target is not None:
        if len(vary) != 1:
            raise BattleOddsError(f"--target searches one value: got --vary {len(vary)} times")
        if precision is not None:
            raise BattleOddsError(
                "--target chooses its own battles per probe: drop --precision "
                "(--battles and --max-battles bound them)"
            )
        limits: dict[str, Any] = {}
        if battles is not None:
            limits["battles"] = battles
        if max_battles is not None:
            limits["max_battles"] = max_battles
        with progress_bar(err, "sweep --target", "values tried", at_most=True) as progress:
            search = sweeping.find_target(
                loaded,
                vary[0],
                target,
                seed,
                outcome=outcome,
                threads=threads,
                progress=progress,
                executor=executor,
                max_total=max_total,
                **limits,
            )
        if output is not None:
            from ..report import plots

            figure = plots.figure_of(plots.target_panel(search))
            note = f"stopped after {len(search.probes)} probes" if search.partial else None
            written("-o", output, lambda: plots.save(figure, output, partial=note))
        if json:
            print_json(search.to_dict(), provenance=False, default=str, allow_nan=True)
            return
        varied = _path_words(loaded, search.vary.path)
        wins = _outcome_words(outcome)
        out.print(escape(question(loaded)), highlight=False)
        _print_frame(
            search.frame,
            f"Target search: the smallest value of {varied} with P({wins}) at least {target:.0%} "
            f"(intervals at z = {search.z:.2f})",
            {search.vary.path: varied},
        )
        if search.partial:
            say_partial(True, json, f"no answer after {len(search.probes)} probes")
        elif search.value is None:
            out.print(
                f"not reached: P({wins}) stays below {target:.0%} up to "
                f"{varied} = {max(search.vary.values, key=float)}",
                highlight=False,
            )
        else:
            out.print(
                f"smallest value of {escape(varied)} reaching {target:.0%}: "
                f"[bold]{search.value}[/bold]"
                + (
                    ""
                    if search.sure
                    else " (not sure: a probe hit --max-battles undecided; see the table)"
                )
            )
        return
    if precision is None and max_battles is not None:
        raise BattleOddsError("--max-battles caps --precision or --target: give one of them too")
    limits = {} if max_battles is None else {"max_battles": max_battles}
    unit = "points of the sweep" if precision is not None else "battles"
    with progress_bar(err, "sweep", unit) as progress:
        result = sweeping.sweep(
            loaded,
            vary,
            battles,
            seed,
            outcome=outcome,
            precision=precision,
            threads=threads,
            progress=progress,
            executor=executor,
            max_total=max_total,
            **limits,
        )
    done = f"{len(result.points)} of the grid's points run" if result.partial else None
    saved = None
    if output is not None:
        from ..report import plots

        figure = plots.sweep_figure(result)
        saved = written("-o", output, lambda: plots.save(figure, output, partial=done))
    if json:
        print_json(result.to_dict(), provenance=False, default=str, allow_nan=True)
        return
    names = {v.path: _path_words(loaded, v.path) for v in result.varies}
    out.print(escape(question(loaded)), highlight=False)
    title = f"{loaded.name}: P({_outcome_words(outcome)}) with 95% interval"
    if len(result.varies) == 2 and not result.partial:
        _print_grid(result, names, title)
    elif result.points:  # none when Ctrl-C came before the first point's answer
        columns = [v.path for v in result.varies] + ["p", "low", "high", "battles"]
        _print_frame(result.frame[columns], title, names)
    say_partial(result.partial, json, done or "")
    if saved:
        say_file_line(f"{output}: plot written")


def _path_words(scenario: Any, path: str) -> str:
    from .. import rulesets

    return rulesets.get(scenario.ruleset).describe_path(path, scenario.data)


def _outcome_words(outcome: str) -> str:
    return won(outcome)


#: The columns of a sweep's or a search's table, in words.
_COLUMN_WORDS = {"p": "P", "low": "low", "high": "high", "battles": "battles", "side": "side"}


def _print_frame(frame: Any, title: str, names: dict[str, str] | None = None) -> None:
    """One row per point; the varied values' columns headed in words (wrapped where the
    terminal is narrow), the numbers never wrapped."""
    table = Table(title=title, box=box.SIMPLE, title_justify="left")
    for column in frame.columns:
        header = (names or {}).get(str(column), _COLUMN_WORDS.get(str(column), str(column)))
        table.add_column(
            escape(header),
            justify="right",
            no_wrap=str(column) in _COLUMN_WORDS,
            min_width=min(len(header), 30) if str(column) not in _COLUMN_WORDS else None,
        )
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row, strict=True):
            if column in ("p", "low", "high"):
                cells.append(_pct(float(value)))
            elif column == "battles":
                cells.append(f"{int(value):,}")
            else:
                cells.append(str(value))
        table.add_row(*cells)
    out.print(table)


def _print_grid(result: Any, names: dict[str, str], title: str) -> None:
    """A two-value sweep as a grid: the first value down, the second across, each cell
    P in % with its interval's larger half-width; columns split over several grids when
    the terminal is too narrow for all of them."""
    first, second = result.varies
    cells: dict[tuple[str, str], str] = {}
    for values, run in zip(result.points, result.results, strict=True):
        p, low, high = run.win(result.outcome)
        half = max(p - low, high - p)
        cells[(str(values[0]), str(values[1]))] = f"{100 * p:.1f}\u00b1{100 * half:.1f}"
    rows = [str(v) for v in first.values]
    columns = [str(v) for v in second.values]
    cell_width = max(len(c) for c in cells.values())
    label = max(len(names[first.path]) // 2, *(len(r) for r in rows), 8)
    per_grid = max(1, (out.width - label - 2) // (cell_width + 1))
    counts = sorted({run.n for run in result.results})
    each = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
    print_title(out, f"{title} (cells: % \u00b1 95% half-width; {each} battles a point)")
    out.print(escape(f"rows: {names[first.path]}; columns: {names[second.path]}"), highlight=False)
    for at in range(0, len(columns), per_grid):
        shown = columns[at : at + per_grid]
        table = Table(box=box.SIMPLE, pad_edge=False, padding=(0, 1), collapse_padding=True)
        table.add_column("", justify="right", no_wrap=True, min_width=min(label, 12))
        for column in shown:
            table.add_column(column, justify="right", no_wrap=True, min_width=cell_width)
        for row in rows:
            table.add_row(row, *(cells.get((row, c), "-") for c in shown))
        out.print(table)
