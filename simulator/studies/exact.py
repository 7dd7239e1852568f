"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
a solver (:meth:`Ruleset.exact`), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets import ExactResult, ExactState
from ..scenario.scenario import Scenario


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


def exact_after(scenario: Scenario, step: int) -> ExactState:
    """The exact state of a small battle after ``step`` steps (olympia: strikes), for the
    rulesets that solve it (:meth:`Ruleset.exact_after`)."""
    return rulesets.get(scenario.ruleset).exact_after(scenario, step)
