"""The distinct rows of an integer table, fast: a ruleset's states of a side after each
battle of a run (Prepared.survivors), where most battles repeat a few states."""

from __future__ import annotations

import numpy as np

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


def distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, index)``: the distinct rows of an int64 ``table`` (rows, columns)
    and for each row the index of its row in ``distinct``, as ``np.unique(table, axis=0,
    return_inverse=True)`` gives them (sorted), found by sorting a 64-bit hash of each
    row (a tenth of the time on a few thousand rows); rows a hash collision would merge
    are seen, and then the rows themselves are sorted."""
    table = np.ascontiguousarray(table, np.int64)
    if table.ndim != 2 or table.shape[0] == 0:
        return np.unique(table, axis=0, return_inverse=True)
    hashed = np.zeros(table.shape[0], np.uint64)
    for column in table.T:
        hashed = (hashed ^ column.astype(np.uint64)) * _MULTIPLIER
        hashed ^= hashed >> np.uint64(29)
        hashed *= _MIX
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(table[first][inverse], table):
        return np.unique(table, axis=0, return_inverse=True)
    # In the rows' own order, as np.unique(axis=0) gives them.
    order = np.lexsort(table[first].T[::-1])
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return table[first][order], rank[inverse]
