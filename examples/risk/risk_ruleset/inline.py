"""One-line armies for ``battle-odds odds --ruleset risk``: ``--attacker 10`` (or
``"10 armies"``), house rules through ``--set attacker_dice=2 --set defender_dice=3``."""

from __future__ import annotations

import re
from typing import Any

from simulator.errors import BattleOddsError, did_you_mean
from simulator.rulesets import InlineQuery

from .keys import BATTLE

BATTLE_KEYS = tuple(BATTLE)

_ARMIES = re.compile(r"^\s*([+-]?\d+)\s*(armies|army)?\s*$")


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    data: dict[str, Any] = {
        "ruleset": "risk",
        "attacker": {"armies": _armies(query.attacker, "--attacker")},
        "defender": {"armies": _armies(query.defender, "--defender")},
    }
    battle: dict[str, Any] = {}
    for key, value in query.options.items():
        if key not in BATTLE_KEYS:
            raise BattleOddsError(
                f"option '{key}': not used by the risk ruleset (its options: "
                + ", ".join(f"--set {k}=N" for k in BATTLE_KEYS)
                + ")"
                + did_you_mean(key, BATTLE_KEYS, list_valid=False)
            )
        try:
            battle[key] = int(str(value))
        except ValueError:
            raise BattleOddsError(f"--set {key}={value}: expected a whole number of dice") from None
    if battle:
        data["battle"] = battle
    return data


def _armies(text: str, option: str) -> int:
    match = _ARMIES.match(text)
    if not match:
        raise BattleOddsError(f"{option} '{text}': expected a number of armies, e.g. 10")
    return int(match.group(1))
