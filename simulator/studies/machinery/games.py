"""Two-player zero-sum games given as a payoff matrix: the equilibrium mix by linear
programming, the symmetric game of an attacker-defender score table, dominated rows.
``meta`` plays the equal-cost matrix as such a game; nothing here fights a battle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import BattleOddsError


@dataclass(frozen=True)
class Equilibrium:
    """The row player's maximin mix of a zero-sum game and the game's value."""

    weights: np.ndarray
    value: float


def solve_game(payoff: np.ndarray) -> Equilibrium:
    """The row player's equilibrium mix of the zero-sum game ``payoff`` (rows: the row
    player's choices, entries: what it gains), by linear programming:
    maximise v subject to ``payoff.T @ x >= v``, ``sum(x) = 1``, ``x >= 0``."""
    from scipy.optimize import linprog

    a = np.asarray(payoff, dtype=float)
    if a.ndim != 2 or 0 in a.shape or not np.all(np.isfinite(a)):
        raise BattleOddsError(f"payoff: expected a finite 2-D matrix, got shape {a.shape}")
    rows, columns = a.shape
    # Variables x_1..x_rows, v; minimise -v.
    cost = np.zeros(rows + 1)
    cost[-1] = -1.0
    upper = np.hstack([-a.T, np.ones((columns, 1))])  # v - sum_i x_i a[i, j] <= 0
    equal = np.hstack([np.ones((1, rows)), np.zeros((1, 1))])
    bounds = [(0, None)] * rows + [(None, None)]
    answer = linprog(
        cost,
        A_ub=upper,
        b_ub=np.zeros(columns),
        A_eq=equal,
        b_eq=[1.0],
        bounds=bounds,
        method="highs",
    )
    if answer.status != 0:
        raise AssertionError(f"linprog could not solve a finite game: {answer.message}")
    weights = np.clip(answer.x[:rows], 0.0, None)
    return Equilibrium(weights / weights.sum(), float(answer.x[-1]))


def symmetric_payoff(net: np.ndarray) -> np.ndarray:
    """``A[i, j] = (net[i, j] - net[j, i]) / 2``: the row type's net score over both roles,
    ``net[a, d]`` being the attacker's P(win) - P(loss) when type a attacks type d."""
    net = np.asarray(net, dtype=float)
    return (net - net.T) / 2


def dominated(payoff: np.ndarray) -> dict[int, int]:
    """Rows strictly dominated by another row (i -> the first row that dominates it):
    the other does better against every column."""
    a = np.asarray(payoff, dtype=float)
    found = {}
    for i in range(a.shape[0]):
        for k in range(a.shape[0]):
            if k != i and np.all(a[k] > a[i]):
                found[i] = k
                break
    return found
