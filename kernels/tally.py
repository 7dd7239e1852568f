"""Integer histograms of outcome columns in two passes over a chunk's outcome matrix.

The kernels write a chunk's outcomes as one row-major matrix (a row per battle), so
walking it row by row reads each cache line once for all columns together, where a
numpy pass per column (min, max, bincount) reads the whole matrix again per column.

A *slot* is one histogram: the values of column ``columns[s]``, on the rows whose
column ``filters[s]`` equals ``keys[s]`` (every row when ``filters[s]`` is -1). The
steps of the battles each side won are three slots of one column.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


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
    seen = np.zeros(slots, np.int64)
    lo = np.full(slots, INT64_MAX, np.int64)
    hi = np.full(slots, INT64_MIN, np.int64)
    for i in range(rows):
        for s in range(slots):
            if filters[s] >= 0 and matrix[i, filters[s]] != keys[s]:
                continue
            value = matrix[i, columns[s]]
            seen[s] += 1
            if value < lo[s]:
                lo[s] = value
            if value > hi[s]:
                hi[s] = value
    offsets = np.zeros(slots + 1, np.int64)
    for s in range(slots):
        # hi - lo overflows only when the signs differ; lo + limit cannot then.
        same_sign = lo[s] >= 0 or hi[s] < 0
        fits = hi[s] - lo[s] <= limit if same_sign else hi[s] <= lo[s] + limit
        dense = seen[s] > 0 and fits
        offsets[s + 1] = offsets[s] + (hi[s] - lo[s] + 1 if dense else 0)
    counts = np.zeros(offsets[slots], np.int64)
    for i in range(rows):
        for s in range(slots):
            if offsets[s + 1] == offsets[s]:
                continue
            if filters[s] >= 0 and matrix[i, filters[s]] != keys[s]:
                continue
            counts[offsets[s] + matrix[i, columns[s]] - lo[s]] += 1
    return seen, lo, offsets, counts
