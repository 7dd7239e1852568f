"""Skirmish's kernel for the battles of many scenarios in one call (a scenario with ranges;
docs/unknowns.md, "Speed"): the battle function of kernels/skirmish.py on each battle's own
scenario's tables, stacked side by side (kernels/stacked.py). A module of its own, so
that kernels/skirmish.py's cached machine code stays valid."""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .rng import seed_battle
from .rows import copy_row
from .skirmish import BLOCK, N_LOG_FIELDS, expected_table
from .stacked import by_member, largest, member_runs, table_of, vector_of


@jit(parallel=True)
def skirmish_stacked(battle, table, params, stops, at, dims, sizes, slots, seeds, numbers, out):
    """:func:`skirmish_battles` for the battles of many scenarios in one call (a scenario
    with ranges): each table the scenarios' tables stacked (kernels/stacked.py),
    ``sizes[c]`` scenario c's row width and participants; battle i is battle
    ``numbers[i]`` of seed ``seeds[i]`` of scenario ``slots[i]``, its row in ``out[i]``'s
    first ``sizes[slots[i], 0]`` columns. The battles are taken in their scenarios' order
    (kernels/stacked.py's ``by_member``), a block of them at a time."""
    n = out.shape[0]
    n_scenarios = sizes.shape[0]
    # Each scenario's table of expected damage, as its own call would build it.
    expected_at = np.zeros(n_scenarios + 1, np.int64)
    most = largest(sizes, 1)
    for c in range(n_scenarios):
        expected_at[c + 1] = expected_at[c] + sizes[c, 1] * sizes[c, 1]
    expected = np.empty(expected_at[n_scenarios], np.float64)
    for c in range(n_scenarios):
        own = expected_table(table_of(table, at, dims, c, 0))
        copy_row(own.ravel(), expected[expected_at[c] : expected_at[c + 1]])
    taken = by_member(slots, n_scenarios)
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        health = np.empty(most, np.int64)
        healer_ready = np.empty(most, np.int64)
        no_log = np.empty((0, N_LOG_FIELDS), np.int64)
        no_marks = np.empty(0, np.int64)
        runs = member_runs(slots, taken, block * BLOCK, min(n, (block + 1) * BLOCK))
        for r in range(runs.shape[0] - 1):
            # The block's battles of one scenario, on views of its tables made once.
            c = slots[taken[runs[r]]]
            here = sizes[c, 1]
            table_c = table_of(table, at, dims, c, 0)
            expected_c = expected[expected_at[c] : expected_at[c + 1]].reshape((here, here))
            params_c = vector_of(params, at, c, 1)
            stops_c = table_of(stops, at, dims, c, 2)
            health_c, healer_ready_c = health[:here], healer_ready[:here]
            for i in taken[runs[r] : runs[r + 1]]:
                seed_battle(state, seeds[i], numbers[i])
                battle(
                    state, table_c, expected_c, params_c, stops_c, no_marks,
                    out[i, : sizes[c, 0]], no_marks, health_c, healer_ready_c, no_log,
                )  # fmt: skip
