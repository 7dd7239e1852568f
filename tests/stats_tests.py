"""Statistical checks shared by the tests: sound tolerances, fixed seeds, no magic numbers."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats

from simulator.stats import wilson

#: Family-wise false-alarm rate of one agreement check (all its columns together).
ALPHA = 0.001


def interval_contains(successes: int, n: int, p: float, confidence: float = 0.999) -> bool:
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    _, lo, hi = wilson(successes, n, z)
    return lo <= p <= hi


def pooled_mean_test(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of equal means, with the variance pooled from both samples."""
    nx, ny = len(x), len(y)
    pooled = ((nx - 1) * x.var(ddof=1) + (ny - 1) * y.var(ddof=1)) / (nx + ny - 2)
    z = (x.mean() - y.mean()) / np.sqrt(pooled * (1 / nx + 1 / ny))
    return float(2 * stats.norm.sf(abs(z)))


def same_distribution(
    a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray], columns: list[str] | None = None
) -> list[str]:
    """Columns whose distributions differ between two samples (empty: they agree).

    The winner is compared by a chi-square test of the outcome counts, every other
    column by a t-test of the means with the pooled variance (under the hypothesis that
    both samples come from one distribution the pooled variance is its estimate, and it
    stays sound for rare events that one small sample never shows); Bonferroni over
    the columns keeps the family-wise false-alarm rate at ALPHA.
    """
    columns = columns or [c for c in a if c in b]
    alpha = ALPHA / len(columns)
    failures = []
    for column in columns:
        x, y = np.asarray(a[column]), np.asarray(b[column])
        if column == "winner":
            table = np.array([np.bincount(x, minlength=3), np.bincount(y, minlength=3)])
            table = table[:, table.sum(axis=0) > 0]
            if table.shape[1] < 2:
                continue
            p = stats.chi2_contingency(table).pvalue
        else:
            if x.std() == 0 and y.std() == 0:
                if x[0] != y[0]:
                    failures.append(f"{column}: constant {x[0]} vs {y[0]}")
                continue
            p = pooled_mean_test(x, y)
        if p < alpha:
            failures.append(f"{column}: p={p:.2g} (means {x.mean():.4g} vs {y.mean():.4g})")
    return failures
