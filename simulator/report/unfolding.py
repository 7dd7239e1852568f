"""Text tables of the battle as it unfolds: the state after each step, and both sides'
men left together after one step (what ``run --by-round`` / ``--after N`` print)."""

from __future__ import annotations

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import rulesets
from ..results.stats import Histogram
from ..results.steps import STATES
from ..rulesets import ExactState
from ..running.interrupt import stop_reason
from ..running.unfolding import StepResult
from .tables import print_title

#: The joint table shows at most this many ranges of the defender's men (its columns)
#: and of the attacker's (its rows): it fits 80 columns.
JOINT_COLUMNS, JOINT_ROWS = 7, 12
#: The state after each step is one table from this width on, two below it.
ONE_TABLE_WIDTH = 76
#: The states a column shows, in the order of its columns after "after" (the
#: withdrawals where a side has a stop rule: ``StepResult.decided``).
SHOWN = ("attacker", "defender", "draw", "fighting")
WITHDRAWN = ("attacker_withdrew", "defender_withdrew")
#: The columns the withdrawals add (two of 10 characters with their padding).
WITHDRAWN_WIDTH = 20


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def _left(h: Histogram) -> str:
    """Men left as ``mean 10%-90%`` (the mean alone when every battle had as many)."""
    mean, low, high = h.mean(), h.quantile(0.1), h.quantile(0.9)
    if low == high == mean:
        return f"{mean:,.0f}"
    return f"{mean:,.1f} {low:,.0f}-{high:,.0f}"


def render_steps(result: StepResult, console: Console) -> None:
    """The state after each step recorded, then the joint table after ``result.after``."""
    ruleset = rulesets.get(result.scenario.ruleset)
    unit = ruleset.step_unit
    recorded = list(result.tally.steps)
    if len(recorded) == 1:
        title = f"The battle as it unfolds: the state after {recorded[0]:,} {unit}"
    else:
        title = f"The battle as it unfolds: the state after each of the {ruleset.step_words()}"
    if result.partial:
        title += f" [PARTIAL: {stop_reason()}]"
    print_title(console, title)
    outcomes = ("after", "attacker\nwon", "defender\nwon", "drawn", "fighting")
    states = dict(zip(outcomes[1:], SHOWN, strict=True))
    withdrew: tuple[str, ...] = ()
    if WITHDRAWN[0] in result.decided:
        withdrew = ("attacker\nwithdrew", "defender\nwithdrew")
        states.update(zip(withdrew, WITHDRAWN, strict=True))
    men = ("attacker's\nmen left", "defender's\nmen left")
    # One table where it fits, else the outcomes and the men left one below the other.
    if console.width >= ONE_TABLE_WIDTH + (WITHDRAWN_WIDTH if withdrew else 0):
        tables = [outcomes + withdrew + men]
    else:
        tables = [outcomes, ("after", *withdrew, *men)]
    for columns in tables:
        table = Table(box=box.SIMPLE)
        for name in columns:
            table.add_column(name, justify="right", no_wrap=True)
        for step, counts in result.tally.steps.items():
            n = max(counts.battles, 1)
            cells = {
                "after": f"{step:,}",
                **{c: _pct(int(counts.states[STATES.index(s)]) / n) for c, s in states.items()},
                men[0]: _left(counts.men_left["attacker"]),
                men[1]: _left(counts.men_left["defender"]),
            }
            table.add_row(*(cells[c] for c in columns))
        console.print(table)
    console.print(
        f"Decided battles count with their final state; men left: the mean, then 10% to "
        f"90%, over {result.tally.battles:,} battles.",
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
        f"and the defender's in the column's), the attacker's down the side, the "
        f"defender's across; {_pct(counts.p('fighting')[0])} still fighting",
    )
    # As many ranges of the defender's men as fit: a cell and its padding take 10.
    most_columns = max(2, min(JOINT_COLUMNS, (console.width - 12) // 10))
    rows, cols = _ranges(attacker, JOINT_ROWS), _ranges(defender, most_columns)
    table = Table(box=box.SIMPLE)
    table.add_column("", justify="right", no_wrap=True)
    for span in cols:
        table.add_column(_range_words(span), justify="right", no_wrap=True)
    for r in reversed(rows):
        in_row = (attacker >= r[0]) & (attacker <= r[1])
        cells = []
        for c in cols:
            in_col = (defender >= c[0]) & (defender <= c[1])
            share = float(p[np.ix_(in_row, in_col)].sum())
            cells.append("" if share == 0 else _pct(share) if share >= 0.0005 else "<0.1%")
        table.add_row(_range_words(r), *cells)
    console.print(table)
    kinds = Table(title=f"Men left after {step:,} {unit}, by type", box=box.SIMPLE,
                  title_justify="left")  # fmt: skip
    for name in ("what", "mean", "10%", "50%", "90%"):
        kinds.add_column(name, justify="left" if name == "what" else "right")
    for key, h in counts.men_left.items():
        if "." in key:
            side, kind = key.split(".", 1)
            kinds.add_row(
                escape(f"{kind} ({side})"),
                f"{h.mean():,.2f}",
                *(f"{h.quantile(q):,.0f}" for q in (0.1, 0.5, 0.9)),
            )
    console.print(kinds)


def render_exact_state(state: ExactState, console: Console) -> None:
    """The exact state after a step: outcomes so far, still fighting, men left by type."""
    unit = rulesets.get(state.scenario.ruleset).step_unit
    print_title(
        console,
        f"{state.scenario.name} ({state.scenario.ruleset}): exact, {state.states:,} "
        f"states: the state after {state.step:,} {unit}",
    )
    table = Table(box=box.SIMPLE)
    table.add_column("by then")
    table.add_column("probability", justify="right")
    for outcome, p in state.decided.items():
        said = "drawn" if outcome == "draw" else f"{outcome} won"
        table.add_row(said, f"{100 * p:.4f}%")
    table.add_row("still fighting", f"{100 * state.fighting:.4f}%")
    console.print(table)
    kinds = Table(title="Men left, by type", box=box.SIMPLE, title_justify="left")
    kinds.add_column("what")
    kinds.add_column("mean", justify="right")
    for key in state.men_left:
        side, kind = key.split(".", 1)
        kinds.add_row(escape(f"{kind} ({side})"), f"{state.mean_men_left(key):,.4f}")
    console.print(kinds)
