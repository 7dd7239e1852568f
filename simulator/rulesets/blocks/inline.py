"""One-line armies for ``battle-odds odds --ruleset blocks``.

``"B2:4, Richard A3:3/4 knights, C1:4@r2"``: blocks separated by ``,``; each is an
optional name, ``RATING:STEPS`` (``/MAX`` for maximum steps), optional traits
(``knights``, ``harry``) and an optional place: ``@field`` (default), ``@castle``,
``@r2`` or ``@r3`` (reserve arriving in round 2 or 3). Options come from
``--set KEY=VALUE``: the ``[battle]`` keys and the ``[policy]`` keys of a scenario file.
The result is the same data a TOML file holds, so one validator serves both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...errors import BattleOddsError, did_you_mean, nearest
from ..base import InlineQuery
from .model import BATTLE_KEYS, POLICY_KEYS, parse_rating

_STEPS = re.compile(r"^(?P<rating>[^:\s]+):(?P<steps>[+-]?\d+)(?:/(?P<max>[+-]?\d+))?$")
_PLACE = re.compile(r"^r(?P<round>[+-]?\d+)$")
INT_OPTIONS = ("castle_limit", "attrition", "turns", "retreat_round", "from_step")
BOOL_OPTIONS = ("siege", "retreat_road")
#: ``odds`` options of other rulesets, named as the user typed them in errors.
OTHER_RULESETS_OPTIONS = (
    "terrain",
    "weather",
    "structure",
    "attacker_structure",
    "strike_order",
    "attacker_break",
    "defender_break",
)


def parse_block(text: str, where: str) -> dict[str, Any]:
    body, at_sign, place = text.partition("@")
    words = body.split()
    rated = [i for i, w in enumerate(words) if ":" in w]
    if len(rated) != 1:
        raise BattleOddsError(
            f"{where}: cannot parse: expected [NAME] RATING:STEPS[/MAX] "
            "[knights] [harry] [@castle|@r2|@r3], "
            "e.g. 'B2:4' or 'Richard A3:4 knights'"
        )
    i = rated[0]
    match = _STEPS.match(words[i])
    if not match:
        raise BattleOddsError(
            f"{where}: '{words[i]}': expected RATING:STEPS like B2:4 (or B2:3/4 with maximum steps)"
        )
    if parse_rating(match["rating"]) is None:
        raise BattleOddsError(
            f"{where}: rating '{match['rating']}' is not a block rating: "
            "expected an initiative A, B or C and a firepower 1..6, e.g. B2"
        )
    block: dict[str, Any] = {"rating": match["rating"], "steps": int(match["steps"])}
    if match["max"] is not None:
        block["max_steps"] = int(match["max"])
    if i > 0:
        block["name"] = " ".join(words[:i])
    if words[i + 1 :]:
        block["traits"] = [w.lower() for w in words[i + 1 :]]
    if at_sign:
        place = place.strip().lower()
        reserve = _PLACE.match(place)
        if reserve:
            block["at"] = "reserve"
            block["round"] = int(reserve["round"])
        elif place in ("field", "castle"):
            block["at"] = place
        else:
            raise BattleOddsError(
                f"{where}: place '@{place}': expected @field, @castle, @r2 or @r3"
                + did_you_mean(place, ("field", "castle", "r2", "r3"))
            )
    return block


def parse_side(text: str, option: str) -> dict[str, Any]:
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise BattleOddsError(f'{option}: no blocks: expected e.g. "B2:4, A3:3, C1:4@r2"')
    blocks = []
    named: dict[str, int] = {}
    for n, item in enumerate(items, 1):
        if not item:
            raise BattleOddsError(f"{option}: block {n} is empty (two commas in a row?)")
        block = parse_block(item, f"{option}: block {n} '{item}'")
        if "name" not in block:
            # Unnamed blocks are named by their rating, numbered when a rating repeats.
            base = str(block["rating"]).upper()
            named[base] = named.get(base, 0) + 1
            block["name"] = base if named[base] == 1 else f"{base}#{named[base]}"
        blocks.append(block)
    return {"blocks": blocks}


def _value(key: str, raw: Any) -> Any:
    if key in INT_OPTIONS:
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise BattleOddsError(f"--set {key}={raw}: expected a whole number") from None
    if key in BOOL_OPTIONS:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        raise BattleOddsError(f"--set {key}={raw}: expected true or false")
    return str(raw)


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    options: Mapping[str, Any] = query.options
    data: dict[str, Any] = {
        "ruleset": "blocks",
        "name": "odds",
        "attacker": parse_side(query.attacker, "--attacker"),
        "defender": parse_side(query.defender, "--defender"),
    }
    valid = (*BATTLE_KEYS, *POLICY_KEYS)
    battle: dict[str, Any] = {}
    policy: dict[str, Any] = {}
    for key, raw in options.items():
        if key not in valid:
            flag = f"--{key.replace('_', '-')}" if key in OTHER_RULESETS_OPTIONS else f"--set {key}"
            guess = nearest(key, valid)
            raise BattleOddsError(
                f"{flag}: not an option of the blocks ruleset: expected "
                f"--set KEY=VALUE with KEY one of {', '.join(valid)}"
                + (f" (did you mean '{guess}'?)" if guess else "")
            )
        (battle if key in BATTLE_KEYS else policy)[key] = _value(key, raw)
    if "castle_limit" not in battle:
        # A one-line query names no castle: it holds the blocks placed in it.
        battle["castle_limit"] = max(
            sum(b.get("at") == "castle" for b in data[side]["blocks"])
            for side in ("attacker", "defender")
        )
    data["battle"] = battle
    if policy:
        data["policy"] = policy
    return data
