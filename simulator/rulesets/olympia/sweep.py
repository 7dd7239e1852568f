"""Sweep paths for olympia: ``attacker.knight``, ``attacker.2.archer``, ``defender.catapult``.

A user names a force by side and type (and unit number, counted from 1 in stack order,
as ``battle-odds odds`` counts them, when the type is in more than one unit); this turns
it into the data path of the count in the scenario, whichever way the file writes its
men (a ``men = { knight = 10 }`` table or a ``[[...men]]`` list). Anything else is taken
as a data path as it stands (``units.knight.attack``, ``attacker.break_point``,
``battle.strike_order``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..names import resolve_name
from .keys import side as side_table
from .model import SIDES, standard_engines, standard_fighters


def sweep_path(data: Mapping[str, Any], path: str) -> str:
    parts = path.split(".")
    if "[" in path or len(parts) < 2 or parts[0] not in SIDES:
        return path
    side, rest = parts[0], parts[1:]
    units = _units(data, side, path)
    fighters = [*standard_fighters(), *(data.get("units") or {})]
    if len(rest) == 1:
        name = rest[0]
        engine = resolve_name(name, standard_engines())
        if engine is not None:
            return f"{side}.siege_engines.{engine}"
        fighter = resolve_name(name, fighters)
        if fighter is None:
            side_keys = [f.name for f in side_table(side).fields]
            if name in side_keys:
                return path
            # Neither a type nor a key of the side: most likely a misspelt type.
            raise BattleOddsError(
                f"--vary {path}: '{name}' is neither a unit type nor a key of the {side} "
                f"({', '.join(side_keys)})"
                + did_you_mean(name, [*fighters, *standard_engines(), *side_keys])
            )
        holding = [i for i, unit in enumerate(units) if _men_key(unit, fighter) is not None]
        if len(holding) > 1:
            choices = " or ".join(f"{side}.{i + 1}.{fighter}" for i in holding)
            raise BattleOddsError(
                f"--vary {path}: {fighter} is in units "
                f"{', '.join(str(i + 1) for i in holding)} of the {side}: "
                f"write {choices}"
            )
        return _count_path(units, holding[0] if holding else 0, fighter, side, path)
    if rest[0].isdigit():
        number = int(rest[0])
        if not 1 <= number <= len(units):
            raise BattleOddsError(
                f"--vary {path}: the {side} has units 1..{len(units)} "
                f"(counted from 1 in stack order), not {number}"
            )
        if len(rest) == 2:
            fighter = resolve_name(rest[1], fighters)
            if fighter is None:
                raise BattleOddsError(
                    f"--vary {path}: unknown unit type '{rest[1]}'"
                    + did_you_mean(rest[1], fighters)
                )
            return _count_path(units, number - 1, fighter, side, path)
        return f"{side}.units[{number - 1}]." + ".".join(rest[1:])
    return path


def _units(data: Mapping[str, Any], side: str, path: str) -> list[Any]:
    units = (data.get(side) or {}).get("units")
    if not isinstance(units, list) or not units:
        raise BattleOddsError(f"--vary {path}: the scenario's {side} has no [[{side}.units]]")
    return units


def _men_key(unit: Any, fighter: str) -> str | None:
    """The sub-path of ``fighter``'s count inside one unit, if the unit has that type."""
    men = unit.get("men") if isinstance(unit, Mapping) else None
    if isinstance(men, Mapping):
        return f"men.{fighter}" if fighter in men else None
    if isinstance(men, list):
        found = [
            j for j, m in enumerate(men) if isinstance(m, Mapping) and m.get("type") == fighter
        ]
        if len(found) > 1:
            raise BattleOddsError(
                f"{fighter} appears in {len(found)} rows of one unit: give the "
                f"data path, e.g. ...units[0].men[{found[0]}].count"
            )
        return f"men[{found[0]}].count" if found else None
    return None


def _count_path(units: list[Any], index: int, fighter: str, side: str, path: str) -> str:
    key = _men_key(units[index], fighter)
    if key is not None:
        return f"{side}.units[{index}].{key}"
    men = units[index].get("men") if isinstance(units[index], Mapping) else None
    if men is None or isinstance(men, Mapping):
        return f"{side}.units[{index}].men.{fighter}"
    raise BattleOddsError(
        f"--vary {path}: {side} unit {index + 1} has no {fighter} and lists its "
        f"men as [[...men]] entries: add one with count = 0 to sweep it"
    )
