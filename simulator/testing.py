"""The statistical checks battle-odds' own rulesets pass, for any ruleset's tests.

A ruleset (built-in or a plugin) is trusted when three things hold, each a function here
returning the list of what failed (empty: it passed), so a test reads
``assert check(...) == []`` and a failure prints what differed:

* :func:`reference_agreement`: the kernel and a slow pure-Python reference written from
  the rules give the same distribution of every outcome column;
* :func:`reproducibility`: battle i of seed s is the same battle on one thread and on
  all, in any chunking and from any first battle;
* :func:`exact_agreement` (rulesets with an exact solver): the exact probabilities and
  expectations lie inside the simulation's intervals.

Every check is a test of a random process with a fixed seed and a family-wise false-alarm
rate of :data:`ALPHA` (or the confidence given): a correct ruleset passes on every run,
and a rule changed enough to matter is flagged. Needs SciPy (``battle-odds[testing]``).
See docs/writing-a-ruleset.md, "Testing a ruleset".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numba
import numpy as np
from scipy import stats

from .results.stats import Histogram, Tally, wilson
from .running.runner import simulate
from .scenario.scenario import Scenario

__all__ = [
    "ALPHA",
    "MIN_EXPECTED",
    "ONE_POINT",
    "Reference",
    "agreement_power",
    "column_alphas",
    "column_power",
    "exact_agreement",
    "exact_within_intervals",
    "histogram_test",
    "interval_contains",
    "pool_bins",
    "pooled_mean_test",
    "pooled_table",
    "reference_agreement",
    "reproducibility",
    "same_distribution",
    "shift_power",
    "simulate_rows",
    "tally_agreement",
    "tally_differences",
    "tally_histograms",
]

#: Family-wise false-alarm rate of one agreement check (all its columns together).
ALPHA = 0.001

#: A pure-Python reference: (validated model, battles, seed) -> outcome columns.
Reference = Callable[[Any, int, int], Mapping[str, Sequence[int] | np.ndarray]]


def interval_contains(successes: int, n: int, p: float, confidence: float = 0.999) -> bool:
    """Whether the Wilson interval of ``successes`` in ``n`` at ``confidence`` holds ``p``."""
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
    a: Mapping[str, Any], b: Mapping[str, Any], columns: list[str] | None = None
) -> list[str]:
    """Columns whose distributions differ between two samples (empty: they agree).

    Every column's whole distribution is compared by a chi-square test of its histograms
    with sparse values pooled (:func:`pooled_table`), so a change of shape that keeps
    the mean is seen; every column but the winner also by a t-test of the means with the
    pooled variance (under the hypothesis that both samples come from one distribution
    the pooled variance is its estimate, and it stays sound for rare events that one small
    sample never shows), which sees a small shift of a wide column sooner. Bonferroni over
    the tests keeps the family-wise false-alarm rate at ALPHA.
    """
    columns = columns or [c for c in a if c in b]
    tests = sum(1 if column == "winner" else 2 for column in columns)
    alpha = ALPHA / tests
    failures = []
    for column in columns:
        x, y = np.asarray(a[column]), np.asarray(b[column])
        if x.std() == 0 and y.std() == 0:
            if x[0] != y[0]:
                failures.append(f"{column}: constant {x[0]} vs {y[0]}")
            continue
        p = histogram_test(Histogram.of(x), Histogram.of(y))
        if p < alpha:
            failures.append(f"{column}: distributions differ (chi-square p={p:.2g})")
        if column != "winner":
            p = pooled_mean_test(x, y)
            if p < alpha:
                failures.append(f"{column}: p={p:.2g} (means {x.mean():.4g} vs {y.mean():.4g})")
    return failures


# --- whole distributions from exact histograms, and the power of comparing them ---------

#: Sparse values are pooled until each bin expects this many battles in the smaller sample
#: (the usual condition for the chi-square approximation of the homogeneity test).
MIN_EXPECTED = 5.0
#: The shift an agreement test is sized to see: one point of probability (1% of the
#: battles) moved from one value of a column (or outcome) to a neighbouring one.
ONE_POINT = 0.01


def _aligned(a: Histogram, b: Histogram) -> tuple[np.ndarray, np.ndarray]:
    """The counts of ``a`` and ``b`` over the union of their values, in value order."""
    values = np.union1d(a.values, b.values)
    ca = np.zeros(values.size, np.int64)
    cb = np.zeros(values.size, np.int64)
    ca[np.searchsorted(values, a.values)] = a.counts
    cb[np.searchsorted(values, b.values)] = b.counts
    return ca, cb


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
    ca, cb = _aligned(a, b)
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


def tally_histograms(tally: Tally) -> dict[str, Histogram]:
    """Every outcome column of a tally as a histogram, the winner and steps first."""
    wins = Histogram(np.arange(len(tally.wins), dtype=np.int64), tally.wins.copy())
    wins = Histogram(wins.values[wins.counts > 0], wins.counts[wins.counts > 0])
    return {"winner": wins, "steps": tally.steps, **tally.columns}


def column_alphas(columns: Sequence[str], alpha: float = ALPHA) -> dict[str, float]:
    """The false-alarm rate of each column's test in a family at ``alpha``: half to the
    winner (the headline answer), the other half shared by the other columns."""
    others = [c for c in columns if c != "winner"]
    if "winner" not in columns:
        return {c: alpha / len(others) for c in others}
    if not others:
        return {"winner": alpha}
    return {"winner": alpha / 2, **{c: alpha / 2 / len(others) for c in others}}


def tally_differences(
    kernel: Tally, reference: Tally, alpha: float = ALPHA, kernel_only: Sequence[str] = ()
) -> list[str]:
    """What differs between a kernel's tally and a reference's: any column one side
    reports and the other does not (a reference column missing from the kernel is allowed
    when it is always 0, a kernel column when it is named in ``kernel_only``), then every
    column whose whole distribution differs by the chi-square test of
    :func:`histogram_test`, at the rates of :func:`column_alphas` (family-wise ``alpha``)."""
    ours, theirs = tally_histograms(kernel), tally_histograms(reference)
    failures = [f"column {c} only in the kernel" for c in ours if c not in theirs]
    failures = [f for f in failures if f.split()[1] not in kernel_only]
    failures += [
        f"column {c} only in the reference (values {h.values.tolist()})"
        for c, h in theirs.items()
        if c not in ours and h.values.tolist() not in ([], [0])
    ]
    shared = [c for c in theirs if c in ours]
    for column, rate in column_alphas(shared, alpha).items():
        p = histogram_test(ours[column], theirs[column])
        if p < rate:
            failures.append(
                f"{column}: distributions differ (chi-square p={p:.2g}, level {rate:.2g};"
                f" means {ours[column].mean():.4g} kernel, {theirs[column].mean():.4g}"
                " reference)"
            )
    return failures


def shift_power(
    probabilities: np.ndarray,
    moves: Sequence[tuple[int, int]],
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


def column_power(
    histogram: Histogram,
    n_other: int,
    alpha: float,
    shift: float = ONE_POINT,
    winner: bool = False,
) -> float:
    """Power of :func:`histogram_test` between a sample like ``histogram`` and one of
    ``n_other`` battles with ``shift`` of probability moved: for the winner, between the
    attacker's wins and each other outcome, either way (the weakest counts); for any other
    column, between any two neighbouring pooled bins, either way (the weakest counts); for
    a column of one value, to a value it never takes."""
    n = histogram.n
    total = histogram.counts * (n + n_other) / n
    bins = pool_bins(total, min(n, n_other) / (n + n_other))
    q = np.bincount(bins, histogram.counts).astype(float) / n
    if q.size == 1:
        return shift_power(np.array([1.0, 0.0]), [(0, 1)], n, n_other, alpha, shift)
    if winner:
        # One point of the attacker's wins to another outcome or one more point of them
        # from another: the weakest counts. An attacker who never wins gets a bin of his
        # own (a shift would show him winning).
        if histogram.values[0] == 0:
            attacker = int(bins[0])
        else:
            q, attacker = np.append(q, 0.0), q.size
        moves = [(attacker, b) for b in range(q.size) if b != attacker and q[attacker] >= shift]
        moves += [(b, attacker) for b in range(q.size) if b != attacker and q[b] >= shift]
    else:
        moves = [(j, j + 1) for j in range(q.size - 1) if q[j] >= shift]
        moves += [(j + 1, j) for j in range(q.size - 1) if q[j + 1] >= shift]
    return shift_power(q, moves, n, n_other, alpha, shift)


def agreement_power(
    reference: Tally, kernel_battles: int, alpha: float = ALPHA, shift: float = ONE_POINT
) -> dict[str, float]:
    """The power of :func:`tally_differences` against a kernel of ``kernel_battles``
    battles whose distribution is the reference's with ``shift`` moved in one column
    (:func:`column_power`), per column, at the column's rate in a family at ``alpha``."""
    columns = tally_histograms(reference)
    rates = column_alphas(list(columns), alpha)
    return {
        name: column_power(h, kernel_battles, rates[name], shift, winner=name == "winner")
        for name, h in columns.items()
    }


def tally_agreement(
    scenario: Scenario,
    reference: Tally,
    *,
    battles: int,
    seed: int = 1,
    kernel_only: Sequence[str] = (),
) -> list[str]:
    """:func:`tally_differences` of ``battles`` kernel battles of ``seed`` (counted
    straight into a tally, no rows kept) and a stored reference tally."""
    kernel = simulate(scenario, battles, seed, keep_battles=False).tally
    return tally_differences(kernel, reference, kernel_only=kernel_only)


def simulate_rows(
    scenario: Scenario, battles: int, seed: int, **options: Any
) -> dict[str, np.ndarray]:
    """The per-battle outcome columns of a run (``simulate`` keeping its rows)."""
    rows = simulate(scenario, battles, seed, keep_battles=True, **options).rows
    if rows is None:
        raise AssertionError("the run kept no rows")
    return rows


def reference_agreement(
    scenario: Scenario,
    reference: Reference,
    *,
    battles: int = 50_000,
    reference_battles: int = 2_000,
    seed: int = 1,
    columns: list[str] | None = None,
) -> list[str]:
    """What differs between the kernel (``battles`` battles of ``seed``) and the
    reference (``reference_battles`` of ``seed + 1``): first any column only one of them
    reports, then every column whose distribution differs (:func:`same_distribution`).

    ``columns`` restricts the comparison (and the column check) to those columns."""
    kernel = simulate_rows(scenario, battles, seed)
    slow = reference(scenario.model, reference_battles, seed + 1)
    slow = {name: np.asarray(column) for name, column in slow.items()}
    if columns is None:
        only = sorted(set(kernel) ^ set(slow))
        if only:
            return [f"columns reported by one side only: {', '.join(only)}"]
    return same_distribution(kernel, slow, columns)


def reproducibility(
    scenario: Scenario, battles: int = 3_000, seed: int = 1, chunks: Sequence[int] = (1_000, 77)
) -> list[str]:
    """What differs between runs of the same battles: one thread against all threads
    (at least two are needed to mean anything), each chunk size in ``chunks``, and the
    last third of the battles run on its own from its first battle (``first=``)."""
    if numba.config.NUMBA_NUM_THREADS < 2:  # type: ignore[attr-defined]
        return ["the thread check needs a machine with 2 or more cores"]
    one = simulate_rows(scenario, battles, seed, threads=1)
    runs = {"all threads": simulate_rows(scenario, battles, seed)}
    for chunk in chunks:
        runs[f"chunks of {chunk}"] = simulate_rows(scenario, battles, seed, chunk=chunk)
    start = battles - battles // 3
    tail = simulate_rows(scenario, battles - start, seed, first=start)
    failures = []
    for how, rows in runs.items():
        failures += [
            f"{how}: column {c} differs from one thread"
            for c in one
            if c not in rows or not np.array_equal(one[c], rows[c])
        ]
    failures += [
        f"battles {start}.. run alone: column {c} differs"
        for c in one
        if c not in tail or not np.array_equal(one[c][start:], tail[c])
    ]
    return failures


def exact_within_intervals(
    answer: Any, rows: Mapping[str, np.ndarray], confidence: float = 0.999
) -> list[str]:
    """What of an exact answer (:class:`simulator.rulesets.ExactResult`) lies outside the
    intervals of the simulated ``rows``: each win probability against its Wilson interval
    at ``confidence``; the means of ``steps``, every casualty and every extra by a
    z-test, Bonferroni over the columns so the family is at ``confidence``."""
    n = len(rows["winner"])
    z_win = float(stats.norm.isf((1 - confidence) / 2))
    failures = []
    for code, outcome in enumerate(("attacker", "defender", "draw")):
        hits = int((rows["winner"] == code).sum())
        _, lo, hi = wilson(hits, n, z_win)
        if not lo <= answer.win[outcome] <= hi:
            failures.append(
                f"P({outcome} wins) {answer.win[outcome]:.6g} outside [{lo:.6g}, {hi:.6g}]"
            )
    means = {"steps": answer.expected_steps, **answer.casualties, **answer.extras}
    z_means = float(stats.norm.isf((1 - confidence) / 2 / len(means)))
    for name, expected in means.items():
        x = np.asarray(rows[name], float)
        if x.std() == 0:
            # The same value in every battle: any other value has a chance under
            # -ln(1 - confidence) / n, and no column here moves by more than 100.
            if abs(expected - x[0]) > -math.log(1 - confidence) / n * 100:
                failures.append(f"{name}: always {x[0]} in the simulation, exact {expected:.6g}")
            continue
        # A rare event seen once or twice says little about its own spread: take the
        # larger of the sample variance and the variance the exact mean implies for a
        # column of values 0..top (for 0/1 columns, exactly p (1 - p)).
        top = max(1.0, float(x.max()))
        variance = max(x.var(ddof=1), expected * (top - expected))
        z = (x.mean() - expected) / math.sqrt(variance / n)
        if abs(z) >= z_means:
            failures.append(f"{name}: mean {x.mean():.6g}, exact {expected:.6g} (z={z:.2f})")
    return failures


def exact_agreement(
    scenario: Scenario, battles: int = 20_000, seed: int = 1, confidence: float = 0.999
) -> list[str]:
    """:func:`exact_within_intervals` of the ruleset's exact answer and a simulation of
    ``battles`` battles of ``seed``."""
    from .studies.exact import exact

    return exact_within_intervals(
        exact(scenario), simulate_rows(scenario, battles, seed), confidence
    )
