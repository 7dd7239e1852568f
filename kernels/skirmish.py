"""Skirmish battles, turn by turn (docs/skirmish.md, "The rules as implemented").

The field is a table of *participants* (one row per unit, in id order) with their
side, ratings, abilities and starting health. Every participant in turn picks the
move and target with the best expected value x repeats, makes it ``repeats`` times
(re-checking viability), and a struck unit that lives and has ``strike`` ripostes
after each strike. The same function runs a battle for the statistics (no log) and
for a replay (with a log), so a replayed battle is the one ``run`` simulates. Where the
rule text and the released engine's code part, an int switch in ``params`` picks the
reading. Nothing here knows about TOML, names or objects.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange, types

from . import _aside
from ._jit import INT_TABLE, INTS, REAL_TABLE, STATE, jit
from .rng import below, seed_battle
from .stops import (
    ATTACKER_WITHDREW,
    DEFENDER_WITHDREW,
    FIGHTING,
    NEITHER,
    STOP_GONE,
    any_stop,
    withdrawing_side,
)

# Columns of the participant table.
(
    P_SIDE,
    P_ATTACK,
    P_DEFENCE,
    P_DAMAGE,
    P_MAX_HEALTH,
    P_HEALTH,
    P_STRIKE,
    P_ARCHERY,
    P_CHARGE,
    P_HEALING,
    P_CASUALTY_COLUMN,
    P_HEALED,  # 1: has used its healing already (a battle in progress)
) = range(12)
N_P_FIELDS = 12
ATTACKER, DEFENDER, DRAW = 0, 1, 2

# Move types. The chooser tries them in this order for each target (ties: first found);
# a riposte is never chosen, only made in reply to a strike.
STRIKE, ARCHERY, CHARGE, HEALING, RIPOSTE = range(5)
MOVE_TYPES = ("strike", "archery", "charge", "healing", "riposte")
N_MOVE_TYPES = 5
CHOSEN_MOVE_TYPES = 4
REPEATS = (2, 2, 1, 1, 1)
CHARGE_BONUS = 2
HEALING_AMOUNT = 5
RIPOSTE_PENALTY = 1
STALE_TURNS = 3
SAMPLES = 5

# Expected-value modes.
EXACT, SAMPLED5 = 0, 1

# The battle's rule switches, one int each in the ``params`` array the kernels take (data,
# so both readings share one compiled signature). 0 is the rule text's reading, 1 the
# released engine's code (docs/skirmish.md, "Rule text and released engine").
PARAM_EXPECTED_VALUE = 0  # EXACT or SAMPLED5
PARAM_TURN_LIMIT = 1  # turns after which an undecided battle ends as a draw
PARAM_RIPOSTE_DAMAGE = 2  # riposte's damage range: 0 damage - 1, 1 attack - 1
PARAM_CHARGE_DAMAGE = 3  # charge's damage range: 0 the unit's damage, 1 its attack
PARAM_STALEMATE_START = 4  # turn 1's totals compared with: 0 the starting health, 1 zero
PARAM_CUT = 5  # a turn after which an undecided battle stops, its row the state then (0: none)
PARAM_FROM = 6  # turns already fought (a battle in progress): the turn counter starts there
N_PARAMS = 7
# ``O_WINNER`` is ``FIGHTING`` (kernels/stops.py) for a battle ``PARAM_CUT`` stopped.

# Columns of the outcome row: winner, turns, whether the turn limit ended the battle
# (0/1), then per side and move type the health that side's moves removed (for healing:
# restored), then each participant's health left, then one casualty column per
# (side, unit type) as the table's P_CASUALTY_COLUMN says.
O_WINNER, O_STEPS, O_TURN_LIMIT = 0, 1, 2
O_EFFECT = 3
O_HEALTH = O_EFFECT + 2 * N_MOVE_TYPES

# Columns of a move log row.
L_TURN, L_PARTICIPANT, L_TARGET, L_MOVE_TYPE, L_EFFECT = range(5)
N_LOG_FIELDS = 5

#: Battles per parallel work item: scratch arrays are allocated once per block.
BLOCK = 64


@jit(inline=True)
def _at_least_one(x):
    return x if x > 1 else 1


@jit
def hit_count(attack, defence):
    """Pairs (a, d), a in 0..A, d in 0..D, with a > d: sum over a of min(a, D + 1)."""
    a_max = _at_least_one(attack)
    d_max = _at_least_one(defence)
    total = 0
    for a in range(a_max + 1):
        total += min(a, d_max + 1)
    return total


@jit
def expected_damage(attack, defence, damage):
    """Exact mean of a damage roll: P(hit) x damage / 2, ratings raised to at least 1."""
    a_max = _at_least_one(attack)
    d_max = _at_least_one(defence)
    dmg = _at_least_one(damage)
    p_hit = hit_count(a_max, d_max) / ((a_max + 1) * (d_max + 1))
    return p_hit * dmg / 2.0


@jit(inline=True)
def damage_roll(state, attack, defence, damage):
    """attack 0..A against defence 0..D (inclusive), a strict win rolls damage 0..dmg."""
    attack_value = below(state, _at_least_one(attack) + 1)
    defence_value = below(state, _at_least_one(defence) + 1)
    if attack_value > defence_value:
        return below(state, _at_least_one(damage) + 1)
    return 0


@jit
def expected_table(table):
    """Exact expected damage of a standard roll of participant i against j."""
    n = table.shape[0]
    out = np.zeros((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            out[i, j] = expected_damage(table[i, P_ATTACK], table[j, P_DEFENCE], table[i, P_DAMAGE])
    return out


@jit(inline=True)
def _has(table, i, move):
    if move == STRIKE:
        return table[i, P_STRIKE] == 1
    if move == ARCHERY:
        return table[i, P_ARCHERY] == 1
    if move == CHARGE:
        return table[i, P_CHARGE] == 1
    return table[i, P_HEALING] == 1


@jit(inline=True)
def _viable(table, health, healer_ready, turn, i, j, move):
    if health[i] <= 0 or health[j] <= 0:
        return False
    if move == HEALING:
        return healer_ready[i] == 1 and i != j and table[i, P_SIDE] == table[j, P_SIDE]
    if table[i, P_SIDE] == table[j, P_SIDE]:
        return False
    return move != CHARGE or turn == 0


@jit(inline=True)
def _value(state, table, expected, mode, health, i, j, move):
    """Expected value of one making of ``move`` (approximately damage to the target)."""
    if move == HEALING:
        return float(min(table[j, P_MAX_HEALTH] - health[j], HEALING_AMOUNT))
    if mode == EXACT:
        mean = expected[i, j]
    else:
        # The original engine: the mean of five standard rolls from the battle's stream.
        total = 0
        for _ in range(SAMPLES):
            total += damage_roll(state, table[i, P_ATTACK], table[j, P_DEFENCE], table[i, P_DAMAGE])
        mean = total / SAMPLES
    if move == CHARGE:
        return mean + CHARGE_BONUS
    return mean


@jit(inline=True)
def _effect(state, table, params, i, j, move):
    """The generated effect of a move: damage rolled, or the healing offered."""
    if move == HEALING:
        return HEALING_AMOUNT
    attack = table[i, P_ATTACK]
    damage = table[i, P_DAMAGE]
    if move == CHARGE:
        # The rules: attack + 2 with the unit's damage; the engine rolls its attack as damage.
        if params[PARAM_CHARGE_DAMAGE] == 1:
            damage = attack
        attack += CHARGE_BONUS
    elif move == RIPOSTE:
        # The rules: attack - 1 and damage - 1; the engine: attack - 1 for both.
        if params[PARAM_RIPOSTE_DAMAGE] == 1:
            damage = attack
        attack -= RIPOSTE_PENALTY
        damage -= RIPOSTE_PENALTY
    return damage_roll(state, attack, table[j, P_DEFENCE], damage)


@jit(inline=True)
def _apply(table, health, healer_ready, row, log, n_moves, turn, i, j, move, effect):
    """Apply a move (health clamped to 0..max), count its effect, log it; the new log length."""
    before = health[j]
    if move == HEALING:
        healer_ready[i] = 0
        health[j] = min(before + effect, table[j, P_MAX_HEALTH])
        row[O_EFFECT + table[i, P_SIDE] * N_MOVE_TYPES + move] += health[j] - before
    else:
        health[j] = max(before - effect, 0)
        row[O_EFFECT + table[i, P_SIDE] * N_MOVE_TYPES + move] += before - health[j]
    if n_moves < log.shape[0]:
        log[n_moves, L_TURN] = turn
        log[n_moves, L_PARTICIPANT] = i
        log[n_moves, L_TARGET] = j
        log[n_moves, L_MOVE_TYPE] = move
        log[n_moves, L_EFFECT] = effect
    return n_moves + 1


@jit(counted=False)
def _withdrawer(table, health, stops, turn):
    """The side whose stop rule holds after ``turn`` (the attacker's first), or NEITHER:
    a side's men are its participants alive, ``gone`` a casualty column's type."""
    n = table.shape[0]
    men0 = 0
    men1 = 0
    gone0 = 0
    gone1 = 0
    for p in range(n):
        if health[p] > 0:
            column = table[p, P_CASUALTY_COLUMN] - O_HEALTH - n
            if table[p, P_SIDE] == ATTACKER:
                men0 += 1
                if column == stops[ATTACKER, STOP_GONE]:
                    gone0 += 1
            else:
                men1 += 1
                if column == stops[DEFENDER, STOP_GONE]:
                    gone1 += 1
    return withdrawing_side(stops, men0, men1, gone0, gone1, turn)


@jit(counted=False)
def _record(table, health, row, trail, mark, turn):
    """The row as it stands after ``turn`` (still fighting) into ``trail``'s slot ``mark``."""
    n = table.shape[0]
    width = row.shape[0]
    at = mark * width
    for c in range(width):
        trail[at + c] = row[c]
    trail[at + O_WINNER] = FIGHTING
    trail[at + O_STEPS] = turn
    for p in range(n):
        trail[at + O_HEALTH + p] = health[p]
        if health[p] == 0:
            trail[at + table[p, P_CASUALTY_COLUMN]] += 1


@jit(counted=False)
def one_battle(state, table, expected, params, stops, marks, row, trail, health, healer_ready, log):
    """Fight one battle into ``row`` under the rule switches ``params``; moves go to
    ``log`` while it has room. A battle still undecided after ``params[PARAM_TURN_LIMIT]``
    turns ends there as a draw; one a stop rule (``stops``, kernels/stops.py) ends after
    a turn is the withdrawal of that side. ``trail`` gets the row after each turn of
    ``marks`` (ascending), a battle decided before it its final row.

    Returns the number of moves made (which may exceed ``log``'s length: the caller
    then replays with a longer log; the stream, hence the battle, is the same)."""
    n = table.shape[0]
    mode = params[PARAM_EXPECTED_VALUE]
    turn_limit = params[PARAM_TURN_LIMIT]
    start = params[PARAM_FROM]
    cut = params[PARAM_CUT]
    row[:] = 0
    for p in range(n):
        health[p] = table[p, P_HEALTH]
        healer_ready[p] = table[p, P_HEALING] * (1 - table[p, P_HEALED])
    last0 = 0
    last1 = 0
    if params[PARAM_STALEMATE_START] == 0 or start > 0:
        # The rules: turn 1 changes nothing if the totals are the starting ones. The
        # engine starts from 0 instead, so turn 1 always counts as a change; a battle in
        # progress compares its next turn with the totals as they stand.
        for p in range(n):
            if table[p, P_SIDE] == ATTACKER:
                last0 += health[p]
            else:
                last1 += health[p]
    n_moves = 0
    stale = 0
    turn = start
    n_marks = marks.shape[0]
    mark = np.int64(0)  # not the literal 0: _record() would compile once more for it
    # A turn asked for at or before the battle's own start: the battle as given.
    while mark < n_marks and marks[mark] <= start:
        _record(table, health, row, trail, mark, start)
        mark += 1
    stopping = any_stop(stops)
    going = not 0 < cut <= start
    if not going:
        row[O_WINNER] = FIGHTING
    while going:
        for i in range(n):
            if health[i] <= 0:
                continue
            best_value = 0.0
            best_target = -1
            best_move = -1
            for j in range(n):
                for move in range(CHOSEN_MOVE_TYPES):
                    if not _has(table, i, move):
                        continue
                    if not _viable(table, health, healer_ready, turn, i, j, move):
                        continue
                    value = _value(state, table, expected, mode, health, i, j, move) * REPEATS[move]
                    if value > best_value:
                        best_value = value
                        best_target = j
                        best_move = move
            if best_target < 0:
                continue  # nothing worth doing: the unit waits
            j = best_target
            for _ in range(REPEATS[best_move]):
                if not _viable(table, health, healer_ready, turn, i, j, best_move):
                    break
                effect = _effect(state, table, params, i, j, best_move)
                n_moves = _apply(
                    table, health, healer_ready, row, log, n_moves, turn, i, j, best_move, effect
                )
                if best_move == STRIKE and health[j] > 0 and table[j, P_STRIKE] == 1:
                    effect = _effect(state, table, params, j, i, RIPOSTE)
                    n_moves = _apply(
                        table, health, healer_ready, row, log, n_moves, turn, j, i, RIPOSTE, effect
                    )
        turn += 1
        total0 = 0
        total1 = 0
        for p in range(n):
            if table[p, P_SIDE] == ATTACKER:
                total0 += health[p]
            else:
                total1 += health[p]
        if total0 == last0 and total1 == last1:
            stale += 1
        else:
            stale = 0
        last0 = total0
        last1 = total1
        if total0 == 0 or total1 == 0:
            if total0 == 0 and total1 == 0:
                row[O_WINNER] = DRAW
            else:
                row[O_WINNER] = DEFENDER if total0 == 0 else ATTACKER
            break
        if stale >= STALE_TURNS:
            row[O_WINNER] = DRAW
            break
        if turn >= turn_limit:
            row[O_WINNER] = DRAW
            row[O_TURN_LIMIT] = 1
            break
        if stopping:
            side = _withdrawer(table, health, stops, turn)
            if side != NEITHER:
                # The source has no retreat: the side leaves the field as it stands.
                row[O_WINNER] = ATTACKER_WITHDREW if side == ATTACKER else DEFENDER_WITHDREW
                break
        while mark < n_marks and marks[mark] <= turn:
            _record(table, health, row, trail, mark, turn)
            mark += 1
        if turn == cut:
            row[O_WINNER] = FIGHTING
            break
    row[O_STEPS] = turn
    for p in range(n):
        row[O_HEALTH + p] = health[p]
        if health[p] == 0:
            row[table[p, P_CASUALTY_COLUMN]] += 1
    width = row.shape[0]
    for k in range(mark, n_marks):
        for c in range(width):
            trail[k * width + c] = row[c]
    return n_moves


def _battle_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`one_battle`: the state; table, expected, params,
    stops, marks, row, trail, health, healer_ready, log."""
    return (STATE, INT_TABLE, REAL_TABLE, INTS, INT_TABLE, INTS, INTS, INTS, INTS, INTS,
            INT_TABLE)  # fmt: skip


def _plain_types() -> tuple[Any, ...]:
    """What :func:`skirmish_battles` takes after the battle in a run
    (simulator/rulesets/skirmish/prepare.py): table, params, stops, marks, seed, first,
    out, trails."""
    return (INT_TABLE, INTS, INT_TABLE, INTS, types.uint64, types.int64, INT_TABLE, INT_TABLE)


@jit(parallel=True)
def skirmish_battles(battle, table, params, stops, marks, seed, first, out, trails):
    """Battles ``first .. first + len(out) - 1`` of run ``seed`` under ``params`` and the
    sides' stop rules ``stops``, battle i's rows after each turn of ``marks`` in
    ``trails[i]``; ``battle`` is :func:`battle_by_address`, and every array C-contiguous."""
    n = out.shape[0]
    n_participants = table.shape[0]
    expected = expected_table(table)
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        health = np.empty(n_participants, np.int64)
        healer_ready = np.empty(n_participants, np.int64)
        no_log = np.empty((0, N_LOG_FIELDS), np.int64)
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            seed_battle(state, seed, first + i)
            battle(
                state,
                table,
                expected,
                params,
                stops,
                marks,
                out[i],
                trails[i],
                health,
                healer_ready,
                no_log,
            )


@jit
def skirmish_replay(table, params, stops, seed, battle, row, log):
    """Battle ``battle`` of run ``seed`` (its own stream, as in ``skirmish_battles``),
    with its moves in ``log``; returns the number of moves made."""
    state = np.empty(4, np.uint64)
    n_participants = table.shape[0]
    health = np.empty(n_participants, np.int64)
    healer_ready = np.empty(n_participants, np.int64)
    seed_battle(state, seed, battle)
    expected = expected_table(table)
    no_marks = np.empty(0, np.int64)
    return one_battle(
        state, table, expected, params, stops, no_marks, row, no_marks, health, healer_ready, log
    )


@jit
def sample_damage_rolls(seed, attack, defence, damage, out):
    """``len(out)`` damage rolls from the stream of battle 0 of ``seed`` (for tests)."""
    state = np.empty(4, np.uint64)
    seed_battle(state, seed, 0)
    for k in range(out.shape[0]):
        out[k] = damage_roll(state, attack, defence, damage)


#: :func:`one_battle` for :func:`skirmish_battles` or the stacked kernel
#: (kernels/skirmish_stacked.py), called by its address. On a cold cache a second
#: process compiles the battle while this one compiles the kernel and the tally.
battle_by_address = _aside.BattleByAddress(
    __name__, "battle_by_address", one_battle, _battle_types, types.int64,
    skirmish_battles, _plain_types,
)  # fmt: skip
