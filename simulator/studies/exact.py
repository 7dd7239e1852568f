"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
a solver (:meth:`Ruleset.exact`), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from dataclasses import replace

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets import ExactResult
from ..running.compiling import compile_clock, said_on_stderr
from ..scenario.scenario import Scenario


def solvable() -> tuple[str, ...]:
    """The rulesets with an exact solver (importing every ruleset)."""
    return tuple(n for n in rulesets.available() if rulesets.get(n).solvable)


def exact(scenario: Scenario, max_states: int | None = None) -> ExactResult:
    """Exact win / loss / draw probabilities, expected casualties per type, expected
    steps and the expectation of every other outcome, for a small battle.

    A first run compiles the solver: it says so on stderr as the compile starts, and
    the answer's ``seconds`` are the solving's, the compiling's apart
    (``compile_seconds``).

    Raises :class:`BattleOddsError` for a ruleset without an exact solver and for a
    battle whose state space is too large (the message names its size)."""
    ruleset = rulesets.get(scenario.ruleset)
    if not ruleset.solvable:
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the "
            f"'{scenario.ruleset}' ruleset (only {', '.join(solvable())}); "
            "use `battle-odds run`"
        )
    clock = compile_clock()
    before = clock.seconds
    with said_on_stderr():
        answer = ruleset.exact(scenario, max_states)
    compiled = clock.seconds - before
    if compiled <= 0.0:
        return answer
    return replace(answer, seconds=max(0.0, answer.seconds - compiled), compile_seconds=compiled)
