"""The olympia scenario format: every key, its kind, range and default.

Ranges keep the kernels' integer sums far inside 64 bits: a side's value (men x
(offence + defense), times 100 for the break check) stays below 10**15 for any
scenario a file can hold.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from ...input.fields import Field, ListOf, OneOf, Table, package_toml
from ..keys import COST, with_waves
from ..stop_rules import MAX_AFTER, RETREAT

TERRAINS = ("land", "swamp", "ship")
WEATHERS = ("wind", "rain")
STRIKE_ORDERS = ("random", "alternating")
#: The kernels, the one list of their names (prepare.py's ``KERNEL_RUNS`` runs each):
#: ``strike`` draws every strike (the reference); ``skip`` draws the strikes until the
#: next change and which change it is (kernels/olympia/skip.py); ``chain`` does the same
#: through a table of the battle's Markov chain computed once (kernels/olympia/chain.py):
#: the same distribution of every outcome, at a cost that grows with the kills rather
#: than the strikes, and for ``chain`` without recomputing any chance.
KERNELS = ("strike", "skip", "chain")
#: The kernels that run stop rules (``[attacker.retreat]``), the one ``auto`` picks first:
#: the chain kernel's table keeps no men between its positions' codes.
RULE_KERNELS = ("skip", "strike")
#: What a scenario may ask for: a kernel, or ``auto`` (the faster one for the battle).
KERNEL_CHOICES = ("auto", *KERNELS)
STRUCTURES = tuple(package_toml(__package__)["structures"])
MAX_RATING = 10_000
MAX_MEN = 100_000
MAX_ROW = 9


def rating(name: str, doc: str, default: int | None = None) -> Field:
    return Field(name, "int", doc, lo=0, hi=MAX_RATING, default=default)


RATINGS = (
    rating("attack", "attack rating (hand to hand)"),
    rating("defense", "defense rating"),
    rating("missile", "missile rating", default=0),
)


def terrain_ratings(terrain: str) -> Table:
    own = tuple(
        replace(f, doc=f"{f.doc} on {terrain} (default: the land one)", default=None)
        for f in RATINGS
    )
    return Table(terrain, f"ratings on {terrain} terrain (default: the land ratings)", own)


#: A fighter type's own keys, shared with age_of_gods.
FIGHTER_FIELDS = (
    *RATINGS,
    terrain_ratings("ship"),
    terrain_ratings("swamp"),
    Field(
        "survive",
        "number",
        "chance a hit man survives (below 1: every battle ends)",
        lo=0.0,
        hi=0.999999,
        default=0.0,
    ),
    Field("rain_grounded", "bool", "loses its missile rating in rain", default=False),
    COST,
)
FIGHTER = Table(
    "<type>",
    "a fighter type: the package's type of that name with these values over it, or a new one",
    (
        *FIGHTER_FIELDS,
        Field("noncombatant", "bool", "does not strike (peasants, sailors)", default=False),
    ),
)
ITEM = Table(
    "item",
    "an item a noble carries: only the best bonus of each kind counts",
    (
        Field("name", "text", "the item's name", default="item"),
        rating("attack", "attack bonus", default=0),
        rating("defense", "defense bonus", default=0),
        rating("missile", "missile bonus", default=0),
    ),
)
NOBLE = Table(
    "noble",
    "the unit's noble (default: an unequipped noble at full health)",
    (
        Field("health", "int", "health at the start", lo=1, hi=100, default=100),
        rating("attack", "attack bonus", default=0),
        rating("defense", "defense bonus", default=0),
        rating("missile", "missile bonus", default=0),
        ListOf("items", "the noble's items", ITEM),
    ),
)
BEHIND = Field("behind", "int", "row (0: the front row)", lo=0, hi=MAX_ROW, default=0)
MEN_COUNT = Field("<type>", "int", "men of this type", lo=0, hi=MAX_MEN)
MEN_ENTRY = Table(
    "men",
    "men of one type, possibly in their own row",
    (
        Field("type", "text", "the fighter type", required=True),
        Field("count", "int", "how many", lo=0, hi=MAX_MEN, required=True),
        Field("behind", "int", "row (default: the unit's)", lo=0, hi=MAX_ROW),
    ),
)
MEN = OneOf(
    "men",
    "the noble's men: a table {type = count} or a list of {type, count, behind}",
    (
        Table("men", "men by type", other=MEN_COUNT),
        ListOf("men", "men of one type per entry", MEN_ENTRY),
    ),
)
UNIT = Table("unit", "a noble and his men", (NOBLE, MEN, BEHIND))
STRUCTURE = Table(
    "structure",
    "the structure the side defends",
    (
        Field(
            "kind",
            "choice",
            "what it is (sets how many men it protects)",
            choices=STRUCTURES,
            required=True,
        ),
        Field(
            "defense",
            "int",
            "defense points hits must wear down",
            lo=0,
            hi=MAX_RATING,
            required=True,
        ),
        Field("damage", "int", "damage already taken (100 collapses it)", lo=0, hi=99, default=0),
    ),
)
ENGINE_COUNT = Field("<engine>", "int", "engines of this kind", lo=0, hi=1000)
ENGINES = Table("siege_engines", "siege engines by kind", other=ENGINE_COUNT)


@functools.cache  # a Table is frozen: built once, not at every validation
def side(name: str, engines: bool = True) -> Table:
    return Table(
        name,
        f"the {name}'s army",
        (
            ListOf("units", "nobles with their men, in stack order", UNIT, 1, required=True),
            Field(
                "break_point",
                "int",
                "percent of value lost at which it breaks",
                lo=0,
                hi=100,
                default=50,
            ),
            STRUCTURE,
            *((ENGINES,) if engines else ()),
        ),
        required=True,
    )


@functools.cache  # a Table is frozen: built once, not at every validation
def fighting_side(name: str) -> Table:
    """An olympia scenario's side: :func:`side` with its stop rule (``retreat``). Age of
    Gods builds on :func:`side` and declares its own."""
    base = side(name)
    return Table(base.name, base.doc, (*base.fields, RETREAT), required=True)


BATTLE = Table(
    "battle",
    "where and how the battle is fought",
    (
        Field("terrain", "choice", "the terrain", choices=TERRAINS, default="land"),
        Field("weather", "names", "weather in effect", choices=WEATHERS, default=()),
        Field(
            "strike_order", "choice", "who strikes next", choices=STRIKE_ORDERS, default="random"
        ),
        Field("kernel", "choice", "which kernel runs it", choices=KERNEL_CHOICES, default="auto"),
        Field(
            "from_step",
            "int",
            "strikes already fought: the battle is in progress, its armies as they stand now",
            lo=0,
            hi=MAX_AFTER,
            default=0,
        ),
    ),
)
SCENARIO = Table(
    "",
    "an olympia scenario",
    (
        BATTLE,
        with_waves(fighting_side("attacker")),
        with_waves(fighting_side("defender")),
        Table("units", "fighter types of this scenario", other=FIGHTER),
    ),
)
