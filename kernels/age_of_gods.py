"""Age of Gods battles: an opening volley, then rounds of special / missile / melee
phases, each resolved simultaneously (docs/age_of_gods.md, "The rules, as implemented").

The army is Olympia's group table (kernels/olympia.py) with a few more columns, so
Olympia's helpers serve here unchanged: ``refresh`` finds the front rows, valid
targets and shielded nobles, ``strike_effect`` applies one hit (death, blessed
survival, a noble's wound, a structure's damage), ``is_broken`` and ``finish`` end
the battle and take prisoners. What is new is the phase: strikers are drawn without
replacement up to the phase's cap, hits are recorded against the group (a hit on a
man already hit this phase is wasted) and applied together when the phase ends.
In Olympia's columns, G_FRONT holds the melee (attack) rating and G_REAR the missile
rating.

Only ``strike`` (once per strike) is inlined; the per-phase helpers are compiled as
separate functions, because inlining them all into one battle function multiplies
Numba's compile time for a per-call cost that is negligible once per phase.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import olympia as ol
from ._jit import jit
from .rng import below, chance, seed_battle, uniform

# Columns of the group table after Olympia's.
G_MOUNTED, G_PIKE, G_SPECIAL, G_SPECIAL_TARGETS, G_FLED_COLUMN, G_BAND = range(
    ol.N_GROUP_FIELDS, ol.N_GROUP_FIELDS + 6
)
N_GROUP_FIELDS = ol.N_GROUP_FIELDS + 6
# Columns of the side table after Olympia's: the terrain multiplier on attack and
# defense, in quarters (4 = x1), so hit chances stay integer ratios.
S_QUARTERS = ol.N_SIDE_FIELDS
N_SIDE_FIELDS = ol.N_SIDE_FIELDS + 1
QUARTERS = 4

# Phases; also the values of the outcome column O_PHASE (where the battle was decided).
VOLLEY, SPECIAL, MISSILE, MELEE, STALEMATE = range(5)
PHASES = ("volley", "special", "missile", "melee", "stalemate")
ATTACKER, DEFENDER, DRAW = ol.ATTACKER, ol.DEFENDER, ol.DRAW
MELEE_STRIKES_PER_DEFENDER = 4

# Outcome row: Olympia's winner, steps and extras, then the deciding phase, then the
# casualty and fled columns named by the group table.
O_PHASE = ol.O_CASUALTIES
O_COLUMNS = O_PHASE + 1

# Rows of the per-side scratch: Olympia's value, alive, structure defense, damage and
# standing, refresh()'s striker and target totals and its two scratch rows, then the
# structure hits pending in this phase, the size of the special attacks' target pool
# and the side's missile and melee caps for this phase.
N_PER_SIDE = 13
BLOCK = ol.BLOCK


@jit(counted=False)
def survey(
    groups,
    cnt,
    sides,
    standing,
    unit_men,
    rating,
    w,
    t,
    ws,
    ts,
    others,
    front,
    pool,
    pool_total,
    missile_cap,
    melee_cap,
):
    """Targets at the start of a phase: ``t`` / ``ts`` for missile and melee (front row
    and the structure), ``pool`` / ``pool_total`` for special attacks (every man in any
    row and every unshielded noble), and each side's caps for the phase."""
    ol.refresh(
        groups, cnt, sides, standing, ol.RANDOM, unit_men, rating, w, t, ws, ts, others, front
    )
    pool_total[:] = 0
    for g in range(groups.shape[0]):
        s = groups[g, ol.G_SIDE]
        pool[g] = 0
        if cnt[g] > 0:
            if groups[g, ol.G_KIND] == ol.MAN:
                pool[g] = cnt[g]
            elif unit_men[groups[g, ol.G_UNIT]] == 0 and (
                groups[g, ol.G_LEADER] == 0 or others[s] == 0
            ):
                pool[g] = 1
        pool_total[s] += pool[g]
    strike_caps(ts, pool_total, standing, missile_cap, melee_cap)


@jit(counted=False)
def strike_caps(ts, pool_total, standing, missile_cap, melee_cap):
    """Each side's missile and melee caps from its own and the enemy's *defenders*:
    what a missile or melee strike can target (front-row men and unshielded nobles,
    and a standing structure as one).

    ``ts`` counts a side's missile and melee targets (front row and a standing
    structure), ``pool_total`` its men and unshielded nobles in every row (the
    structure not included). A side shoots at most as many missiles as it has
    defenders, and makes at most 4 melee strikes per enemy defender; an enemy with
    more targets behind its front than in it is counted as half of all its targets
    (rounded down) instead, so that hiding men in rear rows does not save them from
    melee."""
    for s in range(2):
        front = ts[s]
        every = pool_total[s] + standing[s]
        defenders = every // 2 if every - front > front else front
        missile_cap[s] = front
        melee_cap[1 - s] = MELEE_STRIKES_PER_DEFENDER * defenders


@jit(inline=True)
def strike(
    state, groups, sides, cnt, hit, sdef, standing, pending, weights, total, e, rating, mounted
):
    """One strike of ``rating`` (in quarters) at a target of side ``e`` drawn by
    ``weights`` (past the groups: the structure), recorded in ``hit`` / ``pending``."""
    target = ol.pick(weights, groups, e, below(state, total))
    if target < 0:
        defense = sdef[e] * QUARTERS
    else:
        defense = groups[target, ol.G_DEF] * sides[e, S_QUARTERS]
        if mounted == 1 and groups[target, G_PIKE] == 1:
            defense *= 2
        if groups[target, ol.G_PROTECTED] == 1 and standing[e] == 1:
            defense += sdef[e] * QUARTERS
    if chance(state, rating, rating + defense):
        if target < 0:
            pending[e] += 1
        elif chance(state, cnt[target] - hit[target], cnt[target]):
            # The hit lands on a man not yet hit this phase; otherwise it is wasted.
            hit[target] += 1


@jit(counted=False)
def ranged_or_melee(
    state, groups, sides, cnt, hit, sdef, standing, pending, t, ts, front, ready, s, phase, cap
):
    """Side ``s``'s missile or melee strikes: strikers drawn without replacement (a
    shuffled list cut at ``cap``). Returns the number of strikes."""
    total = 0
    for g in range(groups.shape[0]):
        ready[g] = 0
        if groups[g, ol.G_SIDE] == s and cnt[g] > 0:
            in_front = groups[g, ol.G_ROW] <= front[s]
            shoots = phase == MISSILE and not in_front and groups[g, ol.G_REAR] > 0
            fights = phase == MELEE and in_front and groups[g, ol.G_FRONT] > 0
            if shoots or fights:
                ready[g] = cnt[g]
            total += ready[g]
    e = 1 - s
    strikes = min(cap, total)
    for _ in range(strikes):
        g = ol.pick(ready, groups, s, below(state, total))
        ready[g] -= 1
        total -= 1
        if phase == MISSILE:
            rating = groups[g, ol.G_REAR] * QUARTERS
        else:
            rating = groups[g, ol.G_FRONT] * sides[s, S_QUARTERS]
        strike(
            state,
            groups,
            sides,
            cnt,
            hit,
            sdef,
            standing,
            pending,
            t,
            ts[e],
            e,
            rating,
            groups[g, G_MOUNTED],
        )
    return strikes


@jit(counted=False)
def special_attacks(state, groups, sides, cnt, hit, sdef, standing, pending, pool, pool_total):
    """Every special attacker strikes its number of targets, sides in random order."""
    first = below(state, 2)
    strikes = 0
    for k in range(2):
        s = first if k == 0 else 1 - first
        e = 1 - s
        if pool_total[e] == 0:
            continue
        for g in range(groups.shape[0]):
            if groups[g, ol.G_SIDE] != s or groups[g, G_SPECIAL] == 0:
                continue
            for _ in range(cnt[g] * groups[g, G_SPECIAL_TARGETS]):
                strike(
                    state,
                    groups,
                    sides,
                    cnt,
                    hit,
                    sdef,
                    standing,
                    pending,
                    pool,
                    pool_total[e],
                    e,
                    groups[g, G_SPECIAL] * QUARTERS,
                    groups[g, G_MOUNTED],
                )
                strikes += 1
    return strikes


@jit(counted=False)
def apply_losses(
    state,
    groups,
    survive,
    flee,
    cnt,
    health,
    hit,
    lost,
    value,
    alive,
    sdef,
    sdmg,
    standing,
    pending,
    row,
):
    """End of a phase: every recorded hit takes effect, then men of a band (one type
    in one unit and row) that took losses may flee, then structures take their damage."""
    n = groups.shape[0]
    lost[:] = 0
    for g in range(n):
        s = groups[g, ol.G_SIDE]
        for _ in range(hit[g]):
            before = cnt[g]
            ol.strike_effect(
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
                -1,
                s,
                g,
                row,
            )
            lost[groups[g, G_BAND]] += before - cnt[g]
        hit[g] = 0
    for g in range(n):
        if flee[g] > 0.0 and lost[groups[g, G_BAND]] > 0:
            fled = 0
            for _ in range(cnt[g]):
                if uniform(state) < flee[g]:
                    fled += 1
            s = groups[g, ol.G_SIDE]
            cnt[g] -= fled
            row[groups[g, ol.G_COLUMN]] += fled
            row[groups[g, G_FLED_COLUMN]] += fled
            value[s] -= fled * groups[g, ol.G_VALUE]
            alive[s] -= fled
    for s in range(2):
        while pending[s] > 0 and standing[s] == 1:
            ol.strike_effect(
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
                -1,
                s,
                -1,
                row,
            )
            pending[s] -= 1
        pending[s] = 0


@jit(counted=False)
def verdict(value, alive, sides):
    """The winner if the break rule ends the battle now, else -1."""
    lost_a = ol.is_broken(value, alive, sides, ATTACKER)
    lost_d = ol.is_broken(value, alive, sides, DEFENDER)
    if lost_a and lost_d:
        return DRAW
    if lost_a:
        return DEFENDER
    if lost_d:
        return ATTACKER
    return -1


@jit(counted=False)
def _phased_battle(
    state,
    groups,
    survive,
    flee,
    sides,
    row,
    cnt,
    health,
    hit,
    lost,
    unit_men,
    rating,
    w,
    t,
    pool,
    ready,
    per_side,
):
    value, alive, sdef, sdmg, standing, ws, ts, others, front = per_side[:9]
    pending, pool_total, missile_cap, melee_cap = per_side[9:]
    ol.battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    survey(
        groups,
        cnt,
        sides,
        standing,
        unit_men,
        rating,
        w,
        t,
        ws,
        ts,
        others,
        front,
        pool,
        pool_total,
        missile_cap,
        melee_cap,
    )
    ranged_or_melee(
        state,
        groups,
        sides,
        cnt,
        hit,
        sdef,
        standing,
        pending,
        t,
        ts,
        front,
        ready,
        # np.int64: literal constants would compile a second ranged_or_melee for them.
        np.int64(DEFENDER),
        np.int64(MISSILE),
        missile_cap[DEFENDER],
    )
    apply_losses(
        state,
        groups,
        survive,
        flee,
        cnt,
        health,
        hit,
        lost,
        value,
        alive,
        sdef,
        sdmg,
        standing,
        pending,
        row,
    )
    winner = verdict(value, alive, sides)
    if winner >= 0:
        ol.finish(state, groups, cnt, health, alive, winner, 0, row)
        row[O_PHASE] = VOLLEY
        return
    rounds = 0
    while True:
        rounds += 1
        strikes = 0
        for phase in range(SPECIAL, MELEE + 1):
            survey(
                groups,
                cnt,
                sides,
                standing,
                unit_men,
                rating,
                w,
                t,
                ws,
                ts,
                others,
                front,
                pool,
                pool_total,
                missile_cap,
                melee_cap,
            )
            if phase == SPECIAL:
                strikes += special_attacks(
                    state, groups, sides, cnt, hit, sdef, standing, pending, pool, pool_total
                )
            else:
                for s in range(2):
                    cap = missile_cap[s] if phase == MISSILE else melee_cap[s]
                    strikes += ranged_or_melee(
                        state,
                        groups,
                        sides,
                        cnt,
                        hit,
                        sdef,
                        standing,
                        pending,
                        t,
                        ts,
                        front,
                        ready,
                        s,
                        phase,
                        cap,
                    )
            apply_losses(
                state,
                groups,
                survive,
                flee,
                cnt,
                health,
                hit,
                lost,
                value,
                alive,
                sdef,
                sdmg,
                standing,
                pending,
                row,
            )
            winner = verdict(value, alive, sides)
            if winner >= 0:
                ol.finish(state, groups, cnt, health, alive, winner, rounds, row)
                row[O_PHASE] = phase
                return
        if strikes == 0:
            # Nobody on either side could strike in a whole round: nothing will change.
            ol.finish(state, groups, cnt, health, alive, DRAW, rounds, row)
            row[O_PHASE] = STALEMATE
            return


@jit(parallel=True)
def phased_battles(groups, survive, flee, sides, seed, first, out):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``."""
    n = out.shape[0]
    n_groups = groups.shape[0]
    n_units = groups[:, ol.G_UNIT].max() + 1
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        cnt = np.empty(n_groups, np.int64)
        health = np.empty(n_groups, np.int64)
        hit = np.zeros(n_groups, np.int64)
        lost = np.empty(n_groups, np.int64)
        unit_men = np.empty(n_units, np.int64)
        rating = np.empty(n_groups, np.int64)
        w = np.empty(n_groups, np.int64)
        t = np.empty(n_groups, np.int64)
        pool = np.empty(n_groups, np.int64)
        ready = np.empty(n_groups, np.int64)
        per_side = np.zeros((N_PER_SIDE, 2), np.int64)
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            seed_battle(state, seed, first + i)
            per_side[:] = 0
            hit[:] = 0
            _phased_battle(
                state,
                groups,
                survive,
                flee,
                sides,
                out[i],
                cnt,
                health,
                hit,
                lost,
                unit_men,
                rating,
                w,
                t,
                pool,
                ready,
                per_side,
            )
