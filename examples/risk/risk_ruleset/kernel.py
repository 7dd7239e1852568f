"""The Risk battle kernel: one integer outcome row per battle, on all cores.

Built from battle-odds' public kernel pieces only: :func:`kernels.jit` and the
per-battle streams of :mod:`kernels.rng` (battle ``first + i`` of ``seed`` draws from
its own stream, so any thread count or chunking gives the same battles).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from kernels import jit
from kernels.rng import below, new_state, seed_battle

# Outcome row: who won (0 attacker, 1 defender), rounds fought, armies lost per side.
O_WINNER, O_ROUNDS, O_LOST_ATTACKER, O_LOST_DEFENDER = 0, 1, 2, 3
N_COLUMNS = 4
# Parameters: armies and most dice per side.
P_ATTACKER, P_DEFENDER, P_ATTACKER_DICE, P_DEFENDER_DICE = 0, 1, 2, 3
#: Battles per parallel work item: one stream state and dice buffers each.
BLOCK = 256


@jit(inline=True)
def roll_sorted(state, dice, out):
    """Roll ``dice`` dice into ``out[:dice]``, highest first."""
    for k in range(dice):
        value = below(state, 6) + 1
        j = k
        while j > 0 and out[j - 1] < value:
            out[j] = out[j - 1]
            j -= 1
        out[j] = value


@jit
def one_battle(state, params, attack_roll, defend_roll, row):
    attacker = params[P_ATTACKER]
    defender = params[P_DEFENDER]
    rounds = 0
    while attacker > 0 and defender > 0:
        attack_dice = min(params[P_ATTACKER_DICE], attacker)
        defend_dice = min(params[P_DEFENDER_DICE], defender)
        roll_sorted(state, attack_dice, attack_roll)
        roll_sorted(state, defend_dice, defend_roll)
        for k in range(min(attack_dice, defend_dice)):
            if attack_roll[k] > defend_roll[k]:
                defender -= 1
            else:
                attacker -= 1
        rounds += 1
    row[O_WINNER] = 0 if defender == 0 else 1
    row[O_ROUNDS] = rounds
    row[O_LOST_ATTACKER] = params[P_ATTACKER] - attacker
    row[O_LOST_DEFENDER] = params[P_DEFENDER] - defender


@jit(parallel=True)
def risk_battles(params, seed, first, out):
    """Battles ``first .. first + len(out) - 1`` of run ``seed`` into ``out``."""
    n = out.shape[0]
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = new_state()
        attack_roll = np.empty(3, np.int64)
        defend_roll = np.empty(3, np.int64)
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            seed_battle(state, seed, first + i)
            one_battle(state, params, attack_roll, defend_roll, out[i])
