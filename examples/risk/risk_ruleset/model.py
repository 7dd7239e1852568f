"""Risk scenario data -> a validated :class:`Battle`.

```toml
ruleset = "risk"
[attacker]
armies = 10          # the armies that fight (the one left behind is not counted)
[defender]
armies = 8
[battle]             # optional: house rules
attacker_dice = 3    # most dice the attacker rolls in a round (1..3, default 3)
defender_dice = 2    # most dice the defender rolls in a round (1..3, default 2)
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simulator.errors import Source
from simulator.reader import Node

SIDES = ("attacker", "defender")
DEFAULT_ATTACKER_DICE = 3
DEFAULT_DEFENDER_DICE = 2
#: Most dice either side may roll: the exact solver enumerates 6**(dice of both) rolls.
MOST_DICE = 3
#: Armies a side may bring: a battle takes about (attacker + defender) / 2 rounds.
MOST_ARMIES = 1_000_000
BATTLE_KEYS = ("attacker_dice", "defender_dice")


@dataclass(frozen=True)
class Battle:
    attacker: int
    defender: int
    attacker_dice: int = DEFAULT_ATTACKER_DICE
    defender_dice: int = DEFAULT_DEFENDER_DICE

    @property
    def armies(self) -> tuple[int, int]:
        return self.attacker, self.defender


def validate(data: Mapping[str, Any], source: Source) -> Battle:
    top = Node(data, "", source)
    top.only([*SIDES, "battle"])
    armies = []
    for side in SIDES:
        if not top.has(side):
            raise top.fail(f"is required: expected a [{side}] table with armies = N", side)
        node = top.child(side)
        node.only(["armies"])
        armies.append(node.integer("armies", lo=1, hi=MOST_ARMIES))
    battle = top.child("battle", {})
    battle.only(BATTLE_KEYS)
    return Battle(
        attacker=armies[0],
        defender=armies[1],
        attacker_dice=battle.integer("attacker_dice", DEFAULT_ATTACKER_DICE, lo=1, hi=MOST_DICE),
        defender_dice=battle.integer("defender_dice", DEFAULT_DEFENDER_DICE, lo=1, hi=MOST_DICE),
    )
