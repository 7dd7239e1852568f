"""Battles counted by state, step by step, turned into counts by value (the state after
each step of the battle as it unfolds, simulator/results/steps.py's ``of_counts``).

A kernel whose battles stand at one of a table's states records, for each step asked,
how many battles stand at each state (``counts[x, k]``). What the report counts is the
values of a few quantities (a side's men left, the two sides' together): for each
quantity ``q``, ``numbered[q, x]`` the number of state ``x``'s value among the
quantity's distinct values (``spans[q]`` of them).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def counts_by_value(counts, numbered, spans):
    """For each quantity ``q``, the battles with each of its values after each step:
    ``out[offsets[q] + k * spans[q] + v]`` (``offsets`` the running sum of ``steps *
    spans``), one pass over the states with battles."""
    states, steps = counts.shape
    quantities = numbered.shape[0]
    offsets = np.zeros(quantities + 1, np.int64)
    for q in range(quantities):
        offsets[q + 1] = offsets[q] + steps * spans[q]
    out = np.zeros(offsets[quantities], np.int64)
    for x in range(states):
        for k in range(steps):
            battles = counts[x, k]
            if battles > 0:
                for q in range(quantities):
                    out[offsets[q] + k * spans[q] + numbered[q, x]] += battles
    return out, offsets
