"""Blocks' kernel for the battles of many scenarios in one call (a scenario with ranges;
docs/unknowns.md, "Speed"): the battle function of kernels/blocks.py on each battle's own
scenario's tables, stacked side by side (kernels/stacked.py). A module of its own, so
that kernels/blocks.py's cached machine code stays valid."""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import jit
from .blocks import BLOCK
from .stacked import by_member, largest, member_runs, table_of, vector_of


@jit(parallel=True)
def blocks_stacked(battles, blocks, params, stops, at, dims, sizes, slots, seeds, numbers, out):
    """:func:`~kernels.blocks.blocks_battles` (nothing recorded) for the battles of many
    scenarios in one call: each table the scenarios' tables stacked (kernels/stacked.py),
    ``sizes[c]`` scenario c's row width and blocks; battle i is battle ``numbers[i]`` of
    seed ``seeds[i]`` of scenario ``slots[i]``, its row in ``out[i]``'s first
    ``sizes[slots[i], 0]`` columns. ``battles`` runs a range of one scenario's battles,
    so each battle is such a range of one, its row a view of one row. The battles are
    taken in their scenarios' order (kernels/stacked.py's ``by_member``), a block of them
    at a time."""
    n = out.shape[0]
    width = out.shape[1]
    flat = out.reshape(out.size)
    n_blocks = largest(sizes, 1)
    zero = np.int64(0)
    one = np.int64(1)
    taken = by_member(slots, sizes.shape[0])
    for chunk in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        steps = np.empty(n_blocks, np.int64)
        pos = np.empty(n_blocks, np.int64)
        mark = np.empty(n_blocks, np.int64)
        no_steps = np.empty(0, np.int64)
        no_record = np.empty((1, 0, 1), np.int64)
        runs = member_runs(slots, taken, chunk * BLOCK, min(n, (chunk + 1) * BLOCK))
        for r in range(runs.shape[0] - 1):
            # The chunk's battles of one scenario, on views of its tables made once.
            c = slots[taken[runs[r]]]
            here = sizes[c, 1]
            blocks_c = table_of(blocks, at, dims, c, 0)
            params_c = vector_of(params, at, c, 1)
            stops_c = table_of(stops, at, dims, c, 2)
            steps_c, pos_c, mark_c = steps[:here], pos[:here], mark[:here]
            for i in taken[runs[r] : runs[r + 1]]:
                battles(
                    state, blocks_c, params_c, stops_c, steps_c, pos_c, mark_c, seeds[i],
                    numbers[i], flat[i * width : i * width + sizes[c, 0]].reshape((1, sizes[c, 0])),
                    no_steps, no_record, zero, one,
                )  # fmt: skip
