"""The skirmish scenario format: every key, its kind, range and default."""

from __future__ import annotations

import functools

from ...input.fields import Field, ListOf, OneOf, Table
from ..keys import COST, with_waves
from ..stop_rules import RETREAT

ABILITIES = ("strike", "archery", "charge", "healing")
EXPECTED_VALUES = ("exact", "sampled5")
#: Whose reading of the combat: the rule text's (default) or the released engine's code.
RULES = ("text", "engine")
#: How moves are valued when ``expected_value`` is not given, per reading.
DEFAULT_EXPECTED_VALUE = {"text": "exact", "engine": "sampled5"}
MAX_STACK = 8
MAX_RATING = 1000
MAX_HEALTH = 1_000_000
MAX_COORDINATE = 10_000
#: A battle still undecided after this many turns ends as a draw. Bundled battles last
#: at most 16 turns; a turn of the largest field (56 participants) costs under a millisecond.
DEFAULT_TURN_LIMIT = 1_000
MAX_TURN_LIMIT = 100_000


def tile(name: str, doc: str, required: bool = False) -> Field:
    return Field(name, "point", doc, lo=-MAX_COORDINATE, hi=MAX_COORDINATE, required=required)


UNIT_TYPE = Table(
    "<type>",
    "a unit type: the package's type of that name with these values over it, or a new one",
    (
        Field("attack", "int", "attack rating", lo=0, hi=MAX_RATING, required=True),
        Field("defence", "int", "defence rating", lo=0, hi=MAX_RATING, required=True),
        Field("damage", "int", "damage rating", lo=0, hi=MAX_RATING, required=True),
        Field("health", "int", "health at full strength", lo=1, hi=MAX_HEALTH, required=True),
        Field("abilities", "names", "its abilities", choices=ABILITIES, default=()),
        COST,
    ),
)
UNIT_ENTRY = Table(
    "unit",
    "units of one type",
    (
        Field("type", "text", "the unit type", required=True),
        Field("count", "int", "how many", lo=1, hi=MAX_STACK, default=1),
        Field("health", "int", "health at the start (default: the type's)", lo=1, hi=MAX_HEALTH),
        Field(
            "healed",
            "bool",
            "has used its healing already (a battle in progress: healing is once a battle)",
            default=False,
        ),
    ),
)
UNITS = ListOf(
    "units",
    "the stack's units",
    OneOf(
        "units",
        "a unit",
        (
            Field("units", "text", "'TYPE', 'N TYPE' or 'TYPE(health=H)'"),
            UNIT_ENTRY,
        ),
    ),
    1,
    required=True,
)
STACK = Table(
    "stack",
    "a stack on one of the seven tiles of the field",
    (
        tile("tile", "the stack's tile as [x, y]", required=True),
        Field("owner", "text", "the stack's owner", required=True),
        UNITS,
    ),
)
BATTLE = Table(
    "battle",
    "the attacked tile and the attacking stack's tile",
    (
        tile("attacked", "the attacked tile as [x, y]", required=True),
        tile("attacking", "the attacking stack's tile as [x, y] (a neighbour)", required=True),
        Field("tile_owner", "text", "the attacked tile's owner (default: its stack's)"),
        Field(
            "rules",
            "choice",
            "whose reading of the combat: the rule text or the released engine's code",
            choices=RULES,
            default="text",
        ),
        Field(
            "expected_value",
            "choice",
            "how moves are valued (default: exact under text rules, sampled5 under engine)",
            choices=EXPECTED_VALUES,
        ),
        Field(
            "turn_limit",
            "int",
            "turns after which an undecided battle ends as a draw",
            lo=1,
            hi=MAX_TURN_LIMIT,
            default=DEFAULT_TURN_LIMIT,
        ),
        Field(
            "from_step",
            "int",
            "turns already fought: a battle in progress goes on from the next turn "
            "(below turn_limit)",
            lo=0,
            hi=MAX_TURN_LIMIT - 1,
            default=0,
        ),
    ),
    required=True,
)


@functools.cache  # a Table is frozen: built once, not at every validation
def side(name: str) -> Table:
    """A side's own keys: when it withdraws, and its own stacks (a wave, or the side as
    a battle left it), in place of the field's stacks that would fight for it."""
    stacks = ListOf(
        "stacks",
        f"the {name}'s own stacks, in place of the field's stacks that would fight for it "
        "(default: those)",
        STACK,
        1,
    )
    return Table(name, f"the {name}'s side of the battle", (RETREAT, stacks))


SCENARIO = Table(
    "",
    "a skirmish scenario",
    (
        BATTLE,
        with_waves(side("attacker")),
        with_waves(side("defender")),
        ListOf("stacks", "the stacks on the field", STACK, 1, required=True),
        Table("unit_types", "unit types of this scenario", other=UNIT_TYPE),
        ListOf(
            "alliances",
            "groups of owners allied with each other",
            ListOf("alliance", "owners allied with each other", Field("owner", "text", "an owner")),
        ),
    ),
)
