"""Olympia battles, one change at a time: the cost grows with the kills, not the strikes.

Between two changes (a man, noble or engine down, a structure hit) the strikes of the
strike kernel (kernels/olympia.py) are independent trials with a fixed chance of a
change, so this kernel draws the number of strikes until the next change
(geometric) and then which change it is, in proportion to its chance. The outcome
of every strike is the same random process, so every output column has the same
distribution as the strike kernel's; only the random numbers used differ.

Chances per striking side ``s`` (``e`` the other side), with ``H[j]`` the summed
hit chances of ``s``'s men on target group ``j`` (``sum_i w[i] a_i / (a_i + d_j)``):

* group ``j`` loses one: ``t[j] (1 - survive[j]) H[j] / ts[e]`` (per ``ws[s]`` strikes);
* ``e``'s structure, hit by a man: ``sum_i w[i] a_i / (a_i + sdef_e) / ts[e]``;
* ``e``'s structure, hit by an engine (5..10 points): ``sum_engines w[i] a_i / (a_i + sdef_e)``.

A death that leaves its group standing updates these sums in O(groups); anything
else (a group emptied, a noble out, a structure hit) rebuilds them in O(groups^2).
Under ``random`` order a strike is by side ``s`` with chance ``ws[s] / (ws0 + ws1)``;
under ``alternating`` order the sides follow the budgets, walked in runs of
alternating pairs and single-side tails, each skipped with one geometric draw.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._jit import jit
from .olympia import (
    ATTACKER,
    BLOCK,
    DEFENDER,
    DRAW,
    ENGINE,
    G_DEF,
    G_KIND,
    G_PROTECTED,
    G_SIDE,
    G_UNIT,
    N_PER_SIDE,
    O_CASUALTIES,
    ONE_LESS,
    RANDOM,
    REFRESH,
    battle_start,
    finish,
    is_broken,
    one_less,
    refresh,
    strike_effect,
)
from .rng import seed_battle, uniform

#: Failures before the first success when there is none to expect: larger than any budget.
NEVER = 1 << 62
#: Above this chance of success, trials are drawn one by one (expected 1/p draws) rather
#: than by inverting the geometric distribution.
BERNOULLI_ABOVE = 0.25
#: Rows of the per-side float scratch: SX (targets), YN (structure by men), Z (by engines).
F_SX, F_YN, F_Z = 0, 1, 2


@jit(inline=True)
def failures(state, p):
    """Failures before the first success in independent trials of chance ``p``."""
    if p >= 1.0:
        return 0
    if p <= 0.0:
        return NEVER
    if p > BERNOULLI_ABOVE:
        # A few trials cost less than two logarithms.
        f = 0
        while uniform(state) >= p:
            f += 1
        return f
    x = math.floor(math.log(1.0 - uniform(state)) / math.log1p(-p))
    return NEVER if x >= NEVER else np.int64(x)


@jit(inline=True)
def rebuild(groups, survive, sdef, standing, rating, w, t, phit, sphit, hsum, acc):
    """Hit chances of every striker on every target, and the sums they add up to."""
    n = groups.shape[0]
    acc[:] = 0.0
    for i in range(n):
        sphit[i] = 0.0
        if w[i] == 0:
            continue
        e = 1 - groups[i, G_SIDE]
        a = rating[i]
        if standing[e] == 1:
            sphit[i] = a / (a + sdef[e])
            if groups[i, G_KIND] == ENGINE:
                acc[F_Z, e] += w[i] * sphit[i]
            else:
                acc[F_YN, e] += w[i] * sphit[i]
        if groups[i, G_KIND] == ENGINE:
            continue  # engines strike only the structure
        for j in range(n):
            if groups[j, G_SIDE] == e and t[j] > 0:
                d = groups[j, G_DEF] + (
                    sdef[e] if groups[j, G_PROTECTED] == 1 and standing[e] == 1 else 0
                )
                phit[i, j] = a / (a + d)
    for j in range(n):
        hsum[j] = 0.0
        if t[j] == 0:
            continue
        e = groups[j, G_SIDE]
        for i in range(n):
            if groups[i, G_SIDE] != e and w[i] > 0 and groups[i, G_KIND] != ENGINE:
                hsum[j] += w[i] * phit[i, j]
        acc[F_SX, e] += t[j] * (1.0 - survive[j]) * hsum[j]


@jit(inline=True)
def lose_one(groups, survive, j, e, w, t, ws, ts, phit, sphit, hsum, standing, acc):
    """A man of group ``j`` (side ``e``) died and his group still stands."""
    if t[j] > 0:
        acc[F_SX, e] -= (1.0 - survive[j]) * hsum[j]
    if w[j] > 0:
        s = 1 - e
        for k in range(groups.shape[0]):
            if groups[k, G_SIDE] == s and t[k] > 0:
                hsum[k] -= phit[j, k]
                acc[F_SX, s] -= t[k] * (1.0 - survive[k]) * phit[j, k]
        if standing[s] == 1:
            acc[F_YN, s] -= sphit[j]
    one_less(j, e, w, t, ws, ts)


@jit(inline=True)
def side_chance(acc, ts, e):
    """Changes per strike of the side striking at ``e``, times that side's strikers."""
    if ts[e] == 0:
        return acc[F_Z, e]
    return (acc[F_SX, e] + acc[F_YN, e]) / ts[e] + acc[F_Z, e]


@jit(inline=True)
def pick_change(state, groups, survive, t, ts, hsum, acc, w, e):
    """Which change a strike at side ``e`` makes, given that it makes one.

    Returns ``(target, striker)``: target a group, or -1 for ``e``'s structure;
    striker an engine group when an engine hit the structure, else -1."""
    total = side_chance(acc, ts, e)
    r = uniform(state) * total
    last = -2
    inv_ts = 1.0 / ts[e] if ts[e] > 0 else 0.0
    for j in range(groups.shape[0]):
        if groups[j, G_SIDE] == e and t[j] > 0:
            x = t[j] * (1.0 - survive[j]) * hsum[j] * inv_ts
            if x > 0.0:
                last = j
                if r < x:
                    return j, -1
                r -= x
    x = acc[F_YN, e] * inv_ts
    if x > 0.0:
        last = -1
        if r < x:
            return -1, -1
        r -= x
    if acc[F_Z, e] > 0.0:
        last = -3
    if last == -3:
        # An engine of the striking side; all engines do the same 5..10 points.
        for i in range(groups.shape[0]):
            if groups[i, G_SIDE] != e and groups[i, G_KIND] == ENGINE and w[i] > 0:
                return -1, i
    # Rounding left r past the end: the last change with a positive chance.
    return max(last, -1), -1


@jit(inline=True)
def apply_change(
    state,
    groups,
    survive,
    no_survive,
    sides,
    order,
    row,
    cnt,
    health,
    unit_men,
    rating,
    w,
    t,
    value,
    alive,
    sdef,
    sdmg,
    standing,
    ws,
    ts,
    others,
    front,
    phit,
    sphit,
    hsum,
    acc,
    s,
):
    """Side ``s`` strikes and, as given, changes something: which change, and its effect.
    (The per-side rows come one by one: slicing them here would cost a view per change.)"""
    e = 1 - s
    target, striker = pick_change(state, groups, survive, t, ts, hsum, acc, w, e)
    # The survive roll is already in the chance of the change: the hit is a kill.
    change = strike_effect(
        state,
        groups,
        no_survive,
        cnt,
        health,
        value,
        alive,
        sdef,
        sdmg,
        standing,
        striker,
        e,
        target,
        row,
    )
    if change == ONE_LESS:
        lose_one(groups, survive, target, e, w, t, ws, ts, phit, sphit, hsum, standing, acc)
    else:
        if change == REFRESH:
            refresh(
                groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front
            )
        # A structure hit changes its defense, and with it every protected man's.
        rebuild(groups, survive, sdef, standing, rating, w, t, phit, sphit, hsum, acc)


@jit(inline=True)
def next_alternating(state, budget, ws, q0, q1, turn):
    """Under ``alternating`` order: ``(strikes, side, turn)`` up to and including the next
    strike that changes something (side -1: nobody can strike). ``budget`` is updated."""
    steps = 0
    while True:
        budget[0] = min(budget[0], ws[0])
        budget[1] = min(budget[1], ws[1])
        if budget[0] == 0 and budget[1] == 0:
            if ws[0] == 0 and ws[1] == 0:
                return steps, -1, turn
            budget[0] = ws[0]
            budget[1] = ws[1]
            turn = ATTACKER
        other = 1 - turn
        qt = q0 if turn == 0 else q1
        qo = q1 if turn == 0 else q0
        pairs = min(budget[turn], budget[other])
        if pairs > 0:
            # Strikes alternate (turn, other): a pair changes something with 1 - miss.
            miss = (1.0 - qt) * (1.0 - qo)
            f = failures(state, 1.0 - miss)
            if f < pairs:
                steps += 2 * f + 1
                budget[turn] -= f + 1
                budget[other] -= f
                if uniform(state) * (1.0 - miss) < qt:
                    return steps, turn, other
                budget[other] -= 1
                return steps + 1, other, turn
            steps += 2 * pairs
            budget[turn] -= pairs
            budget[other] -= pairs
        # One side has strikes left: it spends them alone.
        r = turn if budget[turn] > 0 else other
        left = budget[r]
        if left == 0:
            continue
        f = failures(state, q0 if r == 0 else q1)
        if f < left:
            budget[r] -= f + 1
            return steps + f + 1, r, 1 - r
        steps += left
        budget[r] = 0
        turn = 1 - r


@jit
def _skip_battle(
    state,
    groups,
    survive,
    no_survive,
    sides,
    order,
    row,
    cnt,
    health,
    unit_men,
    rating,
    w,
    t,
    per_side,
    phit,
    sphit,
    hsum,
    acc,
):
    value, alive, sdef, sdmg, standing, ws, ts, budget, others, front = per_side
    battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front)
    rebuild(groups, survive, sdef, standing, rating, w, t, phit, sphit, hsum, acc)
    # Broken before any strike: the strike kernel still strikes once, then stops.
    once = is_broken(value, alive, sides, ATTACKER) or is_broken(value, alive, sides, DEFENDER)
    turn = ATTACKER
    steps = 0
    while True:
        # Side s's strikes change something with chance c_s / ws[s] each.
        c0 = side_chance(acc, ts, DEFENDER) if ws[0] > 0 else 0.0
        c1 = side_chance(acc, ts, ATTACKER) if ws[1] > 0 else 0.0
        if ws[0] + ws[1] == 0:
            break  # nobody can strike: a stalemate, reported as a draw
        if c0 + c1 <= 0.0:
            # Sums kept by subtraction can only drift this low if they are (nearly) zero:
            # recompute them; strikers that can change nothing would strike forever.
            rebuild(groups, survive, sdef, standing, rating, w, t, phit, sphit, hsum, acc)
            c0 = side_chance(acc, ts, DEFENDER) if ws[0] > 0 else 0.0
            c1 = side_chance(acc, ts, ATTACKER) if ws[1] > 0 else 0.0
            if c0 + c1 <= 0.0:
                break
        if once:
            steps = 1
            if order == RANDOM:
                x = uniform(state) * (ws[0] + ws[1])
                s = ATTACKER if x < c0 else (DEFENDER if x < c0 + c1 else -1)
            else:
                first = ATTACKER if ws[0] > 0 else DEFENDER
                s = first if uniform(state) * ws[first] < (c0 if first == 0 else c1) else -1
        elif order == RANDOM:
            total = ws[0] + ws[1]
            steps += failures(state, (c0 + c1) / total) + 1
            s = ATTACKER if uniform(state) * (c0 + c1) < c0 else DEFENDER
        else:
            q0 = c0 / ws[0] if ws[0] > 0 else 0.0
            q1 = c1 / ws[1] if ws[1] > 0 else 0.0
            taken, s, turn = next_alternating(state, budget, ws, q0, q1, turn)
            steps += taken
            if s < 0:
                break
        if s >= 0:
            apply_change(
                state,
                groups,
                survive,
                no_survive,
                sides,
                order,
                row,
                cnt,
                health,
                unit_men,
                rating,
                w,
                t,
                value,
                alive,
                sdef,
                sdmg,
                standing,
                ws,
                ts,
                others,
                front,
                phit,
                sphit,
                hsum,
                acc,
                s,
            )
        lost_a = is_broken(value, alive, sides, ATTACKER)
        lost_d = is_broken(value, alive, sides, DEFENDER)
        if lost_a or lost_d:
            winner = DRAW if lost_a and lost_d else (DEFENDER if lost_a else ATTACKER)
            finish(state, groups, cnt, health, alive, winner, steps, row)
            return
    finish(state, groups, cnt, health, alive, DRAW, steps, row)


@jit(parallel=True)
def skip_battles(groups, survive, sides, order, seed, first, out):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, one change at a time."""
    n = out.shape[0]
    n_groups = groups.shape[0]
    n_units = groups[:, G_UNIT].max() + 1
    no_survive = np.zeros(n_groups)
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        cnt = np.empty(n_groups, np.int64)
        health = np.empty(n_groups, np.int64)
        unit_men = np.empty(n_units, np.int64)
        rating = np.empty(n_groups, np.int64)
        w = np.empty(n_groups, np.int64)
        t = np.empty(n_groups, np.int64)
        per_side = np.zeros((N_PER_SIDE, 2), np.int64)
        phit = np.zeros((n_groups, n_groups))
        sphit = np.zeros(n_groups)
        hsum = np.zeros(n_groups)
        acc = np.zeros((3, 2))
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            seed_battle(state, seed, first + i)
            per_side[:] = 0
            _skip_battle(
                state,
                groups,
                survive,
                no_survive,
                sides,
                order,
                out[i],
                cnt,
                health,
                unit_men,
                rating,
                w,
                t,
                per_side,
                phit,
                sphit,
                hsum,
                acc,
            )


@jit
def opening_change_chance(groups, survive, sides, order):
    """Chance that a strike changes anything in the battle's opening position (for
    choosing a kernel): the skip kernel pays per change, the strike kernel per strike."""
    n_groups = groups.shape[0]
    cnt = np.empty(n_groups, np.int64)
    health = np.empty(n_groups, np.int64)
    unit_men = np.zeros(groups[:, G_UNIT].max() + 1, np.int64)
    rating = np.empty(n_groups, np.int64)
    w = np.empty(n_groups, np.int64)
    t = np.empty(n_groups, np.int64)
    per_side = np.zeros((N_PER_SIDE, 2), np.int64)
    value, alive, sdef, sdmg, standing, ws, ts, _budget, others, front = per_side
    row = np.zeros(O_CASUALTIES + n_groups, np.int64)
    battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front)
    phit = np.zeros((n_groups, n_groups))
    sphit = np.zeros(n_groups)
    hsum = np.zeros(n_groups)
    acc = np.zeros((3, 2))
    rebuild(groups, survive, sdef, standing, rating, w, t, phit, sphit, hsum, acc)
    if ws[0] + ws[1] == 0:
        return 1.0
    c0 = side_chance(acc, ts, DEFENDER) if ws[0] > 0 else 0.0
    c1 = side_chance(acc, ts, ATTACKER) if ws[1] > 0 else 0.0
    return (c0 + c1) / (ws[0] + ws[1])
