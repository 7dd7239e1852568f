"""The age_of_gods scenario format: Olympia's armies with this ruleset's fighter keys,
terrains and options (every key, its kind, range and default)."""

from __future__ import annotations

import functools

from ...input.fields import Field, ListOf, Table
from ..keys import with_waves
from ..olympia import keys as olympia
from ..stop_rules import MAX_AFTER, RETREAT

TERRAINS = ("land", "ship", "swamp", "forest", "mountain", "city")
#: Whose reading of the combat: the rule text's or the released engine's code.
RULES = ("text", "engine")
#: The points where the two readings part, each selectable on its own (default: `rules`).
POINTS = {
    "terrain_rules": "how the terrain multiplies the defender's ratings",
    "control_rules": "how many men a noble fields under control limits",
    "structure_rules": "how a structure protects and is damaged",
    "prisoner_rules": "when every surviving noble of the loser is taken",
    "sea_rules": "knights, paladins and cavaliers at sea (ship terrain)",
}
#: Noble ranks and the men each adds to the control limit (the released engine's table).
RANKS = {
    "none": 0,
    "lord": 5,
    "knight": 6,
    "baron": 7,
    "count": 8,
    "earl": 9,
    "marquess": 10,
    "duke": 11,
    "king": 20,
}
MAX_EXPERIENCE = 10_000
MAX_ROUND = 1_000
#: Strikes a special attack makes per man; with at most 100,000 men a group, a special
#: phase stays below 10**7 strikes.
MAX_TARGETS = 100

SPECIAL = Table(
    "special",
    "a special attack: strikes of its own strength before the battle's rounds",
    (
        Field("name", "text", "the attack's name", required=True),
        Field(
            "strength", "int", "strength of each strike", lo=1, hi=olympia.MAX_RATING, required=True
        ),
        Field("targets", "int", "strikes per man", lo=1, hi=MAX_TARGETS, default=1),
    ),
)
FIGHTER = Table(
    "<type>",
    "a fighter type: the package's type of that name with these values over it, or a new one",
    (
        *olympia.FIGHTER_FIELDS,
        Field("mounted", "bool", "mounted (pikes hold it off)", default=False),
        Field("pike", "bool", "carries pikes", default=False),
        Field("flee", "number", "chance of fleeing instead of dying", lo=0.0, hi=1.0, default=0.0),
        Field(
            "animal",
            "bool",
            "a beast: fielded under control limits only up to the noble's use_beasts",
            default=False,
        ),
        SPECIAL,
    ),
)
BATTLE = Table(
    "battle",
    "where and how the battle is fought",
    (
        Field("terrain", "choice", "the terrain", choices=TERRAINS, default="land"),
        olympia.BATTLE["weather"],
        Field(
            "control_limits",
            "bool",
            "a noble fields at most his control limit of men (default: true under engine rules)",
        ),
        Field(
            "rules",
            "choice",
            "whose reading: the rule text or the released engine's code",
            choices=RULES,
            default="text",
        ),
        *(
            Field(name, "choice", f"{doc} (default: the rules setting)", choices=RULES)
            for name, doc in POINTS.items()
        ),
        Field(
            "from_step",
            "int",
            "rounds already fought: the battle is in progress, its armies as they stand now "
            "(the opening volley is past; allies of a round fought are there)",
            lo=0,
            hi=MAX_AFTER,
            default=0,
        ),
    ),
)


def experience(name: str, doc: str) -> Field:
    return Field(name, "int", doc, lo=0, hi=MAX_EXPERIENCE, default=0)


#: The noble's keys past Olympia's: what the released engine's battles depend on.
NOBLE_EXTRA = (
    Table(
        "ratings",
        "the noble's own ratings (default: the package noble's 80/80/0)",
        (
            olympia.rating("attack", "own attack rating"),
            olympia.rating("defense", "own defense rating"),
            olympia.rating("missile", "own missile rating", default=0),
        ),
    ),
    Field(
        "rank",
        "choice",
        "noble rank (adds to the control limit)",
        choices=tuple(RANKS),
        default="none",
    ),
    experience("control_battle", "Control-battle experience (men above 10 he controls)"),
    experience("use_beasts", "Use-beasts experience (beasts he controls)"),
    experience(
        "attack_tactics", "attack-tactics experience: his unit's strikes x (1 + 0.02 x), at most x2"
    ),
    experience(
        "defense_tactics",
        "defense-tactics experience: his unit's defense x (1 + 0.02 x), at most x2",
    ),
    Field(
        "garrison",
        "bool",
        "a garrison: leader 0/0/0, break point 0, takes no prisoners",
        default=False,
    ),
    Field("beast", "text", "a monster stack: the leader is one beast of this type"),
)
NOBLE = Table("noble", olympia.NOBLE.doc, (*olympia.NOBLE.fields, *NOBLE_EXTRA))
UNIT = Table("unit", olympia.UNIT.doc, (NOBLE, olympia.MEN, olympia.BEHIND))
ALLIES = Table(
    "allies",
    "units that join the side at the start of a given round (they are never inside its structure)",
    (
        Field("round", "int", "the round they arrive in", lo=1, hi=MAX_ROUND, default=2),
        ListOf("units", "nobles with their men, in stack order", UNIT, 1, required=True),
    ),
)
UNITS = ListOf("units", "nobles with their men, in stack order", UNIT, 1, required=True)


@functools.cache  # a Table is frozen: built once, not at every validation
def side(name: str) -> Table:
    """Olympia's side (no siege engines) with this ruleset's nobles, allies and stop
    rule (``[attacker.retreat]``)."""
    base = olympia.side(name, engines=False)
    fields = tuple(UNITS if f.name == "units" else f for f in base.fields if f.name != "retreat")
    return Table(base.name, base.doc, (*fields, ALLIES, RETREAT), required=True)


SCENARIO = Table(
    "",
    "an age_of_gods scenario",
    (
        BATTLE,
        with_waves(side("attacker")),
        with_waves(side("defender")),
        Table("units", "fighter types of this scenario", other=FIGHTER),
    ),
)
