"""Exact answers for small Olympia battles (docs/exact.md).

``exact(scenario)`` solves the Markov chain of the strike kernel (kernels/olympia/strike.py):
win / loss / draw probabilities, expected strikes, expected casualties per type and
the expectation of every other outcome column (nobles, leader, structure, engines);
with the sides' stop rules (``[attacker.retreat]``), the chances that each withdraws.
The battle starts from the scenario's armies as they stand, ``from_step`` strikes into
it. The chain itself is solved by kernels/olympia/exact.py; this module sizes it,
refuses what would be too large, and names the results.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from kernels.olympia import exact as kx
from kernels.olympia import layout as k

from ...errors import BattleOddsError
from ..exact import ExactResult, ExactState
from ..stop_rules import STOP_AFTER
from .model import Battle
from .prepare import OlympiaArrays, OlympiaPrepared, compile_battle, encode_stops
from .space import ChainSize, layout, size_of

#: States (of the full mixed-radix space) the solver accepts: about 80 MB of floats.
MAX_STATES = 10_000_000
#: Strikes times states the solver pushes one strike at a time for a stop rule's
#: ``after`` (a few seconds' work on a small battle).
MAX_STRIKE_STATES = 500_000_000
#: The outcomes of the answer: the chain's winner codes, withdrawals only with a rule.
_WON = (("attacker", k.ATTACKER), ("defender", k.DEFENDER), ("draw", k.DRAW))
_WITHDREW = (("attacker_withdrew", 0), ("defender_withdrew", 1))


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
    stops = encode_stops(battle, arrays)
    res = np.zeros(2 + arrays.n_columns + kx.R_WITHDREW)
    if stops[:, STOP_AFTER].any() and not _solve_in_strikes(scenario, arrays, space, stops, res):
        stops[:, STOP_AFTER] = 0  # over after the first strike: no rule of time comes in
    stuck = 0
    if not stops[:, STOP_AFTER].any():
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
            stops,
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
    withdrew = res[len(res) - kx.R_WITHDREW :]
    chances = [(o, res[code]) for o, code in _WON]
    if any(not rule.never for rule in battle.retreat):
        chances += [(o, withdrew[side]) for o, side in _WITHDREW]
    elif withdrew.any():
        raise AssertionError(f"a side withdrew without a stop rule: {withdrew}")
    # Rounding in the sums can step a hair outside [0, 1].
    win = {outcome: min(1.0, max(0.0, float(p))) for outcome, p in chances}
    if not math.isclose(sum(win.values()), 1.0, abs_tol=1e-9):
        raise AssertionError(f"exact solver lost probability mass: {win}")
    return ExactResult(
        scenario=scenario,
        win=win,
        expected_steps=battle.from_step + float(res[kx.R_STRIKES]),
        casualties=casualties,
        extras=extras,
        states=size.states,
        seconds=time.perf_counter() - started,
        flags=frozenset(n for n in extras if n.startswith(("leader_", "structure_collapsed"))),
    )


def _solve_in_strikes(
    scenario: Any, arrays: OlympiaArrays, space: Any, stops: np.ndarray, res: np.ndarray
) -> bool:
    """Solve a battle with a stop rule ``after`` N strikes into ``res``, pushing it one
    strike at a time until every battle still fighting has withdrawn. False (``res``
    untouched) when the opening position is broken: one strike decides it, no rule of
    time comes in."""
    # The first strike from here at which a side's rule of time holds (encode_stops
    # counts it from the battle as given): every battle still fighting then withdraws.
    last = int(min(a for a in stops[:, STOP_AFTER] if a > 0))
    _check_strikes(scenario, arrays, space, last, "a stop rule's after")
    pushed = _push(arrays, space, last, stops)
    if pushed is None:
        return False
    _mass, status, ended, withdrawn, fought = pushed
    digits = (space.radix, space.stride, space.sradix, space.sstride)
    kx.settle_all(arrays.groups, arrays.sides, digits, ended, status, withdrawn, res)
    res[kx.R_STRIKES] = fought[0]
    return True


def _check_strikes(
    scenario: Any, arrays: OlympiaArrays, space: Any, strikes: int, why: str
) -> None:
    """Refuse in one line to push more than MAX_STRIKE_STATES states-strikes (the
    alternating order's budgets count in the states)."""
    states = space.states
    if arrays.order == k.ALTERNATING:
        states *= int(space.budget_radix[0] * space.budget_radix[1] * 2)
    if strikes * states > MAX_STRIKE_STATES:
        raise BattleOddsError(
            f"{scenario.source.label}: too large for an exact answer: {why} means pushing "
            f"{states:,} states through {strikes:,} strikes one at a time, over the limit "
            f"of {MAX_STRIKE_STATES:,} state-strikes; use `battle-odds run` (Monte Carlo)"
        )


def _push(
    arrays: OlympiaArrays, space: Any, strikes: int, stops: np.ndarray
) -> tuple[np.ndarray, ...] | None:
    """:func:`kernels.olympia.exact.mass_after`'s arrays after ``strikes`` more strikes:
    ``(fighting, status, ended, withdrawn, fought)``; None when the opening position is
    broken already."""
    status = np.empty(space.states, np.int64)
    ended = np.empty(space.states)
    withdrawn = np.empty((2, space.states))
    fought = np.zeros(1)
    digits = (space.radix, space.stride, space.sradix, space.sstride)
    try:
        if arrays.order == k.ALTERNATING:
            mass = kx.mass_after_alternating(
                arrays.groups, arrays.survive, arrays.sides, arrays.order, digits,
                space.budget_radix, space.states, strikes, stops, status, ended, withdrawn,
                fought,
            )  # fmt: skip
        else:
            mass = kx.mass_after(
                arrays.groups, arrays.survive, arrays.sides, arrays.order, digits,
                space.states, strikes, stops, status, ended, withdrawn, fought,
            )  # fmt: skip
    except ValueError:
        return None
    return mass, status, ended, withdrawn, fought


def exact_after(scenario: Any, strikes: int, max_states: int = MAX_STATES) -> ExactState:
    """The exact state of a small olympia battle after strike ``strikes`` of the battle
    (counted from its start: a battle given ``from_step`` strikes in is pushed the rest;
    either strike order; the chain of :func:`exact` pushed one strike at a time,
    misses included, the stop rules checked after every strike). The counterpart of
    ``run_until`` and ``battle-odds run --after``."""
    battle: Battle = scenario.model
    label = scenario.source.label
    if scenario.ruleset != "olympia":
        raise BattleOddsError(f"{label}: the exact state after a strike is solved for olympia only")
    given = battle.from_step
    if strikes <= given:
        raise BattleOddsError(
            f"{label}: strike {strikes}: expected a strike {given + 1} or more (the battle "
            f"is given after strike {given})"
        )
    arrays = compile_battle(battle)
    size = size_of(battle, arrays)
    if size.states > max_states:
        raise BattleOddsError(
            f"{label}: too large for an exact answer: {size.states:,} states, "
            f"over the limit of {max_states:,}"
        )
    space = layout(arrays)
    _check_strikes(scenario, arrays, space, strikes - given, f"the state after strike {strikes}")
    pushed = _push(arrays, space, strikes - given, encode_stops(battle, arrays))
    if pushed is None:
        raise BattleOddsError(
            f"{label}: the opening position is broken before the first strike: no exact state"
        )
    mass, status, ended, withdrawn, _fought = pushed
    every = mass + ended + withdrawn[0] + withdrawn[1]
    held = np.flatnonzero(every)
    p = every[held]
    outcomes = [(o, ended[held][status[held] == code].sum()) for o, code in _WON]
    if any(not rule.never for rule in battle.retreat):
        outcomes += [(o, withdrawn[side].sum()) for o, side in _WITHDREW]
    decided = {outcome: float(chance) for outcome, chance in outcomes}
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
        fighting=float(mass.sum()),
        men_left=men_left,
        states=size.states,
    )
