"""Olympia armies as validated, typed objects (docs/olympia.md, "Armies")."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, partial
from importlib import resources
from typing import Any

from ...errors import Source, did_you_mean
from ...input.reader import Node, read_once
from ..keys import DEFAULT_COST
from ..stop_rules import NEVER, StopRule, read_stop_rule
from . import keys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SIDES = ("attacker", "defender")


@dataclass(frozen=True)
class Ratings:
    attack: int
    defense: int
    missile: int = 0

    @property
    def strike(self) -> int:
        """What a man strikes with from the front row: the better of attack and missile."""
        return max(self.attack, self.missile)

    @property
    def value(self) -> int:
        """His share of the side's break value: offence (attack or missile) plus defense."""
        return self.strike + self.defense


@dataclass(frozen=True)
class FighterType:
    name: str
    land: Ratings
    ship: Ratings | None = None
    swamp: Ratings | None = None
    survive: float = 0.0
    rain_grounded: bool = False
    noncombatant: bool = False
    cost: float = DEFAULT_COST

    def ratings(self, terrain: str, weather: tuple[str, ...]) -> Ratings:
        base = {"ship": self.ship, "swamp": self.swamp}.get(terrain) or self.land
        return weathered(base, weather, self.rain_grounded)


def weathered(base: Ratings, weather: tuple[str, ...], rain_grounded: bool) -> Ratings:
    missile = base.missile
    if "rain" in weather and rain_grounded:
        missile = 0
    if "wind" in weather:
        missile //= 2
    # The same ratings when the weather changes nothing (most battles): a copy made for
    # each of a price search's thousands of battles cost more than the rest of the call.
    return base if missile == base.missile else replace(base, missile=missile)


@dataclass(frozen=True)
class EngineType:
    name: str
    ratings: Ratings


@dataclass(frozen=True)
class Noble:
    health: int = 100
    attack_bonus: int = 0
    defense_bonus: int = 0
    missile_bonus: int = 0


@dataclass(frozen=True)
class Men:
    type: str
    count: int
    behind: int


@dataclass(frozen=True)
class Unit:
    noble: Noble
    behind: int
    men: tuple[Men, ...] = ()


@dataclass(frozen=True)
class Structure:
    kind: str
    defense: int
    damage: int = 0


@dataclass(frozen=True)
class Side:
    units: tuple[Unit, ...]
    break_point: int = 50
    structure: Structure | None = None
    engines: tuple[tuple[str, int], ...] = ()

    @property
    def men(self) -> int:
        """Its fighters at the start (nobles and siege engines not counted)."""
        return sum(m.count for u in self.units for m in u.men)

    @property
    def fielded(self) -> tuple[str, ...]:
        """The fighter types it fields (at least one man), in stack order."""
        return tuple(dict.fromkeys(m.type for u in self.units for m in u.men if m.count))


@dataclass(frozen=True)
class Battle:
    attacker: Side
    defender: Side
    fighters: Mapping[str, FighterType]
    engines: Mapping[str, EngineType]
    noble: Ratings
    capacity: Mapping[str, int]
    terrain: str = "land"
    weather: tuple[str, ...] = ()
    strike_order: str = "random"
    kernel: str = "auto"
    notes: tuple[str, ...] = field(default=())
    #: Strikes already fought (a battle in progress: the armies are as they stand now).
    from_step: int = 0
    #: When each side (attacker, defender) withdraws (``[side.retreat]``): men are its
    #: fighters, not its nobles or engines.
    retreat: tuple[StopRule, StopRule] = (NEVER, NEVER)

    @property
    def sides(self) -> tuple[Side, Side]:
        return (self.attacker, self.defender)


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("units.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def standard_fighters() -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in _table()["fighters"].items()}


def standard_engines() -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in _table()["engines"].items()}


def _ratings(node: Node, default: Ratings | None = None) -> Ratings:
    """Attack, defense and missile; a terrain's ratings default to the land ones."""
    values = {}
    for f in keys.RATINGS:
        if default is not None:
            f = replace(f, default=getattr(default, f.name))
        values[f.name] = node.read(f)
    return Ratings(**values)


def _fighter(name: str, node: Node) -> FighterType:
    node.only(keys.FIGHTER)
    land = _ratings(node)
    extra = {}
    for terrain in ("ship", "swamp"):
        if node.has(terrain):
            sub = node.child(terrain)
            sub.only(keys.FIGHTER[terrain])
            extra[terrain] = _ratings(sub, land)
    return FighterType(
        name=name,
        land=land,
        survive=node.read(keys.FIGHTER["survive"]),
        rain_grounded=node.read(keys.FIGHTER["rain_grounded"]),
        noncombatant=node.read(keys.FIGHTER["noncombatant"]),
        cost=node.read(keys.FIGHTER["cost"]),
        **extra,
    )


def _fighter_types(custom: Node, source: Source) -> dict[str, FighterType]:
    """The package's table with the scenario's ``[units.*]`` merged over it."""
    if custom.data is None or (isinstance(custom.data, dict) and not custom.data):
        # None merged: the package's types as read once (no copy of its table; each
        # combination of a scenario with ranges validates its own scenario).
        return {name: _package_fighter(name) for name in _table()["fighters"]}
    merged = standard_fighters()
    if custom.data is not None:
        for name, sub in custom.items():
            sub.table()
            _not_a_fighter(custom, name)
            base = merged.get(name, {})
            merged[name] = {**base, **dict(sub.data)}
    fighters = {}
    for name, data in merged.items():
        if custom.data and name in custom.data:
            fighters[name] = _fighter(name, Node(data, f"units.{name}", source))
        else:
            fighters[name] = _package_fighter(name)
    return fighters


@cache
def _package_fighter(name: str) -> FighterType:
    """A fighter type of the package's table, read once: a study builds thousands of
    scenarios (the armies of ``best``, the cells of ``prices``), and reading the whole
    table again for each was most of their building."""
    data = standard_fighters()[name]
    return _fighter(name, Node(data, f"(package) fighters.{name}", Source("package")))


def _not_a_fighter(custom: Node, name: str) -> None:
    """``[units.noble]`` or ``[units.battering_ram]`` would define a new fighter type of
    that name, which no noble or engine uses: an override the battle silently ignores."""
    if name == "noble":
        raise custom.fail(
            "a noble is not a unit type, his ratings are fixed: give a unit's noble a bonus "
            "with noble = { attack = ... } in its [[attacker.units]] or [[defender.units]]",
            name,
            name,
        )
    if name in standard_engines():
        raise custom.fail(
            f"{name} is a siege engine, not a unit type, and its ratings are fixed: "
            f"field it with [attacker.siege_engines] {name} = COUNT",
            name,
            name,
        )


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    battle = top.child("battle", {})
    battle.only(keys.BATTLE)
    terrain = battle.read(keys.BATTLE["terrain"])
    weather = battle.read(keys.BATTLE["weather"])
    strike_order = battle.read(keys.BATTLE["strike_order"])
    kernel = battle.read(keys.BATTLE["kernel"])
    from_step = battle.read(keys.BATTLE["from_step"])

    fighters = _fighter_types(top.child("units"), source)
    engines = dict(_package_engines())
    noble = _package_noble()
    capacity = dict(_table()["structures"])

    sides = []
    retreat = []
    for side_name in SIDES:
        if not top.has(side_name):
            raise top.fail(
                f"is required: the {side_name}'s army (a table with [[{side_name}.units]])",
                side_name,
            )
        node = top.child(side_name)
        sides.append(_known_side(node, fighters, engines, capacity, terrain))
        retreat.append(read_stop_rule(node, sides[-1].fielded))
    if kernel not in ("auto", *keys.RULE_KERNELS) and any(not r.never for r in retreat):
        raise battle.fail(
            f'"{kernel}" does not run stop rules ([attacker.retreat], [defender.retreat]): '
            f'use {", ".join(f"{name!r}" for name in keys.RULE_KERNELS)} or "auto"',
            "kernel",
            kernel,
        )
    return Battle(
        attacker=sides[0],
        defender=sides[1],
        fighters=fighters,
        engines=engines,
        noble=noble,
        capacity=capacity,
        terrain=terrain,
        weather=weather,
        strike_order=strike_order,
        kernel=kernel,
        from_step=from_step,
        retreat=(retreat[0], retreat[1]),
    )


@cache
def _package_engines() -> Mapping[str, EngineType]:
    """The siege engines' ratings (fixed: no scenario changes them), read once."""
    source = Source("package")
    return {
        n: EngineType(n, _ratings(Node(d, f"engines.{n}", source)))
        for n, d in standard_engines().items()
    }


@cache
def _package_noble() -> Ratings:
    """A noble's ratings (fixed), read once."""
    return _ratings(Node(_table()["noble"], "noble", Source("package")))


#: Sides validated so far: their data (as JSON), role, terrain and fighter types'
#: names -> the side. A study builds thousands of battles from a few hundred sides (the
#: cells of ``prices``: each count of men of each type, in each role, met by every
#: other), and validating the same side again was most of a cell's building.
_SIDES: dict[tuple[str, str, str, tuple[str, ...]], Side] = {}
#: Sides kept at most (a few hundred bytes each); the memo starts again when full.
MAX_KNOWN_SIDES = 20_000


def _known_side(
    node: Node,
    fighters: Mapping[str, FighterType],
    engines: Mapping[str, EngineType],
    capacity: Mapping[str, int],
    terrain: str,
) -> Side:
    """:func:`_side`, of a side validated before when its data were. A side reads only
    its own data, its role, the terrain and the names of the fighter types (engines and
    structures are the package's), so these are the key; a side that fails is not
    kept (it raises every time, naming its scenario)."""
    try:
        data = json.dumps(node.data, separators=(",", ":"))
    except (TypeError, ValueError):  # not plain data (a date): validated every time
        return _side(node, fighters, engines, capacity, terrain)
    key = (data, node.path, terrain, tuple(fighters))
    side = _SIDES.get(key)
    if side is None:
        side = _side(node, fighters, engines, capacity, terrain)
        if len(_SIDES) >= MAX_KNOWN_SIDES:
            _SIDES.clear()
        _SIDES[key] = side
    return side


def _side(
    node: Node,
    fighters: Mapping[str, FighterType],
    engines: Mapping[str, EngineType],
    capacity: Mapping[str, int],
    terrain: str,
    structure_in_front: bool = False,
) -> Side:
    """A side's units, rows, structure and engines. ``structure_in_front``: a standing
    structure holds the front row (Age of Gods' engine reading), so a side may stand
    wholly in rear rows behind it."""
    # Any side's keys with its stop rule (read by validate): a ruleset reading its sides
    # here has checked them against its own table first (Age of Gods').
    node.only(keys.fighting_side(node.path))
    if not node.has("units") or not node.table()["units"]:
        raise node.fail(
            "an empty side: expected at least one [[units]] entry (a noble and his men)", "units"
        )
    # A unit reads only its table and the fighter types: one the combinations of a
    # scenario's unknowns share is read once for them all (input.reader.read_once).
    units = tuple(
        read_once("olympia unit", u.data, fighters, partial(_unit, u, fighters))
        for u in node.child("units").elements()
    )

    rows = sorted({u.behind for u in units} | {m.behind for u in units for m in u.men if m.count})
    if structure_in_front and node.has("structure"):
        rows = sorted(set(rows) | {0})
    for expected, row in enumerate(rows):
        if row != expected:
            missing = "the front row (behind = 0)" if expected == 0 else f"row {expected}"
            raise node.fail(
                f"rear row {row} has nothing in front of it: {missing} is empty", "units"
            )

    structure = None
    if node.has("structure"):
        st = node.child("structure")
        st.only(keys.STRUCTURE)
        structure = Structure(
            kind=st.read(replace(keys.STRUCTURE["kind"], choices=tuple(capacity))),
            defense=st.read(keys.STRUCTURE["defense"]),
            damage=st.read(keys.STRUCTURE["damage"]),
        )

    engine_list: list[tuple[str, int]] = []
    if node.has("siege_engines"):
        eng = node.child("siege_engines")
        for name, _ in eng.items():
            if name not in engines:
                raise eng.fail(
                    f"unknown siege engine '{name}'" + did_you_mean(name, engines), name, name
                )
            count = eng.read(keys.ENGINE_COUNT, name)
            if count and terrain == "ship":
                raise eng.fail(
                    'siege engines are not used in combat at sea (terrain = "ship")', name, name
                )
            if count:
                engine_list.append((name, count))
    return Side(
        units=units,
        break_point=node.read(keys.side(node.path)["break_point"]),
        structure=structure,
        engines=tuple(engine_list),
    )


def _unit(node: Node, fighters: Mapping[str, FighterType]) -> Unit:
    node.only(keys.UNIT)
    behind = node.read(keys.BEHIND)
    noble = Noble()
    if node.has("noble"):
        nb = node.child("noble")
        nb.only(keys.NOBLE)
        bonus = {k: nb.read(keys.NOBLE[k]) for k in ("attack", "defense", "missile")}
        if nb.has("items"):
            for item in nb.child("items").elements():
                item.only(keys.ITEM)
                item.read(keys.ITEM["name"])
                for k in bonus:  # only the best item per category is wielded
                    bonus[k] = max(bonus[k], item.read(keys.ITEM[k]))
        noble = Noble(
            nb.read(keys.NOBLE["health"]),
            bonus["attack"],
            bonus["defense"],
            bonus["missile"],
        )
    men: list[Men] = []
    if node.has("men"):
        raw = node.child("men")
        entries: list[tuple[str, int, int, Node]] = []
        if isinstance(raw.data, list):
            for m in raw.elements():
                m.only(keys.MEN_ENTRY)
                entries.append(
                    (
                        m.read(keys.MEN_ENTRY["type"]),
                        m.read(keys.MEN_ENTRY["count"]),
                        m.read(replace(keys.MEN_ENTRY["behind"], default=behind)),
                        m,
                    )
                )
        else:
            for name, _ in raw.items():
                entries.append((name, raw.read(keys.MEN_COUNT, name), behind, raw))
        for name, count, row, where in entries:
            if name not in fighters:
                raise where.fail(
                    f"unknown unit type '{name}'" + did_you_mean(name, fighters),
                    name if where is raw else "type",
                    name,
                )
            men.append(Men(name, count, row))
    return Unit(noble=noble, behind=behind, men=tuple(men))
