"""``battle-odds regress``: balance numbers against a baseline, for CI."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import BattleOddsError
from ..rulesets.words import won
from ..running.interrupt import EXIT_INTERRUPTED, Interrupted, answered_at_exit
from ..running.output_paths import TOML, XML, check_output_path
from ..running.progress import progress_bar
from .app import app
from .options import (
    Json,
    MaxTotal,
    Scheduler,
    battles_option,
    err,
    error_words,
    out,
    print_error,
    print_json,
    runs_battles,
    say_file_line,
    say_partial,
    written,
)


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
    battles: Annotated[int | None, battles_option("With --update: battles per scenario.")] = None,
    level: Annotated[
        float | None,
        typer.Option(min=1e-9, max=0.5, help="With --update: family-wise false-alarm level."),
    ] = None,
    json: Json = False,
    junit: Annotated[
        Path | None, typer.Option(help="Also write a JUnit XML report here.", dir_okay=False)
    ] = None,
    max_total: MaxTotal = None,
    scheduler: Scheduler = None,
) -> None:
    """Compare balance numbers with a baseline: exit 0 within noise, 1 moved, 2 bad input
    (Ctrl-C: the scenarios checked so far, exit 130)."""
    from functools import partial

    from ..running.distributed import executor_for
    from ..running.runner import simulate
    from ..scenario.scenario import load_scenario
    from ..studies import regress as regression
    from .regress_ahead import Schedule

    stack = ExitStack()
    try:
        executor = stack.enter_context(executor_for(scheduler))
        run = partial(simulate, executor=executor)
        if junit is not None:
            check_output_path(junit, "--junit", XML)
        if update:
            check_output_path(baseline, "--baseline", TOML)
            with progress_bar(err, "regress --update") as progress:
                made = regression.update(
                    paths,
                    baseline,
                    battles=battles,
                    level=level,
                    max_total=max_total,
                    progress=progress,
                    run=run,
                )
            say_file_line(f"{baseline}: baseline of {len(made.entries)} scenarios written")
            return
        read = regression.read_baseline(baseline)
        say_compiling(read, paths, baseline)
        schedule = Schedule(second=scheduler is None)
        stack.callback(schedule.stop)
        verdicts: list[Any] = []

        def tell(verdict: Any) -> None:
            verdicts.append(verdict)
            say_verdict(verdict, read=read, console=verdicts_console(json))

        def answer_so_far() -> None:
            # Ctrl-C while a kernel compiles ends the process at once: the scenarios
            # checked before it still get their report, marked partial (a between-runs
            # Ctrl-C gets it from check()); none checked yet, no answer, as any command's.
            if not verdicts:
                return
            so_far = regression.report_so_far(read.level, verdicts)
            answer(so_far, changed_scenarios(so_far, paths, read, baseline), read, json, junit)

        answered_at_exit.append(answer_so_far)
        stack.callback(answered_at_exit.remove, answer_so_far)
        with progress_bar(err, "regress") as progress:
            report = regression.check(
                paths,
                read,
                baseline,
                max_total=max_total,
                progress=progress,
                run=run,
                load=partial(load_scenario, announce=False),
                order=schedule.order,
                ready=schedule.ready,
                told=tell,
            )
        changed = changed_scenarios(report, paths, read, baseline)
    except BattleOddsError as exc:
        print_error(error_words(exc))
        raise typer.Exit(2) from None
    except OSError as exc:  # the baseline, whole or not at all: the old file stays
        print_error(f"--baseline {baseline}: not written ({exc.strerror or exc})")
        raise typer.Exit(1) from None
    except Interrupted:
        err.print(
            f"{baseline}: not written (interrupted before every scenario ran)",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        stack.close()
    answer(report, changed, read, json, junit)
    if not report.partial:
        raise typer.Exit(0 if report.passed else 1)


def answer(report: Any, changed: dict[str, Any], read: Any, json: bool, junit: Path | None) -> None:
    """The check's report: the JUnit file where asked, then the JSON or the table (a
    partial one marked so)."""
    from ..atomic import write_atomically

    if junit is not None:
        xml = report.junit()
        written("--junit", junit, lambda: write_atomically(junit, xml))
    if json:
        print_json(report.to_dict(), provenance=False, allow_nan=True)
    else:
        render_regression(report, changed, read)
        say_partial(report.partial, json, "the scenarios after the last one shown were not run")


def changed_scenarios(
    report: Any, paths: list[Path], read: Any, baseline: Path
) -> dict[str, tuple[Any, Any]]:
    """Each scenario whose file changed since the baseline: its baseline entry and the
    scenario as it is now (to say what the baseline held and what changed)."""
    from ..scenario.scenario import load_scenario
    from ..studies import regress as regression

    files = {regression.key_of(p, baseline): p for p in regression.scenario_files(paths, baseline)}
    return {
        key: (read.entries[key], load_scenario(files[key]))
        for key, status in report.statuses.items()
        if status == "changed" and key in files and key in read.entries
    }


def say_compiling(read: Any, paths: list[Path], baseline: Path) -> None:
    """The compile notice, within a second of the start (before the scenario files are
    read: seconds of a first run): when a ruleset of the baseline's scenarios under
    ``paths`` has nothing in Numba's cache, what the check compiles and how it goes."""
    from .. import rulesets as installed
    from ..running.compiling import said_in_full
    from ..studies import regress as regression
    from .regress_ahead import is_cold, second_process_helps

    roots = [regression.key_of(p, baseline) for p in paths]
    used = {
        e.ruleset
        for key, e in read.entries.items()
        if regression.under(key, roots) and installed.known(e.ruleset)
    }
    cold = sorted(name for name in used if is_cold(name))
    if not cold:
        return
    meanwhile = (
        ", a second process compiling the kernels of the scenarios after it meanwhile"
        if len(cold) > 1 and second_process_helps(set(cold))
        else ""
    )
    said_in_full()
    which = f"{len(cold)} rulesets ({', '.join(cold)})" if len(cold) > 1 else cold[0]
    err.print(
        f"battle-odds: compiling the kernels of {which}, "
        "first run only (later runs load them from Numba's cache): each scenario's "
        "verdict is printed as it is checked, the scenarios quickest to compile first"
        f"{meanwhile}",
        highlight=False,
        markup=False,
        soft_wrap=not err.is_terminal,
    )


def verdicts_console(json: bool) -> Any:
    """Where each scenario's verdict goes as it is checked: standard output, or standard
    error with ``--json`` (its output is the JSON alone) and where both are the terminal
    the progress bar is drawn on (printed through the bar's console, a line goes above
    the bar; printed to the other, it would land on the bar's line)."""
    return err if json or (out.is_terminal and err.is_terminal) else out


def say_verdict(verdict: Any, read: Any, console: Any) -> None:
    """A scenario's verdict as soon as it is checked, one line (CI logs are read with
    grep): the table after the last one says every scenario's again."""
    words = {
        "ok": "within noise",
        "moved": "balance moved",
        "undecided": "decided with the last scenario: a number near Holm's threshold",
        "changed": "changed since the baseline, not run",
        "new": "not in the baseline, not run",
        "missing": "in the baseline, its file is gone",
        "interrupted": "interrupted by Ctrl-C",
    }[verdict.status]
    closest = verdict.closest
    if closest is not None:
        words = f"{len(verdict.comparisons)} numbers {words}"
        if verdict.status != "ok":
            entry = read.entries.get(verdict.scenario)
            name = number_words(closest.number, entry.ruleset) if entry else closest.number
            words += f"; {name} {closest.baseline:.4g} -> {closest.now:.4g}, p={closest.p:.2g}"
    if verdict.seconds:
        words += f"; {verdict.seconds:.1f} s"
    console.print(
        f"{verdict.scenario}: {verdict.status} ({words})",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def number_words(name: str, ruleset: str) -> str:
    """A baseline number's name in words: ``win.attacker`` is "P(attacker wins)",
    ``steps.median`` "median strikes", ``casualties.defender.pikeman`` "pikemen lost by
    the defending army"."""
    from .. import rulesets

    rules = rulesets.get(ruleset)
    group, _, rest = name.partition(".")
    if group == "win":
        return f"P({won(rest)})"
    if group == "steps":
        return f"{rest.replace('_', ' ')} {rules.step_unit}"
    return rules.describe_column(name)


def render_regression(
    report: Any, changed: dict[str, tuple[Any, Any]] | None = None, read: Any = None
) -> None:
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
    for key, (entry, scenario) in (changed or {}).items():
        wins = [
            f"{number_words(name, entry.ruleset)} {number.value:.4g}"
            for name, number in entry.numbers.items()
            if name.startswith("win.")
        ]
        out.print(
            f"{key}: changed since the baseline (scenario hash {entry.scenario_hash} -> "
            f"{scenario.hash}); not run: the baseline's {len(entry.numbers)} numbers "
            f"({', '.join(wins)}, ...) are of the old file: review the change, then "
            "regress --update",
            highlight=False,
            markup=False,
        )
    if report.moved:
        # One line per number, never wrapped: CI logs are read with grep.
        out.print("[bold]What moved[/bold] (baseline -> now, change, p-value <= Holm threshold):")
        for c in report.moved:
            entry = read.entries.get(c.scenario) if read is not None else None
            ruleset = entry.ruleset if entry is not None else None
            out.print(
                f"  {c.scenario}  {number_words(c.number, ruleset) if ruleset else c.number}"
                f"  {c.baseline:.4g} -> {c.now:.4g}  "
                f"({c.change:+.4g}, p={c.p:.2g} <= {c.threshold:.2g})",
                soft_wrap=True,
                highlight=False,
                markup=False,
            )
    out.print(
        f"{len(report.comparisons)} numbers compared; "
        + ("all within noise" if report.passed else "[bold red]balance moved[/bold red]")
    )
