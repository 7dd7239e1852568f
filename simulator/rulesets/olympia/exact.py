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
from typing import Any

import numpy as np

from kernels import olympia as k
from kernels import olympia_exact as kx

from ...errors import BattleOddsError
from ..exact import ExactResult, ExactState
from .model import Battle
from .prepare import OlympiaPrepared, compile_battle
from .space import ChainSize, layout, size_of

#: States (of the full mixed-radix space) the solver accepts: about 80 MB of floats.
MAX_STATES = 10_000_000


def chain_size(battle: Battle) -> ChainSize:
    """How many states the exact solver would need for ``battle``."""
    return size_of(battle, compile_battle(battle))


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
    size = size_of(battle, arrays)
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

    space = layout(arrays)
    res = np.zeros(2 + arrays.n_columns)
    stuck = kx.solve_chain(
        arrays.groups,
        arrays.survive,
        arrays.sides,
        arrays.order,
        space.radix,
        space.stride,
        space.sradix,
        space.sstride,
        space.budget_radix,
        space.states,
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


def exact_after(scenario: Any, strikes: int, max_states: int = MAX_STATES) -> ExactState:
    """The exact state of a small olympia battle after ``strikes`` strikes (the random
    strike order; the chain of :func:`exact` pushed one strike at a time, misses
    included). The counterpart of ``run_until`` and ``battle-odds run --after``."""
    battle: Battle = scenario.model
    if scenario.ruleset != "olympia" or battle.strike_order != "random":
        raise BattleOddsError(
            f"{scenario.source.label}: the exact state after a strike is solved for "
            "olympia's random strike order only"
        )
    if strikes < 1:
        raise BattleOddsError(f"{scenario.source.label}: strikes {strikes}: expected 1 or more")
    arrays = compile_battle(battle)
    size = size_of(battle, arrays)
    if size.states > max_states:
        raise BattleOddsError(
            f"{scenario.source.label}: too large for an exact answer: {size.states:,} states, "
            f"over the limit of {max_states:,}"
        )
    space = layout(arrays)
    status = np.empty(space.states, np.int64)
    try:
        mass = kx.mass_after(
            arrays.groups,
            arrays.survive,
            arrays.sides,
            arrays.order,
            (space.radix, space.stride, space.sradix, space.sstride),
            space.states,
            strikes,
            status,
        )
    except ValueError as exc:
        raise BattleOddsError(f"{scenario.source.label}: {exc}: no exact state") from None
    held = np.flatnonzero(mass)
    p = mass[held]
    decided = {
        outcome: float(p[status[held] == code].sum())
        for outcome, code in (("attacker", k.ATTACKER), ("defender", k.DEFENDER), ("draw", k.DRAW))
    }
    groups = arrays.groups
    left_by_column: dict[int, np.ndarray] = {}
    for g in range(groups.shape[0]):
        if groups[g, k.G_KIND] == k.MAN:
            count = (held // space.stride[g]) % space.radix[g]
            column = int(groups[g, k.G_COLUMN])
            left_by_column[column] = left_by_column.get(column, 0) + count
    men_left = {}
    for i, name in enumerate(arrays.casualty_names):
        left = left_by_column.get(k.O_CASUALTIES + i, np.zeros_like(held))
        values, where = np.unique(left, return_inverse=True)
        chances = np.bincount(where, weights=p)
        men_left[name.removeprefix("casualties.")] = dict(
            zip(values.tolist(), chances.tolist(), strict=True)
        )
    return ExactState(
        scenario=scenario,
        step=strikes,
        decided=decided,
        fighting=float(p[status[held] == kx.PLAYS].sum()),
        men_left=men_left,
        states=size.states,
    )
