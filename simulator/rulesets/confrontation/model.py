"""Confrontation scenarios as validated, typed objects (docs/confrontation.md).

Stacks of up to three units stand on hex spaces (axial ``q, r``) for two sides; a
script (or the simple policy) says who uses which ability on which space each turn.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache, partial
from importlib import resources
from typing import Any

from ...errors import Source, did_you_mean
from ...input.fields import decimal_of
from ...input.reader import Node, read_once
from ..stop_rules import NEVER, StopRule, read_stop_rule
from . import keys
from .keys import ABILITIES, MAX_STACK, POLICIES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SIDES = ("attacker", "defender")
#: The values a unit may set for itself (a one-line army's ``type(key=value)`` options);
#: a type's cost is the type's alone.
UNIT_VALUE_KEYS = tuple(f.name for f in keys.UNIT_VALUES)
UNTYPED = "unit"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def strength(arms: float, resolve: float, a: float, b: float, advantages: int) -> Fraction:
    """((arms x a) + (resolve x b)) x (1 + advantages / 4), never below 0, computed
    exactly on the decimals as written: ``arms = 1, a = 0.1, resolve = 3.5, b = 1.4`` is
    5, not the 4.999999999999999 of binary floating point (the kernel agrees: it works
    in whole hundredths, see ``hundredths``)."""
    arms_, resolve_, a_, b_ = (Fraction(decimal_of(x)) for x in (arms, resolve, a, b))
    return max(Fraction(0), (arms_ * a_ + resolve_ * b_) * (1 + Fraction(advantages, 4)))


def dice_faces(attacker: Fraction | float, defender: Fraction | float) -> int:
    """N of the 2dN damage roll: the strength difference rounded down, at least 1."""
    return max(1, math.floor(attacker - defender))


def hundredths(value: float) -> int:
    """``value`` (validated to two decimals at most) as a whole number of hundredths."""
    return int(decimal_of(value) * 100)


@dataclass(frozen=True)
class Unit:
    name: str
    type: str
    arms: float
    resolve: float
    integrity: int
    a: float = 1.0
    b: float = 0.5
    advantages: int = 0
    reach: bool = False
    aerial: bool = False
    speed: int = 0
    abilities: tuple[str, ...] = ABILITIES


@dataclass(frozen=True)
class Stack:
    name: str
    side: int
    q: int
    r: int
    units: tuple[Unit, ...]
    #: Of the space (terrain): added to every unit's own advantages.
    advantages: int = 0

    def distance(self, other: Stack) -> int:
        return hex_distance(self.q, self.r, other.q, other.r)


def hex_distance(q1: int, r1: int, q2: int, r2: int) -> int:
    dq, dr = q1 - q2, r1 - r2
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


@dataclass(frozen=True)
class Action:
    """One use of an ability. ``unit`` None: every unit of the stack, in stack order;
    ``ability`` None: the unit's best (simple policy); ``target`` None: the nearest
    enemy stack."""

    stack: int
    unit: int | None = None
    ability: str | None = None
    target: int | None = None


@dataclass(frozen=True)
class Battle:
    #: The attacker's stacks first, then the defender's, each in the order given.
    stacks: tuple[Stack, ...]
    #: Scripted turns (each an ordered list of actions); empty under the simple policy.
    script: tuple[tuple[Action, ...], ...] = ()
    turns: int = 10
    nearby: int = 1
    min_damage_rule: str = "2dN"
    policy: str = "simple"
    after_script: str = "repeat_last"
    order: str = "sides"
    #: Each side's stop rule (attacker, defender).
    retreat: tuple[StopRule, StopRule] = (NEVER, NEVER)
    #: Turns already fought: the battle goes on from turn ``from_step + 1``.
    from_step: int = 0

    def units(self) -> list[tuple[Stack, Unit]]:
        return [(stack, unit) for stack in self.stacks for unit in stack.units]

    def turn_actions(self, turn: int) -> tuple[Action, ...] | None:
        """The script entry played on ``turn`` (1-based); None: no actions that turn."""
        if self.policy == "simple":
            return self.simple_turn()
        entry = self.script_entry(turn)
        return None if entry is None else self.script[entry]

    def script_entry(self, turn: int) -> int | None:
        """Index of the script entry played on ``turn`` (1-based), after ``after_script``."""
        n = len(self.script)
        if turn <= n:
            return turn - 1
        if self.after_script == "repeat_last":
            return n - 1
        if self.after_script == "cycle":
            return (turn - 1) % n
        return None

    def simple_turn(self) -> tuple[Action, ...]:
        """Every unit once, best ability on the nearest enemy stack: the attacker's
        units then the defender's (``sides``), or one of each in turn (``alternate``)."""
        per_side: list[list[Action]] = [[], []]
        for s, stack in enumerate(self.stacks):
            for u in range(len(stack.units)):
                per_side[stack.side].append(Action(s, u))
        if self.order == "sides":
            return (*per_side[0], *per_side[1])
        merged: list[Action] = []
        for i in range(max(len(per_side[0]), len(per_side[1]))):
            merged.extend(side[i] for side in per_side if i < len(side))
        return tuple(merged)


def unit_column(stack: Stack, unit: Unit) -> str:
    """``<side>.<stack>.<unit>``: how outcome columns name one unit."""
    return f"{SIDES[stack.side]}.{stack.name}.{unit.name}"


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("units.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def standard_types() -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in _table().items()}


def normalise_name(name: str) -> str:
    return "_".join(name.strip().lower().replace("-", " ").split())


def _types(custom: Node) -> dict[str, tuple[dict[str, Any], str]]:
    """Unit templates: the package's, with the scenario's ``[units.*]`` over them.

    Each maps to (fields, path for errors about them)."""
    merged = {name: (fields, f"(package) {name}") for name, fields in standard_types().items()}
    if custom.data is not None:
        for name, sub in custom.items():
            sub.check(keys.TYPE)
            base = merged.get(name, ({}, ""))[0]
            merged[name] = ({**base, **dict(sub.table())}, sub.path)
    return merged


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    battle = top.child("battle", {})
    battle.only(keys.BATTLE)
    custom = top.child("units")
    types = read_once("confrontation types", custom.data, None, partial(_types, custom))

    stacks: list[Stack] = []
    retreat: list[StopRule] = []
    for s, side_name in enumerate(SIDES):
        if not top.has(side_name):
            raise top.fail(
                f"is required: the {side_name}'s stacks ([[{side_name}.stacks]])", side_name
            )
        side = top.child(side_name)
        side.only(keys.side(side_name))
        if not side.has("stacks") or not side.table()["stacks"]:
            raise side.fail(
                "no stacks: expected at least one [[" + side_name + ".stacks]]", "stacks"
            )
        for j, node in enumerate(side.child("stacks").elements()):
            stacks.append(_stack(node, s, f"{side_name[0]}{j + 1}", types))
        fielded = [u.type for stack in stacks if stack.side == s for u in stack.units]
        retreat.append(read_stop_rule(side, list(dict.fromkeys(fielded))))
    _check_places(stacks, top)
    turns = battle.read(keys.BATTLE["turns"])
    from_step = battle.read(keys.BATTLE["from_step"])
    if from_step >= turns:
        raise battle.fail(
            f"{from_step} turns already fought, but the battle lasts {turns} turns: "
            f"expected 0 to {turns - 1}",
            "from_step",
            from_step,
        )

    has_script = top.has("script")
    policy = battle.choice("policy", POLICIES, "script" if has_script else "simple")
    script: tuple[tuple[Action, ...], ...] = ()
    if policy == "script":
        if not has_script:
            raise battle.fail(
                'is "script" but the scenario has no [[script]] turns', "policy", "script"
            )
        script = _script(top.child("script"), stacks)
    elif has_script:
        raise battle.fail(
            'is "simple" (every unit acts by itself): remove [[script]] or set policy = "script"',
            "policy",
            "simple",
        )
    return Battle(
        stacks=tuple(stacks),
        script=script,
        turns=turns,
        nearby=battle.read(keys.BATTLE["nearby"]),
        min_damage_rule=battle.read(keys.BATTLE["min_damage_rule"]),
        policy=policy,
        after_script=battle.read(keys.BATTLE["after_script"]),
        order=battle.read(keys.BATTLE["order"]),
        retreat=(retreat[0], retreat[1]),
        from_step=from_step,
    )


def _name(node: Node, key: str, default: str) -> str:
    name = node.text(key, default)
    if not _NAME.match(name):
        raise node.fail(
            f"'{name}' is not a name: use letters, digits, '_' and '-' (no dots "
            "or spaces), starting with a letter",
            key,
            name,
        )
    return name


def _stack(
    node: Node, side: int, default_name: str, types: Mapping[str, tuple[dict[str, Any], str]]
) -> Stack:
    node.only(keys.STACK)
    name = _name(node, "name", default_name)
    if not node.has("units"):
        raise node.fail("no units: a stack holds one to three units", "units")
    raw_units = node.child("units")
    # The stack's units read only their list and the unit types: a list the combinations
    # of a scenario's unknowns share (one that changes only the stack's advantages or
    # place) is read, and its units named, once for them all.
    named = read_once(
        "confrontation units", raw_units.data, types, partial(_units, raw_units, name, types)
    )
    q, r = node.read(keys.STACK["at"])
    return Stack(
        name=name,
        side=side,
        q=q,
        r=r,
        units=named,
        advantages=node.read(keys.STACK["advantages"]),
    )


def _units(
    raw_units: Node, stack: str, types: Mapping[str, tuple[dict[str, Any], str]]
) -> tuple[Unit, ...]:
    """The units of stack ``stack``, named."""
    listed = list(raw_units.elements())
    if not listed:
        raise raw_units.fail("an empty stack: a stack holds one to three units")
    if len(listed) > MAX_STACK:
        raise raw_units.fail(
            f"{len(listed)} units in one stack: a stack holds at most "
            f"{MAX_STACK} units (make another stack)"
        )
    # A unit reads only its table and the unit types: a unit the combinations of a
    # scenario's unknowns share is read once for them all.
    units = [
        read_once("confrontation unit", u.data, types, partial(_unit, u, types)) for u in listed
    ]
    # Unnamed units are called after their type, numbered where a type repeats.
    # A unit's name labels its result columns (destroyed.<side>.<stack>.<unit>): the same
    # rule as a stack's name.
    explicit = [_name(u, "name", "") if u.has("name") else None for u in listed]
    base = [e if e is not None else unit.type for e, unit in zip(explicit, units, strict=True)]
    named: list[Unit] = []
    for i, unit in enumerate(units):
        label = base[i]
        if explicit[i] is None and base.count(label) > 1:
            label = f"{label}{base[: i + 1].count(label)}"
        if any(label == other.name for other in named):
            raise listed[i].fail(f"two units named '{label}' in stack '{stack}'", "name", label)
        named.append(replace(unit, name=label))
    return tuple(named)


def _unit(node: Node, types: Mapping[str, tuple[dict[str, Any], str]]) -> Unit:
    node.only(keys.UNIT)
    fields: dict[str, Any] = {}
    type_name = UNTYPED
    if node.has("type"):
        type_name = normalise_name(node.text("type"))
        if type_name not in types:
            raise node.fail(
                f"unknown unit type '{node.table()['type']}'" + did_you_mean(type_name, types),
                "type",
                node.table()["type"],
            )
        fields, _ = types[type_name]
    own = {k: v for k, v in node.table().items() if k not in ("type", "name")}
    merged = Node({**fields, **own}, node.path, node.source)
    for key, what in (
        ("integrity", "hit points, a whole number >= 1"),
        ("arms", "a number >= 0"),
        ("resolve", "a multiple of 0.5"),
    ):
        if not merged.has(key):
            via = f" (type '{type_name}' does not give it)" if type_name != UNTYPED else ""
            raise node.fail(f"a unit with no {key}{via}: expected {key} = {what}", key)
    abilities = merged.read(keys.TYPE["abilities"]) if merged.has("abilities") else ABILITIES
    if not abilities:
        raise merged.fail(
            "an empty list: a unit needs at least one of " + ", ".join(ABILITIES), "abilities"
        )
    return Unit(
        name="",
        type=type_name,
        arms=merged.read(keys.TYPE["arms"]),
        resolve=merged.read(keys.TYPE["resolve"]),
        integrity=merged.read(keys.TYPE["integrity"]),
        a=merged.read(keys.TYPE["a"]),
        b=merged.read(keys.TYPE["b"]),
        advantages=merged.read(keys.TYPE["advantages"]),
        reach=merged.read(keys.TYPE["reach"]),
        aerial=merged.read(keys.TYPE["aerial"]),
        speed=merged.read(keys.TYPE["speed"]),
        abilities=tuple(a for a in ABILITIES if a in abilities),
    )


def _check_places(stacks: list[Stack], top: Node) -> None:
    seen: dict[tuple[int, int], Stack] = {}
    names: dict[str, Stack] = {}
    counts = [0, 0]
    for stack in stacks:
        counts[stack.side] += 1
        path = f"{SIDES[stack.side]}.stacks[{counts[stack.side] - 1}]"
        if stack.name in names:
            raise top.fail(
                f"two stacks named '{stack.name}': stack names must differ (scripts use them)",
                f"{path}.name",
                stack.name,
            )
        names[stack.name] = stack
        other = seen.get((stack.q, stack.r))
        if other is not None:
            raise top.fail(
                f"space [{stack.q}, {stack.r}] already holds stack '{other.name}': one "
                "stack per space (up to three units share a space as one stack)",
                f"{path}.at",
            )
        seen[(stack.q, stack.r)] = stack


def _script(node: Node, stacks: list[Stack]) -> tuple[tuple[Action, ...], ...]:
    by_name = {s.name: i for i, s in enumerate(stacks)}
    at = {(s.q, s.r): i for i, s in enumerate(stacks)}
    turns = list(node.elements())
    if not turns:
        raise node.fail("an empty script: expected [[script]] tables, one per turn")
    script = []
    for turn in turns:
        turn.only(keys.TURN)
        actions: list[Action] = []
        if turn.has("actions"):
            for action in turn.child("actions").elements():
                actions.append(_action(action, stacks, by_name, at))
        script.append(tuple(actions))
    return tuple(script)


def _action(
    node: Node, stacks: list[Stack], by_name: Mapping[str, int], at: Mapping[tuple[int, int], int]
) -> Action:
    node.only(keys.ACTION)
    by = node.read(keys.ACTION["by"])
    stack_name, _, unit_name = by.partition(".")
    if stack_name not in by_name:
        raise node.fail(
            f"unknown stack '{stack_name}'" + did_you_mean(stack_name, by_name), "by", by
        )
    s = by_name[stack_name]
    stack = stacks[s]
    unit: int | None = None
    if unit_name:
        names = [u.name for u in stack.units]
        if unit_name not in names:
            raise node.fail(
                f"stack '{stack_name}' has no unit '{unit_name}'" + did_you_mean(unit_name, names),
                "by",
                by,
            )
        unit = names.index(unit_name)
    ability = None
    if node.has("ability"):
        ability = node.read(keys.ACTION["ability"])
        acting = stack.units if unit is None else (stack.units[unit],)
        for u in acting:
            if ability not in u.abilities:
                raise node.fail(
                    f"unit '{stack_name}.{u.name}' cannot {ability}: its abilities "
                    f"are {', '.join(u.abilities)}",
                    "ability",
                    ability,
                )
    target = None
    if node.has("target"):
        target = _target(node, stacks, by_name, at)
        if stacks[target].side == stack.side:
            raise node.fail(
                f"stack '{stacks[target].name}' is on the same side as '{stack_name}': "
                "abilities target a space holding enemy units",
                "target",
            )
    return Action(stack=s, unit=unit, ability=ability, target=target)


def _target(
    node: Node, stacks: list[Stack], by_name: Mapping[str, int], at: Mapping[tuple[int, int], int]
) -> int:
    value = node.table()["target"]
    if isinstance(value, str):
        if value not in by_name:
            raise node.fail(
                f"unknown stack '{value}'" + did_you_mean(value, by_name), "target", value
            )
        return by_name[value]
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        space = (value[0], value[1])
        if space not in at:
            raise node.fail(
                f"no stack stands on space {list(space)}: expected the space of an enemy stack",
                "target",
            )
        return at[space]
    raise node.fail(f"expected a stack name or a space [q, r], got {value!r}", "target")
