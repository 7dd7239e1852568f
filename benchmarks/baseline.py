"""The yardstick of issue 15: a plain per-strike Numba kernel of one Olympia battle.

"noble, 100 soldier" against "noble, 20 knight", random strike order, written the way a
competent user would in an afternoon: one array slot per man (living men kept packed
at the front by swapping the dead out), a SplitMix64 stream per battle, a striker drawn
uniformly from every living man of both sides, a target uniformly from the enemy's men
(the noble only once his men are down), a hit with chance a / (a + d), a wounded or
killed noble out of the fight, and a side broken when it has lost half its value.
``prange`` over battles. It reports winner, strikes and each side's losses.

    python benchmarks/baseline.py [--battles N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit, prange

# Per side: (noble attack, noble defense, noble value, men, man attack, man defense,
# man value, break percent). Values are attack + defense (the package's unit table).
ATTACKER = (80, 80, 160, 100, 5, 5, 10, 50)
DEFENDER = (80, 80, 160, 20, 45, 45, 90, 50)
#: Outcome columns.
WINNER, STRIKES, LOST_ATTACKER, LOST_DEFENDER = range(4)
#: Battles per parallel work item: the scratch arrays are allocated once per block.
BLOCK = 64


@njit(inline="always")
def _splitmix(x):
    x += np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(inline="always")
def _uniform(x):
    x, z = _splitmix(x)
    return x, float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(parallel=True, cache=True)
def baseline_battles(sides, seed, out):
    """Battles ``0 .. len(out) - 1``; ``sides[s]`` as ATTACKER / DEFENDER above."""
    n_men = max(sides[0, 3], sides[1, 3]) + 1
    n = out.shape[0]
    for block in prange((n + BLOCK - 1) // BLOCK):
        # Slot 0 is the noble, slots 1.. his men; living slots are kept packed.
        attack = np.empty((2, n_men), np.int64)
        defense = np.empty((2, n_men), np.int64)
        value = np.empty((2, n_men), np.int64)
        alive = np.zeros(2, np.int64)
        total = np.zeros(2, np.int64)
        men = np.zeros(2, np.int64)
        left = np.zeros(2, np.int64)
        for b in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            _battle(sides, seed, b, attack, defense, value, alive, total, men, left, out[b])


@njit(cache=True)
def _battle(sides, seed, b, attack, defense, value, alive, total, men, left, row):
    for s in range(2):
        attack[s, 0], defense[s, 0], value[s, 0] = sides[s, 0], sides[s, 1], sides[s, 2]
        for m in range(1, sides[s, 3] + 1):
            attack[s, m], defense[s, m], value[s, m] = sides[s, 4], sides[s, 5], sides[s, 6]
        alive[s] = sides[s, 3] + 1
        men[s] = sides[s, 3]
        total[s] = sides[s, 2] + sides[s, 3] * sides[s, 6]
    left[:] = total
    x = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(b)
    x, _ = _splitmix(x)
    strikes = 0
    winner = 2
    while alive[0] + alive[1] > 0:
        x, u = _uniform(x)
        k = int(u * (alive[0] + alive[1]))
        s = 0 if k < alive[0] else 1
        striker = k if s == 0 else k - alive[0]
        e = 1 - s
        # The noble (slot 0) is shielded while any of his men stands.
        x, u = _uniform(x)
        target = 1 + int(u * men[e]) if men[e] > 0 else 0
        strikes += 1
        a = attack[s, striker]
        x, u = _uniform(x)
        if u * (a + defense[e, target]) < a:
            left[e] -= value[e, target]
            last = alive[e] - 1
            if target > 0:
                men[e] -= 1
                attack[e, target] = attack[e, last]
                defense[e, target] = defense[e, last]
                value[e, target] = value[e, last]
            alive[e] = last  # the noble (target 0) was the last man: 0 left
            row[LOST_ATTACKER + e] += 1
        lost_a = alive[0] == 0 or left[0] * 100 <= total[0] * sides[0, 7]
        lost_d = alive[1] == 0 or left[1] * 100 <= total[1] * sides[1, 7]
        if lost_a or lost_d:
            winner = 2 if lost_a and lost_d else (1 if lost_a else 0)
            break
    row[WINNER] = winner
    row[STRIKES] = strikes


def run(battles: int, seed: int = 1) -> np.ndarray:
    """Outcome rows (WINNER, STRIKES, LOST_ATTACKER, LOST_DEFENDER) of ``battles`` battles."""
    out = np.zeros((battles, 4), np.int64)
    baseline_battles(np.array([ATTACKER, DEFENDER], np.int64), seed, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=4_000_000)
    args = parser.parse_args()
    run(1)
    started = time.perf_counter()
    out = run(args.battles)
    seconds = time.perf_counter() - started
    wins = float((out[:, WINNER] == 0).mean())
    print(f"{args.battles / seconds:,.0f} battles/s; attacker wins {wins:.5f}")


if __name__ == "__main__":
    main()
