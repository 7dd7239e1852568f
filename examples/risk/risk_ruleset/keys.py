"""The risk scenario format: every key, its kind, range and default.

Declared once: the validator reads through it, and ``battle-odds schema --ruleset risk``
prints it as a JSON Schema, so an editor and ``battle-odds validate`` agree.
"""

from __future__ import annotations

from simulator.input.fields import Field, Table

SIDES = ("attacker", "defender")
DEFAULT_ATTACKER_DICE = 3
DEFAULT_DEFENDER_DICE = 2
#: Most dice either side may roll: the exact solver enumerates 6**(dice of both) rolls.
MOST_DICE = 3
#: Armies a side may bring: a battle takes at most attacker + defender - 1 rounds.
MOST_ARMIES = 1_000_000

ARMIES = Field(
    "armies",
    "int",
    "the armies that fight (the one left behind on the attacker's territory is not counted)",
    lo=1,
    hi=MOST_ARMIES,
    required=True,
)
ATTACKER_DICE = Field(
    "attacker_dice",
    "int",
    "most dice the attacker rolls in a round",
    lo=1,
    hi=MOST_DICE,
    default=DEFAULT_ATTACKER_DICE,
)
DEFENDER_DICE = Field(
    "defender_dice",
    "int",
    "most dice the defender rolls in a round",
    lo=1,
    hi=MOST_DICE,
    default=DEFAULT_DEFENDER_DICE,
)
BATTLE = Table("battle", "house rules", (ATTACKER_DICE, DEFENDER_DICE))
SCENARIO = Table(
    "",
    "a Risk dice battle: two sides' armies and the house rules",
    (
        *(Table(side, f"the {side}", (ARMIES,), required=True) for side in SIDES),
        BATTLE,
    ),
)
