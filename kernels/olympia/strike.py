"""Olympia battles, one strike at a time (docs/olympia.md, "One strike").

The army is a table of *groups*: men of one type in one unit and row (split where a
structure's capacity ends), one noble, or the siege engines of one kind. Kernels take
that table, the side parameters and a seed, and fill one row of integers per battle.
Nothing here knows about TOML, names or objects.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import jit
from ..rng import below, chance, seed_battle, uniform
from ..rows import copy_row
from ..stops import ATTACKER_WITHDREW, FIGHTING, STOP_AFTER, STOP_GONE, any_stop, withdrawing_side
from . import layout


@jit(inline=True)
def refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front):
    """Recompute who may strike (weights ``w``), with what (``rating``), and who may be
    hit (weights ``t``) after anything changed. Misses change nothing, so this runs
    only after a hit. ``others`` and ``front`` are scratch of length 2."""
    n = groups.shape[0]
    unit_men[:] = 0
    others[:] = 0
    front[:] = 1 << 30
    for g in range(n):
        if groups[g, layout.G_KIND] == layout.MAN:
            unit_men[groups[g, layout.G_UNIT]] += cnt[g]
    for g in range(n):
        s = groups[g, layout.G_SIDE]
        if (
            groups[g, layout.G_KIND] != layout.ENGINE
            and groups[g, layout.G_UNIT] != sides[s, layout.S_LEADER_UNIT]
        ):
            others[s] += cnt[g]
    # A noble is shielded by his own men; the stack leader by everyone else.
    for g in range(n):
        t[g] = 0
        if cnt[g] == 0 or groups[g, layout.G_KIND] == layout.ENGINE:
            continue
        s = groups[g, layout.G_SIDE]
        valid = True
        if groups[g, layout.G_KIND] == layout.NOBLE:
            valid = unit_men[groups[g, layout.G_UNIT]] == 0 and (
                groups[g, layout.G_LEADER] == 0 or others[s] == 0
            )
        if valid:
            t[g] = 1
            if groups[g, layout.G_ROW] < front[s]:
                front[s] = groups[g, layout.G_ROW]
    ts[0] = 0
    ts[1] = 0
    ws[0] = 0
    ws[1] = 0
    for g in range(n):
        s = groups[g, layout.G_SIDE]
        if groups[g, layout.G_KIND] == layout.ENGINE:
            # Engines matter, as strikers and as targets, while the enemy structure stands.
            active = standing[1 - s] == 1
            t[g] = cnt[g] if active else 0
            rating[g] = groups[g, layout.G_FRONT] if active else 0
        else:
            # Rows in front of the first row with a valid target are empty or hold only
            # shielded nobles: everyone there fights as front row.
            t[g] = cnt[g] if t[g] == 1 and groups[g, layout.G_ROW] == front[s] else 0
            rating[g] = (
                groups[g, layout.G_FRONT]
                if groups[g, layout.G_ROW] <= front[s]
                else groups[g, layout.G_REAR]
            )
        strikes = rating[g] > 0 and cnt[g] > 0
        if (
            order == layout.ALTERNATING
            and s == layout.ATTACKER
            and groups[g, layout.G_NONCOMBATANT] == 1
        ):
            strikes = False
        w[g] = cnt[g] if strikes else 0
        ts[s] += t[g]
        ws[s] += w[g]
    for s in range(2):
        ts[s] += standing[s]


@jit(inline=True)
def pick(weights, groups, side, r):
    """The group holding the ``r``-th unit of weight among ``side``'s groups (-1: past them)."""
    for g in range(weights.shape[0]):
        if groups[g, layout.G_SIDE] == side:
            if r < weights[g]:
                return g
            r -= weights[g]
    return -1


@jit(inline=True)
def is_broken(value, alive, sides, s):
    """A side at or under its break threshold, or with nobody left, has lost."""
    return alive[s] == 0 or value[s] * 100 <= sides[s, layout.S_START] * sides[s, layout.S_BREAK]


@jit(inline=True)
def battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row):
    row[:] = 0
    for s in range(2):
        value[s] = sides[s, layout.S_START]
        alive[s] = 0
        sdef[s] = sides[s, layout.S_STRUCTURE_DEF]
        sdmg[s] = sides[s, layout.S_STRUCTURE_DMG]
        standing[s] = sides[s, layout.S_HAS_STRUCTURE]
        if standing[s] == 1:
            row[layout.extra(s, layout.X_STRUCTURE_DEF)] = sdef[s]
            row[layout.extra(s, layout.X_STRUCTURE_DMG)] = sdmg[s]
    for g in range(groups.shape[0]):
        cnt[g] = groups[g, layout.G_COUNT]
        health[g] = groups[g, layout.G_HEALTH]
        if groups[g, layout.G_KIND] != layout.ENGINE:
            alive[groups[g, layout.G_SIDE]] += cnt[g]


@jit(inline=True)
def strike_effect(
    state, groups, survive, cnt, health, value, alive, sdef, sdmg, standing, striker, e, target, row
):
    """Apply a hit on ``target`` (a group, or -1 for side ``e``'s structure).

    Returns UNCHANGED, ONE_LESS (a man died and his group still stands: the weights
    drop by one, nothing else moves) or REFRESH (a group emptied, a noble left or a
    structure fell: shielding, rows and strikers must be recomputed)."""
    if target < 0:
        points = 1
        if striker >= 0 and groups[striker, layout.G_KIND] == layout.ENGINE:
            points = 5 + below(state, 6)
        used = min(points, sdef[e])
        sdef[e] -= used
        sdmg[e] += points - used
        row[layout.extra(e, layout.X_STRUCTURE_DEF)] = sdef[e]
        if sdmg[e] >= layout.COLLAPSE_DAMAGE:
            sdmg[e] = layout.COLLAPSE_DAMAGE
            standing[e] = 0
            row[layout.extra(e, layout.X_COLLAPSED)] = 1
            row[layout.extra(e, layout.X_STRUCTURE_DMG)] = sdmg[e]
            return layout.REFRESH
        row[layout.extra(e, layout.X_STRUCTURE_DMG)] = sdmg[e]
        return layout.UNCHANGED
    kind = groups[target, layout.G_KIND]
    if kind == layout.ENGINE:
        cnt[target] -= 1
        row[layout.extra(e, layout.X_ENGINES_LOST)] += 1
        return layout.REFRESH
    if kind == layout.MAN:
        if survive[target] > 0.0 and uniform(state) < survive[target]:
            return layout.UNCHANGED
        cnt[target] -= 1
        row[groups[target, layout.G_COLUMN]] += 1
        value[e] -= groups[target, layout.G_VALUE]
        alive[e] -= 1
        return layout.ONE_LESS if cnt[target] > 0 else layout.REFRESH
    else:
        cnt[target] = 0
        health[target] -= 1 + below(state, 100)
        killed = health[target] <= 0
        row[layout.extra(e, layout.X_KILLED if killed else layout.X_WOUNDED)] += 1
        if groups[target, layout.G_LEADER] == 1:
            row[layout.extra(e, layout.X_LEADER_KILLED if killed else layout.X_LEADER_WOUNDED)] = 1
    value[e] -= groups[target, layout.G_VALUE]
    alive[e] -= 1
    return layout.REFRESH


@jit(inline=True)
def one_less(g, e, w, t, ws, ts):
    """A man of group ``g`` (side ``e``) died and the group still stands."""
    if w[g] > 0:
        w[g] -= 1
        ws[e] -= 1
    if t[g] > 0:
        t[g] -= 1
        ts[e] -= 1


@jit(inline=True)
def defense_of(groups, sdef, standing, e, target):
    if target < 0:
        return sdef[e]
    bonus = sdef[e] if groups[target, layout.G_PROTECTED] == 1 and standing[e] == 1 else 0
    return groups[target, layout.G_DEF] + bonus


@jit(inline=True)
def take_prisoners(state, groups, cnt, health, alive, winner, row):
    """The winner takes each surviving noble of the loser with chance
    clamp(25 W / L, 25, 75) percent (docs/olympia.md, "After the battle")."""
    loser = 1 - winner
    percent = 75
    if alive[loser] > 0:
        percent = min(75, max(25, 25 * alive[winner] // alive[loser]))
    for g in range(groups.shape[0]):
        noble = groups[g, layout.G_SIDE] == loser and groups[g, layout.G_KIND] == layout.NOBLE
        if noble and health[g] > 0 and below(state, 100) < percent:
            row[layout.extra(loser, layout.X_CAPTURED)] += 1
            if groups[g, layout.G_LEADER] == 1:
                row[layout.extra(loser, layout.X_LEADER_CAPTURED)] = 1


@jit(inline=True)
def finish(state, groups, cnt, health, alive, winner, steps, row):
    row[layout.O_WINNER] = winner
    row[layout.O_STEPS] = steps
    if winner != layout.DRAW:
        take_prisoners(state, groups, cnt, health, alive, winner, row)


@jit
def left_at(groups, width):
    """Where a row of ``width`` columns holds each group's state at the battle's end, for
    the wave chain (docs/unfolding.md, "Waves"), or -1 where it holds none: a caller that
    wants it passes rows of one column more per group than the outcome's (which end with
    the last casualty column), so one compiled kernel serves both."""
    last = layout.O_CASUALTIES - 1
    for g in range(groups.shape[0]):
        if groups[g, layout.G_KIND] == layout.MAN and groups[g, layout.G_COLUMN] > last:
            last = groups[g, layout.G_COLUMN]
    at = width - groups.shape[0]
    return at if at > last else -1


@jit(inline=True)
def keep_left(groups, cnt, health, row, at):
    """Each group's state as the battle left it, into ``row[at + g]``: a noble's health
    left (0 or less: killed), the men or engines of any other group still standing.
    Written once a battle, after its last draw: the battle's own numbers are unchanged."""
    for g in range(groups.shape[0]):
        row[at + g] = health[g] if groups[g, layout.G_KIND] == layout.NOBLE else cnt[g]


@jit
def unfolding_plan(stops):
    """A call's plan (U_AFTER, U_RULES) from both sides' stop rules."""
    plan = np.zeros(layout.N_PLAN, np.int64)
    plan[layout.U_AFTER] = layout.NO_HORIZON
    for s in range(2):
        if 0 < stops[s, STOP_AFTER] < plan[layout.U_AFTER]:
            plan[layout.U_AFTER] = stops[s, STOP_AFTER]
    plan[layout.U_RULES] = 1 if any_stop(stops) else 0
    return plan


@jit
def men_by_column(groups, n_columns):
    """Each outcome column's men at the start (row 0) and side (row 1; -1: not a
    casualty column): a side's men left are its men less its casualties, a type's left
    its column's men less its casualties (stop rules count fighters, not nobles or
    engines)."""
    out = np.zeros((2, n_columns), np.int64)
    out[1, :] = -1
    for g in range(groups.shape[0]):
        if groups[g, layout.G_KIND] == layout.MAN:
            c = groups[g, layout.G_COLUMN]
            out[0, c] += groups[g, layout.G_COUNT]
            out[1, c] = groups[g, layout.G_SIDE]
    return out


@jit
def stop_side(stops, row, by_column, steps):
    """The side whose stop rule holds after strike ``steps`` (the attacker's first), or
    kernels.stops.NEITHER; ``row`` is the battle's outcome row so far."""
    men_a = 0
    men_d = 0
    for c in range(layout.O_CASUALTIES, row.shape[0]):
        if by_column[1, c] == layout.ATTACKER:
            men_a += by_column[0, c] - row[c]
        elif by_column[1, c] == layout.DEFENDER:
            men_d += by_column[0, c] - row[c]
    gone = stops[0, STOP_GONE]
    gone_a = by_column[0, gone] - row[gone] if gone >= 0 else 0
    gone = stops[1, STOP_GONE]
    gone_d = by_column[0, gone] - row[gone] if gone >= 0 else 0
    return withdrawing_side(stops, men_a, men_d, gone_a, gone_d, steps)


@jit(inline=True)
def withdraw(row, side, steps):
    """Side ``side`` withdraws after strike ``steps`` with its survivors: the battle ends
    where it stands, no prisoners taken (the source text has the winner take them from a
    defeated side only)."""
    row[layout.O_WINNER] = ATTACKER_WITHDREW + side
    row[layout.O_STEPS] = steps


@jit(inline=True)
def next_horizon(asked, k, after):
    """The next strike at which something is due: asked step ``k`` or ``after``."""
    if k < asked.shape[0] and asked[k] < after:
        return asked[k]
    return after


@jit
def record(row, rec, i, k, step):
    """Battle ``i``'s row after strike ``step``, still undecided then, as asked step ``k``."""
    copy_row(row, rec[i, k])
    rec[i, k, layout.O_WINNER] = FIGHTING
    rec[i, k, layout.O_STEPS] = step


@jit(inline=True)
def open_marks(row, rec, i, asked, marks, plan):
    """Battle ``i``'s marks at its start, the rows of asked steps before its first strike
    recorded (the battle as given); returns whether every asked step is recorded. (A
    plain run's battle, asking none, makes no call.)"""
    k = 0
    if asked.shape[0] > 0:
        while k < asked.shape[0] and asked[k] <= 0:
            record(row, rec, i, k, asked[k])
            k += 1
    marks[layout.M_NEXT] = k
    marks[layout.M_HORIZON] = next_horizon(asked, k, plan[layout.U_AFTER])
    return k > 0 and k == asked.shape[0]


@jit
def pass_horizon(row, rec, i, asked, marks, plan, stops, steps):
    """Strike ``steps`` changes the battle and comes after the horizon: the state has
    not moved since the last change, so it is each asked step's before it (recorded),
    and a rule's ``after`` before it withdraws its side then (the state rules were
    checked at the last change and hold no more now). Returns whether the battle is
    over for this call: withdrawn, or every asked step recorded."""
    after = plan[layout.U_AFTER]
    while steps > marks[layout.M_HORIZON]:
        k = marks[layout.M_NEXT]
        if k < asked.shape[0] and asked[k] < after:
            record(row, rec, i, k, asked[k])
            marks[layout.M_NEXT] = k + 1
            if k + 1 == asked.shape[0]:
                return True
        else:
            withdraw(
                row,
                layout.ATTACKER if stops[layout.ATTACKER, STOP_AFTER] == after else layout.DEFENDER,
                after,
            )
            return True
        marks[layout.M_HORIZON] = next_horizon(asked, marks[layout.M_NEXT], after)
    return False


@jit
def close_marks(row, rec, i, marks):
    """Battle ``i``'s rows of asked steps not recorded during it: its final row."""
    for k in range(marks[layout.M_NEXT], rec.shape[1]):
        copy_row(row, rec[i, k])


@jit
def _strike_battle(
    state,
    groups,
    survive,
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
    split,
    stops,
    plan,
    by_column,
    asked,
    rec,
    battle,
    marks,
):
    """One battle (``battle`` of the call: its rows recorded in ``rec[battle]``), strike
    by strike. ``split`` is the first defender group (the table
    lists the attacker's groups first). ``stops``, ``plan``, ``asked``, ``rec`` and
    ``marks``: the battle as it unfolds (the stop rules, the rows of asked steps).

    The loop run on every strike (mostly misses) calls no helper that takes arrays
    and branches: Numba cannot prune the reference counting of such calls, and those
    atomic operations cost more than the strike. The scans below are ``pick`` and
    ``defense_of`` written out."""
    value, alive, sdef, sdmg, standing, ws, ts, budget, others, front = per_side
    battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    if open_marks(row, rec, battle, asked, marks, plan):
        return
    refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front)
    n = groups.shape[0]
    turn = layout.ATTACKER
    steps = 0
    changed = True  # the break check is due after the first strike and after every hit
    while True:
        if order == layout.RANDOM:
            total = ws[0] + ws[1]
            if total == 0:
                break  # nobody can strike: a stalemate, reported as a draw
            # One man uniformly from every man able to strike, on either side.
            r = below(state, total)
            striker = 0
        else:
            budget[0] = min(budget[0], ws[0])
            budget[1] = min(budget[1], ws[1])
            if budget[0] == 0 and budget[1] == 0:
                if ws[0] == 0 and ws[1] == 0:
                    break
                budget[0] = ws[0]
                budget[1] = ws[1]
                turn = layout.ATTACKER
            s = turn if budget[turn] > 0 else 1 - turn
            budget[s] -= 1
            turn = 1 - s
            r = below(state, ws[s])
            striker = 0 if s == layout.ATTACKER else split
        while r >= w[striker]:
            r -= w[striker]
            striker += 1
        s = groups[striker, layout.G_SIDE]
        e = 1 - s
        steps += 1
        target = -1  # the structure
        if groups[striker, layout.G_KIND] != layout.ENGINE:
            r = below(state, ts[e])
            target = split if e == layout.DEFENDER else 0
            end = n if e == layout.DEFENDER else split
            while target < end and r >= t[target]:
                r -= t[target]
                target += 1
            if target == end:
                target = -1
        if target < 0:
            defense = sdef[e]
        else:
            defense = groups[target, layout.G_DEF]
            if groups[target, layout.G_PROTECTED] == 1 and standing[e] == 1:
                defense += sdef[e]
        a = rating[striker]
        if chance(state, a, a + defense):
            # The horizon (a step to record, a rule's ``after``), tested on a hit only: a
            # miss changes nothing, so the state after strike ``h`` is the state before
            # the first hit after it. Read from an array here: a test every strike, or
            # the cut kept in a register across the loop, made every battle 3-6% slower
            # (benchmarks/tree_versions.py).
            if steps > marks[layout.M_HORIZON]:  # noqa: SIM102
                if pass_horizon(row, rec, battle, asked, marks, plan, stops, steps):
                    return
            if (
                target >= 0
                and groups[target, layout.G_KIND] == layout.MAN
                and survive[target] == 0.0
            ):
                # The most common hit, a man who cannot survive it, written out: it is
                # strike_effect's and one_less's work without their calls' refcounting.
                cnt[target] -= 1
                row[groups[target, layout.G_COLUMN]] += 1
                value[e] -= groups[target, layout.G_VALUE]
                alive[e] -= 1
                change = layout.ONE_LESS if cnt[target] > 0 else layout.REFRESH
                if change == layout.ONE_LESS:
                    if w[target] > 0:
                        w[target] -= 1
                        ws[e] -= 1
                    t[target] -= 1
                    ts[e] -= 1
            else:
                change = strike_effect(
                    state,
                    groups,
                    survive,
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
                if change == layout.ONE_LESS:
                    one_less(target, e, w, t, ws, ts)
            if change == layout.REFRESH:
                refresh(
                    groups,
                    cnt,
                    sides,
                    standing,
                    order,
                    unit_men,
                    rating,
                    w,
                    t,
                    ws,
                    ts,
                    others,
                    front,
                )
            changed = True
        if changed:
            changed = False
            lost_a = (
                alive[0] == 0
                or value[0] * 100 <= sides[0, layout.S_START] * sides[0, layout.S_BREAK]
            )
            lost_d = (
                alive[1] == 0
                or value[1] * 100 <= sides[1, layout.S_START] * sides[1, layout.S_BREAK]
            )
            if lost_a or lost_d:
                winner = (
                    layout.DRAW
                    if lost_a and lost_d
                    else (layout.DEFENDER if lost_a else layout.ATTACKER)
                )
                finish(state, groups, cnt, health, alive, winner, steps, row)
                return
            # Undecided: the stop rules, the attacker's first (kernels/stops.py).
            if plan[layout.U_RULES] == 1:
                side = stop_side(stops, row, by_column, steps)
                if side >= 0:
                    withdraw(row, side, steps)
                    return
    finish(state, groups, cnt, health, alive, layout.DRAW, steps, row)


@jit
def attacker_groups(groups):
    """How many groups the attacker has (they come first in the table)."""
    split = 0
    while split < groups.shape[0] and groups[split, layout.G_SIDE] == layout.ATTACKER:
        split += 1
    return split


@jit(parallel=True)
def strike_battles(groups, survive, sides, order, seed, first, out, stops, asked, rec):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, every strike drawn.

    ``stops``: both sides' stop rules (kernels/stops.py; ``no_stops()`` for none).
    ``asked``: the strikes after which to record each battle's row in ``rec[i, k]``
    (``(len(out), len(asked), width)``; none asked: a plain run, ``rec`` of that shape
    with no rows): a battle decided before a step has its final row there, and one
    whose every asked step is recorded stops (its row in ``out`` is then incomplete)."""
    n = out.shape[0]
    n_groups = groups.shape[0]
    n_units = groups[:, layout.G_UNIT].max() + 1
    split = attacker_groups(groups)
    plan = unfolding_plan(stops)
    by_column = men_by_column(groups, out.shape[1])
    at = left_at(groups, out.shape[1])
    for block in prange((n + layout.BLOCK - 1) // layout.BLOCK):
        state = np.empty(4, np.uint64)
        cnt = np.empty(n_groups, np.int64)
        health = np.empty(n_groups, np.int64)
        unit_men = np.empty(n_units, np.int64)
        rating = np.empty(n_groups, np.int64)
        w = np.empty(n_groups, np.int64)
        t = np.empty(n_groups, np.int64)
        per_side = np.zeros((layout.N_PER_SIDE, 2), np.int64)
        marks = np.zeros(layout.N_MARKS, np.int64)
        for i in range(block * layout.BLOCK, min(n, (block + 1) * layout.BLOCK)):
            seed_battle(state, seed, first + i)
            per_side[:] = 0
            _strike_battle(
                state,
                groups,
                survive,
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
                split,
                stops,
                plan,
                by_column,
                asked,
                rec,
                i,
                marks,
            )
            if at >= 0:
                keep_left(groups, cnt, health, out[i], at)
            if rec.shape[1] > 0:
                close_marks(out[i], rec, i, marks)
