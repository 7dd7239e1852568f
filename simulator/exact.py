"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
them (olympia), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from .errors import BattleOddsError
from .scenario import Scenario

#: Rulesets with an exact solver.
SOLVABLE = ("olympia",)


def exact(scenario: Scenario, max_states: int | None = None) -> Any:
    """Exact win / loss / draw probabilities, expected casualties per type, expected
    steps and the expectation of every other outcome, for a small battle.

    Raises :class:`BattleOddsError` for a ruleset without an exact solver and for a
    battle whose state space is too large (the message names its size)."""
    if scenario.ruleset not in SOLVABLE:
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the "
            f"'{scenario.ruleset}' ruleset (only {', '.join(SOLVABLE)}); "
            "use `battle-odds run`"
        )
    from .rulesets.olympia import exact as olympia_exact

    if max_states is None:
        return olympia_exact.exact(scenario)
    return olympia_exact.exact(scenario, max_states=max_states)


def render_exact(answer: Any, console: Console) -> None:
    """Rich tables of an exact answer."""
    title = (
        f"{answer.scenario.name} ({answer.scenario.ruleset}): exact, "
        f"{answer.states:,} states, {answer.seconds:.2f} s"
    )
    wins = Table(title=title, box=box.SIMPLE_HEAVY, title_justify="left")
    wins.add_column("outcome")
    wins.add_column("probability", justify="right")
    for outcome, p in answer.win.items():
        wins.add_row(f"{outcome} wins" if outcome != "draw" else "draw", f"{100 * p:.4f}%")
    console.print(wins)
    means = Table(title="Expected values", box=box.SIMPLE, title_justify="left")
    means.add_column("what")
    means.add_column("mean / probability", justify="right")
    means.add_row("strikes until decided", f"{answer.expected_strikes:,.3f}")
    for name, v in answer.casualties.items():
        means.add_row(f"casualties {name.removeprefix('casualties.')}", f"{v:,.4f}")
    for name, v in answer.extras.items():
        shown = f"{100 * v:.4f}%" if name in answer.flags else f"{v:,.4f}"
        means.add_row(f"P({name})" if name in answer.flags else name, shown)
    console.print(means)
    console.print(f"[bold]scenario hash[/bold] {answer.scenario.hash}")
