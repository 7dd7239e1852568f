"""The blocks scenario format: every key, its kind, range and default."""

from __future__ import annotations

from ...input.fields import Field, Table, side_list

TRAITS = ("knights", "harry")
PLACES = ("field", "castle", "reserve")
RESERVE_ROUNDS = (2, 3)
MAX_STEPS = 4
MAX_TURNS = 100
#: Player choices; the first of each is the default, the conservative choice.
POLICIES: dict[str, tuple[str, ...]] = {
    "withdraw": ("none", "fill", "when_weaker"),
    "storm": ("never", "round1", "when_stronger"),
    "sally": ("never", "when_stronger"),
    "charge": ("never", "always"),
    "retreat": ("never", "when_weaker"),
    "tie_break": ("random", "listed"),
}
POLICY_DOCS = {
    "withdraw": "when the field side withdraws blocks into the castle",
    "storm": "when the besieger storms the castle",
    "sally": "when the besieged sally out",
    "charge": "whether knights charge",
    "retreat": "when a side retreats",
    "tie_break": "how equal initiatives are ordered",
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
    ),
)
POLICY = Table(
    "policy",
    "the players' choices",
    tuple(
        Field(key, "choice", POLICY_DOCS[key], choices=choices, default=choices[0])
        for key, choices in POLICIES.items()
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


def side(name: str) -> Table:
    return side_list(name, "blocks", BLOCK)


SCENARIO = Table("", "a blocks scenario", (BATTLE, POLICY, side("attacker"), side("defender")))
