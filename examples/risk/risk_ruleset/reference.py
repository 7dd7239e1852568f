"""The Risk battle in plain Python, written from the rules rather than from the kernel:
the slow reference the kernel is checked against in distribution (its tests)."""

from __future__ import annotations

import random

from .model import Battle


def simulate(battle: Battle, battles: int, seed: int) -> dict[str, list[int]]:
    """Outcome columns (as the kernel names them) of ``battles`` battles."""
    rng = random.Random(seed)
    columns: dict[str, list[int]] = {
        "winner": [],
        "steps": [],
        "casualties.attacker.army": [],
        "casualties.defender.army": [],
    }
    for _ in range(battles):
        attacker, defender, rounds = battle.attacker, battle.defender, 0
        while attacker and defender:
            attack = sorted(
                (rng.randint(1, 6) for _ in range(min(battle.attacker_dice, attacker))),
                reverse=True,
            )
            defend = sorted(
                (rng.randint(1, 6) for _ in range(min(battle.defender_dice, defender))),
                reverse=True,
            )
            for a, d in zip(attack, defend, strict=False):  # the fewer dice are compared
                if a > d:
                    defender -= 1
                else:
                    attacker -= 1
            rounds += 1
        columns["winner"].append(0 if defender == 0 else 1)
        columns["steps"].append(rounds)
        columns["casualties.attacker.army"].append(battle.attacker - attacker)
        columns["casualties.defender.army"].append(battle.defender - defender)
    return columns
