"""Exact answers for small Olympia battles (docs/exact.md).

``exact(scenario)`` solves the Markov chain of the strike kernel (kernels/olympia.py):
win / loss / draw probabilities, expected strikes, expected casualties per type and
the expectation of every other outcome column (nobles, leader, structure, engines).
The chain itself is solved by kernels/olympia_exact.py; this module sizes it,
refuses what would be too large, and names the results.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels import olympia as k
from kernels import olympia_exact as kx

from ...errors import BattleOddsError
from ..exact import ExactResult
from .model import SIDES, Battle
from .prepare import OlympiaArrays, OlympiaPrepared, compile_battle

#: States (of the full mixed-radix space) the solver accepts: about 80 MB of floats.
MAX_STATES = 10_000_000


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


def _chain_size(battle: Battle, arrays: OlympiaArrays) -> ChainSize:
    groups = arrays.groups
    men = 1
    for g in range(groups.shape[0]):
        men *= int(groups[g, k.G_COUNT]) + 1
    structures = 1
    factors: list[tuple[str, int]] = [("men, nobles and engines", men)]
    for s, side in enumerate(battle.sides):
        if side.structure is not None:
            points = _structure_points(arrays, s) + 1
            structures *= points
            factors.append((f"the {SIDES[s]}'s {side.structure.kind} (defense and damage)", points))
    budgets = 1
    if arrays.order == k.ALTERNATING:
        radix = _budget_radix(arrays)
        budgets = int(radix[0] * radix[1] * 2)
        factors.append(("the alternating strike order's budgets", budgets))
    return ChainSize(men, structures, budgets, tuple(factors))


def _structure_points(arrays: OlympiaArrays, s: int) -> int:
    sides = arrays.sides
    return int(sides[s, k.S_STRUCTURE_DEF] + k.COLLAPSE_DAMAGE - sides[s, k.S_STRUCTURE_DMG])


def _budget_radix(arrays: OlympiaArrays) -> np.ndarray:
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


def chain_size(battle: Battle) -> ChainSize:
    """How many states the exact solver would need for ``battle``."""
    return _chain_size(battle, compile_battle(battle))


def exact(scenario: Any, max_states: int = MAX_STATES) -> ExactResult:
    """Exact win / loss / draw probabilities and expectations for an Olympia scenario.

    Raises :class:`BattleOddsError` when the chain has more than ``max_states`` states,
    naming its size and what makes it large.
    """
    if scenario.ruleset != "olympia":
        raise BattleOddsError(
            f"{scenario.source.label}: exact answers exist for the olympia "
            f"ruleset only, not '{scenario.ruleset}'"
        )
    battle: Battle = scenario.model
    started = time.perf_counter()
    arrays = compile_battle(battle)
    size = _chain_size(battle, arrays)
    if size.states > max_states:
        parts = " x ".join(f"{n:,} ({what})" for what, n in size.factors)
        because = ""
        if size.men <= max_states:
            rule, factor = max(size.factors[1:], key=lambda f: f[1])
            because = (
                f"; the men alone would fit ({size.men:,}) but the rule of {rule} "
                f"multiplies them by {factor:,}"
            )
        raise BattleOddsError(
            f"{scenario.source.label}: too large for an exact answer: {size.states:,} states "
            f"= {parts}, over the limit of {max_states:,}{because}; use `battle-odds run` "
            "(Monte Carlo) instead"
        )

    groups = arrays.groups
    radix = groups[:, k.G_COUNT] + 1
    stride = np.ones(len(groups), np.int64)
    for g in range(1, len(groups)):
        stride[g] = stride[g - 1] * radix[g - 1]
    sradix = np.ones(2, np.int64)
    for s in range(2):
        if arrays.sides[s, k.S_HAS_STRUCTURE]:
            sradix[s] = _structure_points(arrays, s) + 1
    sstride = np.array([size.men, size.men * sradix[0]], np.int64)
    budget_radix = _budget_radix(arrays) if arrays.order == k.ALTERNATING else np.ones(2, np.int64)
    res = np.zeros(2 + arrays.n_columns)
    stuck = kx.solve_chain(
        groups,
        arrays.survive,
        arrays.sides,
        arrays.order,
        radix,
        stride,
        sradix,
        sstride,
        budget_radix,
        size.men * size.structures,
        res,
    )
    if stuck:
        raise BattleOddsError(
            f"{scenario.source.label}: a reachable position can never end "
            "(strikers that cannot hit anything): no exact answer"
        )

    columns = OlympiaPrepared(battle).columns
    mean_of = {
        name: float(res[col + 2])
        for name, col in columns.items()
        if name not in ("winner", "steps")
    }
    casualties = {n: v for n, v in mean_of.items() if n.startswith("casualties.")}
    extras = {n: v for n, v in mean_of.items() if not n.startswith("casualties.")}
    # Rounding in the sums can step a hair outside [0, 1].
    win = {
        outcome: min(1.0, max(0.0, float(res[code])))
        for outcome, code in (("attacker", k.ATTACKER), ("defender", k.DEFENDER), ("draw", k.DRAW))
    }
    if not math.isclose(sum(win.values()), 1.0, abs_tol=1e-9):
        raise AssertionError(f"exact solver lost probability mass: {win}")
    return ExactResult(
        scenario=scenario,
        win=win,
        expected_steps=float(res[kx.R_STRIKES]),
        casualties=casualties,
        extras=extras,
        states=size.states,
        seconds=time.perf_counter() - started,
        flags=frozenset(n for n in extras if n.startswith(("leader_", "structure_collapsed"))),
    )
