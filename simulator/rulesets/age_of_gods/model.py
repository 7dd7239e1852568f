"""Age of Gods armies as validated, typed objects (docs/age_of_gods.md).

Armies, nobles, items, rows, structures, break points and weather are Olympia's, so
their validation is Olympia's (``olympia.model``); this module adds the Age of Gods
unit table, its per-type rules (mounted, pikes, fleeing, special attacks, beasts), its
terrains, the control-limit option, what the released engine's battles depend on
(nobles' own ratings, rank, experience; garrisons and monster stacks; allies joining
in a later round) and which reading, the text's or the engine's, each point follows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from functools import cache, partial
from importlib import resources
from typing import Any

from ...errors import Source, did_you_mean
from ...input.reader import Node, read_once
from ..olympia import keys as olympia_keys
from ..olympia import model as olympia
from ..stop_rules import NEVER, StopRule, read_stop_rule
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
#: The released engine's control limits (combat.c, calc_man_limit): a garrison's men,
#: and a monster stack's (no limit).
GARRISON_CONTROL_LIMIT = 20
UNLIMITED = 1 << 40
#: Tactics: x (1 + 0.02 per week of experience), at most x2, in percent.
TACTICS_PERCENT_PER_WEEK = 2
TACTICS_MAX_PERCENT = 200
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
    animal: bool = False


@dataclass(frozen=True)
class Leader:
    """What a unit's noble is past Olympia's health and bonuses: a noble (his own
    ratings, rank, experience), a garrison or the beast leading a monster stack."""

    kind: str = "noble"  # noble, garrison, beast
    beast: str | None = None
    ratings: Ratings | None = None  # None: the package noble's
    rank: str = "none"
    control_battle: int = 0
    use_beasts: int = 0
    attack_tactics: int = 0
    defense_tactics: int = 0

    @property
    def attack_percent(self) -> int:
        return tactics_percent(self.attack_tactics)

    @property
    def defense_percent(self) -> int:
        return tactics_percent(self.defense_tactics)


def tactics_percent(weeks: int) -> int:
    return min(100 + TACTICS_PERCENT_PER_WEEK * weeks, TACTICS_MAX_PERCENT)


@dataclass(frozen=True)
class Allies:
    """Units joining a side at the start of round ``round``."""

    round: int
    units: tuple[olympia.Unit, ...]
    leaders: tuple[Leader, ...]


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
    #: Per side, per unit (in stack order): what each unit's noble is.
    leaders: tuple[tuple[Leader, ...], tuple[Leader, ...]] = ((), ())
    allies: tuple[Allies | None, Allies | None] = (None, None)
    rules: str = "text"
    terrain_rules: str = "text"
    control_rules: str = "text"
    structure_rules: str = "text"
    prisoner_rules: str = "text"
    sea_rules: str = "text"
    #: Each side's stop rule (``[attacker.retreat]``): when it withdraws.
    retreats: tuple[StopRule, StopRule] = (NEVER, NEVER)
    #: Rounds already fought (``[battle] from_step``): the armies are as they stand now.
    from_step: int = 0

    @property
    def sides(self) -> tuple[olympia.Side, olympia.Side]:
        return (self.attacker, self.defender)

    @property
    def defender_quarters(self) -> int:
        """The defender's terrain multiplier, in quarters (on attack and defense under
        the text's reading; on defense only, and none inside a structure, under the
        engine's)."""
        if self.terrain_rules == "engine" and self.defender.structure is not None:
            return 4
        return int(_table()["terrain_quarters"][self.terrain])

    def fighter_ratings(self, fighter: FighterType) -> Ratings:
        """A fighter's ratings in this battle's terrain and weather. At sea (``ship``)
        under the engine's sea rules a type with swamp ratings and no ship ratings
        (knights, paladins, cavaliers) fights with its swamp ratings."""
        if (
            self.sea_rules == "engine"
            and self.terrain == "ship"
            and fighter.ship is None
            and fighter.swamp is not None
        ):
            return olympia.weathered(fighter.swamp, self.weather, fighter.rain_grounded)
        return fighter.ratings(self.terrain, self.weather)

    def units_of(self, side: int) -> list[tuple[olympia.Unit, Leader, int]]:
        """Side ``side``'s units with their leaders and the round they arrive in (0:
        from the start), in list order: its own units, then its allies."""
        found = [
            (u, ld, 0) for u, ld in zip(self.sides[side].units, self.leaders[side], strict=True)
        ]
        allies = self.allies[side]
        if allies is not None:
            found += [
                (u, ld, allies.round) for u, ld in zip(allies.units, allies.leaders, strict=True)
            ]
        return found


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
        animal=node.read(keys.FIGHTER["animal"]),
    )


def fighter_types(custom: Node, source: Source) -> dict[str, FighterType]:
    """The package's table, with each scenario ``[units.NAME]`` table merged over its
    entry (or defining a new type)."""
    tables: dict[str, tuple[dict[str, Any], str]] = {}
    for name, sub in custom.items() if custom.data is not None else ():
        base = standard_fighters().get(name, {})
        tables[name] = ({**base, **sub.table()}, sub.path)
    return {
        name: _fighter(name, Node(*tables[name], source))
        if name in tables
        else _package_fighter(name)
        for name in {**dict.fromkeys(_table()["fighters"]), **tables}
    }


@cache
def _package_fighter(name: str) -> FighterType:
    """A fighter type of the package's table, read once (as olympia's): each combination
    of a scenario's unknowns, and each scenario a study builds, is validated anew."""
    data = standard_fighters()[name]
    return _fighter(name, Node(data, f"(package) fighters.{name}", Source("package")))


def noble_in_battle(battle: Battle, noble: olympia.Noble, leader: Leader | None = None) -> Ratings:
    """A unit's leader's ratings with his items' bonuses, in this battle's weather: a
    noble's own ratings (default: the package noble's), a garrison's 0/0/0, or the
    ratings of the beast leading a monster stack."""
    leader = leader or Leader()
    if leader.kind == "garrison":
        base = Ratings(0, 0, 0)
    elif leader.kind == "beast":
        fighter = battle.fighters[leader.beast or ""]
        base = battle.fighter_ratings(fighter)
    else:
        base = leader.ratings or battle.noble
    return olympia.weathered(
        Ratings(
            base.attack + noble.attack_bonus,
            base.defense + noble.defense_bonus,
            base.missile + noble.missile_bonus,
        ),
        battle.weather if leader.kind == "noble" else (),
        False,
    )


#: A noble's own keys past Olympia's, read here (Olympia's reader sees the rest).
NOBLE_EXTRA_KEYS = tuple(f.name for f in keys.NOBLE_EXTRA)


def _olympia_view(side: Node) -> Node:
    """The side as Olympia's reader takes it: without the nobles' extra keys, the
    allies and the stop rule (read here, with their own paths for errors)."""
    data = dict(side.table())
    data.pop("allies", None)
    data.pop("retreat", None)
    if isinstance(data.get("units"), list):
        for i, unit in enumerate(data["units"]):
            # Unknown noble keys are named against this ruleset's keys, not Olympia's.
            if isinstance(unit, Mapping) and isinstance(unit.get("noble"), Mapping):
                Node(unit["noble"], f"{side.path}.units[{i}].noble", side.source).only(keys.NOBLE)
        data["units"] = [_without_extras(u) for u in data["units"]]
    return Node(data, side.path, side.source)


def _without_extras(unit: Any) -> Any:
    if isinstance(unit, Mapping) and isinstance(unit.get("noble"), Mapping):
        noble = {k: v for k, v in unit["noble"].items() if k not in NOBLE_EXTRA_KEYS}
        return {**unit, "noble": noble}
    return unit


def _leader(unit: Node, fighters: Mapping[str, FighterType], first: bool) -> Leader:
    if not unit.has("noble"):
        return Leader()
    nb = unit.child("noble")
    nb.only(keys.NOBLE)
    garrison = nb.read(keys.NOBLE["garrison"])
    beast = nb.text("beast") if nb.has("beast") else None
    given = [k for k in NOBLE_EXTRA_KEYS if nb.has(k)]
    if garrison or beast is not None:
        what = "garrison" if garrison else "beast"
        others = [k for k in given if k not in ("garrison", "beast")]
        if garrison and beast is not None:
            raise nb.fail("a unit's leader is a garrison or a beast, not both", "beast", beast)
        if others:
            raise nb.fail(
                f"a {what} has no {others[0]}: that is a noble's key (remove it, or "
                f"remove `{what}`)",
                others[0],
            )
    if garrison and not first:
        raise nb.fail("a garrison leads its stack: it must be the first unit", "garrison", garrison)
    if beast is not None and beast not in fighters:
        raise nb.fail(
            f"unknown beast '{beast}': expected a fighter type" + did_you_mean(beast, fighters),
            "beast",
            beast,
        )
    ratings = None
    if nb.has("ratings"):
        rt = nb.child("ratings")
        table = keys.NOBLE["ratings"]
        rt.only(table)
        ratings = Ratings(
            *(
                rt.integer(k, 80 if k != "missile" else 0, lo=0, hi=table[k].hi)
                for k in ("attack", "defense", "missile")
            )
        )
    return Leader(
        kind="garrison" if garrison else ("beast" if beast is not None else "noble"),
        beast=beast,
        ratings=ratings,
        rank=nb.read(keys.NOBLE["rank"]),
        control_battle=nb.read(keys.NOBLE["control_battle"]),
        use_beasts=nb.read(keys.NOBLE["use_beasts"]),
        attack_tactics=nb.read(keys.NOBLE["attack_tactics"]),
        defense_tactics=nb.read(keys.NOBLE["defense_tactics"]),
    )


def _leaders(side: Node, fighters: Mapping[str, FighterType], allies: bool) -> tuple[Leader, ...]:
    return tuple(
        _leader(u, fighters, first=i == 0 and not allies)
        for i, u in enumerate(side.child("units").elements())
    )


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    battle = top.child("battle", {})
    battle.only(keys.BATTLE)
    terrain = battle.read(keys.BATTLE["terrain"])
    weather = battle.read(keys.BATTLE["weather"])
    rules = battle.read(keys.BATTLE["rules"])
    points = {
        name: battle.read(keys.BATTLE[name]) if battle.has(name) else rules for name in keys.POINTS
    }
    control_limits = (
        battle.read(keys.BATTLE["control_limits"])
        if battle.has("control_limits")
        else rules == "engine"
    )
    # Read once for the combinations of a scenario's unknowns that share the unit types
    # (input.reader.read_once), and so the same objects, which Olympia's reading of a
    # side's units (read once too) takes as their context.
    custom = top.child("units")
    fighters = read_once(
        "age_of_gods types", custom.data, None, partial(fighter_types, custom, source)
    )
    known = read_once("age_of_gods known types", fighters, None, partial(_KnownUnits, fighters))
    capacity = dict(_table()["structures"])
    sides = []
    leaders = []
    allies: list[Allies | None] = []
    retreats: list[StopRule] = []
    for side_name in SIDES:
        if not top.has(side_name):
            raise top.fail(
                f"is required: the {side_name}'s army (a table with [[{side_name}.units]])",
                side_name,
            )
        node = top.child(side_name)
        node.table()
        if node.has("siege_engines"):
            raise node.fail(
                "siege engines belong to the olympia ruleset; age_of_gods has none", "siege_engines"
            )
        node.only(keys.side(side_name))
        side = olympia._side(
            _olympia_view(node),
            known,
            {},
            capacity,
            terrain,
            structure_in_front=points["structure_rules"] == "engine",
        )
        side_leaders = _leaders(node, fighters, allies=False)
        if side_leaders[0].kind in ("garrison", "beast") and not node.has("break_point"):
            # The engine's garrisons and monster stacks fight to the last man.
            side = replace(side, break_point=0)
        joining = None
        if node.has("allies"):
            al = node.child("allies")
            al.only(keys.ALLIES)
            block = olympia._side(
                Node({"units": _olympia_view(al).table().get("units")}, al.path, source),
                known,
                {},
                capacity,
                terrain,
            )
            joining = Allies(
                al.read(keys.ALLIES["round"]), block.units, _leaders(al, fighters, True)
            )
        for where, units in (("", side.units), ("allies.", joining.units if joining else ())):
            for u, unit in enumerate(units):
                for men in unit.men:
                    if men.type not in fighters:
                        owner = known.foreign()[men.type]
                        raise node.fail(
                            f"'{men.type}' is a unit of the {owner} ruleset, not of "
                            f"{RULESET_NAME} (its units: `battle-odds units --ruleset "
                            f"{RULESET_NAME}`)",
                            f"{where}units[{u}].men",
                            men.type,
                        )
        fielded_types = {m.type for unit in side.units for m in unit.men if m.count > 0}
        if joining is not None:
            fielded_types |= {m.type for unit in joining.units for m in unit.men if m.count > 0}
        retreats.append(read_stop_rule(node, sorted(fielded_types)))
        sides.append(side)
        leaders.append(side_leaders)
        allies.append(joining)
    return Battle(
        attacker=sides[0],
        defender=sides[1],
        fighters=fighters,
        noble=noble_ratings(source),
        capacity=capacity,
        terrain=terrain,
        weather=weather,
        control_limits=control_limits,
        leaders=(leaders[0], leaders[1]),
        allies=(allies[0], allies[1]),
        rules=rules,
        **points,
        retreats=(retreats[0], retreats[1]),
        from_step=battle.read(keys.BATTLE["from_step"]),
    )
