"""Skirmish's reference battles as waves (tests/reference/waves.py): a side is its
participants, each on its tile, and the side a battle left is its participants still
alive, each at the health it was left with. Its healing, once a battle, is its own
again in the next fight (a battle of its own), as the package reads it (docs/unfolding.md,
"Waves").

Built from the reference's own fighters (tests/reference/skirmish.py's ``Fighter`` and
``Fight``), not from scenario tables; the validated model gives each participant's tile
and its starting state. On a tile both sides stand on, the attacker's participants act
first, as a fight of two sides' own stacks seats them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

from simulator.rulesets.skirmish.model import SIDES, Battle
from tests.reference.skirmish import Fight as ReferenceFight
from tests.reference.skirmish import Fighter
from tests.reference.waves import Fight

#: A participant and the direction of its tile (0..5 the neighbours, 6 the attacked tile).
Seat = tuple[int, Fighter]


class SkirmishFights:
    def types(self, model: Battle, side: str) -> Counter[str]:
        s = SIDES.index(side)
        return Counter(p.unit.name for p in model.participants if p.side == s)

    def written(self, model: Battle, side: str) -> list[Seat]:
        s = SIDES.index(side)
        return [
            (
                p.direction,
                Fighter(
                    p.id,
                    p.side,
                    p.unit.name,
                    p.unit.attack,
                    p.unit.defence,
                    p.unit.damage,
                    p.unit.health,
                    p.health,
                    set(p.unit.abilities),
                    p.healed,
                ),
            )
            for p in model.participants
            if p.side == s
        ]

    def nothing_left(self, facing: list[Seat]) -> bool:
        return not facing

    def fight(self, model: Battle, side: str, facing: list[Seat], rng: random.Random) -> Fight:
        seats = sorted(
            [*self.written(model, side), *facing], key=lambda seat: (seat[0], seat[1].side)
        )
        fighters = [replace(f, id=i) for i, (_, f) in enumerate(seats)]
        battle = ReferenceFight(fighters, rng, **_played(model))
        winner = battle.run()
        lost = Counter((SIDES[f.side], f.type) for f in fighters if f.health <= 0)
        alive = Counter((SIDES[f.side], f.type) for f in fighters if f.health > 0)
        other = 1 - SIDES.index(side)
        left = [
            (d, replace(f, healed=False))
            for (d, _), f in zip(seats, fighters, strict=True)
            if f.side == other and f.health > 0
        ]
        return Fight(winner, battle.turn, battle.hit_turn_limit, lost, alive, left)


def _played(model: Battle) -> dict[str, Any]:
    """How the reference's Fight plays ``model``: its moves' values, turn limit, reading
    of the rules, turns fought and stop rules."""
    return {
        "sampled": model.expected_value == "sampled5",
        "turn_limit": model.turn_limit,
        "engine": model.rules == "engine",
        "from_step": model.from_step,
        "retreat": model.retreat,
    }


FIGHTS = SkirmishFights()
