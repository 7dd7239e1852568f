"""The confrontation scenario format: every key, its kind, range and default.

Ranges keep the kernel's strength arithmetic exact: arms, a and b are read in
hundredths and resolve in halves, so a strength times 80,000 is a whole number far
below 2**53 (see ``model.strength_units``).
"""

from __future__ import annotations

import functools

from ...input.fields import Field, ListOf, OneOf, Table
from ..keys import COST, with_waves
from ..stop_rules import RETREAT

ABILITIES = ("attack", "bombard", "strike")
DAMAGE_RULES = ("2dN", "flat1")
POLICIES = ("script", "simple")
AFTER_SCRIPT = ("repeat_last", "cycle", "stop")
ORDERS = ("sides", "alternate")
MAX_STACK = 3
MAX_TURNS = 10_000
MAX_COORDINATE = 10_000
MAX_ADVANTAGES = 100

#: The values a unit type gives its units (a unit may set them too).
UNIT_VALUES = (
    Field("arms", "number", "arms (weapons), in hundredths", lo=0, hi=10_000, step=0.01),
    Field(
        "resolve",
        "number",
        "resolve at the start (moves in half points)",
        lo=-1000,
        hi=1000,
        step=0.5,
    ),
    Field("integrity", "int", "hit points", lo=1, hi=1_000_000),
    Field("a", "number", "weight of arms in strength", lo=0, hi=100, step=0.01, default=1.0),
    Field("b", "number", "weight of resolve in strength", lo=0, hi=100, step=0.01, default=0.5),
    Field(
        "advantages",
        "int",
        "advantages: each adds a quarter to strength",
        lo=-MAX_ADVANTAGES,
        hi=MAX_ADVANTAGES,
        default=0,
    ),
    Field("reach", "bool", "can strike an adjacent space's aerial units", default=False),
    Field("aerial", "bool", "flies: may intercept within its speed", default=False),
    Field("speed", "int", "spaces an aerial unit covers to intercept", lo=0, hi=1000, default=0),
    Field(
        "abilities",
        "names",
        "abilities it may use (default: all)",
        choices=ABILITIES,
        default=ABILITIES,
    ),
)
TYPE = Table(
    "<type>",
    "a unit type: the package's type of that name with these values over it, or a new one",
    (*UNIT_VALUES, COST),
)
UNIT = Table(
    "unit",
    "one unit of a stack",
    (
        Field("type", "text", "a unit type (package or [units.<type>]) giving its values"),
        Field("name", "text", "its name in scripts and results (default: its type)"),
        *UNIT_VALUES,
    ),
)
STACK = Table(
    "stack",
    "up to three units on one hex space",
    (
        Field("name", "text", "the stack's name (default: a1, a2, ... / d1, d2, ...)"),
        Field(
            "at",
            "point",
            "the stack's hex space as [q, r] (axial coordinates)",
            lo=-MAX_COORDINATE,
            hi=MAX_COORDINATE,
            required=True,
        ),
        Field(
            "advantages",
            "int",
            "advantages of the space, added to each unit's",
            lo=-MAX_ADVANTAGES,
            hi=MAX_ADVANTAGES,
            default=0,
        ),
        ListOf("units", "the stack's units", UNIT, 1, MAX_STACK, required=True),
    ),
)
BATTLE = Table(
    "battle",
    "how the battle is played",
    (
        Field(
            "turns",
            "int",
            "turns played; then the battle is a draw",
            lo=1,
            hi=MAX_TURNS,
            default=10,
        ),
        Field(
            "nearby",
            "int",
            "spaces within which a destroyed unit moves resolve",
            lo=0,
            hi=1000,
            default=1,
        ),
        Field(
            "min_damage_rule",
            "choice",
            "damage when the attacker is not stronger",
            choices=DAMAGE_RULES,
            default="2dN",
        ),
        Field(
            "policy",
            "choice",
            "who decides actions (default: script if there is one)",
            choices=POLICIES,
        ),
        Field(
            "after_script",
            "choice",
            "what happens after the last scripted turn",
            choices=AFTER_SCRIPT,
            default="repeat_last",
        ),
        Field(
            "order",
            "choice",
            "acting order under the simple policy",
            choices=ORDERS,
            default="sides",
        ),
        Field(
            "from_step",
            "int",
            "turns already fought: a battle in progress goes on from the next turn (below turns)",
            lo=0,
            hi=MAX_TURNS - 1,
            default=0,
        ),
    ),
)
ACTION = Table(
    "action",
    "one use of an ability",
    (
        Field("by", "text", "the acting stack, or one unit as stack.unit", required=True),
        Field("ability", "choice", "the ability (default: the best)", choices=ABILITIES),
        OneOf(
            "target",
            "the target: an enemy stack's name or its space [q, r] (default: the nearest)",
            (
                Field("target", "text", "an enemy stack's name"),
                Field(
                    "target",
                    "point",
                    "an enemy stack's space [q, r]",
                    lo=-MAX_COORDINATE,
                    hi=MAX_COORDINATE,
                ),
            ),
        ),
    ),
)

TURN = Table("turn", "one scripted turn", (ListOf("actions", "the turn's actions", ACTION),))


@functools.cache  # a Table is frozen: built once, not at every validation
def side(name: str) -> Table:
    """A side: its stacks (one at least) and when it withdraws."""
    doc = f"the {name}'s stacks"
    return Table(
        name, doc, (ListOf("stacks", doc, STACK, 1, required=True), RETREAT), required=True
    )


SCENARIO = Table(
    "",
    "a confrontation scenario",
    (
        BATTLE,
        with_waves(side("attacker")),
        with_waves(side("defender")),
        Table("units", "unit types of this scenario", other=TYPE),
        ListOf(
            "script",
            "scripted turns, one table per turn",
            TURN,
            1,
        ),
    ),
)
