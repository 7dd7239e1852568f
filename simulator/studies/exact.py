"""Exact answers (``battle-odds exact``, ``simulator.exact``): for the rulesets that have
a solver (:meth:`Ruleset.exact`), probabilities and expectations solved rather than sampled."""

from __future__ import annotations

from dataclasses import replace

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets import ExactResult, ExactState
from ..running.compiling import compile_clock, said_on_stderr
from ..scenario.scenario import Scenario, unknowns_of


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
    battle whose state space is too large (the message names its size). A scenario with
    ranges is solved as the mixture of its combinations of inputs (:func:`mixture_exact`)."""
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
        if unknowns_of(scenario):
            answer = mixture_exact(scenario, max_states)
        else:
            answer = ruleset.exact(scenario, max_states)
    compiled = clock.seconds - before
    if compiled <= 0.0:
        return answer
    return replace(answer, seconds=max(0.0, answer.seconds - compiled), compile_seconds=compiled)


#: The most combinations of inputs a scenario with ranges is solved exactly for (each
#: combination is a solve of its own).
MAX_EXACT_COMBINATIONS = 64


def mixture_exact(scenario: Scenario, max_states: int | None = None) -> ExactResult:
    """The exact answer of a scenario with ranges: every probability and expectation is
    the weighted mean of the combinations' own (each solved exactly), for at most
    MAX_EXACT_COMBINATIONS combinations; more are refused in one line."""
    mixture = scenario.model
    said = ", ".join(f"{u.path} = {u.written!r}" for u in unknowns_of(scenario))
    if mixture.combinations > MAX_EXACT_COMBINATIONS:
        raise BattleOddsError(
            f"{scenario.source.label}: no exact answer for {mixture.combinations:,} "
            f"combinations of inputs ({said}; at most {MAX_EXACT_COMBINATIONS} are solved "
            "one by one); use `battle-odds run`, which integrates over them"
        )
    ruleset = rulesets.get(scenario.ruleset)
    win: dict[str, float] = {}
    casualties: dict[str, float] = {}
    extras: dict[str, float] = {}
    steps = seconds = 0.0
    states = 0
    flags: frozenset[str] = frozenset()
    for combination in range(mixture.combinations):
        weight = mixture.probability(combination)
        part = ruleset.exact(mixture.scenario_of(combination), max_states)
        for into, values in ((win, part.win), (casualties, part.casualties), (extras, part.extras)):
            for name, value in values.items():
                into[name] = into.get(name, 0.0) + weight * value
        steps += weight * part.expected_steps
        states += part.states
        seconds += part.seconds
        flags |= part.flags
    return ExactResult(scenario, win, steps, casualties, extras, states, seconds, flags)


def exact_after(scenario: Scenario, step: int) -> ExactState:
    """The exact state of a small battle after ``step`` steps (olympia: strikes), for the
    rulesets that solve it (:meth:`Ruleset.exact_after`); a scenario with ranges is refused
    in one line (its mixture after a step is not built)."""
    if unknowns_of(scenario):
        said = ", ".join(f"{u.path} = {u.written!r}" for u in unknowns_of(scenario))
        raise BattleOddsError(
            f"{scenario.source.label}: no exact state after a step for a scenario with ranges "
            f"({said}); use `battle-odds run --after {step}`, which integrates over them"
        )
    return rulesets.get(scenario.ruleset).exact_after(scenario, step)
