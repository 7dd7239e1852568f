"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
a solver (:meth:`Ruleset.exact`), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets import ExactResult
from ..scenario.scenario import Scenario, unknowns_of


def solvable() -> tuple[str, ...]:
    """The rulesets with an exact solver (importing every ruleset)."""
    return tuple(n for n in rulesets.available() if rulesets.get(n).solvable)


def exact(scenario: Scenario, max_states: int | None = None) -> ExactResult:
    """Exact win / loss / draw probabilities, expected casualties per type, expected
    steps and the expectation of every other outcome, for a small battle.

    Raises :class:`BattleOddsError` for a ruleset without an exact solver and for a
    battle whose state space is too large (the message names its size)."""
    ruleset = rulesets.get(scenario.ruleset)
    varying = unknowns_of(scenario)
    if varying:
        said = ", ".join(f"{u.path} = {u.written!r}" for u in varying)
        raise BattleOddsError(
            f"{scenario.source.label}: no exact answer for a scenario with ranges ({said}): "
            "the solver takes fixed inputs; use `battle-odds run`, which integrates over them"
        )
    if not ruleset.solvable:
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the "
            f"'{scenario.ruleset}' ruleset (only {', '.join(solvable())}); "
            "use `battle-odds run`"
        )
    return ruleset.exact(scenario, max_states)
