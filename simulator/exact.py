"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
a solver (:meth:`Ruleset.exact`), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from . import rulesets
from .errors import BattleOddsError
from .scenario import Scenario


@dataclass
class ExactResult:
    """Exact probabilities and expectations for one scenario, from any ruleset's solver.

    ``casualties`` and ``extras`` are keyed by outcome column (``casualties.attacker.army``);
    ``flags`` names the extras that are probabilities (0/1 columns)."""

    scenario: Any
    win: dict[str, float]
    expected_steps: float
    casualties: dict[str, float]
    extras: dict[str, float]
    states: int
    seconds: float
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def expected_strikes(self) -> float:
        """Olympia's name for :attr:`expected_steps` (its steps are strikes)."""
        return self.expected_steps

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``win`` has the Monte Carlo result's shape, with a zero-width interval."""
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "method": "exact",
            "win": {o: {"p": p, "low": p, "high": p} for o, p in self.win.items()},
            "steps": {"all": {"mean": self.expected_steps}},
            "casualties": {
                name.removeprefix("casualties."): {"mean": v} for name, v in self.casualties.items()
            },
            "extras": {name: {"mean": v} for name, v in self.extras.items()},
            "states": self.states,
            "seconds": round(self.seconds, 3),
        }


def solvable() -> tuple[str, ...]:
    """The rulesets with an exact solver (importing every ruleset)."""
    return tuple(n for n in rulesets.available() if rulesets.get(n).solvable)


def exact(scenario: Scenario, max_states: int | None = None) -> ExactResult:
    """Exact win / loss / draw probabilities, expected casualties per type, expected
    steps and the expectation of every other outcome, for a small battle.

    Raises :class:`BattleOddsError` for a ruleset without an exact solver and for a
    battle whose state space is too large (the message names its size)."""
    ruleset = rulesets.get(scenario.ruleset)
    if not ruleset.solvable:
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the "
            f"'{scenario.ruleset}' ruleset (only {', '.join(solvable())}); "
            "use `battle-odds run`"
        )
    return ruleset.exact(scenario, max_states)


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
    step_unit = rulesets.get(answer.scenario.ruleset).step_unit
    means.add_row(f"{step_unit} until decided", f"{answer.expected_steps:,.3f}")
    for name, v in answer.casualties.items():
        means.add_row(f"casualties {name.removeprefix('casualties.')}", f"{v:,.4f}")
    for name, v in answer.extras.items():
        shown = f"{100 * v:.4f}%" if name in answer.flags else f"{v:,.4f}"
        means.add_row(f"P({name})" if name in answer.flags else name, shown)
    console.print(means)
    console.print(f"[bold]scenario hash[/bold] {answer.scenario.hash}")
