"""The normal equations of a least-squares fit, in one pass over its columns.

The retreat rule's regression (simulator/studies/machinery/retreat_simulated.py) fits a
dozen or so basis columns on up to millions of battles at each of up to 100 steps.
numpy's ``einsum`` computed the full K x K product with its generic loops (about 0.1 s
a step of 200,000 battles), and OpenBLAS's threads, on two cores shared with the
kernels' own, waited on each other. Here each of the K(K+1)/2 sums runs over a block of
battles held in the cache, in a fixed order (the same sums on any machine).
"""

from __future__ import annotations

from ._jit import jit

#: Battles summed together (a block of 17 columns of 2,048 doubles is 272 kB).
BLOCK = 2048


@jit
def normal_equations(x, y, gram, xy):
    """``gram = x @ x.T`` and ``xy = x @ y`` for ``x`` of shape (K, n), a basis column
    a row (C-contiguous, float64); ``gram`` (K, K) and ``xy`` (K,) are overwritten."""
    k, n = x.shape
    gram[:, :] = 0.0
    xy[:] = 0.0
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        for a in range(k):
            xa = x[a]
            xy[a] += _dot(xa, y, lo, hi)
            for b in range(a + 1):
                gram[a, b] += _dot(xa, x[b], lo, hi)
    for a in range(k):
        for b in range(a):
            gram[b, a] = gram[a, b]


@jit(inline=True)
def _dot(u, v, lo, hi):
    """The sum of ``u[i] * v[i]`` over ``lo .. hi - 1`` in four running sums (one
    running sum waits on each addition before the next: a fourth of the speed)."""
    s0 = s1 = s2 = s3 = 0.0
    i = lo
    while i + 4 <= hi:
        s0 += u[i] * v[i]
        s1 += u[i + 1] * v[i + 1]
        s2 += u[i + 2] * v[i + 2]
        s3 += u[i + 3] * v[i + 3]
        i += 4
    while i < hi:
        s0 += u[i] * v[i]
        i += 1
    return (s0 + s1) + (s2 + s3)
