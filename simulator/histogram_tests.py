"""Two-sample tests of exact histograms, and their power against a one-point shift.

Two tests, one per kind of column an agreement check compares:

* :func:`histogram_test`, the chi-square test of homogeneity on bins pooled until each
  expects MIN_EXPECTED battles of the smaller sample: for a categorical column (the
  winner), where no value is next to another;
* :func:`cdf_test`, the two empirical CDFs compared at every threshold both tails of
  which expect MIN_EXPECTED battles of the smaller sample: for an ordered column (a
  count, a number of steps). One point of probability moved between neighbouring values
  k and k + 1 moves the CDF at the one threshold k by one point, the same shift as one
  point of a binary outcome; any other change of the distribution moves the CDF
  somewhere, so a change of shape that keeps the mean is seen too. Each threshold is
  Fisher's exact test of its 2 x 2 table (at or below, above; one sample or the other),
  so its level holds however few battles a tail has, and the caller spends its
  false-alarm rate over the thresholds by a weighted Bonferroni
  (:func:`threshold_levels`) that gives a one-point shift the same power at each.

The power of each (:func:`shift_power` for the chi-square, :func:`threshold_power` and
:func:`cdf_power` for the CDF) is computed from the noncentral chi-square or the normal
approximation, which is close where the power is decided (a shift of one point against a
bin or tail of many battles); tests/test_agreement_power.py checks both against simulated
rejection rates.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, stats

from .results.stats import Histogram

__all__ = [
    "MIN_EXPECTED",
    "ONE_POINT",
    "CdfComparison",
    "cdf_power",
    "cdf_test",
    "critical_values",
    "histogram_test",
    "log_levels",
    "pool_bins",
    "pooled_table",
    "shift_power",
    "tested_thresholds",
    "threshold_levels",
    "threshold_power",
    "threshold_spread",
]

#: Sparse values are pooled until each bin expects this many battles in the smaller sample
#: (the usual condition for the chi-square approximation of the homogeneity test); a CDF
#: threshold is tested when each of its tails expects this many.
MIN_EXPECTED = 5.0
#: The shift an agreement test is sized to see: one point of probability (1% of the
#: battles) moved from one value of a column (or outcome) to a neighbouring one.
ONE_POINT = 0.01


def aligned(a: Histogram, b: Histogram) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of the values of ``a`` and ``b`` in order, and the counts of each."""
    values = np.union1d(a.values, b.values)
    ca = np.zeros(values.size, np.int64)
    cb = np.zeros(values.size, np.int64)
    ca[np.searchsorted(values, a.values)] = a.counts
    cb[np.searchsorted(values, b.values)] = b.counts
    return values, ca, cb


def pool_bins(total: np.ndarray, smallest_share: float) -> np.ndarray:
    """Bin index of each value: adjacent values (in value order) merged until each bin
    holds enough battles of both samples together (``total``) to expect MIN_EXPECTED in
    the smaller one, whose share of all battles is ``smallest_share``; what is left at the
    end joins the last bin."""
    need = MIN_EXPECTED / smallest_share
    bins = np.zeros(total.size, np.int64)
    current, filled = 0, 0.0
    for i, count in enumerate(total):
        bins[i] = current
        filled += float(count)
        if filled >= need:
            current, filled = current + 1, 0.0
    if filled and current:  # an unfilled tail joins the bin before it
        bins[bins == current] = current - 1
    return bins


def pooled_table(a: Histogram, b: Histogram) -> np.ndarray:
    """The 2 x K table of the counts of ``a`` and ``b`` over their pooled bins."""
    _, ca, cb = aligned(a, b)
    bins = pool_bins(ca + cb, min(a.n, b.n) / (a.n + b.n))
    k = int(bins.max()) + 1 if bins.size else 0
    return np.array([np.bincount(bins, ca, k), np.bincount(bins, cb, k)])


def histogram_test(a: Histogram, b: Histogram) -> float:
    """p-value of the chi-square test that ``a`` and ``b`` are samples of one
    distribution, on their pooled bins (1.0 when they pool into a single bin)."""
    table = pooled_table(a, b)
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def shift_power(
    probabilities: np.ndarray,
    moves: list[tuple[int, int]],
    n_a: int,
    n_b: int,
    alpha: float,
    shift: float = ONE_POINT,
) -> float:
    """The smallest power, over ``moves`` (from bin, to bin), of the chi-square test of
    :func:`histogram_test` at level ``alpha`` when sample ``b`` has ``shift`` of the
    probability of a bin moved to another and sample ``a`` follows ``probabilities``
    (the bins already pooled).

    Under the shift the statistic is approximately noncentral chi-square with K - 1
    degrees of freedom and noncentrality ``n_a n_b / (n_a + n_b) * sum(d_k^2 / p_k)``,
    where ``d`` is the difference of the two samples' bin probabilities and ``p`` their
    pooled probability (the classical power of the homogeneity test)."""
    q = np.asarray(probabilities, float)
    df = q.size - 1
    if df < 1 or not moves:
        return 0.0
    critical = float(stats.chi2.isf(alpha, df))
    effective = n_a * n_b / (n_a + n_b)
    powers = []
    for source, target in moves:
        moved = q.copy()
        moved[source] -= shift
        moved[target] += shift
        pooled = (n_a * q + n_b * moved) / (n_a + n_b)
        lam = effective * float(np.sum((moved - q) ** 2 / pooled))
        powers.append(float(stats.ncx2.sf(critical, df, lam)))
    return min(powers)


def tested_thresholds(below: np.ndarray, total: int, smallest: int) -> np.ndarray:
    """Which thresholds are tested, given the battles of both samples at or below each
    (``below``, of ``total``): those whose both tails expect MIN_EXPECTED battles of the
    smaller sample (of ``smallest`` battles)."""
    share = smallest / total
    return (below * share >= MIN_EXPECTED) & ((total - below) * share >= MIN_EXPECTED)


class CdfComparison(NamedTuple):
    """The tested thresholds of two samples' CDFs (:func:`cdf_test`)."""

    upto: np.ndarray  #: the threshold values t (each test is of P(X <= t))
    cdf_a: np.ndarray  #: sample a's share at or below each
    cdf_b: np.ndarray  #: sample b's
    pooled: np.ndarray  #: both samples' together
    log_p: np.ndarray  #: the natural log of each two-sided p-value


def cdf_test(a: Histogram, b: Histogram) -> CdfComparison:
    """Fisher's exact test of each threshold of :func:`tested_thresholds`: the 2 x 2 table
    of the battles of ``a`` and of ``b`` at or below it and above it (two-sided p-value:
    twice the smaller one-sided one, at most 1; kept as its log, as a threshold far in a
    tail is tested at a level as small as 1e-100).

    Under the hypothesis that both are samples of one distribution, the battles of ``a``
    at or below t, given the battles of both at or below it, are hypergeometric: each
    p-value is exact however thin a tail is. Levels that depend on the pooled shares only
    (the statistic the test conditions on) and sum to ``alpha`` over the thresholds, as
    :func:`threshold_levels` gives, keep the false-alarm rate at ``alpha`` (Bonferroni)."""
    values, ca, cb = aligned(a, b)
    below_a, below_b = np.cumsum(ca)[:-1], np.cumsum(cb)[:-1]
    below = below_a + below_b
    total = a.n + b.n
    keep = tested_thresholds(below, total, min(a.n, b.n))
    x, k = below_a[keep], below[keep]
    tail = np.minimum(
        stats.hypergeom.cdf(x, total, k, a.n), stats.hypergeom.sf(x - 1, total, k, a.n)
    )
    with np.errstate(divide="ignore"):
        log_tail = np.log(tail)
    # Below 1e-300 the tail is summed in logs (a hundred times slower, so only there).
    far = tail < 1e-300
    if far.any():
        log_tail[far] = np.minimum(
            stats.hypergeom.logcdf(x[far], total, k[far], a.n),
            stats.hypergeom.logsf(x[far] - 1, total, k[far], a.n),
        )
    log_p = np.minimum(0.0, math.log(2) + log_tail)
    return CdfComparison(values[:-1][keep], x / a.n, below_b[keep] / b.n, k / total, log_p)


def standard_error(pooled: np.ndarray, n_a: int, n_b: int) -> np.ndarray:
    """The standard error of the difference of two CDFs at a pooled share ``pooled``."""
    return np.asarray(np.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b)))


def critical_values(
    pooled: np.ndarray, n_fixed: int, n_moved: int, spread: float, shift: float = ONE_POINT
) -> np.ndarray:
    """The two-sided critical z of each CDF threshold (pooled share ``pooled``) in a
    family spread by ``spread`` (:func:`threshold_levels`): the largest z at which a
    ``shift`` of the CDF of the sample of ``n_moved`` battles against the one of
    ``n_fixed``, either way, is seen with power ``Phi(spread)`` (:func:`threshold_power`).
    """
    pooled = np.asarray(pooled, float)
    total = n_fixed + n_moved
    se0 = standard_error(pooled, n_fixed, n_moved)
    margin = shift - (1 / n_fixed + 1 / n_moved) / 2
    critical = np.full(pooled.shape, np.inf)
    for move in (shift, -shift):
        fixed = pooled - move * n_moved / total
        moved = fixed + move
        possible = (fixed >= 0) & (fixed <= 1) & (moved >= 0) & (moved <= 1)
        fixed, moved = np.clip(fixed, 0, 1), np.clip(moved, 0, 1)
        se1 = np.sqrt(fixed * (1 - fixed) / n_fixed + moved * (1 - moved) / n_moved)
        z = (margin - spread * se1) / np.where(se0 > 0, se0, 1.0)
        critical = np.where(possible & (se0 > 0), np.minimum(critical, z), critical)
    return np.asarray(critical)


def log_levels(critical: np.ndarray) -> np.ndarray:
    """The natural log of the two-sided level of each critical z (at most log 1)."""
    return np.asarray(np.minimum(0.0, math.log(2) + stats.norm.logsf(critical)))


def threshold_spread(
    pooled: np.ndarray, n_fixed: int, n_moved: int, alpha: float, shift: float = ONE_POINT
) -> float:
    """The ``spread`` at which the levels of the thresholds at pooled shares ``pooled``
    (:func:`critical_values`) sum to ``alpha`` (:func:`threshold_levels`)."""
    pooled = np.asarray(pooled, float)

    def excess(spread: float) -> float:
        logs = log_levels(critical_values(pooled, n_fixed, n_moved, spread, shift))
        top = float(logs.max())
        return top + math.log(float(np.exp(logs - top).sum())) - math.log(alpha)

    # As spread falls every level falls to 0 (a shift always has some error), and as it
    # rises every level rises to 1 (and alpha < 1): widen the bracket until it holds.
    low, high = -40.0, 40.0
    while excess(low) > 0:
        low *= 2
    while excess(high) < 0:
        high *= 2
    return float(optimize.brentq(excess, low, high, xtol=1e-12))


def threshold_levels(
    pooled: np.ndarray, n_fixed: int, n_moved: int, alpha: float, shift: float = ONE_POINT
) -> np.ndarray:
    """Levels for CDF thresholds (pooled shares at or below them ``pooled``) that sum to
    ``alpha`` and give each the same power, ``Phi(spread)``, against a ``shift`` of the
    CDF of the sample of ``n_moved`` battles (either way) against the one of ``n_fixed``:
    a weighted Bonferroni. A shift reaches more standard errors where the CDF is near 0 or
    1 (the error is smallest there), so a threshold in a tail needs a far smaller level
    than one near the median for the same power, and the weakest thresholds get more of
    ``alpha`` than an even split would give them. The levels depend on the pooled shares
    only, so the family stays at ``alpha`` (:func:`cdf_test`)."""
    pooled = np.asarray(pooled, float)
    if pooled.size == 0:
        return pooled
    spread = threshold_spread(pooled, n_fixed, n_moved, alpha, shift)
    return np.exp(log_levels(critical_values(pooled, n_fixed, n_moved, spread, shift)))


def threshold_power(
    below: float, n_fixed: int, n_moved: int, critical: float, shift: float = ONE_POINT
) -> float:
    """Power of one threshold of :func:`cdf_test` at the two-sided critical z ``critical``
    when the sample of ``n_fixed`` battles has a share ``below`` at or below it and the
    one of ``n_moved`` that share plus ``shift`` (negative: less).

    The difference of the two CDFs is about normal, with standard error ``se1`` under the
    shift and ``se0`` (from the pooled share) under the hypothesis the test standardizes
    by; Fisher's test is the z-test with the continuity correction of half a battle, so
    the power is ``Phi((|d| - c - z se0) / se1) + Phi((-|d| - c - z se0) / se1)`` with
    ``c = (1/n_fixed + 1/n_moved) / 2``. A threshold the shift leaves untested
    (:func:`tested_thresholds`) has power 0."""
    total = n_fixed + n_moved
    moved = below + shift
    pooled = (n_fixed * below + n_moved * moved) / total
    if not tested_thresholds(np.array([pooled * total]), total, min(n_fixed, n_moved))[0]:
        return 0.0
    se0 = float(standard_error(np.array(pooled), n_fixed, n_moved))
    se1 = math.sqrt(below * (1 - below) / n_fixed + moved * (1 - moved) / n_moved)
    d = abs(shift) - (1 / n_fixed + 1 / n_moved) / 2
    return float(
        stats.norm.cdf((d - critical * se0) / se1) + stats.norm.cdf((-d - critical * se0) / se1)
    )


def cdf_power(histogram: Histogram, n_other: int, spread: float, shift: float = ONE_POINT) -> float:
    """The smallest power of :func:`cdf_test` between a sample like ``histogram`` and one
    of ``n_other`` battles with ``shift`` of probability moved from a value that holds it
    to a neighbouring one, either way (a column of one value: to a value it never takes),
    each threshold at its critical value in a family spread by ``spread``
    (:func:`critical_values` of the pooled share the move leaves). The move changes the
    CDF at the one threshold between the two values (:func:`threshold_power`)."""
    n = histogram.n
    p = histogram.counts / n
    below = np.cumsum(p)[:-1]
    moves = [(float(below[k]), -shift) for k in range(below.size) if p[k] >= shift]
    moves += [(float(below[k]), shift) for k in range(below.size) if p[k + 1] >= shift]
    if p.size == 1:  # to a value above it (below it is the same, mirrored)
        moves = [(1.0, -shift)]
    if not moves:  # no value holds a point: one moved across any threshold it can cross
        moves = [(f, d) for f in below.tolist() for d in (-shift, shift) if 0 <= f + d <= 1]
    powers = []
    for share, move in moves:
        pooled = share + move * n_other / (n + n_other)
        critical = float(critical_values(np.array([pooled]), n, n_other, spread, shift)[0])
        powers.append(threshold_power(share, n, n_other, critical, move))
    return min(powers)
