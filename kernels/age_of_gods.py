"""Age of Gods battles: an opening volley, then rounds of special / missile / melee
phases, each resolved simultaneously (docs/age_of_gods.md, "The rules, as implemented").

The army is Olympia's group table (kernels/olympia/strike.py) with a few more columns, so
Olympia's helpers serve here unchanged: ``refresh`` finds the front rows, valid
targets and shielded nobles, ``strike_effect`` applies one hit (death, blessed
survival, a noble's wound, a structure's damage), ``is_broken`` and ``finish`` end
the battle and take prisoners. What is new is the phase: strikers are drawn without
replacement up to the phase's cap, hits are recorded against the group (a hit on a
man already hit this phase is wasted) and applied together when the phase ends.
In Olympia's columns, G_FRONT holds the melee (attack) rating and G_REAR the missile
rating.

The differences between the rule text's reading and the released engine's (docs/
age_of_gods.md, "Rule text and released engine") are data, not code paths chosen at
compile time: the side table says how terrain multiplies (``S_ATTACK_QUARTERS``,
``S_QUARTERS``, ``S_SPECIAL_TERRAIN``), whether a structure is the engine's
(``S_COVERS`` > 0: damage points and a bonus to the first men it covers), how prisoners
are taken (``S_CERTAIN_CAPTURE``, ``S_NO_PRISONERS``); the group table holds each
unit's tactics (``G_ATTACK_PCT``, ``G_DEFENSE_PCT``), who is inside (``G_INSIDE``) and
the round allies arrive in (``G_ARRIVES``).

A battle may start in progress (``S_FROM_STEP``: rounds already fought, so the volley is
past and the round counter starts there) and either side may withdraw (kernels/stops.py:
the rules are a separate ``(2, N_STOP)`` argument, checked after every round the battle
survives undecided). ``phased_battles`` records a battle's row after each asked round in
the same pass (``through``), the rows :meth:`run_until` would give one step at a time.

Only ``strike`` (once per strike) is inlined; the per-phase helpers are compiled as
separate functions, because inlining them all into one battle function multiplies
Numba's compile time for a per-call cost that is negligible once per phase.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import prange, types

from . import _aside
from . import olympia as ol
from ._jit import INT_TABLE, INTS, REALS, STATE, jit
from .rng import below, chance, seed_battle, uniform
from .rows import copy_row
from .stops import ATTACKER_WITHDREW, FIGHTING, STOP_GONE, any_stop, withdrawing_side

# Columns of the group table after Olympia's: mounted, pikes, the special attack,
# the fled column, the band (who flees together), the unit's attack and defense
# tactics in percent (100 = x1), inside the side's structure (1) and the round the
# group arrives in (0: from the start; allies: a later round).
(
    G_MOUNTED,
    G_PIKE,
    G_SPECIAL,
    G_SPECIAL_TARGETS,
    G_FLED_COLUMN,
    G_BAND,
    G_ATTACK_PCT,
    G_DEFENSE_PCT,
    G_INSIDE,
    G_ARRIVES,
) = range(ol.N_GROUP_FIELDS, ol.N_GROUP_FIELDS + 10)
N_GROUP_FIELDS = ol.N_GROUP_FIELDS + 10
# Columns of the side table after Olympia's: the terrain multiplier on this side's
# defense and on its melee attack, in quarters (4 = x1), so hit chances stay integer
# ratios; whether the defense multiplier holds against special attacks; the men the
# side's structure covers under the engine's structure rules (0: the text's rules);
# whether this side, losing with nobody standing, has all its nobles taken (the
# engine's 100%); whether this side's leader takes no prisoners (a garrison: those it
# would take are killed); whether a side that withdraws has its nobles taken as a beaten
# side's are (the engine's prisoner rules: the engine knows no way off the field but
# breaking); the rounds already fought (the same in both rows: a battle in progress).
(
    S_QUARTERS,
    S_ATTACK_QUARTERS,
    S_SPECIAL_TERRAIN,
    S_COVERS,
    S_CERTAIN_CAPTURE,
    S_NO_PRISONERS,
    S_WITHDRAWAL_PRISONERS,
    S_FROM_STEP,
) = range(ol.N_SIDE_FIELDS, ol.N_SIDE_FIELDS + 8)
N_SIDE_FIELDS = ol.N_SIDE_FIELDS + 8
QUARTERS = 4
#: Tactics are percentages: a strike's rating and a target's defense are both scaled
#: by 100 x 4 (percent x quarters); the engine's structure bonus is in hundredths of a
#: point, so under it both are scaled by 100 more.
PERCENT = 100

# Phases; also the values of the outcome column O_PHASE (where the battle was decided:
# a withdrawal ends it after a round's last phase).
VOLLEY, SPECIAL, MISSILE, MELEE, STALEMATE, WITHDRAWAL = range(6)
PHASES = ("volley", "special", "missile", "melee", "stalemate", "withdrawal")
ATTACKER, DEFENDER, DRAW = ol.ATTACKER, ol.DEFENDER, ol.DRAW
MELEE_STRIKES_PER_DEFENDER = 4

# Outcome row: Olympia's winner, steps and extras, then the deciding phase, then the
# casualty and fled columns named by the group table.
O_PHASE = ol.O_CASUALTIES
O_COLUMNS = O_PHASE + 1

# Rows of the per-side scratch: Olympia's value, alive, structure defense, damage and
# standing, refresh()'s striker and target totals and its two scratch rows, then the
# structure hits pending in this phase, the size of the special attacks' target pool,
# the side's missile and melee caps for this phase, and its starting value (which
# allies raise when they arrive: the break threshold is recomputed with them).
N_PER_SIDE = 14
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
    for s in range(2):
        if sides[s, S_COVERS] > 0 and standing[s] == 1 and front[s] > 0:
            structure_in_front(groups, cnt, s, rating, w, t, ws, ts, front)
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
def structure_in_front(groups, cnt, s, rating, w, t, ws, ts, front):
    """Under the engine's structure rules a standing structure is a fighter of row 0
    (the engine's fort has behind = 0): while it stands, side ``s``'s front row is row
    0 even with nobody of its own there, so the men behind it shoot and are not
    targets until it falls. Redoes ``refresh``'s last pass for that side."""
    front[s] = 0
    ts[s] = 0
    ws[s] = 0
    for g in range(groups.shape[0]):
        if groups[g, ol.G_SIDE] != s or groups[g, ol.G_KIND] == ol.ENGINE:
            continue
        in_front = groups[g, ol.G_ROW] == 0
        if not in_front:
            t[g] = 0
        rating[g] = groups[g, ol.G_FRONT] if in_front else groups[g, ol.G_REAR]
        w[g] = cnt[g] if rating[g] > 0 and cnt[g] > 0 else 0
        ts[s] += t[g]
        ws[s] += w[g]
    ts[s] += 1


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
    state,
    groups,
    sides,
    cnt,
    hit,
    sdef,
    sdmg,
    standing,
    pending,
    weights,
    total,
    e,
    rating,
    mounted,
    special,
):
    """One strike of ``rating`` (scaled by percent x quarters) at a target of side ``e``
    drawn by ``weights`` (past the groups: the structure), recorded in ``hit`` /
    ``pending``. ``special``: a special attack (terrain may not count against it)."""
    r = below(state, total)
    target = ol.pick(weights, groups, e, r)
    covers = sides[e, S_COVERS]
    attack = rating
    if target < 0:
        defense = sdef[e] * PERCENT * QUARTERS
    else:
        quarters = sides[e, S_QUARTERS]
        if special == 1 and sides[e, S_SPECIAL_TERRAIN] == 0:
            quarters = QUARTERS
        defense = groups[target, ol.G_DEF]
        if covers > 0:
            # The engine's structure: the first men it covers (target slots 2.., the
            # structure being slot 1 while it stands) add defense x (100 - damage) / 100
            # hundredths of a point, before tactics, terrain and pikes multiply.
            attack *= PERCENT
            defense *= PERCENT
            if groups[target, G_INSIDE] == 1 and standing[e] == 1 and r + 2 <= covers:
                defense += sdef[e] * (ol.COLLAPSE_DAMAGE - sdmg[e]) // ol.COLLAPSE_DAMAGE
        defense *= groups[target, G_DEFENSE_PCT] * quarters
        if mounted == 1 and groups[target, G_PIKE] == 1:
            defense *= 2
        if covers == 0 and groups[target, ol.G_PROTECTED] == 1 and standing[e] == 1:
            defense += sdef[e] * PERCENT * QUARTERS
    if chance(state, attack, attack + defense):
        if target < 0:
            if covers == 0:
                pending[e] += 1
            else:
                # The engine counts damage points like men: a hit on a point already
                # taken this phase is wasted.
                points = ol.COLLAPSE_DAMAGE - sdmg[e]
                if chance(state, points - pending[e], points):
                    pending[e] += 1
        elif chance(state, cnt[target] - hit[target], cnt[target]):
            # The hit lands on a man not yet hit this phase; otherwise it is wasted.
            hit[target] += 1


@jit(counted=False)
def ranged_or_melee(
    state,
    groups,
    sides,
    cnt,
    hit,
    sdef,
    sdmg,
    standing,
    pending,
    t,
    ts,
    front,
    ready,
    s,
    phase,
    cap,
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
            rating = groups[g, ol.G_FRONT] * sides[s, S_ATTACK_QUARTERS]
        strike(
            state,
            groups,
            sides,
            cnt,
            hit,
            sdef,
            sdmg,
            standing,
            pending,
            t,
            ts[e],
            e,
            rating * groups[g, G_ATTACK_PCT],
            groups[g, G_MOUNTED],
            0,
        )
    return strikes


@jit(counted=False)
def special_attacks(
    state, groups, sides, cnt, hit, sdef, sdmg, standing, pending, pool, pool_total
):
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
                    sdmg,
                    standing,
                    pending,
                    pool,
                    pool_total[e],
                    e,
                    groups[g, G_SPECIAL] * QUARTERS * groups[g, G_ATTACK_PCT],
                    groups[g, G_MOUNTED],
                    1,
                )
                strikes += 1
    return strikes


@jit(counted=False)
def apply_losses(
    state,
    groups,
    survive,
    flee,
    sides,
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
        if sides[s, S_COVERS] > 0 and standing[s] == 1 and pending[s] > 0:
            # The engine's structure: each hit is a point of damage, none of defense.
            sdmg[s] = min(ol.COLLAPSE_DAMAGE, sdmg[s] + pending[s])
            row[ol.extra(s, ol.X_STRUCTURE_DMG)] = sdmg[s]
            if sdmg[s] >= ol.COLLAPSE_DAMAGE:
                standing[s] = 0
                row[ol.extra(s, ol.X_COLLAPSED)] = 1
            pending[s] = 0
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


@jit(inline=True)
def is_broken(value, alive, start, sides, s):
    """A side at or under its break threshold (of its starting value, allies who have
    arrived included), or with nobody left, has lost."""
    return alive[s] == 0 or value[s] * 100 <= start[s] * sides[s, ol.S_BREAK]


@jit(counted=False)
def verdict(value, alive, start, sides):
    """The winner if the break rule ends the battle now, else -1."""
    lost_a = is_broken(value, alive, start, sides, ATTACKER)
    lost_d = is_broken(value, alive, start, sides, DEFENDER)
    if lost_a and lost_d:
        return DRAW
    if lost_a:
        return DEFENDER
    if lost_d:
        return ATTACKER
    return -1


@jit(counted=False)
def arrive(groups, cnt, value, alive, start, rounds):
    """Allies of round ``rounds`` join: present from now on, and counted in their side's
    starting value (the engine recomputes the break threshold with them). Returns
    whether allies are still to come after this round."""
    later = False
    for g in range(groups.shape[0]):
        arrives = groups[g, G_ARRIVES]
        if arrives == rounds and rounds > 0:
            s = groups[g, ol.G_SIDE]
            cnt[g] = groups[g, ol.G_COUNT]
            alive[s] += cnt[g]
            value[s] += cnt[g] * groups[g, ol.G_VALUE]
            start[s] += cnt[g] * groups[g, ol.G_VALUE]
        elif arrives > rounds:
            later = True
    return later


@jit(counted=False)
def finish(state, groups, sides, cnt, health, alive, winner, steps, row):
    """The outcome row's winner and steps, then prisoners: the winner takes each
    surviving noble of the loser (allies who never came excepted) with chance
    clamp(25 W / L, 25, 75) percent; under the engine's prisoner rules 100 percent when
    the loser has nobody standing; a winner whose leader takes no prisoners (a
    garrison) kills those it would take."""
    row[ol.O_WINNER] = winner
    row[ol.O_STEPS] = steps
    if winner == DRAW:
        return
    loser = 1 - winner
    percent = 75
    if alive[loser] > 0:
        percent = min(75, max(25, 25 * alive[winner] // alive[loser]))
    elif sides[loser, S_CERTAIN_CAPTURE] == 1:
        percent = 100
    for g in range(groups.shape[0]):
        noble = groups[g, ol.G_SIDE] == loser and groups[g, ol.G_KIND] == ol.NOBLE
        came = groups[g, G_ARRIVES] <= steps
        if noble and came and health[g] > 0 and below(state, 100) < percent:
            leader = groups[g, ol.G_LEADER] == 1
            if sides[winner, S_NO_PRISONERS] == 0:
                row[ol.extra(loser, ol.X_CAPTURED)] += 1
                if leader:
                    row[ol.extra(loser, ol.X_LEADER_CAPTURED)] = 1
            else:
                if cnt[g] == 0:  # he was counted wounded: now he is dead
                    row[ol.extra(loser, ol.X_WOUNDED)] -= 1
                row[ol.extra(loser, ol.X_KILLED)] += 1
                if leader:
                    row[ol.extra(loser, ol.X_LEADER_WOUNDED)] = 0
                    row[ol.extra(loser, ol.X_LEADER_KILLED)] = 1


@jit(counted=False)
def men_left(groups, cnt, rounds, s, column):
    """Side ``s``'s men left after round ``rounds`` (fighters, nobles not counted: those
    on the field and allies still to come, the men a stop rule counts) and its men of the
    casualty ``column``'s type (a stop rule's ``gone``; any value when it names none)."""
    men = 0
    of_type = 0
    for g in range(groups.shape[0]):
        if groups[g, ol.G_SIDE] != s or groups[g, ol.G_KIND] != ol.MAN:
            continue
        left = cnt[g] if groups[g, G_ARRIVES] <= rounds else groups[g, ol.G_COUNT]
        men += left
        if groups[g, ol.G_COLUMN] == column:
            of_type += left
    return men, of_type


@jit(counted=False)
def withdrawal(state, groups, sides, stops, cnt, health, alive, rounds, row):
    """After round ``rounds``, left undecided: the side whose stop rule holds withdraws
    (the attacker's rule first). Its row: that side withdrew after this round, its nobles
    taken as a beaten side's are under the engine's prisoner rules (``finish`` with the
    other side as the winner), nothing more under the text's. Returns whether a side
    withdrew."""
    men_a, gone_a = men_left(groups, cnt, rounds, np.int64(ATTACKER), stops[0, STOP_GONE])
    men_d, gone_d = men_left(groups, cnt, rounds, np.int64(DEFENDER), stops[1, STOP_GONE])
    side = withdrawing_side(stops, men_a, men_d, gone_a, gone_d, rounds)
    if side < 0:
        return False
    if sides[side, S_WITHDRAWAL_PRISONERS] == 1:
        finish(state, groups, sides, cnt, health, alive, 1 - side, rounds, row)
    row[ol.O_WINNER] = ATTACKER_WITHDREW + side
    row[ol.O_STEPS] = rounds
    row[O_PHASE] = WITHDRAWAL
    return True


@jit(inline=True)
def left_at(groups, width):
    """Olympia's ``left_at`` (where a row holds each group's state at the battle's end,
    for the wave chain; -1: nowhere) with this ruleset's outcome columns: the deciding
    phase and the fled columns are the outcome's too."""
    at = ol.left_at(groups, width)
    if at < O_COLUMNS:
        return -1
    for g in range(groups.shape[0]):
        if groups[g, G_FLED_COLUMN] >= at:
            return -1
    return at


@jit(inline=True)
def record_until(row, record, asked, recorded, rounds):
    """The row as it stands (still fighting) for each asked round up to ``rounds`` not
    recorded yet; returns how many are recorded."""
    while recorded < asked.shape[0] and asked[recorded] <= rounds:
        for c in range(row.shape[0]):
            record[recorded, c] = row[c]
        record[recorded, ol.O_WINNER] = FIGHTING
        record[recorded, ol.O_STEPS] = asked[recorded]
        recorded += 1
    return recorded


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
    stops,
    asked,
    record,
):
    """One battle into ``row``; its rows after the ``asked`` rounds (ascending) into
    ``record``, as many as it reaches before its end (returned: the caller fills the
    rest with the final row). The attacker's ``S_CUT`` stops it after that round."""
    value, alive, sdef, sdmg, standing, ws, ts, others, front = per_side[:9]
    pending, pool_total, missile_cap, melee_cap, start = per_side[9:]
    ol.battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    rounds = sides[0, S_FROM_STEP]
    for s in range(2):
        start[s] = sides[s, ol.S_START]
    for g in range(groups.shape[0]):
        if groups[g, G_ARRIVES] > rounds:  # allies: not on the field until their round
            alive[groups[g, ol.G_SIDE]] -= cnt[g]
            cnt[g] = 0
    cut = sides[0, ol.S_CUT]
    withdrawals = any_stop(stops)
    if rounds > 0:
        # A battle in progress: the volley is past; the state asked for a round already
        # fought is the state given.
        recorded = record_until(row, record, asked, 0, rounds)
        if 0 < cut <= rounds:
            row[ol.O_WINNER] = FIGHTING
            row[ol.O_STEPS] = cut
            return recorded
    else:
        recorded = 0
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
            sdmg,
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
            sides,
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
        winner = verdict(value, alive, start, sides)
        if winner >= 0:
            finish(state, groups, sides, cnt, health, alive, winner, np.int64(0), row)
            row[O_PHASE] = VOLLEY
            return 0
    while True:
        rounds += 1
        later = arrive(groups, cnt, value, alive, start, rounds)
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
                    state, groups, sides, cnt, hit, sdef, sdmg, standing, pending, pool, pool_total
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
                        sdmg,
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
                sides,
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
            winner = verdict(value, alive, start, sides)
            if winner >= 0:
                finish(state, groups, sides, cnt, health, alive, winner, rounds, row)
                row[O_PHASE] = phase
                return recorded
        if strikes == 0 and not later:
            # Nobody on either side could strike in a whole round and no allies are to
            # come: nothing will change.
            finish(state, groups, sides, cnt, health, alive, np.int64(DRAW), rounds, row)
            row[O_PHASE] = STALEMATE
            return recorded
        if withdrawals and withdrawal(state, groups, sides, stops, cnt, health, alive, rounds, row):
            return recorded
        recorded = record_until(row, record, asked, recorded, rounds)
        if rounds == cut:
            row[ol.O_WINNER] = FIGHTING
            row[ol.O_STEPS] = rounds
            return recorded


@functools.cache
def _battle_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`_phased_battle`."""
    tables = (INT_TABLE, REALS, REALS, INT_TABLE)  # groups, survive, flee, sides
    scratch = (INTS, *[INTS] * 10, INT_TABLE)  # row, the per-group rows, per_side
    recording = (INT_TABLE, INTS, INT_TABLE)  # stops, asked, record
    return (STATE, *tables, *scratch, *recording)


def _plain_types() -> tuple[Any, ...]:
    """The arguments :func:`phased_battles` takes after the battle in a plain run: groups,
    survive, flee, sides, stops, asked, seed, first, out, through."""
    tables = (INT_TABLE, REALS, REALS, INT_TABLE, INT_TABLE, INTS)
    return (*tables, types.uint64, types.int64, INT_TABLE, types.int64[:, :, ::1])


@functools.cache
def _helpers_here() -> tuple[tuple[Any, tuple[Any, ...]], ...]:
    """The battle's helpers the process that starts a compile aside compiles itself
    (:data:`battle_by_address`), with the types :func:`_phased_battle` calls them with (its
    ``per_side`` rows are views of any layout): ``special_attacks``, about 2 of the
    battle's 15 CPU seconds, typed about 8 s into the battle's compile. With it here the
    two processes took about as long (``python benchmarks/compile_aside.py``, Intel Xeon;
    with ``withdrawal`` too, this one took 1-1.5 s longer than the other)."""
    side = types.int64[:]
    # state, groups, sides, cnt, hit, sdef, sdmg, standing, pending, pool, pool_total
    special = (STATE, INT_TABLE, INT_TABLE, INTS, INTS, side, side, side, side, INTS, side)
    return ((special_attacks, special),)


@jit(parallel=True)
def phased_battles(battle, groups, survive, flee, sides, stops, asked, seed, first, out, through):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``; ``battle`` is
        :func:`battle_by_address`, ``stops`` the sides' stop rules (kernels/stops.py), and
        every array C-contiguous. ``through[i, k]`` is battle i's row after round
        ``asked[k]`` (ascending; a battle decided before it: its final row); a plain run asks
        for none (``through`` of shape ``(len(out), 0, columns)``). Rows of one column more
    per group than the outcome's also get each group's state at the battle's end
    (:func:`left_at`: a noble's health left, the men of another group still standing; an
    ally who never came: none), written after the battle's last draw."""
    n = out.shape[0]
    n_groups = groups.shape[0]
    n_units = groups[:, ol.G_UNIT].max() + 1
    at = left_at(groups, out.shape[1])
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
            record = through[i]
            recorded = battle(
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
                stops,
                asked,
                record,
            )
            if at >= 0:
                ol.keep_left(groups, cnt, health, out[i], at)
            for k in range(recorded, asked.shape[0]):
                copy_row(out[i], record[k])


#: :func:`_phased_battle` for :func:`phased_battles` or another kernel (the stacked one of
#: kernels/age_of_gods_stacked.py), called by its address. On a cold cache a second
#: process compiles the battle with most of its helpers (about 12 of a cold run's 26 CPU
#: seconds) while this one compiles :func:`_helpers_here`, the kernel and the tally.
battle_by_address = _aside.BattleByAddress(
    __name__, "battle_by_address", _phased_battle, _battle_types, types.int64,
    phased_battles, _plain_types, _helpers_here,
)  # fmt: skip
