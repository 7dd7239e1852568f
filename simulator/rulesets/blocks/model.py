"""Blocks battles as validated, typed objects (docs/blocks.md)."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ...input.reader import Node
from ..keys import read_cost
from ..stop_rules import NEVER, StopRule, read_stop_rule
from . import keys
from .keys import PHASES_PER_TURN, POLICIES, RESERVE_ROUNDS, RULES, SWITCHES

if TYPE_CHECKING:
    import pandas as pd

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SIDES = ("attacker", "defender")
INITIATIVES = "ABC"
BATTLE_KEYS = tuple(keys.BATTLE)
POLICY_KEYS = tuple(keys.POLICY)

_RATING = re.compile(r"^([A-Za-z])(\d+)$")


@dataclass(frozen=True)
class Block:
    name: str
    steps: int
    max_steps: int
    initiative: str  # A, B or C
    firepower: int  # 1..6
    knights: bool = False
    harry: bool = False
    at: str = "field"  # field, castle or reserve
    arrives: int = 1  # the combat round the block is on the field from (2 or 3 for reserves)

    @property
    def rating(self) -> str:
        return f"{self.initiative}{self.firepower}"


@dataclass(frozen=True)
class Policies:
    withdraw: str = "none"
    storm: str = "never"
    sally: str = "never"
    charge: str = "never"
    retreat: str = "never"
    tie_break: str = "random"
    harry: str = "with_retreat"
    castle_withdraw: str = "never"
    storm_withdraw: str = "never"
    retreat_round: int = keys.DEFAULT_RETREAT_ROUND


@dataclass(frozen=True)
class Switches:
    """The reading of each point where the rule text and the released engine part
    (keys.SWITCHES): the text's by default."""

    lost_field: str = "fight_on"
    relief: str = "besieged_reserves"
    first_sally: str = "never"
    quiet_siege: str = "no_reserves"
    castle_marks: str = "kept"
    charge_sixes: str = "every_six"
    harry_fire: str = "charge"

    @classmethod
    def of(cls, rules: str) -> Switches:
        """Every point read as ``rules`` reads it."""
        return cls(**{key: choices[RULES.index(rules)] for key, choices in SWITCHES.items()})


@dataclass(frozen=True)
class Battle:
    attacker: tuple[Block, ...]
    defender: tuple[Block, ...]
    castle_limit: int = 0
    attrition: int = 3
    siege: bool = False
    turns: int = 1
    policies: Policies = Policies()
    rules: str = "text"
    switches: Switches = Switches()
    retreat_road: bool = True
    #: Each side's stop rule (``[attacker.retreat]``); ``gone`` names one of its blocks.
    retreats: tuple[StopRule, StopRule] = (NEVER, NEVER)
    #: Phases already fought (``[battle] from_step``): a battle in progress.
    from_step: int = 0
    #: The side in the attacker's role as the battle starts or goes on.
    attacker_role: str = "attacker"
    #: What the user should know about how this battle is read (shown by `validate`
    #: and under a run's results).
    notes: tuple[str, ...] = ()

    @property
    def sides(self) -> tuple[tuple[Block, ...], tuple[Block, ...]]:
        return (self.attacker, self.defender)


def parse_rating(text: str) -> tuple[str, int] | None:
    """``B2`` -> ``("B", 2)``; None when it is not an initiative A-C and a firepower 1-6."""
    match = _RATING.match(text.strip())
    if not match:
        return None
    letter, fire = match[1].upper(), int(match[2])
    if letter not in INITIATIVES or not 1 <= fire <= 6:
        return None
    return letter, fire


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only(keys.SCENARIO)
    battle = top.child("battle", {})
    battle.only(keys.BATTLE)
    castle_limit = battle.read(keys.BATTLE["castle_limit"])
    attrition = battle.read(keys.BATTLE["attrition"])
    siege = battle.read(keys.BATTLE["siege"])
    turns = battle.read(keys.BATTLE["turns"])
    rules = battle.read(keys.BATTLE["rules"])
    switches = replace(
        Switches.of(rules),
        **{key: battle.read(keys.BATTLE[key]) for key in SWITCHES if battle.has(key)},
    )
    retreat_road = battle.read(keys.BATTLE["retreat_road"])
    from_step = battle.read(keys.BATTLE["from_step"])
    attacker_role = battle.read(keys.BATTLE["attacker_role"])
    if attacker_role != "attacker" and from_step == 0:
        raise battle.fail(
            f"{attacker_role!r} holds the attacker's role only in a battle in progress "
            "(from_step 1 or more): a battle starts with the attacker in it",
            "attacker_role",
            attacker_role,
        )
    if from_step >= PHASES_PER_TURN * turns:
        raise battle.fail(
            f"{from_step} phases fought but the battle lasts {PHASES_PER_TURN * turns} "
            f"({turns} turn{'s' if turns > 1 else ''} of {PHASES_PER_TURN}): expected "
            f"0..{PHASES_PER_TURN * turns - 1}",
            "from_step",
            from_step,
        )

    policy = top.child("policy", {})
    policy.only(keys.POLICY)
    policies = Policies(
        **{key: policy.read(keys.POLICY[key]) for key in (*POLICIES, "retreat_round")}
    )

    sides = []
    retreats = []
    for side_name in SIDES:
        if not top.has(side_name):
            raise top.fail(
                f"is required: the {side_name}'s blocks (a table with [[{side_name}.blocks]])",
                side_name,
            )
        node = top.child(side_name)
        node.only(keys.side(side_name))
        if not node.has("blocks") or not node.table()["blocks"]:
            raise node.fail(
                "no blocks: expected at least one [[" + side_name + ".blocks]] entry", "blocks"
            )
        blocks = tuple(_block(b, i) for i, b in enumerate(node.child("blocks").elements(), 1))
        seen: set[str] = set()
        for i, block in enumerate(blocks):
            if block.name in seen:
                raise node.fail(
                    f"two blocks are named '{block.name}': block names must differ within a side",
                    f"blocks[{i}].name",
                    block.name,
                )
            seen.add(block.name)
        _check_reserves_to_come(node, blocks, from_step)
        retreats.append(read_stop_rule(node, [block.name for block in blocks]))
        in_castle = [b for b in blocks if b.at == "castle"]
        if in_castle and castle_limit == 0:
            raise node.fail(
                f"block '{in_castle[0].name}' is in the castle but there is no "
                "castle (battle.castle_limit = 0): set castle_limit to how many "
                "blocks it holds",
                "blocks",
                "castle",
            )
        if len(in_castle) > castle_limit:
            raise node.fail(
                f"{len(in_castle)} blocks in the castle but it holds {castle_limit} "
                "(battle.castle_limit)",
                "blocks",
                "castle",
            )
        if in_castle and side_name == "attacker" and not siege:
            raise node.fail(
                "the attacker has blocks in the castle in a new battle: only the "
                "defender holds the castle unless battle.siege = true",
                "blocks",
                "castle",
            )
        sides.append(blocks)
    holders = [
        s for s, blocks in zip(SIDES, sides, strict=True) if any(b.at == "castle" for b in blocks)
    ]
    if len(holders) == 2:
        raise top.fail(
            "both sides have blocks in the castle: only the besieged side holds it", "attacker"
        )
    if siege and not holders:
        raise battle.fail(
            "siege = true but no block is in the castle: an existing siege needs "
            'the besieged blocks placed with at = "castle"',
            "siege",
        )
    return Battle(
        attacker=sides[0],
        defender=sides[1],
        castle_limit=castle_limit,
        attrition=attrition,
        siege=siege,
        turns=turns,
        policies=policies,
        rules=rules,
        switches=switches,
        retreat_road=retreat_road,
        retreats=(retreats[0], retreats[1]),
        from_step=from_step,
        attacker_role=attacker_role,
        notes=harry_fire_notes(sides, policies, switches, retreat_road),
    )


def _check_reserves_to_come(node: Node, blocks: tuple[Block, ...], from_step: int) -> None:
    """In a battle in progress a reserve is a block still on the road: it arrives in a
    round of the first game turn not yet fought."""
    if from_step == 0:
        return
    for i, block in enumerate(blocks):
        if block.at != "reserve":
            continue
        if from_step >= PHASES_PER_TURN:
            raise node.fail(
                f"block '{block.name}' is a reserve but the battle is in game turn "
                f"{from_step // PHASES_PER_TURN + 1} (battle.from_step = {from_step}): "
                "reserves arrive in the first turn only; place it in the field or the castle",
                f"blocks[{i}].at",
                "reserve",
            )
        if block.arrives <= from_step:
            raise node.fail(
                f"block '{block.name}' arrives in round {block.arrives} but {from_step} "
                f"round{'s' if from_step > 1 else ''} fought already (battle.from_step = "
                f"{from_step}): a block that has arrived is in the field",
                f"blocks[{i}].round",
                block.arrives,
            )


def harry_fire_notes(
    sides: list[tuple[Block, ...]], policies: Policies, switches: Switches, retreat_road: bool
) -> tuple[str, ...]:
    """A note when a block with both traits may harry while knights charge: the two
    readings fire it differently (docs/blocks.md, "Rule text and released engine"), and
    no block of the game has both, so the pair is legal but easily not meant."""
    may_harry = retreat_road and (policies.retreat != "never" or policies.harry == "always")
    if policies.charge != "always" or not may_harry:
        return ()
    notes = []
    for side, blocks in zip(SIDES, sides, strict=True):
        for block in (b for b in blocks if b.knights and b.harry):
            who = f"the {side}'s block {block.name} is both knights and harry: its harry"
            if switches.harry_fire == "plain":
                notes.append(
                    f"{who} (fire, then retreat) is a plain fire, as in the released engine "
                    '(harry_fire = "plain"); the rule text as read here makes it a charge '
                    '(harry_fire = "charge")'
                )
            else:
                notes.append(
                    f"{who} (fire, then retreat) is a charge, as the rule text is read here "
                    '(harry_fire = "charge"); in the released engine, where no block is '
                    'both, a harry is a plain fire (rules = "engine" or harry_fire = "plain")'
                )
    return tuple(notes)


def _block(node: Node, number: int) -> Block:
    node.only(keys.BLOCK)
    name = node.text("name", f"block{number}").strip()
    if not name:
        raise node.fail("an empty block name", "name")
    rating_text = node.read(keys.BLOCK["rating"])
    rating = parse_rating(rating_text)
    if rating is None:
        raise node.fail(
            f"rating '{rating_text}' is not a block rating: expected an initiative "
            "A, B or C and a firepower 1..6, e.g. B2",
            "rating",
            rating_text,
        )
    steps = node.read(keys.BLOCK["steps"])
    max_steps = node.read(replace(keys.BLOCK["max_steps"], default=steps))
    if steps > max_steps:
        raise node.fail(
            f"{steps} steps but max_steps is {max_steps}: a block cannot have more "
            "steps than its maximum",
            "steps",
            steps,
        )
    traits = node.read(keys.BLOCK["traits"])
    at = node.read(keys.BLOCK["at"])
    arrives = 1
    if at == "reserve":
        if not node.has("round"):
            raise node.fail(
                "is required for a reserve block: the combat round it arrives in (2 or 3)", "round"
            )
        arrives = node.integer("round")
        if arrives not in RESERVE_ROUNDS:
            raise node.fail(
                f"reserve round {arrives}: reserves arrive in round 2 or 3 "
                "(there are three combat rounds)",
                "round",
                arrives,
            )
    elif node.has("round"):
        raise node.fail(
            f'only a reserve block (at = "reserve") has a round; this one is in the {at}', "round"
        )
    return Block(
        name=name,
        steps=steps,
        max_steps=max_steps,
        initiative=rating[0],
        firepower=rating[1],
        knights="knights" in traits,
        harry="harry" in traits,
        at=at,
        arrives=arrives,
    )


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("units.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def rating_costs() -> dict[str, float]:
    """What a full-strength block of each rating costs (``[ratings]`` of the unit table)."""
    source = Source("package")
    return {
        name: read_cost(Node(entry, f"(package) ratings.{name}", source))
        for name, entry in _table()["ratings"].items()
    }


def unit_table() -> pd.DataFrame:
    """What a rating letter, a trait and the castle mean, one row each, then the
    ratings a block can have, with their costs."""
    import pandas as pd

    rows = []
    for kind, entries in _table().items():
        if kind == "ratings":
            continue
        for name, entry in entries.items():
            rows.append(
                {
                    "type": name,
                    "kind": kind.rstrip("s"),
                    "fires": entry.get("fires", ""),
                    "firepower": entry.get("firepower", ""),
                    "cost": None,
                    "notes": entry.get("notes", ""),
                }
            )
    for name, cost in rating_costs().items():
        letter, fire = parse_rating(name) or ("", 0)
        rows.append(
            {
                "type": name,
                "kind": "rating",
                "fires": f"as {letter}",
                "firepower": f"{fire}: each die <= {fire} hits",
                "cost": cost,
                "notes": f"a block of {keys.MAX_STEPS} steps, as `battle-odds matrix` fields it",
            }
        )
    return pd.DataFrame(rows)
