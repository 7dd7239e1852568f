"""Exact Olympia answers: the battle as a Markov chain on the kernel's own state.

Misses change nothing, so between two changes (a man or noble down, an engine lost,
a structure hit) the strikes are independent trials. The chain's state is what the
strike kernel keeps between strikes, less what cannot influence the future:

* ``cnt`` of every group (men, nobles, engines), as in kernels/olympia/strike.py;
* per side with a structure, the points it has absorbed: defense goes first, then
  damage, so ``(defense, damage)`` is a function of one counter (``remaining`` below,
  counting down to the collapse);
* under ``alternating`` order, the two strike budgets and whose turn it is.

A noble's wound only decides his fate after he left (killed or not, captured or not),
so it never enters the state: those outcomes are weighed in at the end.

Every change lowers a count or the structure counter, so a mixed-radix index of the
state strictly decreases along every transition. Probability mass is pushed forward
in one sweep from the highest index down: when a state is reached in the sweep all
its predecessors have been processed. Self-loops (misses, a blessed soldier's luck)
are skipped by conditioning on a change; under ``alternating`` order the budgets walk
a deterministic path between changes, and a whole cycle without a change is a
geometric self-loop of the cycle start.

The state, targets and shielding come from the strike kernel's own helpers
(``refresh``, ``defense_of``, ``is_broken``), so both follow one reading of the spec.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..stops import (
    ATTACKER_WITHDREW,
    DEFENDER_WITHDREW,
    NEITHER,
    STOP_AFTER,
    STOP_GONE,
    any_stop,
    withdrawing_side,
)
from . import layout
from .strike import is_broken, refresh

#: Points a siege engine's hit takes from a structure: 5..10, uniform.
ENGINE_MIN_POINTS, ENGINE_POINTS = 5, 6
#: Results vector: P(attacker), P(defender), P(draw), E[strikes], then E[row column]
#: for every column of the kernel's outcome row from O_EXTRAS on (same layout), then
#: P(attacker withdrew), P(defender withdrew): the last R_WITHDREW entries.
R_STRIKES = 3
R_ROW = 4
R_WITHDREW = 2
#: The most entries (a change's successor and chance) of the table of changes
#: :func:`mass_after` keeps: 64 MB.
TABLE_ENTRIES = 4_000_000
#: :func:`withdrawal`'s reading of a position where a side is broken, and a state
#: whose reading :func:`mass_after` has not made yet.
BROKEN, UNREAD = -3, -2


@jit(inline=True)
def structure_of(sides, remaining, s):
    """``(defense, damage, standing)`` of side ``s``'s structure with ``remaining``
    points left before it collapses."""
    if sides[s, layout.S_HAS_STRUCTURE] == 0:
        return 0, 0, 0
    d0 = sides[s, layout.S_STRUCTURE_DEF]
    taken = d0 + layout.COLLAPSE_DAMAGE - sides[s, layout.S_STRUCTURE_DMG] - remaining
    if remaining <= 0:
        return 0, layout.COLLAPSE_DAMAGE, 0
    return max(d0 - taken, 0), sides[s, layout.S_STRUCTURE_DMG] + max(taken - d0, 0), 1


@jit
def strike_events(
    groups,
    survive,
    rating,
    w,
    t,
    ts,
    ws,
    sdef,
    standing,
    remaining,
    sstride,
    stride,
    index,
    s,
    succ,
    prob,
):
    """Changes one strike by side ``s`` can make, as (successor index, probability)
    pairs in ``succ`` / ``prob``; returns how many. The probabilities are per strike
    (their sum is the chance that the strike changes anything)."""
    e = 1 - s
    n = 0
    if ws[s] == 0:
        return 0
    inv_ws = 1.0 / ws[s]
    # Targets are drawn uniformly among the enemy's ts[e] slots (the structure is one).
    inv_ts = 1.0 / ts[e] if ts[e] > 0 else 0.0
    men_struct = 0.0
    engine_struct = 0.0
    for i in range(groups.shape[0]):
        if groups[i, layout.G_SIDE] != s or w[i] == 0:
            continue
        a = rating[i]
        if standing[e] == 1:
            p_struct = w[i] * inv_ws * a / (a + sdef[e])
            if groups[i, layout.G_KIND] == layout.ENGINE:
                engine_struct += p_struct
            else:
                men_struct += p_struct * inv_ts
    for j in range(groups.shape[0]):
        if groups[j, layout.G_SIDE] != e or t[j] == 0:
            continue
        d = groups[j, layout.G_DEF] + (
            sdef[e] if groups[j, layout.G_PROTECTED] == 1 and standing[e] == 1 else 0
        )
        total = 0.0
        for i in range(groups.shape[0]):
            if (
                groups[i, layout.G_SIDE] == s
                and w[i] > 0
                and groups[i, layout.G_KIND] != layout.ENGINE
            ):
                a = rating[i]
                total += w[i] * a / (a + d)
        p = total * inv_ws * t[j] * inv_ts * (1.0 - survive[j])
        if p > 0.0:
            succ[n] = index - stride[j]
            prob[n] = p
            n += 1
    if men_struct > 0.0:
        succ[n] = index - min(1, remaining[e]) * sstride[e]
        prob[n] = men_struct
        n += 1
    if engine_struct > 0.0:
        for k in range(ENGINE_POINTS):
            points = ENGINE_MIN_POINTS + k
            succ[n] = index - min(points, remaining[e]) * sstride[e]
            prob[n] = engine_struct / ENGINE_POINTS
            n += 1
    return n


@jit(inline=True)
def decode(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining):
    for g in range(groups.shape[0]):
        cnt[g] = (index // stride[g]) % radix[g]
    for s in range(2):
        remaining[s] = (index // sstride[s]) % sradix[s]


@jit
def side_status(groups, sides, cnt, value, alive):
    for s in range(2):
        value[s] = sides[s, layout.S_START]
        alive[s] = 0
    for g in range(groups.shape[0]):
        if groups[g, layout.G_KIND] != layout.ENGINE:
            s = groups[g, layout.G_SIDE]
            value[s] -= (groups[g, layout.G_COUNT] - cnt[g]) * groups[g, layout.G_VALUE]
            alive[s] += cnt[g]


@jit
def settle(groups, sides, cnt, remaining, alive, winner, mass, res):
    """Add a finished battle's outcome, weighted by ``mass``, to ``res``: a win, a draw
    or a withdrawal (``winner`` ATTACKER_WITHDREW or DEFENDER_WITHDREW)."""
    if winner >= ATTACKER_WITHDREW:
        res[res.shape[0] - R_WITHDREW + winner - ATTACKER_WITHDREW] += mass
    else:
        res[winner] += mass
    row = res[R_ROW - 2 :]  # row column c lives at res[R_ROW - 2 + c], c >= O_EXTRAS = 2
    for g in range(groups.shape[0]):
        s = groups[g, layout.G_SIDE]
        lost = groups[g, layout.G_COUNT] - cnt[g]
        kind = groups[g, layout.G_KIND]
        if kind == layout.MAN:
            row[groups[g, layout.G_COLUMN]] += mass * lost
        elif kind == layout.ENGINE:
            row[layout.extra(s, layout.X_ENGINES_LOST)] += mass * lost
        elif lost == 1:
            # A wound of 1..100 taken from his health h kills him with chance (101 - h) / 100.
            killed = (101 - groups[g, layout.G_HEALTH]) / 100.0
            row[layout.extra(s, layout.X_KILLED)] += mass * killed
            row[layout.extra(s, layout.X_WOUNDED)] += mass * (1.0 - killed)
            if groups[g, layout.G_LEADER] == 1:
                row[layout.extra(s, layout.X_LEADER_KILLED)] += mass * killed
                row[layout.extra(s, layout.X_LEADER_WOUNDED)] += mass * (1.0 - killed)
    for s in range(2):
        if sides[s, layout.S_HAS_STRUCTURE] == 1:
            sdef, sdmg, standing = structure_of(sides, remaining[s], s)
            row[layout.extra(s, layout.X_STRUCTURE_DEF)] += mass * sdef
            row[layout.extra(s, layout.X_STRUCTURE_DMG)] += mass * sdmg
            row[layout.extra(s, layout.X_COLLAPSED)] += mass * (1 - standing)
    if winner < layout.DRAW:  # a win (ATTACKER, DEFENDER): the winner takes prisoners
        loser = 1 - winner
        percent = 75
        if alive[loser] > 0:
            percent = min(75, max(25, 25 * alive[winner] // alive[loser]))
        for g in range(groups.shape[0]):
            if groups[g, layout.G_SIDE] == loser and groups[g, layout.G_KIND] == layout.NOBLE:
                # Still fighting: healthy. Left wounded: alive with chance (h - 1) / 100.
                living = 1.0 if cnt[g] == 1 else (groups[g, layout.G_HEALTH] - 1) / 100.0
                p = mass * living * percent / 100.0
                row[layout.extra(loser, layout.X_CAPTURED)] += p
                if groups[g, layout.G_LEADER] == 1:
                    row[layout.extra(loser, layout.X_LEADER_CAPTURED)] += p


@jit
def withdrawal(index, groups, sides, stops, space, step, scratch, rule_men):
    """The withdrawal (ATTACKER_WITHDREW, DEFENDER_WITHDREW) that ends the battle in
    position ``index`` reached by strike ``step``: a side's stop rule holds there (the
    attacker's looked at first) and no side is broken; else NEITHER, or BROKEN where a
    side is (a decided battle is never withdrawn from). Leaves the position decoded in
    ``scratch`` (``cnt``, ``remaining``, ``alive``) for :func:`settle`. ``rule_men`` is
    scratch of shape (2, 2): each side's fighters left (nobles and engines not counted),
    and its men of the type its rule's ``gone`` names (``stops[s, STOP_GONE]``: a
    casualty column)."""
    radix, stride, sradix, sstride = space
    cnt, remaining = scratch[0], scratch[1]
    per_side = scratch[6]
    value, alive = per_side[0], per_side[1]
    decode(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
    side_status(groups, sides, cnt, value, alive)
    if is_broken(value, alive, sides, layout.ATTACKER) or is_broken(
        value, alive, sides, layout.DEFENDER
    ):
        return BROKEN
    rule_men[:] = 0
    for g in range(groups.shape[0]):
        if groups[g, layout.G_KIND] == layout.MAN:
            s = groups[g, layout.G_SIDE]
            rule_men[0, s] += cnt[g]
            if groups[g, layout.G_COLUMN] == stops[s, STOP_GONE]:
                rule_men[1, s] += cnt[g]
    side = withdrawing_side(
        stops, rule_men[0, 0], rule_men[0, 1], rule_men[1, 0], rule_men[1, 1], step
    )
    return NEITHER if side == NEITHER else ATTACKER_WITHDREW + side


@jit(inline=True)
def held(mass, base, configs):
    """The mass a position holds over its ``configs`` budgets and turns (alternating
    order; one otherwise), from index ``base``."""
    here = 0.0
    for c in range(configs):
        here += mass[base + c]
    return here


#: What :func:`position` finds, beside a winner (ATTACKER, DEFENDER, DRAW) when the
#: battle is over there: the opening position of a side already broken (one strike, then
#: the end), or a position that fights on.
ONCE, PLAYS = 3, 4


@jit
def position_scratch(n_groups):
    """The arrays :func:`position` fills: ``(cnt, remaining, unit_men, rating, w, t,
    per_side, succ, prob, n_ev, q)``."""
    n_events = n_groups + 2 + 2 * ENGINE_POINTS
    return (
        np.zeros(n_groups, np.int64),
        np.zeros(2, np.int64),
        np.zeros(n_groups + 1, np.int64),
        np.zeros(n_groups, np.int64),
        np.zeros(n_groups, np.int64),
        np.zeros(n_groups, np.int64),
        np.zeros((layout.N_PER_SIDE, 2), np.int64),
        np.zeros((2, n_events), np.int64),
        np.zeros((2, n_events)),
        np.zeros(2, np.int64),
        np.zeros(2),
    )


@jit
def position(index, start, groups, survive, sides, order, space, scratch):
    """State ``index`` of the chain decoded into ``cnt`` / ``remaining`` and classified:
    the winner if the battle is over there (a side broken, unless it is the opening
    ``start``; nobody able to strike: a draw), else ONCE or PLAYS with the changes each
    side's strike can make in ``succ[s, :n_ev[s]]`` / ``prob[s, ...]`` (per strike of
    that side; ``q[s]`` their sum) and the strikers in ``per_side``'s row of ``ws``
    (``scratch`` from :func:`position_scratch`; ``space``: ``(radix, stride, sradix,
    sstride)``, the digits of an index). The one reading of a position that the exact
    solver and the chain walk's table (kernels/olympia/chain.py) share."""
    radix, stride, sradix, sstride = space
    cnt, remaining, unit_men, rating, w, t, per_side, succ, prob, n_ev, q = scratch
    value, alive, sdef, sdmg, standing, ws, ts, _budget, others, front = per_side
    decode(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
    for s in range(2):
        sdef[s], sdmg[s], standing[s] = structure_of(sides, remaining[s], s)
    side_status(groups, sides, cnt, value, alive)
    lost_a = is_broken(value, alive, sides, layout.ATTACKER)
    lost_d = is_broken(value, alive, sides, layout.DEFENDER)
    first = index == start
    if (lost_a or lost_d) and not first:
        return (
            layout.DRAW if lost_a and lost_d else (layout.DEFENDER if lost_a else layout.ATTACKER)
        )
    refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front)
    for s in range(2):
        n_ev[s] = strike_events(
            groups,
            survive,
            rating,
            w,
            t,
            ts,
            ws,
            sdef,
            standing,
            remaining,
            sstride,
            stride,
            index,
            s,
            succ[s],
            prob[s],
        )
        q[s] = 0.0
        for k in range(n_ev[s]):
            q[s] += prob[s, k]
    if ws[0] + ws[1] == 0:
        return layout.DRAW  # nobody can strike: a stalemate, reported as a draw
    if first and (lost_a or lost_d):
        return ONCE  # broken before the first strike: the kernel strikes once, then checks
    return PLAYS


@jit
def opening(groups, stride, sradix, sstride):
    """The index of the opening position: every group full, every structure whole."""
    start = 0
    for g in range(groups.shape[0]):
        start += groups[g, layout.G_COUNT] * stride[g]
    for s in range(2):
        start += (sradix[s] - 1) * sstride[s]
    return start


@jit
def solve_chain(
    groups,
    survive,
    sides,
    order,
    radix,
    stride,
    sradix,
    sstride,
    budget_radix,
    n_states,
    stops,
    res,
):
    """Push the mass of the start state through the whole chain; fill ``res``.

    ``radix`` / ``stride``: the mixed-radix digits of the group counts, ``sradix`` /
    ``sstride`` of the structure counters (radix 1 when a side has none). Under
    ``alternating`` order each state also carries budgets (b0, b1) and the turn:
    index = state * configs + (b0 * budget_radix[1] + b1) * 2 + turn.
    ``stops``: the sides' stop rules on the men left (kernels/stops.py; their ``after``
    is not looked at here: :func:`mass_after` solves it), whose positions absorb.
    Returns 0, or 1 if some state can never end (the strike kernel would not stop)."""
    n_groups = groups.shape[0]
    alternating = order == layout.ALTERNATING
    configs = budget_radix[0] * budget_radix[1] * 2 if alternating else 1
    mass = np.zeros(n_states * configs)
    scratch = position_scratch(n_groups)
    cnt, remaining, _unit_men, _rating, _w, _t, per_side, succ, prob, n_ev, q = scratch
    alive = per_side[1]
    ws = per_side[5]
    space = (radix, stride, sradix, sstride)
    # Grid of the budgets inside one state (alternating), walked between changes.
    grid = np.zeros(configs)
    rules = any_stop(stops)
    rule_men = np.zeros((2, 2), np.int64)

    start = opening(groups, stride, sradix, sstride)
    # Budgets start empty with the attacker to strike: the first loop resets them.
    mass[start * configs] = 1.0
    res[:] = 0.0

    for index in range(n_states - 1, -1, -1):
        base = index * configs
        here = held(mass, base, configs)
        if here == 0.0:
            continue
        withdrew = NEITHER
        if rules:
            withdrew = withdrawal(index, groups, sides, stops, space, 0, scratch, rule_men)
            if withdrew >= ATTACKER_WITHDREW and index != start:
                settle(groups, sides, cnt, remaining, alive, withdrew, here, res)
                continue
        status = position(index, start, groups, survive, sides, order, space, scratch)
        if status <= layout.DRAW:
            settle(groups, sides, cnt, remaining, alive, status, here, res)
            continue
        if withdrew >= ATTACKER_WITHDREW:
            # A rule true at the opening: one strike, then its mass withdraws; a change
            # goes on to a position of its own (where the rule may no longer hold).
            _first_strike_then_withdraw(
                groups, sides, cnt, remaining, alive, order, ws, n_ev, succ, prob, q, here,
                configs, budget_radix, withdrew, mass, res,
            )  # fmt: skip
            continue
        if status == ONCE:
            _first_strike_only(
                groups,
                sides,
                cnt,
                remaining,
                alive,
                order,
                ws,
                n_ev,
                succ,
                prob,
                q,
                here,
                radix,
                stride,
                sradix,
                sstride,
                res,
            )
            continue
        if not alternating:
            total = ws[0] + ws[1]
            p_change = (ws[0] * q[0] + ws[1] * q[1]) / total
            if p_change <= 0.0:
                return 1
            res[R_STRIKES] += here / p_change
            for s in range(2):
                share = here * ws[s] / total / p_change
                for k in range(n_ev[s]):
                    mass[succ[s, k]] += share * prob[s, k]
            continue
        # Alternating: walk the budgets down, then whole cycles from the reset.
        b1r = budget_radix[1]
        grid[:] = 0.0
        for c in range(configs):
            m = mass[base + c]
            if m != 0.0:
                turn = c % 2
                b0 = min((c // 2) // b1r, ws[0])
                b1 = min((c // 2) % b1r, ws[1])
                grid[(b0 * b1r + b1) * 2 + turn] += m
        restart = 0.0
        for level in range(ws[0] + ws[1], -1, -1):
            for b0 in range(min(level, ws[0]), -1, -1):
                b1 = level - b0
                if b1 > ws[1]:
                    break
                for turn in range(2):
                    c = (b0 * b1r + b1) * 2 + turn
                    m = grid[c]
                    if m == 0.0:
                        continue
                    if level == 0:
                        restart += m
                        continue
                    s = turn if (b0 if turn == 0 else b1) > 0 else 1 - turn
                    n0 = b0 - 1 if s == 0 else b0
                    n1 = b1 - 1 if s == 1 else b1
                    after = (n0 * b1r + n1) * 2 + (1 - s)
                    res[R_STRIKES] += m
                    for k in range(n_ev[s]):
                        mass[succ[s, k] * configs + after] += m * prob[s, k]
                    grid[after] += m * (1.0 - q[s])
        if restart == 0.0:
            continue
        # One whole cycle from (ws0, ws1, attacker): its no-change chance is a self-loop.
        survive_cycle = (1.0 - q[0]) ** ws[0] * (1.0 - q[1]) ** ws[1]
        if survive_cycle >= 1.0:
            return 1
        flow = restart / (1.0 - survive_cycle)
        b0 = ws[0]
        b1 = ws[1]
        turn = layout.ATTACKER
        while b0 + b1 > 0:
            s = turn if (b0 if turn == 0 else b1) > 0 else 1 - turn
            if s == 0:
                b0 -= 1
            else:
                b1 -= 1
            turn = 1 - s
            after = (b0 * b1r + b1) * 2 + turn
            res[R_STRIKES] += flow
            for k in range(n_ev[s]):
                mass[succ[s, k] * configs + after] += flow * prob[s, k]
            flow *= 1.0 - q[s]
    return 0


@jit
def _first_strike_then_withdraw(
    groups, sides, cnt, remaining, alive, order, ws, n_ev, succ, prob, q, here, configs,
    budget_radix, withdrew, mass, res,
):  # fmt: skip
    """The opening position ``here`` holds the mass of, where a stop rule holds: the
    first strike (random order: either side's; alternating: the attacker's, or the
    defender's when the attacker has no striker) moves its changes on, with the budgets
    it leaves under ``alternating`` order, and what it leaves unchanged withdraws."""
    res[R_STRIKES] += here
    stay = here
    if order == layout.ALTERNATING:
        s = layout.ATTACKER if ws[0] > 0 else layout.DEFENDER
        b0 = ws[0] - 1 if s == layout.ATTACKER else ws[0]
        b1 = ws[1] - 1 if s == layout.DEFENDER else ws[1]
        after = (b0 * budget_radix[1] + b1) * 2 + (1 - s)
        for k in range(n_ev[s]):
            mass[succ[s, k] * configs + after] += here * prob[s, k]
        stay -= here * q[s]
    else:
        total = ws[0] + ws[1]
        for s in range(2):
            share = here * ws[s] / total
            for k in range(n_ev[s]):
                mass[succ[s, k]] += share * prob[s, k]
            stay -= share * q[s]
    settle(groups, sides, cnt, remaining, alive, withdrew, stay, res)


@jit
def _first_strike_only(
    groups,
    sides,
    cnt,
    remaining,
    alive,
    order,
    ws,
    n_ev,
    succ,
    prob,
    q,
    here,
    radix,
    stride,
    sradix,
    sstride,
    res,
):
    """A side broken before any strike: one strike happens, then the battle ends."""
    res[R_STRIKES] += here
    n_groups = groups.shape[0]
    cnt2 = np.empty(n_groups, np.int64)
    rem2 = np.empty(2, np.int64)
    value = np.empty(2, np.int64)
    alive2 = np.empty(2, np.int64)
    total = ws[0] + ws[1]
    for s in range(2):
        if order == layout.ALTERNATING:
            share = 1.0 if s == (layout.ATTACKER if ws[0] > 0 else layout.DEFENDER) else 0.0
        else:
            share = ws[s] / total
        if share == 0.0:
            continue
        # No change: the state as it is; a change: each successor.
        for k in range(-1, n_ev[s]):
            if k < 0:
                p = share * (1.0 - q[s])
                for g in range(n_groups):
                    cnt2[g] = cnt[g]
                rem2[0] = remaining[0]
                rem2[1] = remaining[1]
            else:
                p = share * prob[s, k]
                decode(succ[s, k], groups, radix, stride, sides, sradix, sstride, cnt2, rem2)
            if p == 0.0:
                continue
            side_status(groups, sides, cnt2, value, alive2)
            lost_a = is_broken(value, alive2, sides, layout.ATTACKER)
            lost_d = is_broken(value, alive2, sides, layout.DEFENDER)
            winner = (
                layout.DRAW
                if lost_a and lost_d
                else (layout.DEFENDER if lost_a else layout.ATTACKER)
            )
            settle(groups, sides, cnt2, rem2, alive2, winner, p, res)


@jit
def over_at_opening(
    groups, survive, sides, order, space, start, scratch, status, ended, withdrawn, fought
):
    """Start a push of the chain (:func:`mass_after`): its outputs cleared, the opening
    read. True when the battle is over before the first strike (nobody can
    strike: a draw, in ``ended``); raises when the opening position is broken already
    (ONCE: the kernel's one strike before its first check is not a chain of strikes)."""
    status[:] = -1
    ended[:] = 0.0
    withdrawn[:] = 0.0
    fought[0] = 0.0
    reading = position(start, start, groups, survive, sides, order, space, scratch)
    status[start] = reading
    if reading == ONCE:
        raise ValueError("the opening position is broken before the first strike")
    if reading <= layout.DRAW:
        ended[start] = 1.0
        return True
    return False


@jit
def mass_after(
    groups, survive, sides, order, space, n_states, strikes, stops, status, ended, withdrawn,
    fought,
):  # fmt: skip
    """The chance of every state of the chain after ``strikes`` strikes (random strike
    order): the start's mass pushed one strike at a time, a miss (or a change that
    changes nothing) keeping it in place. Returns the mass still fighting; the mass of
    battles over by then stays where it ended: decided in ``ended`` (the winner in
    ``status``), withdrawn in ``withdrawn[side]`` (the stop rules ``stops``, checked
    after every strike, their ``after`` counted in the strikes pushed here: the caller
    takes a battle in progress's strikes off, as for the strike kernel). ``status`` gets
    :func:`position`'s reading of every state that holds mass (-1: none); ``fought[0]``
    the expected strikes.
    Raises when the opening position is broken already (ONCE: the kernel's one strike
    before its first check is not a chain of strikes)."""
    _radix, stride, sradix, sstride = space
    n_groups = groups.shape[0]
    scratch = position_scratch(n_groups)
    _cnt, _remaining, _unit_men, _rating, _w, _t, per_side, succ, prob, n_ev, _q = scratch
    ws = per_side[5]
    start = opening(groups, stride, sradix, sstride)
    rules = any_stop(stops)
    rule_men = np.zeros((2, 2), np.int64)
    mass = np.zeros(n_states)
    mass[start] = 1.0
    if over_at_opening(
        groups, survive, sides, order, space, start, scratch, status, ended, withdrawn, fought
    ):
        return np.zeros(n_states)
    top = start  # no state above the highest one holding mass is ever reached
    # Each state's changes per strike, read once (position() is most of a strike's
    # work): row ``slot[index]`` of ``to`` / ``chance`` (-1: not read yet), for as many
    # states as TABLE_ENTRIES allow; the states beyond are read at every strike.
    width = 2 * succ.shape[1]
    rows = min(n_states, max(1, TABLE_ENTRIES // width))
    slot = np.full(n_states, -1, np.int32)
    changes = np.zeros(rows, np.int64)
    to = np.zeros((rows, width), np.int64)
    chance = np.zeros((rows, width))
    used = 0
    # Each state's withdrawal by the rules on the men left (``after`` aside: it holds
    # for every state from its strike on): UNREAD, or withdrawal()'s reading.
    state_stops = stops.copy()
    state_stops[:, STOP_AFTER] = 0
    state_rule = np.full(n_states, UNREAD, np.int8)
    pushed = np.zeros(n_states)
    for t in range(strikes):
        pushed[: top + 1] = 0.0
        for index in range(top, -1, -1):
            here = mass[index]
            if here == 0.0:
                continue
            fought[0] += here
            row = slot[index]
            if row < 0 and used < rows:
                position(index, start, groups, survive, sides, order, space, scratch)
                row = used
                used += 1
                slot[index] = row
                total = ws[0] + ws[1]
                n = 0
                for s in range(2):
                    for k in range(n_ev[s]):
                        to[row, n] = succ[s, k]
                        chance[row, n] = ws[s] / total * prob[s, k]
                        n += 1
                changes[row] = n
            stay = here
            if row >= 0:
                for j in range(changes[row]):
                    pushed[to[row, j]] += here * chance[row, j]
                    stay -= here * chance[row, j]
            else:
                position(index, start, groups, survive, sides, order, space, scratch)
                total = ws[0] + ws[1]
                for s in range(2):
                    share = here * ws[s] / total
                    for k in range(n_ev[s]):
                        pushed[succ[s, k]] += share * prob[s, k]
                        stay -= share * prob[s, k]
            pushed[index] += stay
        # Where the strike left each battle: decided, withdrawn, or fighting on.
        step = t + 1
        left = 0.0
        for index in range(top, -1, -1):
            here = pushed[index]
            if here == 0.0:
                continue
            if rules:
                if state_rule[index] == UNREAD:
                    state_rule[index] = withdrawal(
                        index, groups, sides, state_stops, space, step, scratch, rule_men
                    )
                withdrew = withdrawal_at(state_rule[index], stops, step)
                if withdrew != NEITHER:
                    withdrawn[withdrew - ATTACKER_WITHDREW, index] += here
                    pushed[index] = 0.0
                    continue
            if status[index] == -1:
                status[index] = position(
                    index, start, groups, survive, sides, order, space, scratch
                )
            if status[index] <= layout.DRAW:
                ended[index] += here
                pushed[index] = 0.0
            else:
                left += here
        mass, pushed = pushed, mass
        if left == 0.0:
            break
    return mass


@jit(inline=True)
def withdrawal_at(state_rule, stops, step):
    """The withdrawal after strike ``step`` in a state whose rules on the men left give
    ``state_rule`` (:func:`withdrawal`'s reading without ``after``): a side's rule holds
    when its part on the men holds or its ``after`` is reached, the attacker's looked at
    first; never in a state where a side is broken."""
    if state_rule == BROKEN:
        return NEITHER
    if state_rule == ATTACKER_WITHDREW or 0 < stops[layout.ATTACKER, STOP_AFTER] <= step:
        return ATTACKER_WITHDREW
    if state_rule == DEFENDER_WITHDREW or 0 < stops[layout.DEFENDER, STOP_AFTER] <= step:
        return DEFENDER_WITHDREW
    return NEITHER


@jit
def settle_all(groups, sides, space, ended, status, withdrawn, res):
    """Add every battle :func:`mass_after` saw end, decided or withdrawn, to ``res``."""
    radix, stride, sradix, sstride = space
    n_groups = groups.shape[0]
    cnt = np.zeros(n_groups, np.int64)
    remaining = np.zeros(2, np.int64)
    value = np.zeros(2, np.int64)
    alive = np.zeros(2, np.int64)
    for index in range(ended.shape[0]):
        held = ended[index] + withdrawn[0, index] + withdrawn[1, index]
        if held == 0.0:
            continue
        decode(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
        side_status(groups, sides, cnt, value, alive)
        if ended[index] != 0.0:
            settle(groups, sides, cnt, remaining, alive, status[index], ended[index], res)
        for side in range(2):
            if withdrawn[side, index] != 0.0:
                code = ATTACKER_WITHDREW + side
                settle(groups, sides, cnt, remaining, alive, code, withdrawn[side, index], res)


@jit
def mass_after_alternating(
    groups, survive, sides, order, space, budget_radix, n_states, strikes, stops, status,
    ended, withdrawn, fought,
):  # fmt: skip
    """:func:`mass_after` under ``alternating`` order: the mass of each position is
    kept per strike budgets and turn (as :func:`solve_chain` keeps them: index * configs
    + (b0 * budget_radix[1] + b1) * 2 + turn), the budgets walked as the strike kernel
    walks them (cut to the strikers left, refilled when both are spent, the attacker
    first). Returns each position's mass still fighting, all budgets together."""
    _radix, stride, sradix, sstride = space
    scratch = position_scratch(groups.shape[0])
    _cnt, _remaining, _unit_men, _rating, _w, _t, per_side, succ, prob, n_ev, q = scratch
    ws = per_side[5]
    b1r = budget_radix[1]
    configs = budget_radix[0] * b1r * 2
    start = opening(groups, stride, sradix, sstride)
    rules = any_stop(stops)
    rule_men = np.zeros((2, 2), np.int64)
    if over_at_opening(
        groups, survive, sides, order, space, start, scratch, status, ended, withdrawn, fought
    ):
        return np.zeros(n_states)
    mass = np.zeros(n_states * configs)
    pushed = np.zeros(n_states * configs)
    mass[start * configs] = 1.0  # budgets spent, the attacker's turn: the first strike refills
    for t in range(strikes):
        pushed[:] = 0.0
        for index in range(start, -1, -1):
            base = index * configs
            here = held(mass, base, configs)
            if here == 0.0:
                continue
            fought[0] += here
            position(index, start, groups, survive, sides, order, space, scratch)
            for c in range(configs):
                m = mass[base + c]
                if m == 0.0:
                    continue
                turn = c % 2
                b0 = min((c // 2) // b1r, ws[0])
                b1 = min((c // 2) % b1r, ws[1])
                if b0 == 0 and b1 == 0:
                    b0, b1, turn = ws[0], ws[1], layout.ATTACKER
                s = turn if (b0 if turn == 0 else b1) > 0 else 1 - turn
                n0 = b0 - 1 if s == 0 else b0
                n1 = b1 - 1 if s == 1 else b1
                after = (n0 * b1r + n1) * 2 + (1 - s)
                for k in range(n_ev[s]):
                    pushed[succ[s, k] * configs + after] += m * prob[s, k]
                pushed[base + after] += m * (1.0 - q[s])
        # Where the strike left each battle: decided, withdrawn, or fighting on.
        left = 0.0
        for index in range(start, -1, -1):
            base = index * configs
            here = held(pushed, base, configs)
            if here == 0.0:
                continue
            over = False
            if rules:
                withdrew = withdrawal(index, groups, sides, stops, space, t + 1, scratch, rule_men)
                if withdrew >= ATTACKER_WITHDREW:
                    withdrawn[withdrew - ATTACKER_WITHDREW, index] += here
                    over = True
            if not over:
                if status[index] == -1:
                    status[index] = position(
                        index, start, groups, survive, sides, order, space, scratch
                    )
                if status[index] <= layout.DRAW:
                    ended[index] += here
                    over = True
            if over:
                pushed[base : base + configs] = 0.0
            else:
                left += here
        mass, pushed = pushed, mass
        if left == 0.0:
            break
    fighting = np.zeros(n_states)
    for index in range(n_states):
        fighting[index] = held(mass, index * configs, configs)
    return fighting
