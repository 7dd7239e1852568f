"""What the designer's questions (``worth``, ``sensitivity``) need from a ruleset.

A *knob* is one number of a scenario a designer can turn: how many men of a type a side
has, or one rating of a unit type. Each ruleset says which knobs a scenario has and how
to turn one (:meth:`Ruleset.knobs`, :meth:`Ruleset.with_knob`), and where men added to a
side stand (:meth:`Ruleset.add_men`). The helpers here are the common case: armies whose
units hold men in ``men`` tables (olympia, age_of_gods).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import BattleOddsError, did_you_mean
from .names import resolve_name

COUNT = "count"
RATING = "rating"


@dataclass(frozen=True)
class Knob:
    """One number of a scenario: a side's count of a type, or a rating of a type."""

    kind: str  # COUNT or RATING
    #: The side for a count (or a block's rating); None for a type's rating.
    side: str | None
    #: The unit type (or the block) the number belongs to.
    subject: str
    #: ``count`` or the rating's field name.
    field: str
    value: float
    #: The smallest step the field takes (1 for whole numbers, 0.5 for half points).
    resolution: float = 1.0
    lowest: float = 0.0
    highest: float = math.inf

    @property
    def label(self) -> str:
        if self.kind == COUNT and self.field == "count":
            return f"{self.side} {self.subject}"
        owner = self.subject if self.side is None else f"{self.side} {self.subject}"
        return f"{owner} {self.field}"


def resolve_type(word: str, valid: Iterable[str], what: str) -> str:
    """``knights`` -> ``knight``; an unknown name is an error naming the nearest one."""
    valid = list(valid)
    found = resolve_name(word, valid)
    if found is None:
        raise BattleOddsError(f"{what}: unknown unit type '{word}'" + did_you_mean(word, valid))
    return found


def side_units(data: Mapping[str, Any], side: str, key: str = "units") -> list[Any]:
    units = (data.get(side) or {}).get(key)
    if not isinstance(units, list) or not units:
        raise BattleOddsError(f"the scenario's {side} has no [[{side}.{key}]]")
    return units


def change_men(data: Mapping[str, Any], side: str, fighter: str, delta: int) -> dict[str, Any]:
    """A copy of ``data`` with ``delta`` men of ``fighter`` added to (or taken from) the
    side's ``units[].men``: added to the first unit that has the type, else the first unit
    (in its front row); taken from the last units first."""
    changed = copy.deepcopy(dict(data))
    units = side_units(changed, side)
    holding = [u for u in units if _count(u, fighter) > 0]
    if delta >= 0:
        _set(holding[0] if holding else units[0], fighter, delta)
        return changed
    left = -delta
    for unit in reversed(holding):
        taken = min(left, _count(unit, fighter))
        _set(unit, fighter, -taken)
        left -= taken
        if not left:
            return changed
    raise BattleOddsError(f"the {side} has fewer than {-delta} {fighter} to take away")


def _rows(unit: Any, fighter: str) -> list[Any]:
    men = unit.get("men") if isinstance(unit, Mapping) else None
    if isinstance(men, list):
        return [m for m in men if isinstance(m, Mapping) and m.get("type") == fighter]
    return []


def _count(unit: Any, fighter: str) -> int:
    men = unit.get("men") if isinstance(unit, Mapping) else None
    if isinstance(men, Mapping):
        return int(men.get(fighter, 0))
    return sum(int(m.get("count", 0)) for m in _rows(unit, fighter))


def _set(unit: dict[str, Any], fighter: str, delta: int) -> None:
    men = unit.setdefault("men", {})
    if isinstance(men, dict):
        men[fighter] = int(men.get(fighter, 0)) + delta
        return
    rows = _rows(unit, fighter)
    if not rows:
        men.append({"type": fighter, "count": delta})
        return
    for row in reversed(rows) if delta < 0 else rows[:1]:
        moved = delta if delta > 0 else -min(-delta, int(row.get("count", 0)))
        row["count"] = int(row.get("count", 0)) + moved
        delta -= moved
        if not delta:
            return


def men_forces(model: Any) -> list[tuple[str, str, int]]:
    """(side, type, men) of every type a side fields, from an olympia-like model."""
    forces: dict[tuple[str, str], int] = {}
    for side in ("attacker", "defender"):
        for unit in getattr(model, side).units:
            for men in unit.men:
                forces[(side, men.type)] = forces.get((side, men.type), 0) + men.count
    return [(side, kind, n) for (side, kind), n in forces.items() if n > 0]


def rating_step(value: float, fraction: float, resolution: float) -> float:
    """``fraction`` of ``value`` rounded to the field's resolution, at least one step of it."""
    steps = math.floor(abs(value) * fraction / resolution + 0.5)  # half up: 45 -> 4.5 -> 5
    return max(1, steps) * resolution
