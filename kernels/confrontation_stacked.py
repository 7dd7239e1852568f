"""Confrontation's kernel for the battles of many scenarios in one call (a scenario with ranges;
docs/unknowns.md, "Speed"): the battle function of kernels/confrontation.py on each battle's own
scenario's tables, stacked side by side (kernels/stacked.py). A module of its own, so
that kernels/confrontation.py's cached machine code stays valid."""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .confrontation import BLOCK
from .rng import seed_battle
from .stacked import by_member, largest, member_runs, table_of, vector_of


@jit(parallel=True)
def confrontation_stacked(
    battle, units, floats, stacks, distance, actions, entry_start, turn_entry, params, stops,
    at, dims, sizes, slots, seeds, numbers, out,
):  # fmt: skip
    """:func:`confrontation_battles` for the battles of many scenarios in one call (a
    scenario with ranges): each table the scenarios' tables stacked (kernels/stacked.py),
    ``sizes[c]`` scenario c's row width, units and stacks; battle i is battle
    ``numbers[i]`` of seed ``seeds[i]`` of scenario ``slots[i]``, its row in ``out[i]``'s
    first ``sizes[slots[i], 0]`` columns. The battles are taken in their scenarios' order
    (kernels/stacked.py's ``by_member``), a block of them at a time."""
    n = out.shape[0]
    n_units = largest(sizes, 1)
    n_stacks = largest(sizes, 2)
    taken = by_member(slots, sizes.shape[0])
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        integrity = np.empty(n_units, np.int64)
        resolve2 = np.empty(n_units, np.int64)
        alive = np.empty(n_units, np.int64)
        count = np.empty(2, np.int64)
        stack_alive = np.empty(n_stacks, np.int64)
        no_marks = np.empty(0, np.int64)
        runs = member_runs(slots, taken, block * BLOCK, min(n, (block + 1) * BLOCK))
        for r in range(runs.shape[0] - 1):
            # The block's battles of one scenario, on views of its tables made once.
            c = slots[taken[runs[r]]]
            here = sizes[c, 1]
            units_c = table_of(units, at, dims, c, 0)
            floats_c = table_of(floats, at, dims, c, 1)
            stacks_c = table_of(stacks, at, dims, c, 2)
            distance_c = table_of(distance, at, dims, c, 3)
            actions_c = table_of(actions, at, dims, c, 4)
            entry_start_c = vector_of(entry_start, at, c, 5)
            turn_entry_c = vector_of(turn_entry, at, c, 6)
            params_c = vector_of(params, at, c, 7)
            stops_c = table_of(stops, at, dims, c, 8)
            integrity_c, resolve2_c, alive_c = integrity[:here], resolve2[:here], alive[:here]
            stack_alive_c = stack_alive[: sizes[c, 2]]
            for i in taken[runs[r] : runs[r + 1]]:
                seed_battle(state, seeds[i], numbers[i])
                battle(
                    state, units_c, floats_c, stacks_c, distance_c, actions_c, entry_start_c,
                    turn_entry_c, params_c, stops_c, no_marks, out[i, : sizes[c, 0]], no_marks,
                    integrity_c, resolve2_c, alive_c, count, stack_alive_c,
                )  # fmt: skip
