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
from simulator.input.reader import Node

from .keys import (
    ARMIES,
    ATTACKER_DICE,
    BATTLE,
    DEFAULT_ATTACKER_DICE,
    DEFAULT_DEFENDER_DICE,
    DEFENDER_DICE,
    SCENARIO,
    SIDES,
)


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
    """Read ``data`` through the declared keys (keys.py): every error names the file,
    line, key, value and what was expected."""
    top = Node(data, "", source)
    top.only(SCENARIO)
    armies = []
    for side in SIDES:
        if not top.has(side):
            raise top.fail(f"is required: expected a [{side}] table with armies = N", side)
        node = top.child(side)
        node.only(SCENARIO[side])
        armies.append(node.read(ARMIES))
    battle = top.child("battle", {})
    battle.only(BATTLE)
    return Battle(
        attacker=armies[0],
        defender=armies[1],
        attacker_dice=battle.read(ATTACKER_DICE),
        defender_dice=battle.read(DEFENDER_DICE),
    )
