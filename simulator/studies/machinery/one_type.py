"""The one-type battles of ``matrix``, ``prices`` and ``meta``, under ``[battle]`` settings.

Those studies take no scenario: each battle is built by the ruleset
(:meth:`Ruleset.one_type_battle`) in its default conditions. ``settings`` (``--set
KEY=VALUE``) are put into the ``[battle]`` table of every such battle and checked by the
ruleset's validator as a scenario file's table is, so that a matrix can be fought under
other rules than the default ones (skirmish ``rules = "engine"``, olympia
``strike_order = "alternating"``). A study records its settings, so that a result says
which rules it was played under.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ... import rulesets
from ...errors import BattleOddsError, ParameterError, Source, did_you_mean
from ...rulesets import Army
from ...scenario.scenario import Scenario, from_data

#: The table of a scenario that ``settings`` go into.
TABLE = "battle"
#: The most men of one type a study's army fields: the most any ruleset holds in one
#: place (an olympia unit's count of a type). A larger budget buys armies no battle
#: takes, whose men were once spelled out in an error of 300 digits.
MAX_MEN_OF_A_TYPE = 100_000


def ruleset_named(name: str) -> rulesets.Ruleset:
    """The ruleset called ``name``, or an error naming the ``ruleset`` parameter."""
    try:
        return rulesets.get(name, "ruleset")
    except BattleOddsError as exc:
        raise ParameterError.naming("ruleset", exc) from None


def check_budget(parameter: str, budget: float, costs: Mapping[str, float]) -> float:
    """``budget`` as a finite number > 0 that buys at most MAX_MEN_OF_A_TYPE men of the
    cheapest of ``costs`` (type: cost), or a one-line error naming ``parameter``."""
    if isinstance(budget, bool) or not isinstance(budget, int | float):
        raise ParameterError(parameter, repr(budget), "expected a number")
    if not (math.isfinite(budget) and budget > 0):
        raise ParameterError(parameter, budget, "expected a finite number > 0")
    cheapest = min(costs, key=lambda kind: costs[kind])
    most = MAX_MEN_OF_A_TYPE * costs[cheapest]
    if budget > most * (1 + 1e-9):
        raise ParameterError(
            parameter,
            f"{budget:g}",
            f"buys {budget / costs[cheapest]:.3g} {cheapest} (cost "
            f"{costs[cheapest]:g}), more than the {MAX_MEN_OF_A_TYPE:,} men of a type an "
            f"army fields: expected at most {most:,.6g}",
        )
    return float(budget)


def checked_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """``settings`` as a plain dict (empty for None); its keys must be names."""
    if settings is None:
        return {}
    if not isinstance(settings, Mapping):
        raise BattleOddsError(
            f"settings: expected a mapping of [{TABLE}] keys to values, e.g. "
            f"{{'rules': 'engine'}}, got {type(settings).__name__}"
        )
    for key in settings:
        if not isinstance(key, str) or not key.strip():
            raise BattleOddsError(f"settings: key {key!r}: expected the name of a [{TABLE}] key")
    return dict(settings)


def one_type_scenario(
    rs: rulesets.Ruleset,
    attacker: Army,
    defender: Army,
    settings: Mapping[str, Any],
    budget: float | None = None,
) -> Scenario:
    """``attacker`` against ``defender`` as the ruleset fields one-type armies, with
    ``settings`` in its ``[battle]`` table, validated. An error names ``settings`` and
    the key when a setting is at fault, else the ``budget`` (when given) and the battle."""
    data, source = one_type_data(rs, (attacker, defender), settings, budget)
    return one_type_validated(data, source, budget)


def one_type_data(
    rs: rulesets.Ruleset,
    armies: tuple[Army, Army],
    settings: Mapping[str, Any],
    budget: float | None,
) -> tuple[dict[str, Any], Source]:
    """The data of :func:`one_type_scenario`'s battle of ``armies`` (attacker, defender),
    named, and its source (which names the setting or budget an error is about); the
    battle's own error, named so."""
    attacker, defender = armies
    label = f"{attacker.men} {attacker.type} vs {defender.men} {defender.type}"
    prefix = f"budget {budget:g}: {label}" if budget is not None else label
    try:
        data = rs.one_type_battle(attacker, defender)
    except BattleOddsError as exc:
        message = str(exc)
        said = message if message.startswith(prefix) else f"{prefix}: {message}"
        raise _named(BattleOddsError(said), budget) from None
    if settings:
        data = {**data, TABLE: {**(data.get(TABLE) or {}), **settings}}

    def option_of(key: str) -> str | None:
        parts = [p for p in re.split(r"[.\[\]]", key) if p]
        if len(parts) >= 2 and parts[0] == TABLE and parts[1] in settings:
            return f"settings {parts[1]}"
        return None

    return {**data, "name": label}, Source(prefix, option_of=option_of)


def one_type_validated(
    data: Mapping[str, Any], source: Source, budget: float | None = None
) -> Scenario:
    """The scenario of :func:`one_type_data`'s ``data`` and ``source``, validated."""
    try:
        return from_data(data, source)
    except BattleOddsError as exc:
        raise _named(exc, budget) from None


def _named(error: BattleOddsError, budget: float | None) -> BattleOddsError:
    """A one-type battle's error naming the parameter at fault: a setting, or the budget."""
    if str(error).startswith("settings "):
        return ParameterError.naming("settings", error)
    return error if budget is None else ParameterError.naming("budget", error)


def settings_text(settings: Mapping[str, Any]) -> str:
    """``rules=engine, expected_value=exact`` (empty without settings), for titles."""
    return ", ".join(f"{key}={_shown(value)}" for key, value in settings.items())


def _shown(value: Any) -> str:
    # As a scenario file writes it (true, ["rain"]), but a name bare.
    return value if isinstance(value, str) else json.dumps(value, default=str)


def settings_columns(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A frame's columns for the settings, named by their data path (``battle.rules``)
    as a sweep names what it varies."""
    return {f"{TABLE}.{key}": value for key, value in settings.items()}


def offered_types(
    rs: rulesets.Ruleset, costs: Mapping[str, float], types: Sequence[str] | str | None
) -> tuple[list[str], list[str]]:
    """The types to fight (``types``: a comma-separated list or a sequence; None: every
    type of ``costs`` that can fight alone), and notes on the ones left out."""
    unfit = rs.cannot_fight_alone()
    if types is None:
        chosen = [t for t in costs if t not in unfit]
        left_out = [f"{t} ({why})" for t, why in unfit.items()]
        notes = ["left out, cannot fight alone: " + ", ".join(left_out)] if left_out else []
        return chosen, notes
    names = [t.strip() for t in types.split(",")] if isinstance(types, str) else list(types)
    chosen = []
    for name in names:
        if not name:
            raise ParameterError(
                "types", None, "an empty name: expected e.g. knight,pikeman,archer"
            )
        if name not in costs:
            raise ParameterError(
                "types",
                None,
                f"unknown unit type '{name}' of {rs.name}" + did_you_mean(name, costs),
            )
        if name in unfit:
            raise ParameterError(
                "types", None, f"{name} cannot fight alone ({unfit[name]}): leave it out"
            )
        if name in chosen:
            raise ParameterError("types", None, f"{name} is named twice")
        chosen.append(name)
    if not chosen:
        raise ParameterError("types", None, "no types: expected e.g. knight,pikeman,archer")
    return chosen, []
