"""The state space of an Olympia battle's Markov chain: its size and its layout.

One position is one index of a mixed-radix number: a digit per group (its men, noble or
engines left), per structure (its points left before it collapses) and, under
``alternating`` order, the two strike budgets and the turn. The exact solver
(exact.py) pushes probability through that space; the chain kernel
(kernels/olympia/chain.py) walks battles through a table of it. Both size it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kernels.olympia import layout as k

from .model import SIDES, Battle

if TYPE_CHECKING:
    from .prepare import OlympiaArrays


@dataclass(frozen=True)
class ChainSize:
    """The state space of a battle's chain, factor by factor."""

    men: int
    structures: int
    budgets: int
    factors: tuple[tuple[str, int], ...]

    @property
    def states(self) -> int:
        return self.men * self.structures * self.budgets


@dataclass(frozen=True)
class Layout:
    """The mixed-radix digits of a position: per group (``radix`` / ``stride``), per
    structure (``sradix`` / ``sstride``, radix 1 for a side without one) and the
    budgets' radixes under ``alternating`` order (ones otherwise); ``states`` counts
    the positions without the budgets."""

    radix: np.ndarray
    stride: np.ndarray
    sradix: np.ndarray
    sstride: np.ndarray
    budget_radix: np.ndarray
    states: int


def size_of(battle: Battle, arrays: OlympiaArrays) -> ChainSize:
    groups = arrays.groups
    men = 1
    for g in range(groups.shape[0]):
        men *= int(groups[g, k.G_COUNT]) + 1
    structures = 1
    factors: list[tuple[str, int]] = [("men, nobles and engines", men)]
    for s, side in enumerate(battle.sides):
        if side.structure is not None:
            points = structure_points(arrays, s) + 1
            structures *= points
            factors.append((f"the {SIDES[s]}'s {side.structure.kind} (defense and damage)", points))
    budgets = 1
    if arrays.order == k.ALTERNATING:
        radix = budget_radix(arrays)
        budgets = int(radix[0] * radix[1] * 2)
        factors.append(("the alternating strike order's budgets", budgets))
    return ChainSize(men, structures, budgets, tuple(factors))


def structure_points(arrays: OlympiaArrays, s: int) -> int:
    sides = arrays.sides
    return int(sides[s, k.S_STRUCTURE_DEF] + k.COLLAPSE_DAMAGE - sides[s, k.S_STRUCTURE_DMG])


def budget_radix(arrays: OlympiaArrays) -> np.ndarray:
    """One more than the most strikes a side can ever have in a cycle (alternating)."""
    groups, sides = arrays.groups, arrays.sides
    most = [0, 0]
    for g in range(groups.shape[0]):
        s = int(groups[g, k.G_SIDE])
        if groups[g, k.G_KIND] == k.ENGINE:
            can = groups[g, k.G_FRONT] > 0 and sides[1 - s, k.S_HAS_STRUCTURE] == 1
        else:
            can = max(groups[g, k.G_FRONT], groups[g, k.G_REAR]) > 0
            if s == k.ATTACKER and groups[g, k.G_NONCOMBATANT] == 1:
                can = False
        if can:
            most[s] += int(groups[g, k.G_COUNT])
    return np.array([most[0] + 1, most[1] + 1], np.int64)


def layout(arrays: OlympiaArrays) -> Layout:
    """The digits of a battle whose space fits int64 indices (the caller checks)."""
    groups = arrays.groups
    radix = groups[:, k.G_COUNT] + 1
    stride = np.ones(len(groups), np.int64)
    men = 1
    for g in range(len(groups)):
        stride[g] = men
        men *= int(radix[g])
    sradix = np.ones(2, np.int64)
    for s in range(2):
        if arrays.sides[s, k.S_HAS_STRUCTURE]:
            sradix[s] = structure_points(arrays, s) + 1
    sstride = np.array([men, men * sradix[0]], np.int64)
    budgets = budget_radix(arrays) if arrays.order == k.ALTERNATING else np.ones(2, np.int64)
    return Layout(radix, stride, sradix, sstride, budgets, men * int(sradix[0] * sradix[1]))


def positions(arrays: OlympiaArrays) -> int:
    """Positions of the exact solver's space without the alternating budgets (exact)."""
    count = 1
    for g in range(arrays.groups.shape[0]):
        count *= int(arrays.groups[g, k.G_COUNT]) + 1
    for s in range(2):
        if arrays.sides[s, k.S_HAS_STRUCTURE]:
            count *= structure_points(arrays, s) + 1
    return count


def reachable_bound(arrays: OlympiaArrays) -> int:
    """An upper bound on the positions a battle can reach, cheap to compute: a side
    stops at its break point, so while it fights on it has lost less than its starting
    value less the break threshold, and a group of men worth ``v`` each can have lost
    at most that over ``v`` of them, plus the one whose death ends the battle. (The
    exact solver's space counts every count of every group.)"""
    groups, sides = arrays.groups, arrays.sides
    bound = 1
    for g in range(groups.shape[0]):
        s = int(groups[g, k.G_SIDE])
        count = int(groups[g, k.G_COUNT])
        value = int(groups[g, k.G_VALUE])
        start = int(sides[s, k.S_START])
        # Largest value lost with the side still standing: (start - lost) * 100 > start * break.
        lost = start - (start * int(sides[s, k.S_BREAK])) // 100 - 1
        if value > 0 and lost >= 0:
            count = min(count, lost // value + 1)
        bound *= count + 1
    for s in range(2):
        if sides[s, k.S_HAS_STRUCTURE]:
            bound *= structure_points(arrays, s) + 1
    return bound
