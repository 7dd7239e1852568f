"""Copying an outcome row, for the kernels that record a battle's row as it stands.

``target[:] = source`` in a kernel compiles Numba's check that the two shapes agree, and
with it the message it would raise: the formatting of shapes as strings, about 1.8 CPU
seconds of a cold compile (Intel Xeon @ 2.80GHz, confrontation's battle, 2026-12-07),
paid again by each kernel that has one. The rows copied here have one width by
construction, so a loop does it without that check. Compiled once for its types and
inlined by LLVM where it is called (blocks' battle calls it at every phase it records).
"""

from __future__ import annotations

from ._jit import jit


@jit(counted=False, llvm_inline=True)
def copy_row(source, target):
    """``target[:] = source`` for a ``target`` as long as ``source``, without the shape
    check (and without the temporary copy Numba makes for a slice assignment it cannot
    prove apart from its source)."""
    for c in range(source.shape[0]):
        target[c] = source[c]
