"""Waves in plain Python: each battle a chain of the reference confrontation's battles.

Follows docs/unfolding.md ("Waves") with the validated models alone: wave k's battle
is the wave's own stacks (as its scenario against the other side as written holds them)
and the other side's stacks as the battle before left them, rebuilt here from the
reference's fighters (units alive, with the integrity and resolve they were left with;
a stack with none gone), not from scenario tables as the package does. One Python
random stream runs every battle one after another, so agreement with the package in
distribution checks the survivors' tables, the chain and the columns, not the streams.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import numpy as np

from simulator.rulesets.confrontation.model import SIDES, Stack
from simulator.scenario.waves import NOT_FOUGHT, SIDE_WON, Waves
from tests.reference.confrontation import ReferenceBattle


def run(waves: Waves, battles: int, seed: int) -> dict[str, np.ndarray]:
    """The columns of ``battles`` battles of a confrontation scenario with waves, named
    as the package's (scenario/waves.py)."""
    rng = random.Random(seed)
    side, other = waves.side, waves.other
    s, o = SIDES.index(side), SIDES.index(other)
    models = [scenario.model for scenario in waves.scenarios]
    own_types = [
        Counter(unit.type for stack in m.stacks if stack.side == s for unit in stack.units)
        for m in models
    ]
    first_other = [stack for stack in models[0].stacks if stack.side == o]
    other_types = Counter(unit.type for stack in first_other for unit in stack.units)
    all_own = list(dict.fromkeys(t for types in own_types for t in types))
    rows: dict[str, list[int]] = {}
    for _ in range(battles):
        row: dict[str, int] = {"winner": 0, "steps": 0, "turn_limit": 0, "waves_fought": 0}
        for t in all_own:
            row[f"casualties.{side}.{t}"] = 0
        for t in other_types:
            row[f"casualties.{other}.{t}"] = 0
        facing: list[Stack] = first_other
        won = False
        for k, model in enumerate(models, 1):
            prefix = f"wave.{k}."
            columns = [
                f"{what}.{x}.{t}"
                for what in ("casualties", "left")
                for x, types in ((side, own_types[k - 1]), (other, other_types))
                for t in types
            ]
            if won:
                row[prefix + "winner"] = row[prefix + "steps"] = NOT_FOUGHT
                row.update({prefix + c: NOT_FOUGHT for c in columns})
                continue
            row["waves_fought"] = k
            if not facing:  # nothing of the other side left: the wave wins unopposed
                row["winner"] = row[prefix + "winner"] = SIDE_WON[side][0]
                row[prefix + "steps"] = 0
                row["turn_limit"] = 0
                for c in columns:
                    what, x, t = c.split(".")
                    row[prefix + c] = own_types[k - 1][t] if (what, x) == ("left", side) else 0
                won = True
                continue
            own = [stack for stack in model.stacks if stack.side == s]
            stacks = own + facing if side == "attacker" else facing + own
            battle = ReferenceBattle(replace(model, stacks=tuple(stacks)), rng)
            winner, steps = battle.play()
            row["winner"] = row[prefix + "winner"] = winner
            row[prefix + "steps"] = steps
            row["steps"] += steps
            row["turn_limit"] = int(winner == 2 and steps == model.turns)
            lost = Counter((SIDES[f.side], f.unit.type) for f in battle.fighters if not f.alive)
            alive = Counter((SIDES[f.side], f.unit.type) for f in battle.fighters if f.alive)
            for c in columns:
                what, x, t = c.split(".")
                row[prefix + c] = (lost if what == "casualties" else alive)[(x, t)]
                if what == "casualties":
                    row[f"casualties.{x}.{t}"] += lost[(x, t)]
            facing = _left(battle, o)
            won = winner in SIDE_WON[side]
        for key, value in row.items():
            rows.setdefault(key, []).append(value)
    return {key: np.array(values, np.int64) for key, values in rows.items()}


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
