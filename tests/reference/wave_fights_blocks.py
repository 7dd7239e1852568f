"""Blocks' reference battles as waves (tests/reference/waves.py): a side is its blocks,
and the side a battle left is its blocks still in the area, built from the reference's
own pieces (tests/reference/blocks.py): each with the steps it kept, in the castle if it
ended there or sallying from it (the attacker's in the field: only the defender holds
the castle in a new battle), in the field if it ended there or storming, still on the
road if its round had not come; eliminated and retreated blocks are gone. A men's "type"
is a block, its men its steps."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from simulator.rulesets.blocks.model import SIDES, Battle, Block
from tests.reference.blocks import Fight as ReferenceFight
from tests.reference.waves import Fight

_AT = {"field": "field", "storming": "field", "castle": "castle", "sallying": "castle"}


class BlocksFights:
    def types(self, model: Battle, side: str) -> Counter[str]:
        return Counter({b.name: b.steps for b in model.sides[SIDES.index(side)]})

    def written(self, model: Battle, side: str) -> tuple[Block, ...]:
        return model.sides[SIDES.index(side)]

    def nothing_left(self, facing: tuple[Block, ...]) -> bool:
        return not facing

    def fight(
        self, model: Battle, side: str, facing: tuple[Block, ...], rng: random.Random
    ) -> Fight:
        other = SIDES[1 - SIDES.index(side)]
        battle = replace(model, **{other: facing})
        fight = ReferenceFight(battle, rng)
        row = fight.run()
        lost = Counter({(SIDES[p.side], p.name): p.lost for p in fight.pieces})
        alive = Counter({(SIDES[p.side], p.name): p.steps for p in fight.pieces})
        written = {b.name: b for b in facing}
        left = []
        for p in fight.pieces:
            if SIDES[p.side] != other or not p.in_area:
                continue
            at = "reserve" if p.where == "reserve" else _AT[p.where]
            if at == "castle" and other == "attacker":
                at = "field"
            left.append(replace(written[p.name], steps=p.steps, at=at))
        return Fight(row["winner"], row["steps"], False, lost, alive, tuple(left))


FIGHTS = BlocksFights()
