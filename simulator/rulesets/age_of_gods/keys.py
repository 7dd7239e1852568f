"""The age_of_gods scenario format: Olympia's armies with this ruleset's fighter keys,
terrains and options (every key, its kind, range and default)."""

from __future__ import annotations

from ...input.fields import Field, Table
from ..olympia import keys as olympia

TERRAINS = ("land", "ship", "swamp", "forest", "mountain", "city")
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
            "a noble fields at most his control limit of men",
            default=False,
        ),
    ),
)
SCENARIO = Table(
    "",
    "an age_of_gods scenario",
    (
        BATTLE,
        olympia.side("attacker", engines=False),
        olympia.side("defender", engines=False),
        Table("units", "fighter types of this scenario", other=FIGHTER),
    ),
)
