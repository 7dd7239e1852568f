"""A combination's tables out of tables stacked side by side (docs/unknowns.md, "Speed").

A scenario with ranges runs the battles of many combinations of inputs in one kernel
call: each of the kernel's tables is handed over as the combinations' tables flattened
one after another (``flat``), combination ``c``'s part of table ``t`` being
``flat[at[c, t] : at[c + 1, t]]`` of shape ``(dims[c, 2t], dims[c, 2t + 1])`` (a
vector: ``(length, 1)``), as simulator/rulesets/stacked.py builds them. These views are
C-contiguous, so the battle function a kernel calls by its address takes them as it
takes a plain run's tables.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit(inline=True)
def table_of(flat, at, dims, c, t):
    """Combination ``c``'s table ``t`` (two dimensions), a view of ``flat``."""
    return flat[at[c, t] : at[c + 1, t]].reshape((dims[c, 2 * t], dims[c, 2 * t + 1]))


@jit(inline=True)
def vector_of(flat, at, c, t):
    """Combination ``c``'s vector ``t``, a view of ``flat``."""
    return flat[at[c, t] : at[c + 1, t]]


@jit(inline=True)
def largest(sizes, column):
    """The most of ``sizes[:, column]`` over the scenarios, at least 1: the length of a
    scratch array every scenario's battle takes a view of."""
    most = np.int64(1)
    for c in range(sizes.shape[0]):
        most = max(most, sizes[c, column])
    return most


@jit
def by_member(slots, members):
    """The battles (indices of ``slots``) in their members' order, in battle order within
    each (a counting sort): a stacked kernel takes a block of them at a time, so that a
    block's battles of one member run one after another on that member's views (made
    once for them: a view of a table shared by every thread counts a reference to it,
    an atomic operation the threads contend on)."""
    starts = np.zeros(members + 1, np.int64)
    for i in range(slots.shape[0]):
        starts[slots[i] + 1] += 1
    for c in range(members):
        starts[c + 1] += starts[c]
    taken = np.empty(slots.shape[0], np.int64)
    for i in range(slots.shape[0]):
        taken[starts[slots[i]]] = i
        starts[slots[i]] += 1
    return taken


@jit
def member_runs(slots, taken, first, end):
    """Where the runs of one member start in ``taken[first:end]``, and ``end``: run r is
    ``taken[runs[r] : runs[r + 1]]``, its member ``slots[taken[runs[r]]]``."""
    runs = np.empty(end - first + 1, np.int64)
    count = 0
    for j in range(first, end):
        if j == first or slots[taken[j]] != slots[taken[j - 1]]:
            runs[count] = j
            count += 1
    runs[count] = end
    return runs[: count + 1]
