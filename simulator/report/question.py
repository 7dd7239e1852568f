"""The question an answer answers, in one line of words: the armies, the battle's settings
and the ruleset, so that a pasted answer says what was asked (a rain run and a dry run of
the same armies read differently)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets.stop_rules import StopRule
from ..rulesets.words import SIDES, plural
from ..scenario.scenario import unknowns_of
from ..scenario.unknowns import substituted

#: Scenario keys that are not the battle's settings (who fights is said by the armies).
NOT_SETTINGS = ("ruleset", "name", "description", "battles", "seed", "attacker", "defender")


def said(name: str) -> str:
    """A key or identifier in words: ``strike_order`` -> "strike order"."""
    return str(name).replace("_", " ")


def value_words(value: Any) -> str:
    """A setting's value as a reader says it: ``["rain"]`` -> "rain", ``true`` -> "yes"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(value_words(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{said(k)} {value_words(v)}" for k, v in value.items())
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:,}"
    return said(value)


def count_words(count: int, kind: str) -> str:
    return f"{count} {said(kind) if count == 1 else plural(kind)}"


def army_words(scenario: Any) -> dict[str, str]:
    """Each side's army in words ("10 knights, 20 soldiers"), from the ruleset's
    ``forces`` where it has them, else from the blocks or units the data lists."""
    ruleset = rulesets.get(scenario.ruleset)
    armies: dict[str, list[str]] = {side: [] for side in SIDES}
    try:
        for side, kind, counts in _forces(ruleset, scenario):
            low, high = min(counts), max(counts)
            words = count_words(high, kind)
            armies.setdefault(side, []).append(
                words if low == high else f"{low}..{words}"  # a count the scenario ranges over
            )
    except (BattleOddsError, AttributeError, TypeError):
        for side in SIDES:
            table = scenario.data.get(side) or {}
            for block in table.get("blocks") or []:
                armies[side].append(
                    f"{block.get('name', '?')} ({block.get('steps', '?')} steps)"
                    if isinstance(block, Mapping)
                    else str(block)
                )
    return {side: ", ".join(parts) or "nobody" for side, parts in armies.items()}


def _forces(ruleset: Any, scenario: Any) -> list[tuple[str, str, list[int]]]:
    """``(side, kind, counts)``: the counts each side fields of each kind; several for a
    scenario with unknowns (every value each of its unknowns was checked at)."""
    models = [scenario.model]
    if unknowns_of(scenario):
        mixture = scenario.model
        models = [mixture.scenario_of(c).model for c in mixture.checked]
    found: dict[tuple[str, str], list[int]] = {}
    for model in models:
        for side, kind, count in ruleset.forces(model):
            found.setdefault((side, kind), []).append(count)
    return [(side, kind, counts) for (side, kind), counts in found.items()]


def retreat_words(side: str, table: Mapping[str, Any], step_unit: str = "steps") -> str:
    """A side's stop rule in words: "the attacker withdraws at 5 men left or fewer, or
    after 3 rounds" (a value the scenario ranges over as written)."""
    try:
        at_most = table.get("at_most")
        rule = StopRule(
            at_most=at_most if isinstance(at_most, int) else None,
            at_most_percent=float(at_most.strip().rstrip("%"))
            if isinstance(at_most, str)
            else None,
            gone=None if table.get("gone") is None else str(table["gone"]),
            after=None if table.get("after") is None else int(table["after"]),
            outnumbered=None if table.get("outnumbered") is None else float(table["outnumbered"]),
        )
    except (TypeError, ValueError):
        return f"the {side} withdraws: {value_words(table)}"
    return f"the {side} withdraws {rule.words(step_unit)}"


def settings_words(data: Mapping[str, Any], step_unit: str = "steps") -> list[str]:
    """The battle's settings a scenario states, in words: "weather rain", "break points
    50% / 50%", "the attacker withdraws at 5 men left or fewer"."""
    parts: list[str] = []
    for key, value in data.items():
        if key in NOT_SETTINGS or key == "stacks" or key == "script":
            continue
        if isinstance(value, Mapping):
            parts += [f"{said(k)} {value_words(v)}" for k, v in value.items() if k != "attacked"]
    scripted = sorted(
        {
            str(action.get("ability"))
            for turn in data.get("script") or []
            if isinstance(turn, Mapping)
            for action in turn.get("actions") or []
            if isinstance(action, Mapping) and action.get("ability")
        }
    )
    if scripted:
        parts.append("ability " + ", ".join(scripted))
    breaks = [
        (data.get(side) or {}).get("break_point")
        for side in SIDES
        if isinstance(data.get(side), Mapping)
    ]
    if any(b is not None for b in breaks):
        parts.append(
            "break points " + " / ".join("default" if b is None else f"{b}%" for b in breaks)
        )
    for side in SIDES:
        rule = (
            (data.get(side) or {}).get("retreat") if isinstance(data.get(side), Mapping) else None
        )
        if isinstance(rule, Mapping) and rule:
            parts.append(retreat_words(side, rule, step_unit))
    return parts


def question(scenario: Any, ruleset: bool = True) -> str:
    """``attacker 10 knights, 20 soldiers against defender 40 pikemen; terrain land, ...
    (olympia)``: what the run was asked, in one line (the ruleset left out where a title
    already names it)."""
    armies = army_words(scenario)
    varying = unknowns_of(scenario)
    # A setting that varies is said as it was written ("0..50", "rain:30%").
    shown = (
        substituted(scenario.model.data, {u.path: u.written for u in varying})
        if varying
        else scenario.data
    )
    settings = settings_words(shown, rulesets.get(scenario.ruleset).step_unit)
    line = f"attacker {armies['attacker']} against defender {armies['defender']}"
    if settings:
        line += "; " + ", ".join(settings)
    return f"{line} ({scenario.ruleset})" if ruleset else line
