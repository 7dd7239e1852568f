"""Skirmish fields as validated, typed objects (docs/skirmish.md, "Scenario format").

A scenario names the attacked tile, the tile of the attacking stack (a neighbour), the
stacks on the seven tiles of the field with their owners, the alliances between owners,
and optionally unit types of its own. Validation settles who fights on which side and
the participants' ids, so the compiler, the replay and the error messages agree.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from ...errors import BattleOddsError, Source, did_you_mean
from ...input.fields import Field, range_text
from ...input.reader import Node
from ..keys import DEFAULT_COST
from ..stop_rules import NEVER, StopRule, read_stop_rule
from . import keys
from .keys import DEFAULT_EXPECTED_VALUE, DEFAULT_TURN_LIMIT, MAX_STACK
from .keys import EXPECTED_VALUES as EXPECTED_VALUES  # re-exported for the inline syntax
from .keys import RULES as RULES  # re-exported for the inline syntax

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SIDES = ("attacker", "defender")
#: Direction of the attacked tile itself in the participant order (after neighbours 0..5).
CENTRE = 6

Point = tuple[int, int]


@dataclass(frozen=True)
class UnitType:
    name: str
    attack: int
    defence: int
    damage: int
    health: int
    abilities: tuple[str, ...]
    cost: float = DEFAULT_COST


@dataclass(frozen=True)
class Unit:
    type: str
    health: int
    #: Has used its healing already (a battle in progress).
    healed: bool = False


@dataclass(frozen=True)
class Stack:
    index: int  # position in the scenario's list of stacks
    tile: Point
    owner: str
    units: tuple[Unit, ...]


@dataclass(frozen=True)
class Participant:
    id: int
    side: int  # 0 attacker, 1 defender
    direction: int  # 0..5 a neighbour of the attacked tile, 6 the attacked tile
    stack: int  # Stack.index
    unit_number: int
    unit: UnitType
    health: int  # at the start of the battle
    healed: bool = False  # its healing used already (a battle in progress)


@dataclass(frozen=True)
class Battle:
    attacked: Point
    attacking: Point
    attacker_owner: str
    defender_owner: str
    alliances: tuple[frozenset[str], ...]
    stacks: tuple[Stack, ...]
    unit_types: Mapping[str, UnitType]
    expected_value: str
    participants: tuple[Participant, ...]
    #: Stacks on the field allied with both sides or neither (Stack.index).
    staying_out: tuple[int, ...]
    #: Turns after which an undecided battle ends as a draw.
    turn_limit: int = DEFAULT_TURN_LIMIT
    #: "text" (the rule text's reading) or "engine" (the released engine's code).
    rules: str = "text"
    #: Owners whose stacks fight on another side than the rule text would seat them
    #: (or at all): under the engine's rules every stack not the attacker's defends.
    reseated: tuple[str, ...] = ()
    #: Each side's stop rule (attacker, defender).
    retreat: tuple[StopRule, StopRule] = (NEVER, NEVER)
    #: Turns already fought: the battle goes on from turn ``from_step + 1``.
    from_step: int = 0


def neighbour(point: Point, direction: int) -> Point:
    """Hex neighbour in "odd-q" offset coordinates (odd columns shifted down).

    Directions go clockwise from north: 0 north, 1 north-east, 2 south-east, 3 south,
    4 south-west, 5 north-west; 6 is the point itself.
    """
    x, y = point
    up = 0 if x % 2 else -1  # the row offset of the upper diagonal neighbours
    return {
        0: (x, y - 1),
        1: (x + 1, y + up),
        2: (x + 1, y + up + 1),
        3: (x, y + 1),
        4: (x - 1, y + up + 1),
        5: (x - 1, y + up),
        CENTRE: (x, y),
    }[direction]


def field_tiles(attacked: Point) -> tuple[Point, ...]:
    """The seven tiles of the field in participant order: neighbours 0..5, then the centre."""
    return tuple(neighbour(attacked, d) for d in range(7))


def allied(a: str, b: str, alliances: tuple[frozenset[str], ...]) -> bool:
    return a == b or any(a in group and b in group for group in alliances)


def side_of(
    owner: str,
    attacker: str,
    defender: str,
    alliances: tuple[frozenset[str], ...],
    rules: str = "text",
) -> int | None:
    """0 attacking, 1 defending, None: allied with both sides or neither, stays out.

    Under the engine's rules sides go by owner alone, as its code sets them up: the
    attacking stack's owner attacks, every other owner on the field defends."""
    if rules == "engine":
        return 0 if owner == attacker else 1
    with_attacker = allied(owner, attacker, alliances)
    with_defender = allied(owner, defender, alliances)
    if with_attacker != with_defender:
        return 0 if with_attacker else 1
    return None


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("units.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def standard_unit_types() -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in _table()["units"].items()}


def normalise_name(name: str) -> str:
    return "_".join(name.strip().lower().replace("-", " ").split())


def _unit_type(name: str, node: Node) -> UnitType:
    node.only(keys.UNIT_TYPE)
    return UnitType(name, *(node.read(f) for f in keys.UNIT_TYPE.fields if isinstance(f, Field)))


def unit_types(custom: Node, source: Source) -> dict[str, UnitType]:
    """The package's table with the scenario's ``[unit_types.*]`` merged over it."""
    merged = standard_unit_types()
    if custom.data is not None:
        for name, sub in custom.items():
            sub.table()
            merged[name] = {**merged.get(name, {}), **dict(sub.data)}
    types = {}
    for name, data in merged.items():
        where = (
            f"unit_types.{name}"
            if custom.data and name in custom.data
            else f"(package) units.{name}"
        )
        types[name] = _unit_type(name, Node(data, where, source))
    return types


def _stack_error(
    node: Node, leaf: str, message: str, value: object = None, key: str | None = None
) -> BattleOddsError:
    """An error at ``leaf`` of a stack (or at ``key``, e.g. one of its units), pointing at
    that stack's own line: ``Source.line_of`` follows list indices."""
    return node.source.error(key or node.key(leaf), message, value)


def _show(point: Point) -> str:
    return f"[{point[0]}, {point[1]}]"


_ITEM = re.compile(
    r"^(?:(?P<count>\d+)\s+)?(?P<name>[A-Za-z][\w -]*?)\s*"
    r"(?:\(\s*health\s*=\s*(?P<health>-?\d+)\s*\))?$"
)


def parse_unit_item(text: str) -> tuple[int, str, int | None] | None:
    """``"2 swordsman"``, ``"priest(health=3)"`` -> (count, name, health); None if malformed."""
    match = _ITEM.match(text.strip())
    if not match:
        return None
    count = int(match["count"]) if match["count"] else 1
    health = int(match["health"]) if match["health"] is not None else None
    return count, normalise_name(match["name"]), health


def _units(node: Node, types: Mapping[str, UnitType]) -> tuple[Unit, ...]:
    if not node.has("units"):
        raise _stack_error(
            node,
            "units",
            'is required: a list of unit types, e.g. ["cavalry", "2 swordsman"]',
        )
    raw = node.child("units")
    units: list[Unit] = []
    for element in raw.elements():
        healed = False
        if isinstance(element.data, str):
            parsed = parse_unit_item(element.data)
            if parsed is None:
                raise _stack_error(
                    node,
                    "units",
                    f"cannot read '{element.data}': expected 'TYPE', 'N TYPE' or 'TYPE(health=H)'",
                    element.data,
                    key=element.path,
                )
            count, name, health = parsed
            counted = keys.UNIT_ENTRY["count"]
            if not counted.lo <= count <= counted.hi:
                # The same range as a {type, count} table: "0 giant" is no unit, not none.
                raise _stack_error(
                    node,
                    "units",
                    f"count {count} in '{element.data}' is out of range: expected "
                    f"{range_text(counted.lo, counted.hi)} "
                    f"(a stack holds at most {MAX_STACK} units)",
                    element.data,
                    key=element.path,
                )
        else:
            element.only(keys.UNIT_ENTRY)
            name = element.read(keys.UNIT_ENTRY["type"])
            count = element.read(keys.UNIT_ENTRY["count"])
            health = element.read(keys.UNIT_ENTRY["health"]) if element.has("health") else None
            healed = element.read(keys.UNIT_ENTRY["healed"])
        if name not in types:
            raise _stack_error(
                node,
                "units",
                f"unknown unit type '{name}'" + did_you_mean(name, types),
                name,
                key=element.path,
            )
        kind = types[name]
        if health is not None and not 1 <= health <= kind.health:
            raise _stack_error(
                node,
                "units",
                f"health {health} is out of range: expected 1..{kind.health} (a {name}'s health)",
                health,
                key=element.path,
            )
        if healed and "healing" not in kind.abilities:
            raise _stack_error(
                node,
                "units",
                f"healed = true, but a {name} has no healing to have used",
                True,
                key=f"{element.path}.healed",
            )
        units.extend(
            Unit(name, kind.health if health is None else health, healed) for _ in range(count)
        )
    if not units:
        raise _stack_error(node, "units", "an empty stack: expected 1 to 8 units")
    if len(units) > MAX_STACK:
        raise _stack_error(
            node,
            "units",
            f"a stack holds at most {MAX_STACK} units, this one has {len(units)}",
        )
    return tuple(units)


def _stack(
    node: Node, index: int, tiles: tuple[Point, ...], types: Mapping[str, UnitType]
) -> Stack:
    """The stack of ``node`` (one of ``[[stacks]]``, or of a side's ``stacks``)."""
    node.only(keys.STACK)
    tile = node.read(keys.STACK["tile"])
    if tile not in tiles:
        raise _stack_error(
            node,
            "tile",
            f"{_show(tile)} is not the attacked tile "
            f"{_show(tiles[CENTRE])} or one of its neighbours ("
            + ", ".join(_show(t) for t in tiles[:CENTRE])
            + ")",
        )
    if not node.has("owner"):
        raise _stack_error(node, "owner", "is required: the stack's owner (a name)")
    return Stack(index, tile, node.text("owner"), _units(node, types))


def _with_sides_stacks(
    top: Node,
    field: list[Stack],
    tiles: tuple[Point, ...],
    types: Mapping[str, UnitType],
    seating: tuple[str, str, tuple[frozenset[str], ...], str],
) -> list[Stack]:
    """The stacks that stand on the field: ``[[stacks]]``, where a side's table gives
    its own ``stacks`` (a wave, or the side as a battle left it: docs/unfolding.md,
    "Waves") without the field's stacks that would fight for that side, and after them
    the attacker's own stacks, then the defender's. Who attacks and who defends is the
    field's: a side's own stack must be seated on that side."""
    given = []
    for s, name in enumerate(SIDES):
        node = top.child(name, {})
        node.only(keys.side(name))
        if node.has("stacks"):
            given.append(s)
    stacks = [st for st in field if side_of(st.owner, *seating) not in given]
    for s in given:
        name = SIDES[s]
        elements = list(top.child(name).child("stacks").elements())
        if not elements:
            raise top.child(name).fail(
                f"no stacks: expected at least one [[{name}.stacks]] entry", "stacks"
            )
        for element in elements:
            stack = _stack(element, len(stacks), tiles, types)
            if side_of(stack.owner, *seating) != s:
                raise _stack_error(
                    element,
                    "owner",
                    f"'{stack.owner}' does not fight for the {name} on this field (its "
                    f"owner '{seating[s]}' or an ally does): a stack in {name}.stacks "
                    "fights for that side",
                    stack.owner,
                )
            stacks.append(stack)
    return [replace(stack, index=i) for i, stack in enumerate(stacks)]


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    if not top.has("battle"):
        raise top.fail(
            "is required: a [battle] table with 'attacked' and 'attacking' tiles", "battle"
        )
    battle = top.child("battle")
    battle.only(keys.BATTLE)
    attacked = battle.read(keys.BATTLE["attacked"])
    attacking = battle.read(keys.BATTLE["attacking"])
    tiles = field_tiles(attacked)
    if attacking not in tiles[:CENTRE]:
        raise battle.fail(
            f"{_show(attacking)} is not a neighbour of the attacked tile "
            f"{_show(attacked)}: expected one of " + ", ".join(_show(t) for t in tiles[:CENTRE]),
            "attacking",
        )
    rules = battle.read(keys.BATTLE["rules"])
    expected_value = (
        battle.read(keys.BATTLE["expected_value"])
        if battle.has("expected_value")
        else DEFAULT_EXPECTED_VALUE[rules]
    )
    turn_limit = battle.read(keys.BATTLE["turn_limit"])
    from_step = battle.read(keys.BATTLE["from_step"])
    if from_step >= turn_limit:
        raise battle.fail(
            f"{from_step} turns already fought, but the battle ends after turn_limit = "
            f"{turn_limit} turns: expected 0 to {turn_limit - 1}",
            "from_step",
            from_step,
        )
    types = unit_types(top.child("unit_types"), source)

    if not top.has("stacks") or not top.table()["stacks"]:
        raise top.fail(
            "is required: the stacks on the field ([[stacks]] with tile, owner, units)", "stacks"
        )
    stacks = [
        _stack(node, index, tiles, types)
        for index, node in enumerate(top.child("stacks").elements())
    ]

    owners = sorted({s.owner for s in stacks})
    on_attacking = [s for s in stacks if s.tile == attacking]
    if not on_attacking:
        raise battle.fail(f"no stack stands on the attacking tile {_show(attacking)}", "attacking")
    attacker_owner = on_attacking[0].owner
    if battle.has("tile_owner"):
        defender_owner = battle.text("tile_owner")
        owners = sorted({*owners, defender_owner})
    else:
        on_attacked = [s for s in stacks if s.tile == attacked]
        if not on_attacked:
            raise battle.fail(
                f"the attacked tile {_show(attacked)} has no stack: name its owner "
                'with tile_owner = "..."',
                "attacked",
            )
        defender_owner = on_attacked[0].owner

    alliances: list[frozenset[str]] = []
    if top.has("alliances"):
        for group in top.child("alliances").elements():
            names = group.data
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise group.fail(
                    "expected a list of owners that are allied with each other, "
                    'e.g. ["red", "green"]'
                )
            for name in names:
                if name not in owners:
                    raise group.fail(
                        f"unknown owner '{name}'" + did_you_mean(name, owners), value=name
                    )
            alliances.append(frozenset(names))
    alliance_groups = tuple(alliances)
    if allied(attacker_owner, defender_owner, alliance_groups):
        what = "is" if attacker_owner == defender_owner else "is allied with"
        raise battle.fail(
            f"the attacking stack's owner '{attacker_owner}' {what} the attacked "
            f"tile's owner '{defender_owner}': there is no battle",
            "attacking",
        )

    stacks = _with_sides_stacks(
        top, stacks, tiles, types, (attacker_owner, defender_owner, alliance_groups, rules)
    )
    participants: list[Participant] = []
    staying_out: list[int] = []
    reseated: list[str] = []
    for direction, tile in enumerate(tiles):
        for stack in stacks:
            if stack.tile != tile:
                continue
            side = side_of(stack.owner, attacker_owner, defender_owner, alliance_groups, rules)
            if side != side_of(stack.owner, attacker_owner, defender_owner, alliance_groups):
                reseated.append(stack.owner)
            if side is None:
                staying_out.append(stack.index)
                continue
            for number, unit in enumerate(stack.units):
                participants.append(
                    Participant(
                        len(participants),
                        side,
                        direction,
                        stack.index,
                        number,
                        types[unit.type],
                        unit.health,
                        unit.healed,
                    )
                )
    if not any(p.side == 1 for p in participants):
        raise top.fail(
            f"no stack on the field fights for the attacked tile's owner "
            f"'{defender_owner}' (or its allies)",
            "stacks",
        )
    retreat = []
    for s, name in enumerate(SIDES):
        node = top.child(name, {})
        node.only(keys.side(name))
        fielded = dict.fromkeys(p.unit.name for p in participants if p.side == s)
        retreat.append(read_stop_rule(node, list(fielded)))
    return Battle(
        attacked=attacked,
        attacking=attacking,
        attacker_owner=attacker_owner,
        defender_owner=defender_owner,
        alliances=alliance_groups,
        stacks=tuple(stacks),
        unit_types=types,
        expected_value=expected_value,
        participants=tuple(participants),
        staying_out=tuple(staying_out),
        turn_limit=turn_limit,
        rules=rules,
        reseated=tuple(sorted(set(reseated))),
        retreat=(retreat[0], retreat[1]),
        from_step=from_step,
    )
