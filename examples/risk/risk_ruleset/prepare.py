"""A validated Risk battle -> the kernel's parameters, and its outcome columns."""

from __future__ import annotations

import numpy as np

from simulator.rulesets import Outcomes, Prepared

from . import kernel as k
from .model import Battle

#: Outcome column name -> index in the kernel's row.
COLUMNS = {
    "winner": k.O_WINNER,
    "steps": k.O_ROUNDS,
    "casualties.attacker.army": k.O_LOST_ATTACKER,
    "casualties.defender.army": k.O_LOST_DEFENDER,
}


class RiskPrepared(Prepared):
    kernel = "risk dice"

    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.params = np.array(
            [battle.attacker, battle.defender, battle.attacker_dice, battle.defender_dice],
            np.int64,
        )

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        out = np.zeros((count, k.N_COLUMNS), np.int64)
        if count:
            k.risk_battles(self.params, np.uint64(seed), first, out)
        return Outcomes(out, COLUMNS)
