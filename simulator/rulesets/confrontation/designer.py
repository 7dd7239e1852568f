"""Designer hooks for confrontation: units are entries of stacks of at most three.

Men added to a side (``worth``, a count's step in ``sensitivity``) join its stacks in
order, filling each to three; men taken away leave the last stacks first.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import BattleOddsError
from .model import MAX_STACK, SIDES


def forces(battle: Any) -> list[tuple[str, str, int]]:
    counts: dict[tuple[str, str], int] = {}
    for stack, unit in battle.units():
        key = (SIDES[stack.side], unit.type)
        counts[key] = counts.get(key, 0) + 1
    return [(side, kind, n) for (side, kind), n in counts.items()]


def room(data: Any, side: str) -> int:
    return sum(MAX_STACK - len(s.get("units", [])) for s in _stacks(data, side))


def add_units(data: Any, side: str, kind: str, count: int) -> dict[str, Any]:
    changed = copy.deepcopy(dict(data))
    stacks = _stacks(changed, side)
    if count > room(changed, side):
        raise BattleOddsError(
            f"the {side}'s stacks have room for {room(changed, side)} more units "
            f"(a stack holds at most {MAX_STACK}): cannot add {count} {kind}"
        )
    left = count
    for stack in stacks:
        units = stack.setdefault("units", [])
        while left > 0 and len(units) < MAX_STACK:
            units.append({"type": kind})
            left -= 1
    for stack in reversed(stacks):
        units = stack.get("units", [])
        for i in reversed(range(len(units))):
            if left < 0 and units[i].get("type") == kind:
                if len(units) == 1:
                    raise BattleOddsError(
                        f"taking the last unit of {side} stack '{stack.get('name', '?')}' "
                        "would leave it empty"
                    )
                del units[i]
                left += 1
    if left < 0:
        raise BattleOddsError(f"the {side} has fewer than {-count} {kind} to take away")
    return changed


def _stacks(data: Any, side: str) -> list[Any]:
    stacks = (data.get(side) or {}).get("stacks")
    if not isinstance(stacks, list) or not stacks:
        raise BattleOddsError(f"the scenario's {side} has no [[{side}.stacks]]")
    return stacks
