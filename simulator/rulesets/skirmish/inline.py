"""One-line fields for ``battle-odds odds --ruleset skirmish``.

``--attacker "cavalry, 2 swordsman; 3 archer @2" --defender "giant, priest(health=3)"``:
stacks are separated by ``;`` and units by ``,``; ``N type`` is N units of a type,
``type(health=H)`` a wounded one, and ``@D`` (0..5) puts a stack on neighbour D of the
attacked tile (``@centre``: on the attacked tile). Without ``@``, the attacker's stacks
take neighbours 0, 1, ... (the first one attacks) and the defender's first stack holds
the attacked tile, its others the next free neighbours. The result is the same data a
TOML file holds, so one validator serves both.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..base import Army, InlineQuery
from .model import (
    CENTRE,
    EXPECTED_VALUES,
    MAX_STACK,
    RULES,
    field_tiles,
)

ATTACKED = (2, 2)
OWNERS = ("attacker", "defender")
OPTIONS = ("rules", "expected_value")
_PLACE = re.compile(r"@\s*(\w+)\s*$")


def _direction(word: str, where: str) -> int:
    if word in ("centre", "center"):
        return CENTRE
    if word.isdigit() and int(word) < CENTRE:
        return int(word)
    raise BattleOddsError(
        f"{where}: '@{word}' is not a place: expected @0..@5 (a neighbour of "
        "the attacked tile) or @centre (the attacked tile)"
    )


def parse_stacks(text: str, option: str) -> list[tuple[int | None, list[str]]]:
    """``(direction or None, unit items)`` per stack."""
    if not text.strip():
        raise BattleOddsError(f'{option}: an empty side: expected e.g. "cavalry, 2 swordsman"')
    stacks = []
    for number, stack_text in enumerate(text.split(";"), 1):
        where = f"{option}: stack {number} '{stack_text.strip()}'"
        place = _PLACE.search(stack_text)
        direction = _direction(place[1].lower(), where) if place else None
        body = stack_text[: place.start()] if place else stack_text
        items = [i.strip() for i in body.split(",") if i.strip()]
        if not items:
            raise BattleOddsError(f'{where}: an empty stack: expected e.g. "2 swordsman, archer"')
        stacks.append((direction, items))
    return stacks


def stacks_of(army: Army) -> str:
    """``army`` as one side's line: full stacks of its type, then the rest."""
    full, rest = divmod(army.men, MAX_STACK)
    sizes = [MAX_STACK] * full + ([rest] if rest else [])
    return "; ".join(f"{size} {army.type}" for size in sizes)


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    for key in query.options:
        if key not in OPTIONS:
            raise BattleOddsError(
                f"--set {key}: not an option of the skirmish ruleset" + did_you_mean(key, OPTIONS)
            )
    tiles = field_tiles(ATTACKED)
    sides = [parse_stacks(query.attacker, "--attacker"), parse_stacks(query.defender, "--defender")]
    taken = {d for side in sides for d, _ in side if d is not None}
    free = [d for d in range(CENTRE) if d not in taken]
    placed: list[list[int]] = [[], []]
    for s, side in enumerate(sides):
        for number, (direction, _) in enumerate(side):
            if direction is None:
                if s == 1 and number == 0 and CENTRE not in taken:
                    direction = CENTRE
                    taken.add(CENTRE)
                elif free:
                    direction = free.pop(0)
                else:
                    raise BattleOddsError(
                        f"--{OWNERS[s]}: more stacks than the field's seven tiles"
                    )
            placed[s].append(direction)
    if placed[0][0] == CENTRE:
        raise BattleOddsError(
            "--attacker: the attacking (first) stack stands on a neighbour of "
            "the attacked tile, not @centre"
        )
    stacks = []
    for s, side in enumerate(sides):
        for direction, (_, items) in zip(placed[s], side, strict=True):
            x, y = tiles[direction]
            stacks.append({"tile": [x, y], "owner": OWNERS[s], "units": items})
    battle: dict[str, Any] = {
        "attacked": list(ATTACKED),
        "attacking": list(tiles[placed[0][0]]),
        "tile_owner": "defender",
    }
    for key, valid in (("rules", RULES), ("expected_value", EXPECTED_VALUES)):
        if key in query.options:
            value = str(query.options[key])
            if value not in valid:
                raise BattleOddsError(
                    f"--set {key}={value}: expected one of "
                    + ", ".join(valid)
                    + did_you_mean(value, valid)
                )
            battle[key] = value
    return {"ruleset": "skirmish", "name": "odds", "battle": battle, "stacks": stacks}
