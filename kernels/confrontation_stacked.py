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
from .stacked import largest, table_of, vector_of


@jit(parallel=True)
def confrontation_stacked(
    battle, units, floats, stacks, distance, actions, entry_start, turn_entry, params, stops,
    at, dims, sizes, slots, seeds, numbers, out,
):  # fmt: skip
    """:func:`confrontation_battles` for the battles of many scenarios in one call (a
    scenario with ranges): each table the scenarios' tables stacked (kernels/stacked.py),
    ``sizes[c]`` scenario c's row width, units and stacks; battle i is battle
    ``numbers[i]`` of seed ``seeds[i]`` of scenario ``slots[i]``, its row in ``out[i]``'s
    first ``sizes[slots[i], 0]`` columns."""
    n = out.shape[0]
    n_units = largest(sizes, 1)
    n_stacks = largest(sizes, 2)
    for block in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        integrity = np.empty(n_units, np.int64)
        resolve2 = np.empty(n_units, np.int64)
        alive = np.empty(n_units, np.int64)
        count = np.empty(2, np.int64)
        stack_alive = np.empty(n_stacks, np.int64)
        no_marks = np.empty(0, np.int64)
        for i in range(block * BLOCK, min(n, (block + 1) * BLOCK)):
            c = slots[i]
            units_here = sizes[c, 1]
            seed_battle(state, seeds[i], numbers[i])
            battle(
                state,
                table_of(units, at, dims, c, 0),
                table_of(floats, at, dims, c, 1),
                table_of(stacks, at, dims, c, 2),
                table_of(distance, at, dims, c, 3),
                table_of(actions, at, dims, c, 4),
                vector_of(entry_start, at, c, 5),
                vector_of(turn_entry, at, c, 6),
                vector_of(params, at, c, 7),
                table_of(stops, at, dims, c, 8),
                no_marks,
                out[i, : sizes[c, 0]],
                no_marks,
                integrity[:units_here],
                resolve2[:units_here],
                alive[:units_here],
                count,
                stack_alive[: sizes[c, 2]],
            )
