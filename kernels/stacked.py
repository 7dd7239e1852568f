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
