"""The blocks scenario format: every key, its kind, range and default."""

from __future__ import annotations

import functools

from ...input.fields import Field, ListOf, Table
from ..keys import with_waves
from ..stop_rules import RETREAT

TRAITS = ("knights", "harry")
PLACES = ("field", "castle", "reserve")
RESERVE_ROUNDS = (2, 3)
MAX_STEPS = 4
MAX_TURNS = 100
#: Phases of a game turn (kernels/blocks.py's PHASES_PER_TURN: rounds 1-3, attrition).
PHASES_PER_TURN = 4
#: Player choices; the first of each is the default, the conservative choice.
POLICIES: dict[str, tuple[str, ...]] = {
    "withdraw": ("none", "fill", "when_weaker"),
    "storm": ("never", "round1", "when_stronger"),
    "sally": ("never", "when_stronger"),
    "charge": ("never", "always"),
    "retreat": ("never", "when_weaker", "from_round"),
    "tie_break": ("random", "listed", "weakest"),
    "harry": ("with_retreat", "always"),
    "castle_withdraw": ("never", "when_weaker"),
    "storm_withdraw": ("never", "when_weaker"),
}
POLICY_DOCS = {
    "withdraw": "when the field side withdraws blocks into the castle",
    "storm": "when the besieger storms the castle",
    "sally": "when the besieged sally out",
    "charge": "whether knights charge",
    "retreat": "when a side retreats (from_round: the attacker, from retreat_round on)",
    "tie_break": "which of equally strong blocks takes a hit",
    "harry": "when harry blocks fire and then retreat",
    "castle_withdraw": "when the castle's side withdraws field blocks into it mid-battle",
    "storm_withdraw": "when stormers withdraw from a storm",
}
#: The first combat round voluntary retreats happen in (the engine allows round 1).
RETREAT_ROUNDS = (1, 3)
DEFAULT_RETREAT_ROUND = 2

#: Who may hold the attacker's role (``[battle] attacker_role``).
ROLES = ("attacker", "defender")
#: Whose reading of the procedure: the rule text's (default) or the released engine's code.
RULES = ("text", "engine")
#: The points where the two readings part, each a [battle] key of its own: the first
#: choice is the text's reading, the second the engine's; without the key, ``rules`` picks.
SWITCHES: dict[str, tuple[str, ...]] = {
    "lost_field": ("fight_on", "swap_roles"),
    "relief": ("besieged_reserves", "field_contested"),
    "first_sally": ("never", "uncontested_field"),
    "quiet_siege": ("no_reserves", "no_besieged_reserves"),
    "castle_marks": ("kept", "cleared"),
    "charge_sixes": ("every_six", "missed_six"),
    "harry_fire": ("charge", "plain"),
}
SWITCH_DOCS = {
    "lost_field": "a defender whose field force is gone while its reserves come: "
    "fights on, or the roles swap (engine)",
    "relief": "what makes the besieged the attacker: its reserves arriving, or the "
    "field turning contested (engine)",
    "first_sally": "sally in round 1 of a new siege: never, or from an uncontested field (engine)",
    "quiet_siege": "an idle round goes to attrition when no reserves are on the road, or "
    "none of the besieged side's (engine)",
    "castle_marks": "a castle block's half-hit mark: kept, or cleared when a storm ends "
    "and after each battle (engine)",
    "charge_sixes": "a charging block loses a step for every 6, or only for a 6 that "
    "missed (engine)",
    "harry_fire": "a knights block that harries fires as a charge (when knights charge), "
    "or a plain fire (engine)",
}

BATTLE = Table(
    "battle",
    "the castle, attrition and how many turns are played",
    (
        Field(
            "castle_limit", "int", "blocks the castle holds (0: no castle)", lo=0, hi=20, default=0
        ),
        Field("attrition", "int", "attrition roll threshold of a siege", lo=0, hi=6, default=3),
        Field("siege", "bool", "an existing siege (the besieged are in the castle)", default=False),
        Field("turns", "int", "game turns played", lo=1, hi=MAX_TURNS, default=1),
        Field(
            "rules",
            "choice",
            "whose reading of the procedure: the rule text or the released engine's code",
            choices=RULES,
            default="text",
        ),
        *(
            Field(key, "choice", SWITCH_DOCS[key] + "; default: as rules", choices=choices)
            for key, choices in SWITCHES.items()
        ),
        Field(
            "retreat_road",
            "bool",
            "blocks have a road to retreat by (false: a block that must retreat is eliminated)",
            default=True,
        ),
        Field(
            "from_step",
            "int",
            "phases already fought: the battle goes on from the next (4 a turn: rounds "
            "1-3, attrition), the blocks as they stand now",
            lo=0,
            hi=PHASES_PER_TURN * MAX_TURNS - 1,
            default=0,
        ),
        Field(
            "attacker_role",
            "choice",
            "the side in the attacker's role now, in a battle in progress: the defender "
            "after its relief arrived or it sallied from an uncontested field",
            choices=ROLES,
            default=ROLES[0],
        ),
    ),
)
POLICY = Table(
    "policy",
    "the players' choices",
    (
        *(
            Field(key, "choice", POLICY_DOCS[key], choices=choices, default=choices[0])
            for key, choices in POLICIES.items()
        ),
        Field(
            "retreat_round",
            "int",
            "the first combat round a voluntary retreat happens in",
            lo=RETREAT_ROUNDS[0],
            hi=RETREAT_ROUNDS[1],
            default=DEFAULT_RETREAT_ROUND,
        ),
    ),
)
BLOCK = Table(
    "block",
    "one block",
    (
        Field("name", "text", "its name (default: block1, block2, ...)"),
        Field("rating", "text", "initiative A-C and firepower 1-6, e.g. B2", required=True),
        Field("steps", "int", "steps (strength) at the start", lo=1, hi=MAX_STEPS, required=True),
        Field("max_steps", "int", "steps at full strength (default: steps)", lo=1, hi=MAX_STEPS),
        Field("traits", "names", "its traits", choices=TRAITS, default=()),
        Field("at", "choice", "where it starts", choices=PLACES, default="field"),
        Field(
            "round",
            "int",
            "the combat round a reserve arrives in",
            lo=min(RESERVE_ROUNDS),
            hi=max(RESERVE_ROUNDS),
        ),
    ),
)


@functools.cache  # a Table is frozen: built once, not at every validation
def side(name: str) -> Table:
    """A side: its blocks (at least one) and its stop rule (``gone`` names a block)."""
    doc = f"the {name}'s blocks"
    return Table(
        name, doc, (ListOf("blocks", doc, BLOCK, 1, required=True), RETREAT), required=True
    )


SCENARIO = Table(
    "",
    "a blocks scenario",
    (BATTLE, POLICY, with_waves(side("attacker")), with_waves(side("defender"))),
)
