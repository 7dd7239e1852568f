"""Olympia's kernel for the battles of many scenarios in one call (a scenario with ranges;
docs/unknowns.md, "Speed"): the skip kernel's battle (kernels/olympia/skip.py) on each
battle's own scenario's tables, stacked side by side (kernels/stacked.py).

It runs what a combination's own call runs on ``skip`` in a plain run: nothing recorded,
no stop rule, armies too small for deaths in batches (``batch_rows_for`` None). A
combination that runs otherwise (the chain kernel, a rule, hundreds of men a side) is run
by a call of its own (simulator/rulesets/olympia/prepare.py, ``stacks``).

The skip kernel sets up one opening position a call and copies it into every battle. Here
the battles are taken in the order of their combinations, so that a block of them sets up
each of its combinations' openings once: :func:`_skip_run` runs a run of battles of one
scenario from its opening, as ``skip_battles`` runs a block. It is called by its address
(:func:`run_by_address`), so that the battle's code is compiled into it once, not again
into each of the parallel loop's libraries. A module of its own, so that skip.py's cached
machine code stays valid.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import prange, types

from .._jit import INT_TABLE, INTS, REALS, address_of, jit
from ..rng import seed_battle
from ..stacked import by_member, member_runs, table_of, vector_of
from ..stops import N_STOP
from . import layout
from .batch import E_LARGE, F_SLOTS, H_SCALE, H_UNUSED
from .kinds import R_LEFT, R_SETTLED, kind_table
from .skip import P_MEN, P_RATE, _opening, _skip_battle

#: A scenario's ``params`` (its vector of the stack): the strike order, the battle's
#: ``from_step`` (added to every battle's ``steps``, as a plain run's caller adds it) and
#: each side's value at its break point, times 100 (skip.py's ``limits``).
P_ORDER, P_FROM_STEP, P_LIMITS = 0, 1, 2


@jit
def _skip_run(groups, survive, keep, inv, sides, params, seeds, numbers, which, out, width):
    """Battles ``which`` of one scenario of the stack, battle ``i`` being battle
    ``numbers[i]`` of seed ``seeds[i]``, its row ``out[i, :width]``: each fought from the
    scenario's opening position by the skip kernel's battle, restored between battles as
    ``skip_battles`` restores them, so that each is the battle a plain ``skip`` run of the
    scenario fights (the arrays it hands the battle are of the types that run's are,
    so the battle's compiled code is the one that run loads). ``keep`` is ``1 -
    survive``, ``inv[m]`` is ``1 / m`` for every count of strikers or targets a battle
    can have (``inv[0]`` 0), as skip.py has them."""
    order = params[P_ORDER]
    limits = params[P_LIMITS : P_LIMITS + 2]
    n_groups = groups.shape[0]
    n_units = groups[:, layout.G_UNIT].max() + 1
    no_survive = np.zeros(n_groups)
    # The opening position (skip.py's ``_opening``), kept to restore each battle from,
    # and the battle's scratch: as ``skip_battles`` makes them.
    cnt0 = np.empty(n_groups, np.int64)
    health0 = np.empty(n_groups, np.int64)
    rating0 = np.empty(n_groups, np.int64)
    w0 = np.empty(n_groups, np.int64)
    t0 = np.zeros(n_groups + 2, np.int64)  # past the padding group n: a structure
    per_side0 = np.zeros((layout.N_PER_SIDE, 2), np.int64)
    pkill0 = np.zeros((n_groups, n_groups))
    rates0 = np.zeros((2, n_groups + 1))
    sphit0 = np.zeros(n_groups)
    acc0 = np.zeros((3, 2))
    tl0 = np.zeros((2, n_groups), np.int64)
    nt0 = np.zeros(3, np.int64)
    row0 = np.zeros(width, np.int64)
    kinds = kind_table(groups, survive)
    room0 = np.zeros((2, n_groups), np.int64)
    unit_men = np.zeros(n_units, np.int64)
    _opening(
        groups, keep, sides, order, cnt0, health0, unit_men, rating0, w0, t0, per_side0,
        pkill0, sphit0, rates0[P_RATE], acc0, tl0, nt0, rates0[P_MEN], row0, kinds, room0,
    )  # fmt: skip
    t0[n_groups + 1] = 1
    state = np.empty(4, np.uint64)
    cnt, health, rating, w, t, per_side, pkill, sphit, rates, acc, tl, nt, room = (
        cnt0.copy(), health0.copy(), rating0.copy(), w0.copy(), t0.copy(), per_side0.copy(),
        pkill0.copy(), sphit0.copy(), rates0.copy(), acc0.copy(), tl0.copy(), nt0.copy(),
        room0.copy(),
    )  # fmt: skip
    # The batch path's tables at their smallest (it never runs here), and a plain run's
    # recording: no stop rule, no step asked (its types only: ``unfolding`` is None).
    table = np.zeros((H_UNUSED + 1, E_LARGE + 1), np.int64)
    weights = np.zeros((H_SCALE + 1, F_SLOTS + 1))
    marks = np.zeros(layout.N_MARKS, np.int64)
    stops = np.zeros((2, N_STOP), np.int64)
    plan = np.zeros(layout.N_PLAN, np.int64)
    by_column = np.zeros((2, width), np.int64)
    asked = np.zeros(0, np.int64)
    rec = np.zeros((0, 0, width), np.int64)
    army = (groups, keep, no_survive, sides, order, inv, limits, table, weights)
    scratch = (
        (cnt, health, unit_men, rating, w, t, per_side, pkill, sphit, rates, acc, tl, nt),
        (kinds, room),
    )
    recording = (stops, plan, by_column, asked, rec, marks)
    dirty = False  # the scratch holds the opening position
    for i in which:
        seed_battle(state, seeds[i], numbers[i])
        for g in range(n_groups):
            room[R_LEFT, g] = room0[R_LEFT, g]
            w[g] = w0[g]
            t[g] = t0[g]
            rates[P_RATE, g] = rates0[P_RATE, g]
            rates[P_MEN, g] = rates0[P_MEN, g]
        for s in range(2):
            for f in range(layout.N_PER_SIDE):
                per_side[f, s] = per_side0[f, s]
            for f in range(3):
                acc[f, s] = acc0[f, s]
        for c in range(width):
            out[i, c] = row0[c]
        if dirty:
            # What only a recomputation, or a kind's deaths shared out, changes.
            for g in range(n_groups):
                cnt[g] = cnt0[g]
                room[R_SETTLED, g] = room0[R_SETTLED, g]
                health[g] = health0[g]
                rating[g] = rating0[g]
                sphit[g] = sphit0[g]
                for h in range(n_groups):
                    pkill[g, h] = pkill0[g, h]
                for e in range(2):
                    tl[e, g] = tl0[e, g]
            for f in range(3):
                nt[f] = nt0[f]
        dirty = _skip_battle(state, army, scratch, recording, out[i, :width], i, None, None)
        out[i, layout.O_STEPS] += params[P_FROM_STEP]


@functools.cache
def run_by_address() -> Any:
    """:func:`_skip_run` for :func:`skip_stacked`, called by its address
    (:func:`~kernels._jit.address_of`), compiled or loaded on first use."""
    tables = (INT_TABLE, REALS, REALS, REALS, INT_TABLE, INTS)  # groups .. params
    battles = (types.uint64[::1], INTS, INTS, INT_TABLE, types.int64)  # seeds .. width
    return address_of(_skip_run, (*tables, *battles))


@jit(parallel=True)
def skip_stacked(
    run, groups, survive, keep, inv, sides, params, at, dims, sizes, slots, seeds, numbers, out
):
    """Battles of many olympia scenarios in one call (a scenario with ranges): each
    table the scenarios' tables stacked (kernels/stacked.py), ``sizes[c, 0]`` scenario
    c's row width; battle i is battle ``numbers[i]`` of seed ``seeds[i]`` of scenario
    ``slots[i]``, its row in ``out[i]``'s first ``sizes[slots[i], 0]`` columns. ``run``
    is :func:`run_by_address`. The battles are taken in their scenarios' order, a block
    of them at a time, each block's battles of one scenario in one call of ``run``."""
    n = out.shape[0]
    taken = by_member(slots, sizes.shape[0])
    for block in prange((n + layout.BLOCK - 1) // layout.BLOCK):
        runs = member_runs(slots, taken, block * layout.BLOCK, min(n, (block + 1) * layout.BLOCK))
        for r in range(runs.shape[0] - 1):
            c = slots[taken[runs[r]]]
            run(
                table_of(groups, at, dims, c, 0),
                vector_of(survive, at, c, 1),
                vector_of(keep, at, c, 2),
                vector_of(inv, at, c, 3),
                table_of(sides, at, dims, c, 4),
                vector_of(params, at, c, 5),
                seeds,
                numbers,
                taken[runs[r] : runs[r + 1]],
                out,
                sizes[c, 0],
            )
