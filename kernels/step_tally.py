"""The men left after each recorded step, in one pass over a block's recorded rows.

A kernel that records the battle as it unfolds writes each battle's row after each asked
step into one table, ``table[i, k]`` battle i's row after the k-th step. Counting each
step from its columns (numpy, a column at a time) read the table once per column and
made a temporary array for each: on blocks' short battles that took a third of a
recording's time. Here one pass reads each battle's rows once and writes, step by step,
what the step's counts are made of: each outcome's battles and a matrix of men left
(each type's, each side's and both sides' together), a row per battle holding every
step's, which one pass of kernels/tally.py counts.
"""

from __future__ import annotations

from ._jit import jit


@jit
def men_left_by_step(table, winner, columns, brought, defenders, base, states, matrix):
    """From ``table`` (battles x steps x row): ``states[k, w]``, the battles whose winner
    column (``winner``) is w after step k, and ``matrix[i, k]``, battle i's men left
    after it: for each type j, ``brought[j]`` less the casualty column ``columns[j]``,
    then the attacker's total, the defender's (``defenders[j]`` 1 for a defender's
    type) and ``attacker * base + defender``. Returns the rows whose winner is not a
    column of ``states`` (none, for a well-formed table)."""
    count, steps = table.shape[0], table.shape[1]
    types = columns.shape[0]
    outcomes = states.shape[1]
    strays = 0
    for i in range(count):
        for k in range(steps):
            w = table[i, k, winner]
            if 0 <= w < outcomes:
                states[k, w] += 1
            else:
                strays += 1
            attacker = 0
            defender = 0
            for j in range(types):
                left = brought[j] - table[i, k, columns[j]]
                matrix[i, k, j] = left
                if defenders[j]:
                    defender += left
                else:
                    attacker += left
            matrix[i, k, types] = attacker
            matrix[i, k, types + 1] = defender
            matrix[i, k, types + 2] = attacker * base + defender
    return strays
