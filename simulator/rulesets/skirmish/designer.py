"""Designer hooks for skirmish: men added to a side join the stack that starts the fight
for it (the attacking stack, or the stack on the attacked tile), up to eight units."""

from __future__ import annotations

import copy
from typing import Any

from ...errors import BattleOddsError
from .model import MAX_STACK, SIDES, parse_unit_item


def forces(battle: Any) -> list[tuple[str, str, int]]:
    counts: dict[tuple[str, str], int] = {}
    for p in battle.participants:
        key = (SIDES[p.side], p.unit.name)
        counts[key] = counts.get(key, 0) + 1
    return [(side, kind, n) for (side, kind), n in counts.items()]


def _main_stack(battle: Any, side: str) -> int:
    tile = battle.attacking if side == "attacker" else battle.attacked
    return next(s.index for s in battle.stacks if s.tile == tile)


def room(battle: Any, side: str) -> int:
    return MAX_STACK - len(battle.stacks[_main_stack(battle, side)].units)


def add_units(scenario: Any, side: str, kind: str, count: int) -> dict[str, Any]:
    battle = scenario.model
    changed = copy.deepcopy(dict(scenario.data))
    if any("stacks" in (changed.get(s) or {}) for s in SIDES):
        # battle.stacks then are not the file's [[stacks]], which men are added to.
        raise BattleOddsError(
            "men are added to the field's [[stacks]]: a scenario whose attacker or "
            "defender table gives its own stacks cannot be changed so; write them as "
            "[[stacks]]"
        )
    stacks = changed["stacks"]
    main = _main_stack(battle, side)
    if count >= 0:
        if count > room(battle, side):
            raise BattleOddsError(
                f"the {side}'s stack has room for {room(battle, side)} more units "
                f"(a stack holds at most {MAX_STACK}): cannot add {count} {kind}"
            )
        if count:
            stacks[main]["units"].append(f"{count} {kind}")
        return changed
    # Take from the side's fighting stacks, the main one last.
    fighting = dict.fromkeys(p.stack for p in battle.participants if SIDES[p.side] == side)
    order = [i for i in reversed(fighting) if i != main] + [main]
    left = -count
    for index in order:
        units = stacks[index]["units"]
        for i in reversed(range(len(units))):
            entry = units[i]
            if isinstance(entry, str):
                parsed = parse_unit_item(entry)
                if parsed is None or parsed[1] != kind:
                    continue
                number, _, health = parsed
            elif entry.get("type") == kind:
                number, health = int(entry.get("count", 1)), entry.get("health")
            else:
                continue
            taken = min(left, number)
            if taken == number:
                del units[i]
            elif isinstance(entry, str):
                kept = f"{number - taken} {kind}"
                units[i] = kept if health is None else f"{kept}(health={health})"
            else:
                entry["count"] = number - taken
            left -= taken
            if not left:
                return changed
    raise BattleOddsError(f"the {side} has fewer than {-count} {kind} to take away")
