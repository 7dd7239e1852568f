"""Text tables of the battle as it unfolds: the state after each step, and both sides'
men left together after one step (what ``run --by-round`` / ``--after N`` print)."""

from __future__ import annotations

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import rulesets
from ..running.interrupt import stop_reason
from ..running.unfolding import StepResult
from .tables import print_title

#: The joint table shows at most this many ranges of the defender's men (its columns)
#: and of the attacker's (its rows): it fits 80 columns.
JOINT_COLUMNS, JOINT_ROWS = 7, 12


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def _left(h: object) -> str:
    """Men left as ``mean (10%-90%)``."""
    mean = h.mean()  # type: ignore[attr-defined]
    low, high = h.quantile(0.1), h.quantile(0.9)  # type: ignore[attr-defined]
    return f"{mean:,.1f} ({low:,.0f}-{high:,.0f})"


def render_steps(result: StepResult, console: Console) -> None:
    """The state after each step recorded, then the joint table after ``result.after``."""
    ruleset = rulesets.get(result.scenario.ruleset)
    unit = ruleset.step_unit
    title = f"The battle as it unfolds: the state after each of the {ruleset.step_words()}"
    if result.partial:
        title += f" [PARTIAL: {stop_reason()}]"
    print_title(console, title)
    table = Table(box=box.SIMPLE)
    for name, justify in (
        ("after", "right"),
        ("attacker won", "right"),
        ("defender won", "right"),
        ("drawn", "right"),
        ("fighting", "right"),
        ("attacker left", "right"),
        ("defender left", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for step, counts in result.tally.steps.items():
        n = max(counts.battles, 1)
        table.add_row(
            f"{step:,}",
            *(_pct(int(c) / n) for c in counts.states),
            _left(counts.men_left["attacker"]),
            _left(counts.men_left["defender"]),
        )
    console.print(table)
    console.print(
        f"Decided battles count with their final state; men left: mean (10%-90%) of all "
        f"{result.tally.battles:,} battles after each of the {unit}.",
        highlight=False,
    )
    if result.after is not None and result.after in result.tally.steps:
        render_joint(result, result.after, console)
    for note in result.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")


def _ranges(values: np.ndarray, most: int) -> list[tuple[int, int]]:
    """``values`` (sorted distinct men left) in at most ``most`` ranges of equal width."""
    low, high = int(values[0]), int(values[-1])
    width = max(1, -(-(high - low + 1) // most))
    return [(a, min(a + width - 1, high)) for a in range(low, high + 1, width)]


def _range_words(span: tuple[int, int]) -> str:
    return f"{span[0]:,}" if span[0] == span[1] else f"{span[0]:,}-{span[1]:,}"


def render_joint(result: StepResult, step: int, console: Console) -> None:
    """Both sides' men left after ``step``: P(attacker's in a row's range and defender's
    in a column's), ranges grouped so that the table fits 80 columns."""
    unit = rulesets.get(result.scenario.ruleset).step_unit
    attacker, defender, p = result.tally.joint(step)
    counts = result.tally.steps[step]
    print_title(
        console,
        f"Men left after {step:,} {unit}: P(the attacker's men left in the row's range "
        f"and the defender's in the column's); {_pct(counts.p('fighting')[0])} still "
        "fighting",
    )
    rows, cols = _ranges(attacker, JOINT_ROWS), _ranges(defender, JOINT_COLUMNS)
    table = Table(box=box.SIMPLE)
    table.add_column("attacker \\ defender", justify="right")
    for span in cols:
        table.add_column(_range_words(span), justify="right")
    for r in reversed(rows):
        in_row = (attacker >= r[0]) & (attacker <= r[1])
        cells = []
        for c in cols:
            in_col = (defender >= c[0]) & (defender <= c[1])
            share = float(p[np.ix_(in_row, in_col)].sum())
            cells.append("" if share == 0 else _pct(share) if share >= 0.0005 else "<0.1%")
        table.add_row(_range_words(r), *cells)
    console.print(table)
