"""Olympia battles, one change at a time: the cost grows with the kills, not the strikes.

Between two changes (a man, noble or engine down, a structure hit) the strikes of the
strike kernel (kernels/olympia/strike.py) are independent trials with a fixed chance of a
change, so this kernel draws the number of strikes until the next change
(geometric) and then which change it is, in proportion to its chance. The outcome
of every strike is the same random process, so every output column has the same
distribution as the strike kernel's; only the random numbers used differ. (The break
check after every strike can only change its answer at a change, so skipping the
misses is exact.)

Chances per target side ``e`` (``s`` the striking side), with
``pkill[i, j] = (1 - survive[j]) a_i / (a_i + d_j)`` the chance that a strike of a man of
striker group ``i`` kills a man of target group ``j`` (a constant of the battle until a
structure changes: rows, shielding or a structure's defense) and
``krate[j] = sum_i w[i] pkill[i, j]`` over ``s``'s strikers:

* group ``j`` loses one: ``t[j] krate[j] / ts[e]`` (per ``ws[s]`` strikes);
* ``e``'s structure, hit by a man: ``Y[e] / ts[e]`` with ``Y[e] = sum_i w[i] a_i / (a_i + sdef_e)``;
* ``e``'s structure, hit by an engine (5..10 points): ``Z[e]``, the same sum over engines.

Groups of men alike in everything but their unit (five units of soldiers, say) have the
same chances, so these sums are kept per *kind* (``kind_table``), at the kind's first
group, and the lists below are lists of kinds: the large benchmark battle's 13 and 7
target groups are 4 and 5 kinds. Which group of the kind a death came from matters
only when a group may empty (its unit's noble comes into reach, its row may clear), so
it is drawn only then: each kind counts down the deaths it can take before any of its
groups could be empty (its ``room``), and when that is used up the deaths since its
counts were last exact are shared out among its groups, a multivariate hypergeometric
draw (``settle``): the men of a kind are alike, so which of them died is a draw without
replacement. If the group drawn for the death at hand still stands, that death goes the
per-death way like any other, with no recomputation (the large battle settles about 15
times in 11,000 changes). A kind of one group
(every kind, when no two units share a type) draws nothing there: such battles run on
the same random numbers as before kinds existed.

``krate`` and the per-side sum ``S[e] = sum_j t[j] krate[j]`` are kept up to date. A death
that leaves room in its kind (almost every change) updates them with one
multiply-add per target kind of the other side, through a list of those kinds; no
division (``1 / n`` comes from a table), no allocation, and no helper that takes arrays
in that path (Numba cannot prune the reference counting of arrays passed to inlined
helpers that branch, and those atomic operations cost more than the update). Which
change comes next is counted, not searched for: the running sum of shares against the
draw, over lists padded to one length, so no branch depends on the draw (lists of one or
two kinds are scanned). Anything else (a kind's room used up, a noble out, an engine
lost, a structure's defense worn down) recomputes the strikers, targets and chances from
the group table. Every battle starts from one opening position computed once per call.

With hundreds of men in both front rows (``random`` order), deaths are drawn in batches
from a table fixed for hundreds of them and thinned by the counts
(kernels/olympia/batch.py), which then counts ``krate`` and the sums afresh (``recount``)
for the paths below.

Under ``random`` order each change costs two uniform numbers: one for the strikes
until it (a geometric draw, by inversion: counted against the powers of the chance of a
miss when that chance is small enough, by logarithms otherwise) and one for which
change it is. Under ``alternating`` order the sides follow the budgets, walked in runs of
alternating pairs and single-side tails, each skipped with one geometric draw.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numba import prange, typeof, types

from .. import _aside
from .._jit import INT_TABLE, INTS, REAL_TABLE, REALS, STATE, address_of, jit
from ..rng import next_u64_held, seed_battle, uniform
from . import layout
from .batch import (
    BATCH_CHANGE,
    BATCH_FROM,
    BATCH_NONE,
    BATCH_OVER,
    E_LARGE,
    E_SMALL,
    F_SLOTS,
    H_SCALE,
    H_UNUSED,
    MOST_ENTRIES,
    batch_step,
)
from .kinds import (
    K_COLUMN,
    K_REP,
    K_VALUE,
    R_LEFT,
    R_SETTLED,
    gather_kinds,
    kind_room,
    kind_table,
    settle,
)
from .strike import (
    battle_start,
    close_marks,
    finish,
    is_broken,
    keep_left,
    left_at,
    men_by_column,
    open_marks,
    pass_horizon,
    refresh,
    stop_side,
    strike_effect,
    unfolding_plan,
    withdraw,
)

#: Failures before the first success when there is none to expect: larger than any budget.
NEVER = 1 << 62
#: Rows of the per-side float scratch: S (men), Y (structure by men), Z (by engines).
F_S, F_Y, F_Z = 0, 1, 2
#: A 53-bit integer times this is a uniform number in [0, 1).
UNIT = 1.0 / 9007199254740992.0
#: From this chance of a change per strike, a geometric draw is counted against the first
#: eight powers of the chance of a miss, and needs the logarithms only in the last
#: 0.7**8 = 6% of draws: two logarithms were a third of the time on the large benchmark
#: battle. Below it the logarithms are faster (counting 16 powers from 0.1, or 8 from
#: 0.2, cost the yardstick battle, whose chance wanders between 0.13 and 0.24, 8-15%).
SEARCH_FROM = 0.3
#: Target lists up to this long are scanned until the pick is found; longer ones are
#: counted without a branch (4% slower with one group a side, a fifth faster on large).
SCAN_UP_TO = 2
#: Rows of the per-battle float scratch of each target kind: its per-man death rate
#: ``krate`` and its men ``tf`` (one array for the same reason).
P_RATE, P_MEN = 0, 1


@jit(inline=True)
def geometric(v, p):
    """Failures before the first success in trials of chance ``p``, from ``v`` uniform in
    (0, 1]: the number of ``k >= 1`` with ``v <= (1 - p) ** k`` (the inverse of
    P(f >= k) = (1 - p) ** k). For ``p`` of at least SEARCH_FROM and all but the last
    ``(1 - p) ** 8`` of ``v``, counted against the powers (no branch, no logarithm);
    otherwise by the logarithms."""
    if p >= SEARCH_FROM:
        q = 1.0 - p
        q2 = q * q
        q3 = q2 * q
        q4 = q2 * q2
        if v > q4 * q4:
            return np.int64(
                (v <= q)
                + (v <= q2)
                + (v <= q3)
                + (v <= q4)
                + (v <= q4 * q)
                + (v <= q4 * q2)
                + (v <= q4 * q3)
            )
    f = math.floor(math.log(v) / math.log1p(-p))
    return NEVER if f >= NEVER else np.int64(f)


@jit(inline=True)
def failures(state, p):
    """Failures before the first success in independent trials of chance ``p``."""
    if p >= 1.0:
        return 0
    if p <= 0.0:
        return NEVER
    return geometric(1.0 - uniform(state), p)


@jit
def rebuild(groups, keep, sdef, standing, rating, w, t, pkill, sphit, krate, acc, tl, nt, tf):
    """Kill chances of every striker on every target (``pkill[i, j]``: a strike of a man
    of group ``i`` at a man of group ``j`` kills him), the rate each target man dies at
    (``krate[j] = sum_i w[i] pkill[i, j]``, so group ``j``'s share of the changes at its
    side is ``t[j] krate[j]``; ``tf`` holds ``t`` as floats, so the per-change loops
    convert no integers), and the list of each side's target groups
    (``tl[e, :nt[e]]``). Runs at a change of strikers, targets or a structure's defense:
    not on the per-death path."""
    n = groups.shape[0]
    acc[:] = 0.0
    nt[0] = 0
    nt[1] = 0
    for j in range(n):
        krate[j] = 0.0
        tf[j] = t[j]
        if t[j] > 0:
            e = groups[j, layout.G_SIDE]
            tl[e, nt[e]] = j
            nt[e] += 1
    for i in range(n):
        sphit[i] = 0.0
        if w[i] == 0:
            continue
        e = 1 - groups[i, layout.G_SIDE]
        a = rating[i]
        if standing[e] == 1:
            sphit[i] = a / (a + sdef[e])
            acc[F_Z if groups[i, layout.G_KIND] == layout.ENGINE else F_Y, e] += w[i] * sphit[i]
        if groups[i, layout.G_KIND] == layout.ENGINE:
            continue  # engines strike only the structure
        for m in range(nt[e]):
            j = tl[e, m]
            d = groups[j, layout.G_DEF] + (
                sdef[e] if groups[j, layout.G_PROTECTED] == 1 and standing[e] == 1 else 0
            )
            pkill[i, j] = keep[j] * a / (a + d)
            krate[j] += w[i] * pkill[i, j]
    for e in range(2):
        for m in range(nt[e]):
            j = tl[e, m]
            acc[F_S, e] += t[j] * krate[j]
    # Both lists padded to one length with group n, which has no men and no share: the
    # pick's loop then runs the same number of times whichever side it scans.
    nt[2] = max(nt[0], nt[1])
    krate[n] = 0.0
    t[n] = 0
    tf[n] = 0.0
    for e in range(2):
        for m in range(nt[e], nt[2]):
            tl[e, m] = n


@jit(counted=False)
def recount(groups, w, t, tf, pkill, sphit, krate, acc, tl, nt):
    """``krate``, ``tf`` and the sums of men (F_S) and of men's structure hits (F_Y)
    counted afresh from the strikers and targets, as ``rebuild`` counts them, with its
    kill chances (only men died since it ran: the batch path, which keeps counts only)."""
    for e in range(2):
        acc[F_S, e] = 0.0
        acc[F_Y, e] = 0.0
        for m in range(nt[e]):
            j = tl[e, m]
            krate[j] = 0.0
            tf[j] = t[j]
    for i in range(groups.shape[0]):
        if w[i] == 0 or groups[i, layout.G_KIND] == layout.ENGINE:
            continue
        e = 1 - groups[i, layout.G_SIDE]
        acc[F_Y, e] += w[i] * sphit[i]
        for m in range(nt[e]):
            j = tl[e, m]
            krate[j] += w[i] * pkill[i, j]
    for e in range(2):
        for m in range(nt[e]):
            j = tl[e, m]
            acc[F_S, e] += t[j] * krate[j]


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
            turn = layout.ATTACKER
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
def _opening(
    groups,
    keep,
    sides,
    order,
    cnt,
    health,
    unit_men,
    rating,
    w,
    t,
    per_side,
    pkill,
    sphit,
    krate,
    acc,
    tl,
    nt,
    tf,
    row,
    kinds,
    room,
):
    """The position before the first strike, the same for every battle."""
    value, alive, sdef, sdmg, standing, _ws, _ts, _budget, _others, _front = per_side
    battle_start(groups, sides, cnt, health, value, alive, sdef, sdmg, standing, row)
    for k in range(groups.shape[0]):
        room[R_LEFT, k] = kind_room(cnt, kinds, k, -1) if kinds[K_REP, k] == k else 0
        room[R_SETTLED, k] = room[R_LEFT, k]
    _recount_all(
        groups, keep, sides, order, cnt, unit_men, rating, w, t, per_side, pkill, sphit,
        krate, acc, tl, nt, tf, kinds, room,
    )  # fmt: skip


@jit(counted=False, llvm_inline=True)
def _finish(state, groups, cnt, health, alive, winner, steps, row):
    """The battle's end (kernels/olympia/strike.py's ``finish``): compiled once and inlined
    by LLVM at each of the battle's three ends (four with the batch path), where Numba
    inlined and typed it, with its draws of prisoners, at each."""
    finish(state, groups, cnt, health, alive, winner, steps, row)


@jit(counted=False, llvm_inline=True)
def _strike_effect(
    state, groups, survive, cnt, health, value, alive, sdef, sdmg, standing, striker, e, target,
    row,
):  # fmt: skip
    """A hit (kernels/olympia/strike.py's ``strike_effect``) on the rare path of a
    change: compiled on its own, so that a cold run compiles it in its own process while
    the second one compiles the battle, which then loads it (kernels/_aside.py)."""
    return strike_effect(
        state, groups, survive, cnt, health, value, alive, sdef, sdmg, standing, striker, e,
        target, row,
    )  # fmt: skip


@jit(counted=False, llvm_inline=True)
def _recount_all(
    groups, keep, sides, order, cnt, unit_men, rating, w, t, per_side, pkill, sphit, krate,
    acc, tl, nt, tf, kinds, room,
):  # fmt: skip
    """Strikers, targets, kinds' weights and chances counted afresh from the groups:
    the opening position's and any change's that moves a group's weight. Compiled once
    for both (LLVM inlines it in each), not inlined by Numba into each."""
    _value, _alive, sdef, _sdmg, standing, ws, ts, _budget, others, front = per_side
    refresh(groups, cnt, sides, standing, order, unit_men, rating, w, t, ws, ts, others, front)
    gather_kinds(groups, kinds, room, w, t, ws, ts)
    rebuild(groups, keep, sdef, standing, rating, w, t, pkill, sphit, krate, acc, tl, nt, tf)


@jit(counted=False, llvm_inline=True)
def _other_change(
    state,
    groups,
    keep,
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
    pkill,
    sphit,
    krate,
    acc,
    tl,
    nt,
    tf,
    kinds,
    room,
    striker,
    e,
    target,
):
    """Any change but a man dying in a kind with room: a group emptied or a kind's
    room used up, a noble out, an engine lost, a structure hit. Returns whether the
    chances were recomputed. (Inlined: measured against a call, which costs more than it
    saves in code size. Inlined by LLVM, not Numba: compiled once, apart from the
    battle, Numba's inlining of the battle's helpers took 30 s of wall time in place of
    70 at load 15, a cold castle_siege run 52.0 CPU s against 55.8.)"""
    value, alive, sdef, sdmg, standing, _ws, _ts, _budget, _others, _front = per_side
    old_def = sdef[e]
    # The survive roll is in the chance already: the hit is a kill.
    change = _strike_effect(
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
    if change == layout.UNCHANGED and sdef[e] == old_def:
        return False
    if change != layout.UNCHANGED:
        # Counted afresh from the groups: ``gather_kinds`` turns their weights into the
        # kinds' the per-death path keeps. (A structure's defense worn down moves no
        # weight: the kinds' are still exact.)
        _recount_all(
            groups, keep, sides, order, cnt, unit_men, rating, w, t, per_side, pkill, sphit,
            krate, acc, tl, nt, tf, kinds, room,
        )  # fmt: skip
    else:
        rebuild(groups, keep, sdef, standing, rating, w, t, pkill, sphit, krate, acc, tl, nt, tf)
    return True


# A call of its own per battle, not inlined into the parallel loop: compiling the inlined
# body into the parfor took about 40 s on first use, the call takes about 17 s, for the same
# speed within the noise (small battles a tenth faster, large ones a few percent slower,
# measured in one run). Without reference counting, the call costs no atomics on the shared
# tables it is handed; it allocates nothing (Numba refuses to compile an allocation here).
@jit(counted=False)
def _skip_battle(state, army, scratch, recording, row, battle, batch_rows, unfolding):
    """Battle ``battle`` of the call (its rows recorded in ``rec[battle]``) from the
    opening position already in the scratch arrays; returns
    whether the groups' counts or the chances moved (the caller then restores them).
    ``batch_rows``: None where the armies are too small for deaths in batches, and
    where the battle has stop rules or records its steps (the batch path jumps over
    deaths those look at). ``recording``, ``(stops, plan, by_column, asked, rec,
    marks)``: as the strike kernel (strike.py) takes them: a rule is checked after every
    change (the state moves only then), the horizon (a step to record, a rule's
    ``after``) before each; ``unfolding`` None in a plain run, whose kernel Numba then
    compiles without them (as it does the batch path: tests of them in the loop cost the
    plain battles 10-15%)."""
    # The arguments as _skip_block packs them once a block, unpacked here: ``army`` the
    # scenario's tables and the block's batch tables, ``scratch`` the block's scratch of
    # a battle, ``recording`` the stop rules and the steps to record.
    groups, keep, no_survive, sides, order, inv, limits, table, weights = army
    cnt, health, unit_men, rating, w, t, per_side, pkill, sphit, rates, acc, tl, nt = scratch[0]
    kinds, room = scratch[1]
    stops, plan, by_column, asked, rec, marks = recording
    krate = rates[P_RATE]
    tf = rates[P_MEN]
    left = room[R_LEFT]
    man_column = kinds[K_COLUMN]
    man_value = kinds[K_VALUE]
    value, alive, _sdef, _sdmg, _standing, ws, ts, budget, _others, _front = per_side
    dirty = False
    limit0 = limits[0]
    limit1 = limits[1]
    if unfolding is not None:  # noqa: SIM102
        if open_marks(row, rec, battle, asked, marks, plan):
            return dirty
    # Broken before any strike: the strike kernel still strikes once, then stops. A stop
    # rule that holds before any strike, likewise: the side withdraws after the first
    # unless that strike decides the battle (or, outnumbered no more, keeps it).
    once = alive[0] == 0 or value[0] * 100 <= limit0 or alive[1] == 0 or value[1] * 100 <= limit1
    if unfolding is not None:  # noqa: SIM102
        if plan[layout.U_RULES] == 1 and not once:
            once = stop_side(stops, row, by_column, 1) >= 0
    turn = layout.ATTACKER
    # np.int64, not 0: Numba types a call the first time it sees its arguments, and
    # ``steps`` still the literal 0 then compiled batch_step and batch_run a second time
    # for a Literal[int](0) they never run with (5 s of a cold run).
    steps = np.int64(0)
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    table[H_UNUSED, E_SMALL] = 0  # no batch table yet
    while True:
        strikers = ws[0] + ws[1]
        if strikers == 0:
            break  # nobody can strike: a stalemate, reported as a draw
        # ``batch_rows`` is None where no army is large enough: Numba then compiles this
        # function without the branch (a version per kernel), which kept the
        # per-change loop of smaller battles as fast as before the batch path (medium
        # 0.96-0.98x the kernel before batches with the branch, 1.02x without). Numba
        # prunes only a bare ``is None`` test, hence two ifs.
        if batch_rows is not None:  # noqa: SIM102
            if not once:
                # Hundreds of men a side: deaths in batches (kernels/olympia/batch.py), which
                # keep counts only; the chances are counted afresh after them.
                state[0], state[1], state[2], state[3] = s0, s1, s2, s3
                how, e, target, striker, steps = batch_step(
                    state,
                    groups,
                    w,
                    t,
                    per_side,
                    cnt,
                    kinds,
                    room,
                    row,
                    pkill,
                    sphit,
                    tl,
                    nt,
                    inv,
                    limits,
                    table,
                    weights,
                    steps,
                )
                if how != BATCH_NONE:
                    dirty = True  # a kind's deaths may have been shared out among its groups
                    if how == BATCH_OVER:
                        _finish(state, groups, cnt, health, alive, 1 - e, steps, row)
                        return dirty
                    recount(groups, w, t, tf, pkill, sphit, krate, acc, tl, nt)
                    if how == BATCH_CHANGE:
                        # A change the batch path leaves to the paths below: its chances move.
                        table[H_UNUSED, E_SMALL] = 0
                        _handed_back(
                            state,
                            groups,
                            keep,
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
                            pkill,
                            sphit,
                            krate,
                            acc,
                            tl,
                            nt,
                            tf,
                            kinds,
                            room,
                            striker,
                            e,
                            target,
                        )
                        lost_a = is_broken(value, alive, sides, layout.ATTACKER)
                        lost_d = is_broken(value, alive, sides, layout.DEFENDER)
                        if lost_a or lost_d:
                            winner = (
                                layout.DRAW
                                if lost_a and lost_d
                                else (layout.DEFENDER if lost_a else layout.ATTACKER)
                            )
                            _finish(state, groups, cnt, health, alive, winner, steps, row)
                            return dirty
                    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
                    continue
        # Changes per strike of the side striking at e, times that side's strikers.
        c_at1 = (acc[F_S, 1] + acc[F_Y, 1]) * inv[ts[1]] + acc[F_Z, 1]
        c_at0 = (acc[F_S, 0] + acc[F_Y, 0]) * inv[ts[0]] + acc[F_Z, 0]
        total = c_at0 + c_at1
        if not total > 0.0:
            break  # strikers who can change nothing would strike forever
        if once:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            steps = np.int64(1)
            if order == layout.RANDOM:
                r = uniform(state) * strikers  # past total: the one strike missed
            else:
                first = layout.ATTACKER if ws[0] > 0 else layout.DEFENDER
                r = uniform(state) * ws[first]
                if first == layout.ATTACKER:
                    r = r if r < c_at1 else total
                else:
                    r = r + c_at1 if r < c_at0 else total
                # The first cycle's budgets, that strike spent (a battle a rule held at
                # the start of may go on).
                budget[0] = ws[0]
                budget[1] = ws[1]
                budget[first] -= 1
                turn = 1 - first
            s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        elif order == layout.RANDOM:
            # The strikes until the next change (geometric, by inversion: counting against
            # powers or two logarithms cost less than drawing strikes one by one, whose
            # loop exit the processor cannot predict), then which change, the random state
            # in registers.
            p = min(total * inv[strikers], 1.0)
            s0, s1, s2, s3, x = next_u64_held(s0, s1, s2, s3)
            steps += geometric(1.0 - np.int64(x >> np.uint64(11)) * UNIT, p) + 1
            s0, s1, s2, s3, x = next_u64_held(s0, s1, s2, s3)
            r = np.int64(x >> np.uint64(11)) * UNIT * total
        else:
            q0 = c_at1 * inv[ws[0]]
            q1 = c_at0 * inv[ws[1]]
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            taken, s, turn = next_alternating(state, budget, ws, q0, q1, turn)
            steps += taken
            if s < 0:
                break
            r = uniform(state) * (c_at1 if s == layout.ATTACKER else c_at0)
            if s == layout.DEFENDER:
                r += c_at1
            s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        # The horizon (a step to record, a rule's ``after``): the state after every strike
        # before this change is the state now.
        if unfolding is not None:  # noqa: SIM102
            if steps > marks[layout.M_HORIZON]:  # noqa: SIM102
                if pass_horizon(row, rec, battle, asked, marks, plan, stops, steps):
                    return dirty
        # r is uniform below total: the changes at the defender come first.
        if r < total:
            e = layout.DEFENDER
            if r >= c_at1:
                r -= c_at1
                e = layout.ATTACKER
            s = 1 - e
            target = -2  # -1: e's structure
            striker = -1
            if r < acc[F_Z, e]:
                target = -1  # an engine hit the structure: all engines do 5..10 points
                for i in range(groups.shape[0]):
                    if (
                        groups[i, layout.G_SIDE] == s
                        and groups[i, layout.G_KIND] == layout.ENGINE
                        and w[i] > 0
                    ):
                        striker = i
                        break
            else:
                r = (r - acc[F_Z, e]) * ts[e]
                if nt[2] <= SCAN_UP_TO:
                    last = -1
                    for m in range(nt[e]):
                        j = tl[e, m]
                        x = tf[j] * krate[j]
                        if x > 0.0:
                            last = j
                            if r < x:
                                target = j
                                break
                            r -= x
                    if target == -2:
                        # The structure, or rounding left r past the end: the last change.
                        target = -1 if acc[F_Y, e] > 0.0 else last
                else:
                    # The first group whose running sum of shares passes r, counted
                    # without a branch: where a scan of a long list leaves is what the
                    # processor cannot predict.
                    passed = 0
                    running = 0.0
                    for m in range(nt[2]):
                        j = np.uint64(tl[e, m])  # unsigned: no negative-index check
                        running += tf[j] * krate[j]
                        passed += r >= running
                    if passed < nt[e]:
                        target = tl[e, passed]
                    elif acc[F_Y, e] > 0.0:
                        target = -1
                    else:
                        # Rounding left r past the end: the last group with a share.
                        for m in range(nt[e]):
                            if tf[tl[e, m]] * krate[tl[e, m]] > 0.0:
                                target = tl[e, m]
            group = target  # the group that loses a man, once drawn from the kind
            stands = False
            if target >= 0 and man_column[target] >= 0:
                if left[target] > 0:
                    # No group of his kind can empty: which one he was in is drawn later,
                    # when it matters.
                    left[target] -= 1
                    stands = True
                else:
                    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
                    group = settle(state, cnt, kinds, room, target)
                    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
                    # The groups' counts moved: the next battle must restore them.
                    dirty = True
                    if cnt[group] > 1:
                        cnt[group] -= 1
                        stands = True
            if stands:
                # A man dies and his group stands: the chances lose his share, a few
                # multiply-adds, written out here (no call, no division).
                row[man_column[target]] += 1
                value[e] -= man_value[target]
                alive[e] -= 1
                acc[F_S, e] -= krate[target]
                t[target] -= 1
                tf[target] -= 1.0
                ts[e] -= 1
                if w[target] > 0:
                    w[target] -= 1
                    ws[e] -= 1
                    lost = 0.0
                    for m in range(nt[s]):
                        k = np.uint64(tl[s, m])
                        p = pkill[target, k]
                        krate[k] -= p
                        lost += tf[k] * p
                    acc[F_S, s] -= lost
                    acc[F_Y, s] -= sphit[target]
            else:
                table[H_UNUSED, E_SMALL] = 0  # the chances move: a new batch table
                state[0], state[1], state[2], state[3] = s0, s1, s2, s3
                if _other_change(
                    state,
                    groups,
                    keep,
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
                    pkill,
                    sphit,
                    krate,
                    acc,
                    tl,
                    nt,
                    tf,
                    kinds,
                    room,
                    striker,
                    e,
                    group,
                ):
                    dirty = True
                s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        lost_a = alive[0] == 0 or value[0] * 100 <= limit0
        lost_d = alive[1] == 0 or value[1] * 100 <= limit1
        if lost_a or lost_d:
            winner = (
                layout.DRAW
                if lost_a and lost_d
                else (layout.DEFENDER if lost_a else layout.ATTACKER)
            )
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            _finish(state, groups, cnt, health, alive, winner, steps, row)
            return dirty
        # Undecided: the stop rules, the attacker's first (kernels/stops.py).
        if unfolding is not None:  # noqa: SIM102
            if plan[layout.U_RULES] == 1:
                side = stop_side(stops, row, by_column, steps)
                if side >= 0:
                    withdraw(row, side, steps)
                    return dirty
                once = False
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    _finish(state, groups, cnt, health, alive, np.int64(layout.DRAW), steps, row)
    return dirty


@jit(counted=False)
def _handed_back(
    state,
    groups,
    keep,
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
    pkill,
    sphit,
    krate,
    acc,
    tl,
    nt,
    tf,
    kinds,
    room,
    striker,
    e,
    target,
):
    """A change the batch path hands back, by the per-change path's rare branch (a call:
    inlined a second time into the battle's loop, it would cost that loop its registers)."""
    _other_change(
        state,
        groups,
        keep,
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
        pkill,
        sphit,
        krate,
        acc,
        tl,
        nt,
        tf,
        kinds,
        room,
        striker,
        e,
        target,
    )


#: Salt of the stream that shares out a battle's last deaths among a kind's groups when
#: its state is kept (:func:`settled_left`): a stream of its own, after the battle.
LEFT_SALT = np.uint64(0x5851F42D4C957F2D)


@jit
def settled_left(state, seed, battle, groups, cnt, health, kinds, room, row, at):
    """Battle ``battle``'s groups as it left them into ``row[at:]`` (kernels/olympia/strike.py's
    ``keep_left``): first each kind's deaths not yet shared out among its groups, drawn
    as the battle would have drawn them (``settle``), on a stream of their own so that
    the battle's row is the one a plain run gives."""
    seed_battle(state, seed ^ LEFT_SALT, battle)
    for k in range(groups.shape[0]):
        if kinds[K_REP, k] == k and room[R_SETTLED, k] > room[R_LEFT, k]:
            settle(state, cnt, kinds, room, k)
    keep_left(groups, cnt, health, row, at)


def batch_rows_for(groups):
    """``skip_battles``'s ``batch_rows`` for a battle of these groups: the batch table's
    rows where both sides have at least BATCH_FROM - 1 men (the batch path may then run),
    else None (it never runs)."""
    men = np.zeros(2, np.int64)
    np.add.at(men, groups[:, layout.G_SIDE], groups[:, layout.G_COUNT])
    return np.int64(MOST_ENTRIES) if men.min() + 1 >= BATCH_FROM else None


def skip_battles(
    groups,
    survive,
    sides,
    order,
    seed,
    first,
    out,
    stops,
    asked,
    rec,
    batch_rows=None,
    unfolding=None,
):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, one change at a time
    (every array C-contiguous).

    ``stops``, ``asked`` and ``rec``: the stop rules and the steps to record, as
    kernels/olympia/strike.py's ``strike_battles`` takes them, looked at only where
    ``unfolding`` is not None (``np.int64(1)``; ``batch_rows`` must then be None).

    ``batch_rows``: None where no army is large enough for deaths in batches (fewer than
    BATCH_FROM men on a side), else the rows of the batch table (:func:`batch_rows_for`
    says which). The battle is compiled once per kind of run (:func:`block_by_address`):
    a plain one of smaller armies, one with the batch path, one with the rules and steps
    (their ``is None`` tests pruned), so a first run compiles its own kind only."""
    entries = np.int64(1 if batch_rows is None else batch_rows)
    kind = UNFOLDING if unfolding is not None else PLAIN if batch_rows is None else BATCHES
    given = (groups, survive, sides, np.int64(order), seed, first, out, stops, asked, rec, entries)
    if kind not in _ready:
        _first_call(kind, given)
    _skip_blocks(block_by_address(kind), *given)


#: The kinds of run whose block this process has compiled or loaded.
_ready: set[int] = set()


def _first_call(kind: int, given: tuple[Any, ...]) -> None:
    """The block of ``kind`` compiled or loaded. On a cold cache the battle compiles in a
    second process while this one compiles the parallel loop for ``given`` (the
    arguments after the block), then loads it from the cache (kernels/_aside.py)."""
    aside = _aside.start(_BLOCKS[kind], _block_types(), __name__, "block_by_address", kind)
    if aside is not None:
        try:
            # First three functions the battle calls that are compiled on their own
            # (about 4 CPU s, Intel Xeon 2026-12-07): done here before the second process
            # types the calls, it loads them from the cache, and both processes end at
            # about the same time (it compiles the battle's other two, settle and
            # settled_left: here as well, they left this process the longer by 1.5 s).
            # The recount first: the opening here calls it too.
            _recount_all.compile(_recount_types())
            _strike_effect.compile(_strike_effect_types())
            _finish.compile(_finish_types())
            _skip_blocks.compile((_block_type(), *(typeof(a) for a in given)))
        finally:
            aside.wait()
    block_by_address(kind)
    _ready.add(kind)


def _recount_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`_recount_all` where the battle and the opening
    call it."""
    int64 = types.int64
    # groups, keep, sides, order, cnt, unit_men, rating, w, t, per_side, pkill, sphit,
    # krate, acc, tl, nt, tf, kinds, room
    return (
        INT_TABLE, REALS, INT_TABLE, int64, INTS, INTS, INTS, INTS, INTS, INT_TABLE,
        REAL_TABLE, REALS, REALS, REAL_TABLE, INT_TABLE, INTS, REALS, INT_TABLE, INT_TABLE,
    )  # fmt: skip


def _strike_effect_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`_strike_effect` where the battle calls it."""
    int64, side = types.int64, types.int64[:]  # a row of per_side, unpacked: any layout
    # state, groups, survive, cnt, health, value, alive, sdef, sdmg, standing, striker,
    # e, target, row
    return (
        STATE, INT_TABLE, REALS, INTS, INTS, side, side, side, side, side, int64, int64,
        int64, INTS,
    )  # fmt: skip


def _finish_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`_finish` where the battle calls it."""
    int64 = types.int64
    # state, groups, cnt, health, alive (a row of per_side, unpacked: any layout),
    # winner, steps, row
    return (STATE, INT_TABLE, INTS, INTS, types.int64[:], int64, int64, INTS)


#: The kinds of run a battle is compiled for (:func:`block_by_address`).
PLAIN, BATCHES, UNFOLDING = 0, 1, 2


@functools.cache
def _block_types() -> tuple[Any, ...]:
    """The arguments' types of a block of battles (:func:`block_by_address`)."""
    given = types.Tuple(
        (INT_TABLE, REALS, REALS, INT_TABLE, REALS, INTS, INT_TABLE, INT_TABLE, INTS)
    )
    opening = types.Tuple(
        (INTS, INTS, INTS, INTS, INTS, INT_TABLE, REAL_TABLE, REALS, REALS, REALS, REAL_TABLE,
         INT_TABLE, INTS, INTS, INT_TABLE)
    )  # fmt: skip
    int64 = types.int64
    # given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo, hi
    return (
        given, opening, int64, int64, int64, int64, types.uint64, int64, INT_TABLE, INT_TABLE,
        INTS, types.int64[:, :, ::1], int64, int64,
    )  # fmt: skip


def _block_type() -> Any:
    """The type of the block :func:`_skip_blocks` is given: the one its address has."""
    return types.FunctionType(types.none(*_block_types()))


@functools.cache
def block_by_address(kind: int):
    """The block of battles :func:`_skip_blocks` calls by its address
    (:func:`~kernels._jit.address_of`) for a run of ``kind``: :func:`_plain_block`,
    :func:`_batch_block` or :func:`_unfolding_block`, compiled or loaded on first use.

    The battle is called, linked, from a block function compiled on its own, and the
    parallel loop calls that by its address. Linked into the loop itself (as it was), LLVM
    optimized and emitted the battle's code in each of the loop's libraries (the loop's
    body, its two wrappers and the kernel), and Numba's parallel passes worked through
    the block's scratch arrays: a cold run of castle_siege compiled 56 CPU seconds,
    most of them that. A call by address passes the block's arrays once a block of
    BLOCK battles, not once a battle, so it costs the battles nothing measurable."""
    return address_of(_BLOCKS[kind], _block_types())


@jit
def _opening_of(groups, survive, sides, order, stops, width):
    """What every battle of a call shares, computed once a call: ``given``, the tables
    the battles read (groups, keep, no_survive, sides, inv, limits, kinds, by_column,
    plan), ``opening``, the position before the first strike that each battle starts
    from (cnt, health, rating, w, t, per_side, pkill, sphit, krate, tf, acc, tl, nt,
    row, room), the units' count and the column of the groups' state (waves: ``at``)."""
    n_groups = groups.shape[0]
    # The units and the men counted by a loop: a column's ``max()`` and ``sum()`` compile
    # NumPy's reductions over a strided view (about a CPU second of a cold run).
    n_units = 0
    men = 0
    keep = np.empty(n_groups)
    for g in range(n_groups):
        keep[g] = 1.0 - survive[g]
        n_units = max(n_units, groups[g, layout.G_UNIT] + 1)
        men += groups[g, layout.G_COUNT]
    no_survive = np.zeros(n_groups)
    # 1 / n for every count of strikers or targets a battle can have.
    inv = np.zeros(men + 2)
    for m in range(1, inv.shape[0]):
        inv[m] = 1.0 / m
    # The opening position, copied into every battle.
    cnt0 = np.empty(n_groups, np.int64)
    health0 = np.empty(n_groups, np.int64)
    rating0 = np.empty(n_groups, np.int64)
    w0 = np.empty(n_groups, np.int64)
    # Past the padding group n, group n + 1 stands for a structure in the batch path's
    # table: a target of count 1.
    t0 = np.zeros(n_groups + 2, np.int64)
    per_side0 = np.zeros((layout.N_PER_SIDE, 2), np.int64)
    pkill0 = np.zeros((n_groups, n_groups))
    sphit0 = np.zeros(n_groups)
    krate0 = np.zeros(n_groups + 1)
    tf0 = np.zeros(n_groups + 1)
    acc0 = np.zeros((3, 2))
    tl0 = np.zeros((2, n_groups), np.int64)
    nt0 = np.zeros(3, np.int64)
    row0 = np.zeros(width, np.int64)
    kinds = kind_table(groups, survive)
    room0 = np.zeros((2, n_groups), np.int64)
    _opening(
        groups,
        keep,
        sides,
        order,
        cnt0,
        health0,
        np.zeros(n_units, np.int64),
        rating0,
        w0,
        t0,
        per_side0,
        pkill0,
        sphit0,
        krate0,
        acc0,
        tl0,
        nt0,
        tf0,
        row0,
        kinds,
        room0,
    )
    t0[n_groups + 1] = 1
    # Each side's value at its break point, times 100.
    limits = np.empty(2, np.int64)
    for s in range(2):
        limits[s] = sides[s, layout.S_START] * sides[s, layout.S_BREAK]
    plan = unfolding_plan(stops)
    by_column = men_by_column(groups, width)
    given = (groups, keep, no_survive, sides, inv, limits, kinds, by_column, plan)
    opening = (
        cnt0, health0, rating0, w0, t0, per_side0, pkill0, sphit0, krate0, tf0, acc0, tl0, nt0,
        row0, room0,
    )  # fmt: skip
    return given, opening, n_units, left_at(groups, width)


@jit(parallel=True)
def _skip_blocks(
    block, groups, survive, sides, order, seed, first, out, stops, asked, rec, entries
):
    """:func:`skip_battles`' battles, BLOCK at a time in parallel, each block by ``block``
    (:func:`block_by_address`). One compiled kernel for every kind of run: the battle's
    own code is in ``block``'s."""
    n = out.shape[0]
    given, opening, n_units, at = _opening_of(groups, survive, sides, order, stops, out.shape[1])
    for b in prange((n + layout.BLOCK - 1) // layout.BLOCK):
        lo = b * layout.BLOCK
        block(
            given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec,
            lo, min(n, lo + layout.BLOCK),
        )  # fmt: skip


@jit
def _plain_block(
    given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo, hi
):
    """A block of a plain run of smaller armies: the battle without the batch path, the
    rules or the steps."""
    _skip_block(
        given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo,
        hi, None, None,
    )  # fmt: skip


@jit
def _batch_block(
    given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo, hi
):
    """A block of a plain run with hundreds of men a side: the battle with the batch path."""
    _skip_block(
        given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo,
        hi, entries, None,
    )  # fmt: skip


@jit
def _unfolding_block(
    given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo, hi
):  # fmt: skip
    """A block of a run with stop rules or steps to record."""
    _skip_block(
        given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo,
        hi, None, np.int64(1),
    )  # fmt: skip


@jit(inline=True)
def _skip_block(
    given, opening, order, n_units, entries, at, seed, first, out, stops, asked, rec, lo, hi,
    batch_rows, unfolding,
):  # fmt: skip
    """Battles ``first + lo .. first + hi - 1`` into ``out[lo:hi]``, each from the opening
    position, with the scratch of a battle allocated once for them. Inlined into each
    kind's block function (Numba prunes its ``is None`` tests there), so each kind
    compiles it once.

    The battle's arguments are packed as the chain kernel packs its table: three tuples
    made once a block (``army``, ``scratch``, ``recording``) in place of 27 arguments
    written at the call and the definition."""
    groups, keep, no_survive, sides, inv, limits, kinds, by_column, plan = given
    cnt0, health0, rating0, w0, t0, per_side0, pkill0, sphit0, krate0, tf0, acc0, tl0, nt0 = (
        opening[:13]
    )
    row0, room0 = opening[13], opening[14]
    n_groups = groups.shape[0]
    state = np.empty(4, np.uint64)
    cnt = np.empty(n_groups, np.int64)
    health = np.empty(n_groups, np.int64)
    unit_men = np.empty(n_units, np.int64)
    rating = np.empty(n_groups, np.int64)
    w = np.empty(n_groups, np.int64)
    t = t0.copy()
    per_side = np.empty((layout.N_PER_SIDE, 2), np.int64)
    pkill = pkill0.copy()
    sphit = np.empty(n_groups)
    rates = np.zeros((2, n_groups + 1))
    krate = rates[P_RATE]
    tf = rates[P_MEN]
    acc = np.empty((3, 2))
    tl = tl0.copy()
    nt = np.empty(3, np.int64)
    table = np.zeros((max(entries, H_UNUSED + 1), E_LARGE + 1), np.int64)
    weights = np.zeros((max(entries, H_SCALE + 1), F_SLOTS + 1))
    room = np.empty((2, n_groups), np.int64)
    left = room[R_LEFT]
    marks = np.zeros(layout.N_MARKS, np.int64)
    dirty = True
    army = (groups, keep, no_survive, sides, order, inv, limits, table, weights)
    scratch = (
        (cnt, health, unit_men, rating, w, t, per_side, pkill, sphit, rates, acc, tl, nt),
        (kinds, room),
    )
    recording = (stops, plan, by_column, asked, rec, marks)
    for i in range(lo, hi):
        seed_battle(state, seed, first + i)
        for g in range(n_groups):
            left[g] = room0[R_LEFT, g]
            w[g] = w0[g]
            t[g] = t0[g]
            krate[g] = krate0[g]
            tf[g] = tf0[g]
        for s in range(2):
            for f in range(layout.N_PER_SIDE):
                per_side[f, s] = per_side0[f, s]
            for f in range(3):
                acc[f, s] = acc0[f, s]
        for c in range(out.shape[1]):
            out[i, c] = row0[c]
        if dirty:
            # Only a recomputation or a kind's deaths shared out among its groups
            # changes these (the per-death path counts a kind's room, not its
            # groups' men): restore them when one ran. Element by element: an array
            # assigned to a slice compiles Numba's formatting of a shape mismatch's
            # message (about 3 s of a cold run's compiling, strings and all).
            for g in range(n_groups):
                cnt[g] = cnt0[g]
                room[R_SETTLED, g] = room0[R_SETTLED, g]
                health[g] = health0[g]
                rating[g] = rating0[g]
                sphit[g] = sphit0[g]
                tl[0, g] = tl0[0, g]
                tl[1, g] = tl0[1, g]
                for h in range(n_groups):
                    pkill[g, h] = pkill0[g, h]
            for f in range(3):
                nt[f] = nt0[f]
        # None in the kernel of smaller armies: the battle is compiled without the
        # batch path.
        dirty = _skip_battle(state, army, scratch, recording, out[i], i, batch_rows, unfolding)
        if at >= 0:
            settled_left(state, seed, first + i, groups, cnt, health, kinds, room, out[i], at)
            dirty = True
        if unfolding is not None:  # noqa: SIM102
            if rec.shape[1] > 0:
                close_marks(out[i], rec, i, marks)


#: The block function of each kind of run (PLAIN, BATCHES, UNFOLDING).
_BLOCKS = (_plain_block, _batch_block, _unfolding_block)
