"""The battle as it unfolds on the command line: ``--by-round`` and ``--after N`` of
``run``, ``odds`` and ``plot``, checked before any battle and run over a run's battles;
the values ``--from-step``, ``--attacker-retreat``, ``--defender-retreat`` and ``--set
PATH=VALUE`` give a scenario, checked against what its ruleset declares."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError
from .options import toml_value


def unfolding(scenario: Any, result: Any, by_round: bool, after: int | None) -> Any:
    """The state after each step asked (``--by-round``: every step to the last battle's
    end; ``--after``) over the run's battles, or None when none is asked."""
    if not by_round and after is None:
        return None
    from ..running.unfolding import run_steps

    steps: list[int] | None = None if by_round else []
    return run_steps(
        scenario, steps, result.seed, result.first, result.n, after=after, interruptible=True
    )


def check_unfolding(scenario: Any, by_round: bool, after: int | None) -> None:
    """Bad ``--after`` or a ruleset without the battle as it unfolds: one line before
    any battle."""
    if not by_round and after is None:
        return
    from ..running.unfolding import check_step, check_unfolds

    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    check_unfolds(prepared, scenario.ruleset)
    if after is not None:
        check_step(prepared, after)


#: What each path a command-line option sets asks of the ruleset (its capability).
_ASKS = (("retreat", "stop rules"), ("from_step", "a battle in progress"), ("waves", "waves"))


def given_values(
    from_step: int | None,
    attacker_retreat: str | None,
    defender_retreat: str | None,
    paths: Mapping[str, str] | None = None,
) -> dict[str, tuple[Any, str]]:
    """The scenario values ``--set PATH=VALUE`` (dotted paths), ``--attacker-retreat`` /
    ``--defender-retreat`` and ``--from-step`` give, each with its option (for errors)."""
    from ..scenario.stop_text import parse_retreat

    given: dict[str, tuple[Any, str]] = {
        path: (toml_value(value), f"--set {path}") for path, value in (paths or {}).items()
    }
    for side, text in (("attacker", attacker_retreat), ("defender", defender_retreat)):
        if text is not None:
            option = f"--{side}-retreat"
            given[f"{side}.retreat"] = (parse_retreat(text, option), option)
    if from_step is not None:
        if from_step < 0:
            raise BattleOddsError(f"--from-step {from_step}: expected a step 0 or more")
        given["battle.from_step"] = (from_step, "--from-step")
    return given


def check_given(scenario: Any, given: Mapping[str, tuple[Any, str]]) -> None:
    """Before the values ``given`` are set: one line when the scenario's ruleset does
    not declare what they ask (a stop rule, a battle in progress, waves), naming it,
    rather than the validator's word on a key it does not know."""
    asked = {
        what for path in given for key, what in _ASKS if re.search(rf"(^|\.){key}(\.|\[|$)", path)
    }
    if not asked:
        return
    from ..running.capabilities import check_unfolds
    from ..scenario.scenario import prepare

    prepared = prepare(scenario)
    for what in sorted(asked):
        check_unfolds(prepared, scenario.ruleset, what)


def with_given(scenario: Any, given: Mapping[str, tuple[Any, str]]) -> Any:
    """``scenario`` (a file's) with the values options give, checked by its ruleset."""
    if not given:
        return scenario
    from ..scenario.scenario import with_given as set_given

    check_given(scenario, given)
    return set_given(scenario, given)


def stop_rule_notes(scenario: Any) -> list[str]:
    """``validate``'s notes on the scenario's stop rules (none without a ``retreat``
    table: nothing is prepared then), after checking its ruleset declares them."""
    if not any(
        isinstance(scenario.data.get(side), Mapping) and "retreat" in scenario.data[side]
        for side in ("attacker", "defender")
    ):
        return []
    from ..running.capabilities import check_capabilities
    from ..running.capabilities import stop_rule_notes as notes
    from ..scenario.scenario import prepare

    prepared = prepare(scenario)
    check_capabilities(prepared, scenario.ruleset)
    return notes(prepared, rulesets.get(scenario.ruleset).step_unit)
