"""Inference over many tests at once: Holm's step-down test, which ``regress`` uses to
flag the numbers of a baseline that moved without raising false alarms as their count
grows."""

from __future__ import annotations


def holm(p_values: list[float], level: float) -> list[tuple[bool, float]]:
    """Holm's step-down test: (rejected, threshold) per p-value, in the input order.

    Rejecting ``p_(k) <= level / (m - k)`` until the first that is not keeps the
    family-wise false-alarm rate at ``level`` whatever the dependence between tests."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [(False, level / m if m else level)] * m
    still_rejecting = True
    for rank, i in enumerate(order):
        threshold = level / (m - rank)
        still_rejecting = still_rejecting and p_values[i] <= threshold
        out[i] = (still_rejecting, threshold)
    return out
