"""Text and JSON renderings of a result (what ``battle-odds run`` prints)."""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import rulesets
from ..results.result import Result
from ..rulesets.words import won as outcome_words
from ..running.interrupt import stop_reason
from .question import question

#: The rows of the "decided after" table: all battles, then those each outcome ended.
STEP_ROWS = {
    "all": "all battles",
    "attacker": "attacker won",
    "defender": "defender won",
    "draw": "drawn",
    "attacker_withdrew": "attacker withdrew",
    "defender_withdrew": "defender withdrew",
}


def step_row(metric: str) -> str:
    return STEP_ROWS.get(metric, metric.replace("_", " "))


#: A probability of a run stopped before its first battle.
NOT_YET_KNOWN = "not yet known"


def _pct(p: float) -> str:
    if math.isnan(p):
        return NOT_YET_KNOWN
    return f"{100 * p:.2f}%"


def _num(x: float) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "-"
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"


def print_title(console: Console, title: str) -> None:
    """A table's title on its own line(s), wrapped at the terminal's width: as a rich
    table title it would wrap at the (narrower) table's."""
    console.print(f"[bold]{escape(title)}[/bold]", highlight=False)


def fields_lines(fields: dict[str, Any], width: int) -> list[str]:
    """``key value`` pairs two spaces apart, a new line only between pairs: a footer that
    never breaks inside a pair (``time 1.21 s``) however narrow the terminal."""
    lines: list[str] = []
    for key, value in fields.items():
        pair = f"{key} {value}"
        if lines and len(lines[-1]) + 2 + len(pair) <= width:
            lines[-1] += "  " + pair
        else:
            lines.append(pair)
    return lines


def compiling_words(seconds: float) -> str:
    """`` (+ 38 s compiling, first run only)`` after a run's time when Numba compiled its
    kernels (nothing once they are cached)."""
    if seconds <= 0.0:
        return ""
    shown = f"{seconds:.0f}" if seconds >= 10 else f"{seconds:.1f}"
    return f" (+ {shown} s compiling, first run only)"


def render(result: Result, console: Console) -> None:
    """Rich tables: outcomes, timing, casualties, extras, and the run's provenance."""
    rows = result.summary_rows()
    ruleset = rulesets.get(result.scenario.ruleset)
    title = f"{result.scenario.name} ({ruleset.name}): {result.n:,} battles"
    if result.partial:
        title += f" [PARTIAL: {stop_reason()}]"

    print_title(console, title)
    console.print(escape(question(result.scenario, ruleset=False)), highlight=False)
    wins = Table(box=box.SIMPLE_HEAVY)
    wins.add_column("outcome")
    wins.add_column("probability", justify="right")
    wins.add_column("95% interval", justify="right")
    for r in (r for r in rows if r.group == "win"):
        wins.add_row(
            outcome_words(r.metric),
            _pct(r.mean),
            f"{_pct(r.low)} - {_pct(r.high)}" if result.n else "",
        )
    console.print(wins)

    print_title(console, f"Decided after ({ruleset.step_words()})")
    steps = Table(box=box.SIMPLE)
    for col, justify in (
        ("outcome", "left"),
        ("mean", "right"),
        ("10%", "right"),
        ("50%", "right"),
        ("90%", "right"),
    ):
        steps.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in (r for r in rows if r.group == "steps"):
        steps.add_row(step_row(r.metric), _num(r.mean), _num(r.q10), _num(r.q50), _num(r.q90))
    if steps.row_count:  # none when stopped before the first battle
        console.print(steps)

    dist = [r for r in rows if r.group == "casualties"]
    if len(dist):
        cas = Table(title="Casualties", box=box.SIMPLE, title_justify="left")
        for col, justify in (
            ("what", "left"),
            ("mean", "right"),
            ("10%", "right"),
            ("50%", "right"),
            ("90%", "right"),
        ):
            cas.add_column(col, justify=justify, no_wrap=col != "what")  # type: ignore[arg-type]
        for r in dist:
            cas.add_row(
                escape(ruleset.describe_column("casualties." + r.metric)),
                _num(r.mean),
                _num(r.q10),
                _num(r.q50),
                _num(r.q90),
            )
        console.print(cas)

    extras = [r for r in rows if r.group == "extra"]
    if len(extras):
        ex = Table(title="Other outcomes", box=box.SIMPLE, title_justify="left")
        ex.add_column("what")
        ex.add_column("mean / probability", justify="right", no_wrap=True)
        ex.add_column("10% / 50% / 90%", justify="right", no_wrap=True)
        for r in extras:
            said = escape(ruleset.describe_column(r.metric))
            if r.metric in result.flags:
                ex.add_row(said, _pct(r.mean), "")
            else:
                ex.add_row(said, _num(r.mean), f"{_num(r.q10)} / {_num(r.q50)} / {_num(r.q90)}")
        console.print(ex)

    render_unknowns(result, console)

    info: dict[str, Any] = {
        "seed": result.seed,
        "battles": f"{result.n:,}",
        "scenario hash": result.scenario.hash,
        "kernel": result.kernel,
        "time": f"{result.seconds:.2f} s" + compiling_words(result.compile_seconds),
    }
    for key, value in result.extra.items():
        info[key] = value
    for line in fields_lines(info, console.width):
        console.print(line, highlight=False)
    for note in result.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    if result.turn_limit_battles:
        console.print(
            f"[yellow]note:[/yellow] {result.turn_limit_battles:,} of {result.n:,} battles "
            f"({_pct(result.turn_limit_battles / result.n)}) reached the turn limit undecided "
            "and count as draws",
            highlight=False,
        )


def render_unknowns(result: Result, console: Console) -> None:
    """What the unknowns do: for each (the one that moves the answer most first),
    P(attacker wins) given each of its values, from the run's battles."""
    effects = result.unknown_effects()
    if not effects:
        return
    print_title(console, "What the unknowns do (most first)")
    for effect in effects:
        spread = (
            f"from {_pct(effect['lowest'])} to {_pct(effect['highest'])} over its values"
            if effect["lowest"] is not None
            else "no battles yet"
        )
        table = Table(
            title=f"{effect['label']} ({effect['written']}): P(attacker wins) {spread}",
            box=box.SIMPLE,
            title_justify="left",
        )
        for column in ("value", "chance", "battles", "P(attacker wins)", "95% interval"):
            table.add_column(column, justify="right")
        shown = effect["values"]
        if len(shown) > MAX_VALUE_ROWS:  # every value's row is in --json
            step = -(-len(shown) // MAX_VALUE_ROWS)
            shown = shown[::step] + ([shown[-1]] if (len(shown) - 1) % step else [])
        for row in shown:
            won = row["attacker"]
            table.add_row(
                escape("left out" if row["value"] is None else str(row["value"])),
                _pct(row["weight"]),
                f"{row['battles']:,}",
                _pct(won["p"]) if won["p"] is not None else "-",
                f"{_pct(won['low'])} - {_pct(won['high'])}",
            )
        console.print(table)


#: The most values of one unknown the text table lists (evenly spaced, the ends kept).
MAX_VALUE_ROWS = 12


def render_exact(answer: Any, console: Console) -> None:
    """Rich tables of an exact answer."""
    title = (
        f"{answer.scenario.name} ({answer.scenario.ruleset}): exact, "
        f"{answer.states:,} states, {answer.seconds:.2f} s"
        + compiling_words(answer.compile_seconds)
    )
    print_title(console, title)
    console.print(escape(question(answer.scenario, ruleset=False)), highlight=False)
    wins = Table(box=box.SIMPLE_HEAVY)
    wins.add_column("outcome")
    wins.add_column("probability", justify="right")
    for outcome, p in answer.win.items():
        wins.add_row(outcome_words(outcome), f"{100 * p:.4f}%")
    console.print(wins)
    means = Table(title="Expected values", box=box.SIMPLE, title_justify="left")
    means.add_column("what")
    means.add_column("mean / probability", justify="right")
    ruleset = rulesets.get(answer.scenario.ruleset)
    means.add_row(f"{ruleset.step_unit} until decided", f"{answer.expected_steps:,.3f}")
    for name, v in answer.casualties.items():
        column = name if name.startswith("casualties.") else "casualties." + name
        means.add_row(escape(ruleset.describe_column(column)), f"{v:,.4f}")
    for name, v in answer.extras.items():
        shown = f"{100 * v:.4f}%" if name in answer.flags else f"{v:,.4f}"
        means.add_row(escape(ruleset.describe_column(name)), shown)
    console.print(means)
    console.print(f"[bold]scenario hash[/bold] {answer.scenario.hash}")
