"""Exact answers for Risk battles: the Markov chain over (attacker armies, defender armies).

A round's outcome depends only on the dice rolled: with ``a`` attacking and ``d``
defending dice, ``min(a, d)`` comparisons are made and the attacker loses ``k`` of them
with a probability counted over all ``6 ** (a + d)`` rolls (:func:`round_counts`). Every
round removes at least one army, so the chain visits a state at most once and the
states can be solved in one sweep from the start: the probability of reaching each
state, whose sum over the states still fighting is the expected number of rounds.
"""

from __future__ import annotations

import itertools
import math
import time
from functools import cache

import numpy as np

from kernels import jit
from simulator.errors import BattleOddsError
from simulator.rulesets import ExactResult
from simulator.scenario.scenario import Scenario

from .keys import MOST_DICE
from .model import Battle

#: States (armies 0..A x 0..D) the solver accepts: 80 MB of probabilities.
MAX_STATES = 10_000_000


@cache
def round_counts(attack_dice: int, defend_dice: int) -> tuple[int, ...]:
    """Of the ``6 ** (attack_dice + defend_dice)`` rolls, how many cost the attacker
    0, 1, .. ``min(attack_dice, defend_dice)`` armies (the defender loses the rest)."""
    compared = min(attack_dice, defend_dice)
    counts = [0] * (compared + 1)
    for roll in itertools.product(range(1, 7), repeat=attack_dice + defend_dice):
        attack = sorted(roll[:attack_dice], reverse=True)
        defend = sorted(roll[attack_dice:], reverse=True)
        counts[sum(a <= d for a, d in zip(attack, defend, strict=False))] += 1
    return tuple(counts)


def _loss_table(battle: Battle) -> np.ndarray:
    """``table[a, d, k]``: P(the attacker loses k armies) with a and d dice rolled."""
    table = np.zeros((MOST_DICE + 1, MOST_DICE + 1, MOST_DICE + 1))
    for a in range(1, battle.attacker_dice + 1):
        for d in range(1, battle.defender_dice + 1):
            counts = round_counts(a, d)
            table[a, d, : len(counts)] = np.array(counts) / 6 ** (a + d)
    return table


@jit
def _solve_chain(attacker, defender, attack_dice, defend_dice, table, reach):
    """Fill ``reach[a, d]`` (P(the battle passes through a, d)); return expected rounds.

    States are taken in decreasing (a, d) order: a round leads only to states with
    fewer or as many armies on each side and fewer in total, all taken later."""
    reach[attacker, defender] = 1.0
    rounds = 0.0
    for a in range(attacker, 0, -1):
        for d in range(defender, 0, -1):
            p = reach[a, d]
            if p == 0.0:
                continue
            rounds += p
            rolled_a = min(attack_dice, a)
            rolled_d = min(defend_dice, d)
            compared = min(rolled_a, rolled_d)
            for lost in range(compared + 1):
                reach[a - lost, d - (compared - lost)] += p * table[rolled_a, rolled_d, lost]
    return rounds


def solve(scenario: Scenario, max_states: int = MAX_STATES) -> ExactResult:
    """Exact win probabilities, expected rounds and expected armies lost per side."""
    battle: Battle = scenario.model
    started = time.perf_counter()
    states = (battle.attacker + 1) * (battle.defender + 1)
    if states > max_states:
        raise BattleOddsError(
            f"{scenario.source.label}: too large for an exact answer: {states:,} states "
            f"({battle.attacker + 1:,} attacker x {battle.defender + 1:,} defender army "
            f"counts), over the limit of {max_states:,}; use `battle-odds run` instead"
        )
    reach = np.zeros((battle.attacker + 1, battle.defender + 1))
    rounds = _solve_chain(
        battle.attacker,
        battle.defender,
        battle.attacker_dice,
        battle.defender_dice,
        _loss_table(battle),
        reach,
    )
    won = reach[1:, 0]  # the defender has no armies left, the attacker 1..A
    lost = reach[0, 1:]
    p_attacker = float(won.sum())
    if not math.isclose(p_attacker + float(lost.sum()), 1.0, abs_tol=1e-9):
        raise AssertionError(f"Risk chain lost probability mass: {p_attacker} + {lost.sum()}")
    left_attacker = np.arange(1, battle.attacker + 1)
    left_defender = np.arange(1, battle.defender + 1)
    return ExactResult(
        scenario=scenario,
        win={"attacker": p_attacker, "defender": 1.0 - p_attacker, "draw": 0.0},
        expected_steps=float(rounds),
        casualties={
            "casualties.attacker.army": battle.attacker - float(won @ left_attacker),
            "casualties.defender.army": battle.defender - float(lost @ left_defender),
        },
        extras={},
        states=states,
        seconds=time.perf_counter() - started,
    )
