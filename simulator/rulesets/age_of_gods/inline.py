"""One-line armies for ``battle-odds odds --ruleset age_of_gods``.

The army syntax is Olympia's (``noble, 20 hvy_foot, 10 archer@1; noble, 5 knight``,
see ``olympia.inline``) read against this ruleset's unit table. Options (from
``--terrain``, ``--weather``, ``--structure``, ``--attacker-break`` /
``--defender-break`` and ``--set KEY=VALUE``): ``terrain``, ``weather``,
``control_limits`` (true / false), ``structure`` / ``defender_structure`` /
``attacker_structure`` (KIND:DEFENSE[:DAMAGE]).
"""

from __future__ import annotations

from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..base import InlineQuery
from ..olympia.inline import parse_army, parse_structure
from .model import RULESET_NAME, foreign_units, standard_fighters

OPTIONS = (
    "terrain",
    "weather",
    "control_limits",
    "structure",
    "attacker_structure",
    "defender_structure",
    "attacker_break",
    "defender_break",
)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _flag(value: Any, option: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise BattleOddsError(f"{option}: '{value}' is not true or false")


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    options = dict(query.options)
    for key in options:
        if key not in OPTIONS:
            raise BattleOddsError(
                f"{key}: not an option of {RULESET_NAME}: expected one of "
                f"{', '.join(OPTIONS)}" + did_you_mean(key, OPTIONS)
            )
    # Other rulesets' unit names parse, so that the validator can name their ruleset.
    names = {**dict.fromkeys(foreign_units()), **standard_fighters()}
    data: dict[str, Any] = {"ruleset": RULESET_NAME, "name": "odds"}
    for side in ("attacker", "defender"):
        data[side] = parse_army(getattr(query, side), f"--{side}", names, {})
        if options.get(f"{side}_break") is not None:
            data[side]["break_point"] = options[f"{side}_break"]
        text = options.get(f"{side}_structure") or (side == "defender" and options.get("structure"))
        if text:
            data[side]["structure"] = parse_structure(str(text), f"--{side}-structure")
    battle: dict[str, Any] = {}
    if options.get("terrain"):
        battle["terrain"] = options["terrain"]
    if options.get("weather"):
        battle["weather"] = [w.strip() for w in str(options["weather"]).split(",") if w.strip()]
    if options.get("control_limits") is not None:
        battle["control_limits"] = _flag(options["control_limits"], "--set control_limits")
    if battle:
        data["battle"] = battle
    return data
