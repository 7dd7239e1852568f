"""Integer histograms of outcome columns, in one pass over a chunk's outcome matrix.

The kernels write a chunk's outcomes as one row-major matrix (a row per battle). The
first pass reads it in runs of rows small enough to stay in the cache, a slot at a time
within a run, so each cache line comes from memory once, where a numpy pass per column
(min, max, bincount) reads the whole matrix again per column.
Almost every outcome is a small count (a winner, a number of rounds, of casualties), so
the first pass counts values 0 .. NARROW - 1 straight into a small table; only a
column holding some other value is read again, for its range and then its counts.

A *slot* is one histogram: the values of column ``columns[s]``, on the rows whose
column ``filters[s]`` equals ``keys[s]`` (every row when ``filters[s]`` is -1). The
steps of the battles each side won are three slots of one column.
"""

from __future__ import annotations

import numpy as np

from . import _aside
from ._jit import jit

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min
#: Values 0 .. NARROW - 1 are counted in the first pass (a table of NARROW per slot).
NARROW = 1024
#: Rows counted together, slot by slot: 2,048 rows of 16 columns are 256 kB.
SWEEP = 2048


@jit(inline=True)
def _counts_row(matrix, i, filters, keys, s):
    return filters[s] < 0 or matrix[i, filters[s]] == keys[s]


@jit(inline=True)
def _count_rows(matrix, columns, filters, keys, first, end, table, wide_slots):
    """Counts of rows ``first .. end - 1`` into ``table`` (slot s at s * NARROW), a slot
    at a time over runs of SWEEP rows (in the cache from the first slot's pass): a row
    at a time, every slot in turn, cost three times as much (67 against 22 ns a row of
    the yardstick battle's 16 columns, one thread)."""
    for run in range(first, end, SWEEP):
        stop = min(run + SWEEP, end)
        for s in range(columns.size):
            column = columns[s]
            base = s * NARROW
            where = filters[s]
            key = keys[s]
            wide = False
            for i in range(run, stop):
                if where < 0 or matrix[i, where] == key:
                    value = matrix[i, column]
                    # Unsigned: one comparison for 0 <= value < NARROW.
                    if np.uint64(value) < np.uint64(NARROW):
                        table[base + value] += 1
                    else:
                        wide = True
            if wide:
                wide_slots[s] = True


@jit
def _narrow_counts(
    matrix: np.ndarray, columns: np.ndarray, filters: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The first pass: per slot, the counts of values 0 .. NARROW - 1 and whether any
    other value occurs. On one thread: counted in parallel blocks, each region waited for
    every thread of its team to be scheduled, and on a busy machine (a load of 11 on 2
    cores) a chunk of 32,768 rows took 194 ms of wall time and 77 ms of CPU, spinning,
    for 1 ms of counting; on one thread a chunk of 131,072 rows takes about 3.5 ms."""
    slots = columns.size
    narrow = np.zeros((slots, NARROW), np.int64)
    wide = np.zeros(slots, np.bool_)
    rows = matrix.shape[0]
    _count_rows(matrix, columns, filters, keys, 0, rows, narrow.reshape(slots * NARROW), wide)
    return narrow, wide


@jit
def slot_histograms(
    matrix: np.ndarray, columns: np.ndarray, filters: np.ndarray, keys: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per slot: ``seen`` rows, smallest value ``lo`` and the slot's dense counts
    ``counts[offsets[s]:offsets[s + 1]]`` of values ``lo, lo + 1, ...``.

    A slot whose values spread over more than ``limit + 1`` integers gets no counts
    (``offsets[s] == offsets[s + 1]`` while ``seen[s] > 0``): the caller counts it by
    sorting, so memory stays bounded whatever the values.
    """
    rows = matrix.shape[0]
    slots = columns.size
    narrow, wide = _narrow_counts(matrix, columns, filters, keys)
    seen = np.zeros(slots, np.int64)
    lo = np.zeros(slots, np.int64)
    hi = np.full(slots, NARROW - 1, np.int64)
    if wide.any():
        # A wide slot's range, from a second pass over its rows only.
        for s in range(slots):
            if wide[s]:
                lo[s] = INT64_MAX
                hi[s] = INT64_MIN
        for i in range(rows):
            for s in range(slots):
                if wide[s] and _counts_row(matrix, i, filters, keys, s):
                    value = matrix[i, columns[s]]
                    seen[s] += 1
                    lo[s] = min(lo[s], value)
                    hi[s] = max(hi[s], value)
    offsets = np.zeros(slots + 1, np.int64)
    for s in range(slots):
        if not wide[s]:
            seen[s] = narrow[s].sum()
        # hi - lo overflows only when the signs differ; lo + limit cannot then.
        same_sign = lo[s] >= 0 or hi[s] < 0
        fits = hi[s] - lo[s] <= limit if same_sign else hi[s] <= lo[s] + limit
        dense = seen[s] > 0 and (fits or not wide[s])
        offsets[s + 1] = offsets[s] + (hi[s] - lo[s] + 1 if dense else 0)
    counts = np.zeros(offsets[slots], np.int64)
    dense_wide = False
    for s in range(slots):
        if offsets[s + 1] > offsets[s]:
            if wide[s]:
                dense_wide = True
            else:
                # An element loop: a slice assignment between arrays compiles Numba's
                # shape-mismatch error message with it (about a second of a cold run).
                for v in range(NARROW):
                    counts[offsets[s] + v] = narrow[s, v]
    if dense_wide:
        for i in range(rows):
            for s in range(slots):
                if (
                    wide[s]
                    and offsets[s + 1] > offsets[s]
                    and _counts_row(matrix, i, filters, keys, s)
                ):
                    counts[offsets[s] + matrix[i, columns[s]] - lo[s]] += 1
    return seen, lo, offsets, counts


def _compiled() -> None:
    """:func:`slot_histograms` compiled (or loaded) for the types every chunk's tally
    passes it (simulator/results/stats.py's ``histograms``), on a matrix of one battle."""
    one = np.zeros((1, 1), np.int64)
    slot_histograms(one, np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(1, np.int64), 1)


# Every run tallies its battles: a run that waits for a battle compiled aside compiles
# the tally meanwhile, not after its battles (kernels/_aside.py).
_aside.meanwhile.append(_compiled)
