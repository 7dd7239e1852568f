"""Age of Gods armies as validated, typed objects (docs/age_of_gods.md).

Armies, nobles, items, rows, structures, break points and weather are Olympia's, so
their validation is Olympia's (``olympia.model``); this module adds the Age of Gods
unit table, its per-type rules (mounted, pikes, fleeing, special attacks), its
terrains and the control-limit option.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from typing import Any

from ...errors import Source
from ...input.reader import Node
from ..olympia import keys as olympia_keys
from ..olympia import model as olympia
from . import keys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RULESET_NAME = "age_of_gods"
SIDES = olympia.SIDES


#: Men a noble fields under ``control_limits``; a defending noble fields this many more.
CONTROL_LIMIT = 10
CONTROL_LIMIT_DEFENDING_EXTRA = 20
#: Keys of a fighter type that Olympia's reader checks (ratings, survive, rain).
OLYMPIA_FIGHTER_KEYS = tuple(f.name for f in olympia_keys.FIGHTER_FIELDS)

Ratings = olympia.Ratings


@dataclass(frozen=True)
class Special:
    """A special attack: ``targets`` strikes of ``strength`` per man, in the special phase."""

    name: str
    strength: int
    targets: int


@dataclass(frozen=True)
class FighterType(olympia.FighterType):
    mounted: bool = False
    pike: bool = False
    flee: float = 0.0
    special: Special | None = None


@dataclass(frozen=True)
class Battle:
    attacker: olympia.Side
    defender: olympia.Side
    fighters: Mapping[str, FighterType]
    noble: Ratings
    capacity: Mapping[str, int]
    terrain: str = "land"
    weather: tuple[str, ...] = ()
    control_limits: bool = False

    @property
    def sides(self) -> tuple[olympia.Side, olympia.Side]:
        return (self.attacker, self.defender)

    @property
    def defender_quarters(self) -> int:
        """The defender's terrain multiplier on attack and defense, in quarters."""
        return int(_table()["terrain_quarters"][self.terrain])


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("units.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def standard_fighters() -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in _table()["fighters"].items()}


def noble_ratings(source: Source | None = None) -> Ratings:
    return olympia._ratings(Node(_table()["noble"], "noble", source or Source("package")))


def foreign_units() -> dict[str, str]:
    """Unit names of the other rulesets that this one lacks -> the ruleset they belong to."""
    from .. import get, names

    own = standard_fighters()
    found: dict[str, str] = {}
    for name in names():
        if name == RULESET_NAME:
            continue
        try:
            table = get(name).units()
        except Exception:  # a sibling ruleset that fails to load only costs a hint
            continue
        for unit in table.get("type", []):
            if unit not in own:
                found.setdefault(str(unit), name)
    return found


class _KnownUnits(Mapping[str, Any]):
    """Our fighter types for lookups and suggestions, but also "containing" other
    rulesets' units, so that Olympia's army reader accepts them and :func:`validate`
    can say which ruleset such a unit belongs to instead of "unknown unit"."""

    def __init__(self, fighters: Mapping[str, FighterType]) -> None:
        self.fighters = fighters
        self._foreign: dict[str, str] | None = None

    def foreign(self) -> dict[str, str]:
        if self._foreign is None:
            self._foreign = foreign_units()
        return self._foreign

    def __contains__(self, name: object) -> bool:
        return name in self.fighters or (isinstance(name, str) and name in self.foreign())

    def __getitem__(self, name: str) -> Any:
        return self.fighters[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fighters)

    def __len__(self) -> int:
        return len(self.fighters)


def _fighter(name: str, node: Node) -> FighterType:
    node.only(keys.FIGHTER)
    shared = {k: v for k, v in node.table().items() if k in OLYMPIA_FIGHTER_KEYS}
    base = olympia._fighter(name, Node(shared, node.path, node.source))
    special = None
    if node.has("special"):
        sp = node.child("special")
        sp.only(keys.SPECIAL)
        special = Special(*(sp.read(keys.SPECIAL[k]) for k in ("name", "strength", "targets")))
    return FighterType(
        **{f.name: getattr(base, f.name) for f in fields(olympia.FighterType)},
        mounted=node.read(keys.FIGHTER["mounted"]),
        pike=node.read(keys.FIGHTER["pike"]),
        flee=node.read(keys.FIGHTER["flee"]),
        special=special,
    )


def fighter_types(custom: Node, source: Source) -> dict[str, FighterType]:
    """The package's table, with each scenario ``[units.NAME]`` table merged over its
    entry (or defining a new type)."""
    tables: dict[str, tuple[dict[str, Any], str]] = {
        name: (data, f"(package) fighters.{name}") for name, data in standard_fighters().items()
    }
    for name, sub in custom.items() if custom.data is not None else ():
        base = tables.get(name, ({}, ""))[0]
        tables[name] = ({**base, **sub.table()}, sub.path)
    return {
        name: _fighter(name, Node(data, where, source)) for name, (data, where) in tables.items()
    }


def noble_in_battle(battle: Battle, noble: olympia.Noble) -> Ratings:
    """A noble's ratings with his items' bonuses, in this battle's weather."""
    base = battle.noble
    return olympia.weathered(
        Ratings(
            base.attack + noble.attack_bonus,
            base.defense + noble.defense_bonus,
            base.missile + noble.missile_bonus,
        ),
        battle.weather,
        False,
    )


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    battle = top.child("battle", {})
    battle.only(keys.BATTLE)
    terrain = battle.read(keys.BATTLE["terrain"])
    weather = battle.read(keys.BATTLE["weather"])
    control_limits = battle.read(keys.BATTLE["control_limits"])
    fighters = fighter_types(top.child("units"), source)
    known = _KnownUnits(fighters)
    capacity = dict(_table()["structures"])
    sides = []
    for side_name in SIDES:
        if not top.has(side_name):
            raise top.fail(
                f"is required: the {side_name}'s army (a table with [[{side_name}.units]])",
                side_name,
            )
        node = top.child(side_name)
        if node.has("siege_engines"):
            raise node.fail(
                "siege engines belong to the olympia ruleset; age_of_gods has none", "siege_engines"
            )
        side = olympia._side(node, known, {}, capacity, terrain)
        for u, unit in enumerate(side.units):
            for men in unit.men:
                if men.type not in fighters:
                    owner = known.foreign()[men.type]
                    raise node.fail(
                        f"'{men.type}' is a unit of the {owner} ruleset, not of "
                        f"{RULESET_NAME} (its units: `battle-odds units --ruleset "
                        f"{RULESET_NAME}`)",
                        f"units[{u}].men",
                        men.type,
                    )
        sides.append(side)
    return Battle(
        attacker=sides[0],
        defender=sides[1],
        fighters=fighters,
        noble=noble_ratings(source),
        capacity=capacity,
        terrain=terrain,
        weather=weather,
        control_limits=control_limits,
    )
