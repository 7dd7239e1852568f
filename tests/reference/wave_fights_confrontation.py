"""Confrontation's reference battles as waves (tests/reference/waves.py): a side is its
stacks, and the side a battle left is its stacks holding the units still alive, each with
the integrity and resolve it was left with (a stack with none is gone)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from simulator.rulesets.confrontation.model import SIDES, Battle, Stack
from tests.reference.confrontation import ReferenceBattle
from tests.reference.waves import Fight


class ConfrontationFights:
    def types(self, model: Battle, side: str) -> Counter[str]:
        s = SIDES.index(side)
        return Counter(
            unit.type for stack in model.stacks if stack.side == s for unit in stack.units
        )

    def written(self, model: Battle, side: str) -> list[Stack]:
        return [stack for stack in model.stacks if stack.side == SIDES.index(side)]

    def nothing_left(self, facing: list[Stack]) -> bool:
        return not facing

    def fight(self, model: Battle, side: str, facing: list[Stack], rng: random.Random) -> Fight:
        own = self.written(model, side)
        stacks = own + facing if side == "attacker" else facing + own
        battle = ReferenceBattle(replace(model, stacks=tuple(stacks)), rng)
        winner, steps = battle.play()
        lost = Counter((SIDES[f.side], f.unit.type) for f in battle.fighters if not f.alive)
        alive = Counter((SIDES[f.side], f.unit.type) for f in battle.fighters if f.alive)
        other = 1 - SIDES.index(side)
        return Fight(
            winner, steps, winner == 2 and steps == model.turns, lost, alive, _left(battle, other)
        )


def _left(battle: ReferenceBattle, side: int) -> list[Stack]:
    """Side ``side``'s stacks as ``battle`` left them."""
    kept = []
    for stack, members in zip(battle.stacks, battle.of_stack, strict=True):
        if stack.side != side:
            continue
        units = tuple(
            replace(f.unit, integrity=f.integrity, resolve=f.resolve) for f in members if f.alive
        )
        if units:
            kept.append(replace(stack, units=units))
    return kept


FIGHTS = ConfrontationFights()
