"""Olympia battles of many scenarios walked through one chain table (a scenario with
ranges; docs/unknowns.md, "Speed").

The chain kernel (kernels/olympia/chain.py) walks a table of the positions a battle can
reach, built once a scenario. A scenario with ranges draws a combination of inputs each
battle, and no combination is drawn often enough to repay a table of its own. But a
position's changes and their chances follow from the counts it holds and what the groups
are (ratings, defenses, chances to survive, structures), never from how many men a group
started with or where a side breaks: those decide only where a battle starts and which
positions end it. Combinations that differ only there share one table
(simulator/rulesets/olympia/shared.py builds it, for the largest counts and the loosest
break points among them), and each battle walks it from its own opening, ending where its
own side's break point says.

The table's rows carry a ``verdict`` of three entries (shared.py's ``SharedChain``): the
table's ``ends`` there and each side's score, 100 times the value it holds (NOBODY where
it has nobody left). Each member (a combination) brings its limits, the score at or
under which each of its sides is broken, and a battle goes on at a row while the table
does not end it and both scores are above its member's limits. The walk reads that from
``going``, two entries a row, the scores where the table goes on and NOBODY (under every
limit) where it ends: one test of two, no branch between them (a test of the verdict's
three took the walk 1.27 times the fixed chain walk's time on the same battles, the
random states held in registers as chain.py's ``_walk`` holds them; 1.11 times now, one
thread, AMD EPYC). (Each member's own ends worked out for every row took a member's run
to read its own copy, 7 kB a member: the battles of 561 combinations then took twice
the time of the same battles in their members' order, one thread.)

The battles are taken in their order, so that each writes its row after the last one's
(in their members' order, as kernels/olympia/stacked.py takes them, 400,000 battles of
561 combinations took 1.5x the time of the same battles in order, one thread, CPU time,
AMD EPYC), two at a time as chain.py's ``_walk`` pairs them, each pair of any members.

Each battle draws what the chain kernel's plain walk of its own combination draws, in
the same order, from the same stream (the geometric draw and the pick each change, the
wounds and prisoners at the end, by chain.py's own functions), and a position's chances
are computed by the same reading of it (kernels/olympia/exact.py's ``position``), so its
outcome row is that walk's, column for column (tests/test_olympia_shared_chain.py).
A module of its own, so that chain.py's cached machine code stays valid.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import prange, types

from .._jit import INT_TABLE, INTS, REALS, address_of, jit
from ..rng import seed_battle
from . import layout
from .chain import _change, _cleared, settle_row

#: A member's record (its vector of the stack): its opening's row of the table, each
#: side's limit (shared.py's ``limits``), its ``from_step`` (added to every battle's
#: steps, as a plain run's caller adds it), each side's starting value and break point,
#: then its groups' counts at the start.
M_START, M_LIMITS, M_FROM_STEP, M_SIDES, M_COUNTS = 0, 1, 3, 4, 8
#: Battles a thread takes at a time (a call of :func:`_shared_run`).
WINDOW = 1024


@jit(inline=True)
def _goes_on(going, x, limit_a, limit_d):
    """Whether a battle goes on at row ``x``: the table does not end it there and
    neither side is at or under its limit (``limit_a``, ``limit_d``): both sides' scores
    in ``going`` above their limits (NOBODY, under every limit, where the table ends)."""
    # One test of the two (no branch between them: the walk's loop branches once).
    return (going[2 * x] > limit_a) & (going[2 * x + 1] > limit_d)


@jit(inline=True)
def _ending(verdict, x, limits, m):
    """The winner of a battle of the member at ``limits[m:]`` that ended at row ``x``: a
    side at or under its limit has lost (both: a draw), else as the table says."""
    lost_a = verdict[3 * x + 1] <= limits[m + M_LIMITS]
    lost_d = verdict[3 * x + 2] <= limits[m + M_LIMITS + 1]
    if lost_a and lost_d:
        return layout.DRAW
    if lost_a:
        return layout.DEFENDER
    if lost_d:
        return layout.ATTACKER
    return verdict[3 * x]


@jit
def _shared_run(groups, sides, records, at, space, table, slots, seeds, numbers, out, lo, hi):
    """Battles ``lo .. hi - 1`` of the call (battle ``i`` being battle ``numbers[i]`` of
    seed ``seeds[i]`` of member ``slots[i]``, whose record is ``records[at[slots[i]]:]``),
    their rows into ``out[i]``: walked two at a time, as chain.py's ``_walk`` walks them
    (each from its own stream, so the pairing changes no number), each from its member's
    opening row until its member's limits or the table end it, and settled on its
    member's groups and sides (the family's, its counts and values put in)."""
    code, scale, cum, to, verdict, going = table
    tw = cum.shape[0] // code.shape[0]
    own_groups = groups.copy()
    own_sides = sides.copy()
    a = np.empty(4, np.uint64)
    b = np.empty(4, np.uint64)
    scratch = np.empty((5, max(groups.shape[0], 2)), np.int64)
    for i in range(lo, hi - 1, 2):
        ma = at[slots[i]]
        mb = at[slots[i + 1]]
        seed_battle(a, seeds[i], numbers[i])
        seed_battle(b, seeds[i + 1], numbers[i + 1])
        xa = records[ma + M_START]
        xb = records[mb + M_START]
        la, da = records[ma + M_LIMITS], records[ma + M_LIMITS + 1]
        lb, db = records[mb + M_LIMITS], records[mb + M_LIMITS + 1]
        steps_a, steps_b = 0, 0
        # The random states in registers meanwhile (chain.py's ``_change``).
        a0, a1, a2, a3 = a[0], a[1], a[2], a[3]
        b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
        while _goes_on(going, xa, la, da) and _goes_on(going, xb, lb, db):
            a0, a1, a2, a3, strikes_a, xa = _change(a, a0, a1, a2, a3, scale, cum, to, tw, xa)
            b0, b1, b2, b3, strikes_b, xb = _change(b, b0, b1, b2, b3, scale, cum, to, tw, xb)
            steps_a += strikes_a
            steps_b += strikes_b
        a[0], a[1], a[2], a[3] = a0, a1, a2, a3
        b[0], b[1], b[2], b[3] = b0, b1, b2, b3
        xa, steps_a = _walk_on(a, going, la, da, scale, cum, to, tw, xa, steps_a)
        xb, steps_b = _walk_on(b, going, lb, db, scale, cum, to, tw, xb, steps_b)
        _settle(
            a,
            own_groups,
            own_sides,
            records,
            ma,
            space,
            code,
            verdict,
            xa,
            steps_a,
            scratch,
            out[i],
        )
        _settle(
            b,
            own_groups,
            own_sides,
            records,
            mb,
            space,
            code,
            verdict,
            xb,
            steps_b,
            scratch,
            out[i + 1],
        )
    if (hi - lo) % 2 == 1:
        i = hi - 1
        m = at[slots[i]]
        seed_battle(a, seeds[i], numbers[i])
        x, steps = _walk_on(
            a, going, records[m + M_LIMITS], records[m + M_LIMITS + 1], scale, cum, to, tw,
            records[m + M_START], np.int64(0),
        )  # fmt: skip
        _settle(
            a, own_groups, own_sides, records, m, space, code, verdict, x, steps, scratch, out[i]
        )


@jit(counted=False, llvm_inline=True)
def _walk_on(state, going, limit_a, limit_d, scale, cum, to, tw, x, steps):
    """The battle at row ``x`` after ``steps`` strikes walked to its end: its last row
    and strikes. Inlined by LLVM, not by Numba, as chain.py's ``_walk_on``: each copy
    of the draws Numba inlines is compiled again (with three, the walk took 10 s of a
    cold run's compiling)."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    while _goes_on(going, x, limit_a, limit_d):
        s0, s1, s2, s3, strikes, x = _change(state, s0, s1, s2, s3, scale, cum, to, tw, x)
        steps += strikes
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return x, steps


@jit(counted=False)
def _settle(state, groups, sides, records, m, space, code, verdict, x, steps, scratch, row):
    """Battle row ``row`` of the member at ``records[m:]``, ended at row ``x`` after
    ``steps`` strikes: its counts and sides' values into ``groups`` and ``sides``, then
    chain.py's ``settle_row``. Called, not inlined: it runs once a battle."""
    radix, stride, sradix, sstride = space
    for g in range(groups.shape[0]):
        groups[g, layout.G_COUNT] = records[m + M_COUNTS + g]
    for s in range(2):
        sides[s, layout.S_START] = records[m + M_SIDES + 2 * s]
        sides[s, layout.S_BREAK] = records[m + M_SIDES + 2 * s + 1]
    settle_row(
        state, groups, sides, radix, stride, sradix, sstride, code[x],
        _ending(verdict, x, records, m), steps + records[m + M_FROM_STEP], scratch,
        _cleared(row), np.int64(-1),
    )  # fmt: skip


@functools.cache
def run_by_address() -> Any:
    """:func:`_shared_run` for :func:`shared_stacked`, called by its address
    (:func:`~kernels._jit.address_of`), compiled or loaded on first use."""
    space = types.UniTuple(INTS, 4)
    table = types.Tuple((INTS, REALS, REALS, INTS, INTS, INTS))
    family = (INT_TABLE, INT_TABLE, INTS, INTS)  # groups, sides, records, at
    battles = (INTS, types.uint64[::1], INTS, INT_TABLE, types.int64, types.int64)
    return address_of(_shared_run, (*family, space, table, *battles))


@jit(parallel=True)
def shared_stacked(
    run, records, at, dims, sizes, slots, seeds, numbers, out, groups, sides, space, table
):
    """Battles of many olympia scenarios that share one chain table, in one call (the
    members' records stacked: kernels/stacked.py, each ``at[c, 0]``): battle i is battle
    ``numbers[i]`` of seed ``seeds[i]`` of member ``slots[i]``, its row ``out[i]``,
    walked through the shared ``table`` (chain.py's ``(code, scale, cum, to)`` and the
    rows' ``verdict``: shared.py), its positions' digits ``space``, the family's
    ``groups`` and ``sides``. ``run`` is :func:`run_by_address`. The battles are taken
    in their order, WINDOW at a time (module docstring)."""
    n = out.shape[0]
    starts = at[:, 0].copy()
    for window in prange((n + WINDOW - 1) // WINDOW):
        lo = window * WINDOW
        run(
            groups, sides, records, starts, space, table, slots, seeds, numbers, out, lo,
            min(n, lo + WINDOW),
        )  # fmt: skip
