"""``battle-odds plot``, ``compare`` and ``sweep``: the balance-study commands.

Registered on the one typer app when :mod:`simulator.cli` imports this module.
"""

from __future__ import annotations

import json as jsonlib
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from ..errors import BattleOddsError
from ..report.tables import print_title
from ..results.stats import OUTCOMES
from ..running.bounds import check_total
from ..running.plan import RunPlan
from ..running.progress import progress_bar, run_battles
from ..scenario.scenario import load_scenario
from .app import app
from .options import (
    Battles,
    Dpi,
    Json,
    MaxBattles,
    MaxTotal,
    Precision,
    ScenarioPath,
    Scheduler,
    Seed,
    Threads,
    battles_option,
    err,
    out,
    print_json,
    runs_battles,
    say_partial,
    seed_option,
    user_errors,
)

Output = Annotated[
    Path,
    typer.Option(
        "--output", "-o", dir_okay=False, help="Image file to write: .png, .svg, .pdf or .jpg."
    ),
]
Outcome = Annotated[str, typer.Option(help="Whose win probability: attacker, defender or draw.")]


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
    dpi: Dpi = 100,
    scheduler: Scheduler = None,
    max_total: MaxTotal = None,
) -> None:
    """Run a scenario and write one figure: outcomes, break timing, casualties."""
    from ..report import plots

    plots.check_output(output)
    loaded = load_scenario(scenario)
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
    note = f"interrupted after {result.n:,} battles" if result.partial else None
    written = plots.save(plots.report_figure(result, dpi=dpi), output, partial=note)
    out.print(
        f"{written}: {loaded.name}, {result.n:,} battles" + (" (PARTIAL)" if note else ""),
        highlight=False,
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

        plots.save(
            plots.figure_of(plots.comparison_panel(comparison)),
            output,
            partial=f"interrupted after {comparison.n:,} battles" if comparison.partial else None,
        )
    if json:
        print_json(comparison.to_dict())
        return
    table = Table(box=box.SIMPLE_HEAVY, caption_justify="left")
    table.caption = "95% intervals of B - A, in points: paired, and as two independent runs"
    for column in ("outcome", "A", "B", "B - A", "paired", "independent"):
        table.add_column(column, justify="left" if column == "outcome" else "right", no_wrap=True)
    for outcome in OUTCOMES:
        d, ind = comparison.win(outcome), comparison.win_independent(outcome)
        table.add_row(
            outcome if outcome == "draw" else f"{outcome} wins",
            _pct(d.a),
            _pct(d.b),
            _signed_pct(d.difference),
            f"{100 * d.low:+.2f} .. {100 * d.high:+.2f}",
            f"{100 * ind.low:+.2f} .. {100 * ind.high:+.2f}",
        )
    out.print(f"A: {first.name} ({a})\nB: {second.name} ({b})", highlight=False)
    print_title(
        out,
        f"B - A on common random numbers: {comparison.n:,} battles, seed {comparison.a.seed}"
        + (" [PARTIAL: interrupted]" if comparison.partial else ""),
    )
    out.print(table)
    print_title(out, "Means (per battle)")
    # Names whole (they are the JSON's keys), numbers never wrapped, two spaces apart.
    means = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold underline")
    for column in ("number", "A", "B", "B - A", "paired 95%"):
        means.add_column(
            column,
            justify="left" if column == "number" else "right",
            no_wrap=True,
            min_width=max(map(len, comparison.sums), default=6) if column == "number" else None,
        )
    for name in comparison.sums:
        d = comparison.mean(name)
        means.add_row(
            name,
            f"{d.a:,.2f}",
            f"{d.b:,.2f}",
            f"{d.difference:+,.3f}",
            f"{d.low:+,.3f} .. {d.high:+,.3f}",
        )
    out.print(means)
    say_partial(comparison.partial, json, f"{comparison.n:,} of {total:,} battles")


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
    max_battles: MaxBattles = None,
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
    from ..report import plots
    from ..running.distributed import executor_for

    if output is not None:
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
    from ..report import plots
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
            limits["first_battles"] = battles
        if max_battles is not None:
            limits["max_battles"] = max_battles
        with progress_bar(err, "target search", "probes") as progress:
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
            plots.save(
                plots.figure_of(plots.target_panel(search)),
                output,
                partial=f"stopped after {len(search.probes)} probes" if search.partial else None,
            )
        if json:
            sys.stdout.write(jsonlib.dumps(search.to_dict(), indent=2, default=str) + "\n")
            return
        _print_frame(
            search.frame(),
            f"Target search: P({outcome}) >= {target} (intervals at z = {search.z:.2f})",
        )
        if search.partial:
            say_partial(True, json, f"no answer after {len(search.probes)} probes")
        elif search.value is None:
            out.print(
                f"not reached: P({outcome}) stays below {target} up to "
                f"{search.vary.path} = {max(search.vary.values, key=float)}",
                highlight=False,
            )
        else:
            out.print(
                f"smallest {search.vary.path} reaching {target}: [bold]{search.value}[/bold]"
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
    unit = "points" if precision is not None else "battles"
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
    if output is not None:
        plots.save(plots.sweep_figure(result), output, partial=done)
    if json:
        sys.stdout.write(jsonlib.dumps(result.to_dict(), indent=2, default=str) + "\n")
        return
    columns = [v.path for v in result.varies] + ["p", "low", "high", "battles"]
    _print_frame(result.frame()[columns], f"{loaded.name}: P({outcome}) with 95% interval")
    say_partial(result.partial, json, done or "")
    if output is not None:
        out.print(f"{output}: plot written", highlight=False)


def _print_frame(frame: Any, title: str) -> None:
    table = Table(title=title, box=box.SIMPLE, title_justify="left")
    for column in frame.columns:
        table.add_column(str(column), justify="right")
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
