"""Confrontation battles (docs/confrontation.md): stacks on hexes, turn by turn.

Inputs are plain tables built by simulator/rulesets/confrontation/prepare.py:

* ``units`` int64 [U, N_UNIT_FIELDS] and ``floats`` float64 [U, N_FLOAT_FIELDS], the
  attacker's units first, each stack's units contiguous and in stack order;
* ``stacks`` int64 [S, N_STACK_FIELDS] and ``distance`` int64 [S, S] (hex distances);
* ``actions`` int64 [A, N_ACTION_FIELDS] grouped into script entries by
  ``entry_start`` [E + 1]; ``turn_entry`` [T] is the entry played on each turn (-1: none);
* ``params`` int64 [N_PARAMS];
* ``stops`` int64 [2, N_STOP]: each side's stop rule (kernels/stops.py), its ``STOP_GONE``
  the index of a casualty column (a unit type of the side);
* ``marks`` int64 [M]: turns after which to record the battle's row (ascending; empty
  for a plain run), into ``trails`` int64 [battles, M x columns].

Resolve moves in half points, so it is kept doubled (``resolve2``) as an integer.
Arms, a and b arrive in hundredths (whole numbers, exact in float64), so a strength
is a whole number of ``1 / STRENGTH_SCALE`` and the die's faces come out of integer
arithmetic: what the scenario writes in decimal is what decides the die.
One output row per battle, columns as ``O_*`` and ``column_*`` below say.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange, types

from . import _aside
from ._jit import INT_TABLE, INTS, REAL_TABLE, STATE, jit
from .rng import below, seed_battle
from .rows import copy_row
from .stops import (
    ATTACKER_WITHDREW,
    DEFENDER_WITHDREW,
    FIGHTING,
    NEITHER,
    STOP_GONE,
    any_stop,
    withdrawing_side,
)

U_SIDE, U_STACK, U_INTEGRITY, U_RESOLVE2, U_ADVANTAGES = range(5)
U_REACH, U_AERIAL, U_SPEED, U_ABILITIES, U_CASUALTY = range(5, 10)
N_UNIT_FIELDS = 10
F_ARMS, F_A, F_B = range(3)
N_FLOAT_FIELDS = 3
S_SIDE, S_FIRST, S_END = range(3)
N_STACK_FIELDS = 3
A_UNIT, A_ABILITY, A_TARGET = range(3)
N_ACTION_FIELDS = 3
#: ``A_ABILITY`` / ``A_TARGET`` value: the simple policy chooses (best ability, nearest stack).
CHOOSE = -1
P_TURNS, P_NEARBY, P_RULE, P_CUT, P_FROM = range(5)
N_PARAMS = 5

ATTACK, BOMBARD, STRIKE = 0, 1, 2
TWO_DICE, FLAT1 = 0, 1
ATTACKER, DEFENDER, DRAW = 0, 1, 2
# ``O_WINNER`` is ``FIGHTING`` (kernels/stops.py) for a battle still undecided when
# ``params[P_CUT]`` (a turn, 0: none) ends: its row is the state after that turn.
# ``params[P_FROM]``: the turns already fought (a battle in progress); turns count on
# from there, so the turn limit and the script's turns are the battle's own.

O_WINNER, O_STEPS, O_DAMAGE = 0, 1, 2  # O_DAMAGE + side: damage rolled against the side
O_UNITS = 4  # then per unit: destroyed (0/1), integrity left, resolve2; then casualties
#: Strength units per strength point: hundredths of arms times hundredths of a (or
#: hundredths of b times halves of resolve, scaled to match), times quarters of
#: (1 + advantages / 4).
STRENGTH_SCALE = 100 * 100 * 2 * 4
#: Battles per parallel work item: scratch arrays are allocated once per block.
BLOCK = 64


def column_destroyed(n_units: int, u: int) -> int:
    return O_UNITS + u


def column_integrity(n_units: int, u: int) -> int:
    return O_UNITS + n_units + u


def column_resolve2(n_units: int, u: int) -> int:
    return O_UNITS + 2 * n_units + u


def first_casualty_column(n_units: int) -> int:
    return O_UNITS + 3 * n_units


@jit(inline=True)
def strength(units, floats, resolve2, u):
    """((arms x a) + (resolve x b)) x (1 + advantages / 4), never below 0, in
    ``1 / STRENGTH_SCALE``: exact, because every factor is a whole number here."""
    arms_a = np.int64(floats[u, F_ARMS]) * np.int64(floats[u, F_A]) * 2
    resolve_b = resolve2[u] * np.int64(floats[u, F_B]) * 100
    s = (arms_a + resolve_b) * (4 + units[u, U_ADVANTAGES])
    return s if s > 0 else np.int64(0)


@jit(inline=True)
def faces(attacker, defender):
    """N of 2dN: the strength difference rounded down, at least 1."""
    n = (attacker - defender) // STRENGTH_SCALE
    return n if n > 1 else np.int64(1)


@jit(inline=True)
def expected_damage(units, floats, resolve2, rule, x, y):
    """Mean damage of ``x`` confronting ``y`` now: N + 1 for 2dN, or 1 (``flat1``)."""
    sx = strength(units, floats, resolve2, x)
    sy = strength(units, floats, resolve2, y)
    if rule == FLAT1 and sx <= sy:
        return np.int64(1)
    return faces(sx, sy) + 1


@jit
def destroy(units, stacks, distance, nearby, y, alive, count, stack_alive, resolve2, row):
    """Unit ``y`` is destroyed: within ``nearby`` spaces its side loses 1 resolve and
    the other side gains 1."""
    side = units[y, U_SIDE]
    n = units.shape[0]
    alive[y] = 0
    count[side] -= 1
    stack_alive[units[y, U_STACK]] -= 1
    row[O_UNITS + y] = 1
    row[units[y, U_CASUALTY]] += 1
    for v in range(n):
        if alive[v] == 1 and distance[units[v, U_STACK], units[y, U_STACK]] <= nearby:
            resolve2[v] += -2 if units[v, U_SIDE] == side else 2


@jit
def confront(
    state,
    units,
    floats,
    stacks,
    distance,
    params,
    x,
    y,
    integrity,
    resolve2,
    alive,
    count,
    stack_alive,
    row,
):
    """``x`` confronts ``y``: 2dN damage (or 1 under ``flat1`` when x is not stronger)."""
    sx = strength(units, floats, resolve2, x)
    sy = strength(units, floats, resolve2, y)
    if params[P_RULE] == FLAT1 and sx <= sy:
        damage = np.int64(1)
    else:
        n = faces(sx, sy)
        damage = 2 + below(state, n) + below(state, n)
    integrity[y] -= damage
    row[O_DAMAGE + units[y, U_SIDE]] += damage
    if integrity[y] <= 0:
        destroy(
            units, stacks, distance, params[P_NEARBY], y, alive, count, stack_alive, resolve2, row
        )


@jit
def strongest(units, floats, resolve2, alive, first, end):
    """The highest-strength living unit of units ``first .. end-1`` (ties: the first)."""
    best = -1
    best_strength = np.int64(0)
    for v in range(first, end):
        if alive[v] == 1:
            s = strength(units, floats, resolve2, v)
            if best < 0 or s > best_strength:
                best = v
                best_strength = s
    return best


@jit
def nearest_stack(stacks, distance, stack_alive, side, here):
    """The nearest stack of the other side with units left (ties: the first listed)."""
    best = -1
    for s in range(stacks.shape[0]):
        if (
            stacks[s, S_SIDE] != side
            and stack_alive[s] > 0
            and (best < 0 or distance[here, s] < distance[here, best])
        ):
            best = s
    return best


@jit
def best_ability(units, floats, stacks, distance, resolve2, alive, rule, x, target):
    """Of the abilities ``x`` has, the one with the most expected damage dealt minus
    expected damage taken now (ties: attack, bombard, strike)."""
    first = stacks[target, S_FIRST]
    end = stacks[target, S_END]
    bombard_value = np.int64(0)
    for v in range(first, end):
        if alive[v] == 1:
            bombard_value += expected_damage(units, floats, resolve2, rule, x, v)
    best = -1
    best_value = np.int64(0)
    for ability in range(3):
        if (units[x, U_ABILITIES] >> ability) & 1 == 0:
            continue
        if ability == ATTACK:
            d = strongest(units, floats, resolve2, alive, first, end)
            value = 2 * expected_damage(units, floats, resolve2, rule, x, d) - expected_damage(
                units, floats, resolve2, rule, d, x
            )
        elif ability == BOMBARD:
            value = bombard_value
        else:
            c = interceptor_of(units, floats, stacks, distance, resolve2, alive, target)
            if c >= 0:
                value = expected_damage(units, floats, resolve2, rule, x, c) - expected_damage(
                    units, floats, resolve2, rule, c, x
                )
            else:
                value = bombard_value
        if best < 0 or value > best_value:
            best = ability
            best_value = value
    return best


@jit
def interceptor_of(units, floats, stacks, distance, resolve2, alive, target):
    """Reach in the target space, or aerial units of its side within their speed."""
    side = stacks[target, S_SIDE]
    best = -1
    best_strength = np.int64(0)
    for v in range(units.shape[0]):
        if alive[v] == 0 or units[v, U_SIDE] != side:
            continue
        stack = units[v, U_STACK]
        able = (stack == target and units[v, U_REACH] == 1) or (
            units[v, U_AERIAL] == 1 and distance[stack, target] <= units[v, U_SPEED]
        )
        if able:
            s = strength(units, floats, resolve2, v)
            if best < 0 or s > best_strength:
                best = v
                best_strength = s
    return best


@jit
def act(
    state,
    units,
    floats,
    stacks,
    distance,
    params,
    x,
    ability,
    target,
    integrity,
    resolve2,
    alive,
    count,
    stack_alive,
    row,
):
    """Unit ``x`` uses ``ability`` on the space of stack ``target`` (CHOOSE: policy)."""
    if alive[x] == 0:
        return
    if target == CHOOSE:
        target = nearest_stack(stacks, distance, stack_alive, units[x, U_SIDE], units[x, U_STACK])
        if target < 0:
            return
    if stack_alive[target] == 0:
        return  # the space is empty now: the action is lost
    if ability == CHOOSE:
        ability = best_ability(
            units, floats, stacks, distance, resolve2, alive, params[P_RULE], x, target
        )
    first = stacks[target, S_FIRST]
    end = stacks[target, S_END]
    defender = -1
    answers = 0  # attack: attack, counter-attack, attack; strike: strike, answer
    if ability == ATTACK:
        defender = strongest(units, floats, resolve2, alive, first, end)
        answers = 3
    elif ability == STRIKE:
        defender = interceptor_of(units, floats, stacks, distance, resolve2, alive, target)
        answers = 2
    if defender < 0:
        # Bombard (and a strike nobody can intercept): each unit once, in stack order.
        for v in range(first, end):
            if alive[v] == 1:
                confront(
                    state,
                    units,
                    floats,
                    stacks,
                    distance,
                    params,
                    x,
                    v,
                    integrity,
                    resolve2,
                    alive,
                    count,
                    stack_alive,
                    row,
                )
        return
    for k in range(answers):
        # Even turns: the acting unit confronts the defender; odd turns: the answer.
        striker, struck = (x, defender) if k % 2 == 0 else (defender, x)
        confront(
            state,
            units,
            floats,
            stacks,
            distance,
            params,
            striker,
            struck,
            integrity,
            resolve2,
            alive,
            count,
            stack_alive,
            row,
        )
        if alive[x] == 0 or alive[defender] == 0:
            return


@jit
def finish(units, integrity, resolve2, winner, steps, row):
    n = units.shape[0]
    row[O_WINNER] = winner
    row[O_STEPS] = steps
    for u in range(n):
        row[O_UNITS + n + u] = integrity[u] if integrity[u] > 0 else 0
        row[O_UNITS + 2 * n + u] = resolve2[u]


@jit
def units_left(units, alive, column):
    """Living units whose casualty column is ``column`` (one unit type of one side)."""
    left = 0
    for u in range(units.shape[0]):
        if alive[u] == 1 and units[u, U_CASUALTY] == column:
            left += 1
    return left


@jit
def withdrawer(units, alive, count, stops, turn):
    """The side whose stop rule holds after ``turn`` (the attacker's first), or NEITHER."""
    first_casualty = O_UNITS + 3 * units.shape[0]
    gone_a = 0
    if stops[ATTACKER, STOP_GONE] >= 0:
        gone_a = units_left(units, alive, first_casualty + stops[ATTACKER, STOP_GONE])
    gone_d = 0
    if stops[DEFENDER, STOP_GONE] >= 0:
        gone_d = units_left(units, alive, first_casualty + stops[DEFENDER, STOP_GONE])
    return withdrawing_side(stops, count[ATTACKER], count[DEFENDER], gone_a, gone_d, turn)


@jit
def record(units, integrity, resolve2, turn, row, trail, mark):
    """The row as it stands after ``turn`` (still fighting) into ``trail``'s slot ``mark``."""
    finish(units, integrity, resolve2, np.int64(FIGHTING), turn, row)
    width = row.shape[0]
    copy_row(row, trail[mark * width : (mark + 1) * width])


@jit
def one_battle(
    state,
    units,
    floats,
    stacks,
    distance,
    actions,
    entry_start,
    turn_entry,
    params,
    stops,
    marks,
    row,
    trail,
    integrity,
    resolve2,
    alive,
    count,
    stack_alive,
):
    """The battle into ``row``, and into ``trail`` its row after each turn of ``marks``
    (a battle decided before such a turn: its final row)."""
    n = units.shape[0]
    count[:] = 0
    stack_alive[:] = 0
    for u in range(n):
        integrity[u] = units[u, U_INTEGRITY]
        resolve2[u] = units[u, U_RESOLVE2]
        alive[u] = 1
        count[units[u, U_SIDE]] += 1
        stack_alive[units[u, U_STACK]] += 1
    turns = params[P_TURNS]
    start = params[P_FROM]
    cut = params[P_CUT]
    n_marks = marks.shape[0]
    mark = np.int64(0)  # not the literal 0: record() would compile once more for it
    # A turn asked for at or before the battle's own start: the battle as given.
    while mark < n_marks and marks[mark] <= start:
        record(units, integrity, resolve2, start, row, trail, mark)
        mark += 1
    stopping = any_stop(stops)
    winner = np.int64(DRAW)
    steps = turns
    if 0 < cut <= start:
        winner = np.int64(FIGHTING)
        steps = start
        start = turns  # no turn is fought
    for turn in range(start + 1, turns + 1):
        entry = turn_entry[turn - 1]
        over = False
        if entry >= 0:
            for a in range(entry_start[entry], entry_start[entry + 1]):
                act(
                    state,
                    units,
                    floats,
                    stacks,
                    distance,
                    params,
                    actions[a, A_UNIT],
                    actions[a, A_ABILITY],
                    actions[a, A_TARGET],
                    integrity,
                    resolve2,
                    alive,
                    count,
                    stack_alive,
                    row,
                )
                if count[ATTACKER] == 0 or count[DEFENDER] == 0:
                    over = True
                    break
        if over:
            winner = np.int64(DEFENDER if count[ATTACKER] == 0 else ATTACKER)
            steps = turn
            break
        # Morale trends back: below 1 up by 0.5 (to 1), above 3 down by 0.5 (to 3).
        for u in range(n):
            if alive[u] == 1:
                if resolve2[u] < 2:
                    resolve2[u] = min(2, resolve2[u] + 1)
                elif resolve2[u] > 6:
                    resolve2[u] = max(6, resolve2[u] - 1)
        if turn == turns:
            break  # the last turn ends the battle a draw, never a withdrawal
        if stopping:
            side = withdrawer(units, alive, count, stops, turn)
            if side != NEITHER:
                # The source has no retreat: the side leaves as it stands, at no cost.
                winner = np.int64(ATTACKER_WITHDREW if side == ATTACKER else DEFENDER_WITHDREW)
                steps = turn
                break
        while mark < n_marks and marks[mark] <= turn:
            record(units, integrity, resolve2, turn, row, trail, mark)
            mark += 1
        if turn == cut:
            winner = np.int64(FIGHTING)
            steps = turn
            break
    finish(units, integrity, resolve2, winner, steps, row)
    width = row.shape[0]
    for k in range(mark, n_marks):
        copy_row(row, trail[k * width : (k + 1) * width])


#: The types of the scenario's tables the battle and its kernels take: units, floats,
#: stacks, distance, actions, entry_start, turn_entry, params.
_TABLES = (INT_TABLE, REAL_TABLE, INT_TABLE, INT_TABLE, INT_TABLE, INTS, INTS, INTS)


def _battle_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`one_battle`: the state; the tables, stops, marks;
    row, trail, integrity, resolve2, alive, count, stack_alive."""
    return (STATE, *_TABLES, INT_TABLE, INTS, *[INTS] * 7)


def _plain_types() -> tuple[Any, ...]:
    """What :func:`confrontation_battles` takes after the battle in a run
    (simulator/rulesets/confrontation/prepare.py): the tables, params, stops, marks,
    seed, first, out, trails."""
    return (*_TABLES, INT_TABLE, INTS, types.uint64, types.int64, INT_TABLE, INT_TABLE)


@jit(parallel=True)
def confrontation_battles(
    battle, units, floats, stacks, distance, actions, entry_start, turn_entry, params, stops,
    marks, seed, first, out, trails,
):  # fmt: skip
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, battle i's rows after
    each of ``marks`` in ``trails[i]``; ``battle`` is :func:`battle_by_address`, and
    every array C-contiguous."""
    n = out.shape[0]
    n_units = units.shape[0]
    n_stacks = stacks.shape[0]
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        integrity = np.empty(n_units, np.int64)
        resolve2 = np.empty(n_units, np.int64)
        alive = np.empty(n_units, np.int64)
        count = np.empty(2, np.int64)
        stack_alive = np.empty(n_stacks, np.int64)
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            seed_battle(state, seed, first + i)
            battle(
                state,
                units,
                floats,
                stacks,
                distance,
                actions,
                entry_start,
                turn_entry,
                params,
                stops,
                marks,
                out[i],
                trails[i],
                integrity,
                resolve2,
                alive,
                count,
                stack_alive,
            )


#: :func:`one_battle` for :func:`confrontation_battles` or the stacked kernel
#: (kernels/confrontation_stacked.py), called by its address. On a cold cache a second
#: process compiles the battle while this one compiles the kernel and the tally.
battle_by_address = _aside.BattleByAddress(
    __name__, "battle_by_address", one_battle, _battle_types, types.none,
    confrontation_battles, _plain_types,
)  # fmt: skip
