"""Age of Gods's kernel for the battles of many scenarios in one call (a scenario with ranges;
docs/unknowns.md, "Speed"): the battle function of kernels/age_of_gods.py on each battle's own
scenario's tables, stacked side by side (kernels/stacked.py). A module of its own, so
that kernels/age_of_gods.py's cached machine code stays valid."""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .age_of_gods import BLOCK, N_PER_SIDE
from .rng import seed_battle
from .stacked import by_member, largest, member_runs, table_of, vector_of


@jit(parallel=True)
def phased_stacked(
    battle, groups, survive, flee, sides, stops, at, dims, sizes, slots, seeds, numbers, out
):
    """:func:`phased_battles` (a plain run: nothing recorded, no group's state kept) for
    the battles of many scenarios in one call (a scenario with ranges): each table the
    scenarios' tables stacked (kernels/stacked.py), ``sizes[c]`` scenario c's row width,
    groups and units; battle i is battle ``numbers[i]`` of seed ``seeds[i]`` of scenario
    ``slots[i]``, its row in ``out[i]``'s first ``sizes[slots[i], 0]`` columns. The
    battles are taken in their scenarios' order (kernels/stacked.py's ``by_member``), a
    block of them at a time."""
    n = out.shape[0]
    n_groups = largest(sizes, 1)
    n_units = largest(sizes, 2)
    taken = by_member(slots, sizes.shape[0])
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
        no_rounds = np.empty(0, np.int64)
        no_record = np.empty((0, 1), np.int64)
        runs = member_runs(slots, taken, block * BLOCK, min(n, (block + 1) * BLOCK))
        for r in range(runs.shape[0] - 1):
            # The block's battles of one scenario, on views of its tables made once.
            c = slots[taken[runs[r]]]
            g = sizes[c, 1]
            groups_c = table_of(groups, at, dims, c, 0)
            survive_c = vector_of(survive, at, c, 1)
            flee_c = vector_of(flee, at, c, 2)
            sides_c = table_of(sides, at, dims, c, 3)
            stops_c = table_of(stops, at, dims, c, 4)
            cnt_c, health_c, hit_c, lost_c = cnt[:g], health[:g], hit[:g], lost[:g]
            rating_c, w_c, t_c, pool_c, ready_c = rating[:g], w[:g], t[:g], pool[:g], ready[:g]
            unit_men_c = unit_men[: sizes[c, 2]]
            for i in taken[runs[r] : runs[r + 1]]:
                seed_battle(state, seeds[i], numbers[i])
                per_side[:] = 0
                hit[:] = 0
                battle(
                    state, groups_c, survive_c, flee_c, sides_c, out[i, : sizes[c, 0]], cnt_c,
                    health_c, hit_c, lost_c, unit_men_c, rating_c, w_c, t_c, pool_c, ready_c,
                    per_side, stops_c, no_rounds, no_record,
                )  # fmt: skip
