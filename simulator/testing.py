"""The statistical checks battle-odds' own rulesets pass, for any ruleset's tests.

A ruleset (built-in or a plugin) is trusted when three things hold, each a function here
returning the list of what failed (empty: it passed), so a test reads
``assert check(...) == []`` and a failure prints what differed:

* :func:`reference_agreement`: the kernel and a slow pure-Python reference written from
  the rules give the same distribution of every outcome column (:func:`tally_differences`
  the same against a large stored reference sample of exact histograms, with the power
  of the comparison computed by :func:`agreement_power`);
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

from .histogram_tests import (
    MIN_EXPECTED,
    ONE_POINT,
    cdf_power,
    cdf_test,
    critical_values,
    histogram_test,
    log_levels,
    pool_bins,
    pooled_table,
    shift_power,
    tested_thresholds,
    threshold_spread,
)
from .results.stats import Histogram, Tally, wilson
from .running.runner import simulate
from .scenario.scenario import Scenario

__all__ = [
    "ALPHA",
    "MIN_EXPECTED",
    "ONE_POINT",
    "WINNER_SHARE",
    "Reference",
    "agreement_power",
    "cdf_test",
    "column_power",
    "exact_agreement",
    "exact_within_intervals",
    "histogram_test",
    "interval_contains",
    "ordered_differences",
    "ordered_spread",
    "pool_bins",
    "pooled_mean_test",
    "pooled_table",
    "reference_agreement",
    "reproducibility",
    "same_distribution",
    "scaled_histogram",
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

#: The winner's share of an agreement check's false-alarm rate; the rest is spread over
#: the CDF thresholds of every other column so that a one-point shift is seen equally well
#: at each (:func:`simulator.histogram_tests.threshold_levels`).
WINNER_SHARE = 0.5


def tally_histograms(tally: Tally) -> dict[str, Histogram]:
    """Every outcome column of a tally as a histogram, the winner and steps first."""
    wins = Histogram(np.arange(len(tally.wins), dtype=np.int64), tally.wins.copy())
    wins = Histogram(wins.values[wins.counts > 0], wins.counts[wins.counts > 0])
    return {"winner": wins, "steps": tally.steps, **tally.columns}


def tally_differences(
    kernel: Tally, reference: Tally, alpha: float = ALPHA, kernel_only: Sequence[str] = ()
) -> list[str]:
    """What differs between a kernel's tally and a reference's: any column one side
    reports and the other does not (a reference column missing from the kernel is allowed
    when it is always 0, a kernel column when it is named in ``kernel_only``), then the
    winner if its distribution differs by the chi-square test of :func:`histogram_test`
    at ``alpha`` times :data:`WINNER_SHARE`, then every other (ordered) column whose CDF
    differs at some threshold by :func:`cdf_test`, the rest of ``alpha`` spread over all
    their thresholds by :func:`simulator.histogram_tests.threshold_levels` (by
    :func:`ordered_differences`): the family-wise false-alarm rate is ``alpha``."""
    ours, theirs = tally_histograms(kernel), tally_histograms(reference)
    failures = [f"column {c} only in the kernel" for c in ours if c not in theirs]
    failures = [f for f in failures if f.split()[1] not in kernel_only]
    failures += [
        f"column {c} only in the reference (values {h.values.tolist()})"
        for c, h in theirs.items()
        if c not in ours and h.values.tolist() not in ([], [0])
    ]
    shared = [c for c in theirs if c in ours]
    rest = alpha
    if "winner" in shared:
        rest = alpha * (1 - WINNER_SHARE)
        p = histogram_test(ours["winner"], theirs["winner"])
        if p < alpha * WINNER_SHARE:
            failures.append(
                f"winner: distributions differ (chi-square p={p:.2g},"
                f" level {alpha * WINNER_SHARE:.2g}; wins {ours['winner'].counts.tolist()}"
                f" kernel, {theirs['winner'].counts.tolist()} reference)"
            )
    ordered = [c for c in shared if c != "winner"]
    return failures + ordered_differences(
        {c: ours[c] for c in ordered}, {c: theirs[c] for c in ordered}, rest
    )


def ordered_differences(
    kernel: Mapping[str, Histogram], reference: Mapping[str, Histogram], alpha: float
) -> list[str]:
    """The columns (ordered values, the same battles in each) whose CDFs differ between
    the kernel's histograms and the reference's: :func:`cdf_test` at every threshold, at
    the levels of a weighted Bonferroni over all the columns' thresholds that sum to
    ``alpha`` (:func:`threshold_spread`, :func:`critical_values`)."""
    tests = {c: cdf_test(kernel[c], reference[c]) for c in reference}
    pooled = np.concatenate([np.zeros(0), *(t.pooled for t in tests.values())])
    if pooled.size == 0:
        return []
    n_kernel = next(iter(kernel.values())).n
    n_reference = next(iter(reference.values())).n
    spread = threshold_spread(pooled, n_reference, n_kernel, alpha)
    failures = []
    for column, test in tests.items():
        log_level = log_levels(critical_values(test.pooled, n_reference, n_kernel, spread))
        if (test.log_p < log_level).any():
            i = int(np.argmin(test.log_p - log_level))
            failures.append(
                f"{column}: distributions differ at {test.upto[i]} (P(<= {test.upto[i]})"
                f" {test.cdf_a[i]:.4f} kernel, {test.cdf_b[i]:.4f} reference;"
                f" p={math.exp(test.log_p[i]):.2g}, level {math.exp(log_level[i]):.2g};"
                f" means {kernel[column].mean():.4g} kernel, {reference[column].mean():.4g}"
                " reference)"
            )
    return failures


def column_power(
    histogram: Histogram,
    n_other: int,
    alpha: float,
    shift: float = ONE_POINT,
    winner: bool = False,
) -> float:
    """The power of the test of one column at false-alarm rate ``alpha`` between a sample
    like ``histogram`` and one of ``n_other`` battles with ``shift`` of probability moved.
    The winner's chi-square: between the attacker's wins and each other outcome, either
    way (the weakest counts). Any other column: :func:`cdf_power`, between neighbouring
    values, either way (the weakest counts), ``alpha`` spread over the column's own
    thresholds (:func:`agreement_power` spreads it over every column's)."""
    if not winner:
        return cdf_power(histogram, n_other, ordered_spread({"x": histogram}, n_other, alpha))
    n = histogram.n
    total = histogram.counts * (n + n_other) / n
    bins = pool_bins(total, min(n, n_other) / (n + n_other))
    q = np.bincount(bins, histogram.counts).astype(float) / n
    if q.size == 1:
        return shift_power(np.array([1.0, 0.0]), [(0, 1)], n, n_other, alpha, shift)
    # One point of the attacker's wins to another outcome or one more point of them
    # from another: the weakest counts. An attacker who never wins gets a bin of his
    # own (a shift would show him winning).
    if histogram.values[0] == 0:
        attacker = int(bins[0])
    else:
        q, attacker = np.append(q, 0.0), q.size
    moves = [(attacker, b) for b in range(q.size) if b != attacker and q[attacker] >= shift]
    moves += [(b, attacker) for b in range(q.size) if b != attacker and q[b] >= shift]
    return shift_power(q, moves, n, n_other, alpha, shift)


def scaled_histogram(histogram: Histogram, battles: int) -> Histogram:
    """A histogram of ``battles`` battles with about the distribution of ``histogram``
    (counts rounded; values left with none dropped)."""
    counts = np.round(histogram.counts * battles / histogram.n).astype(np.int64)
    keep = counts > 0
    return Histogram(histogram.values[keep], counts[keep])


def ordered_spread(
    columns: Mapping[str, Histogram], n_other: int, alpha: float, shift: float = ONE_POINT
) -> float:
    """The spread of :func:`threshold_levels` over the CDF thresholds that comparing
    samples like ``columns`` with ones of ``n_other`` battles of the same distribution
    tests (a family at ``alpha``; each threshold's level is :func:`level_at`)."""
    pooled = []
    for h in columns.values():
        n = h.n
        shares = np.cumsum(h.counts)[:-1] / n
        pooled.append(
            shares[tested_thresholds(shares * (n + n_other), n + n_other, min(n, n_other))]
        )
    n = next(iter(columns.values())).n
    shares = np.concatenate(pooled)
    if shares.size == 0:  # nothing varies: a shift would make the one threshold tested
        shares = np.array([1 - shift * n_other / (n + n_other)])
    return threshold_spread(shares, n, n_other, alpha, shift)


def agreement_power(
    reference: Tally,
    kernel_battles: int,
    alpha: float = ALPHA,
    shift: float = ONE_POINT,
    reference_battles: int | None = None,
) -> dict[str, float]:
    """The power of :func:`tally_differences` against a kernel of ``kernel_battles``
    battles whose distribution is the reference's with ``shift`` moved in one column,
    per column: the winner's chi-square at its share of ``alpha`` (:func:`column_power`),
    every other column's CDF thresholds at their levels in the rest of ``alpha``
    (:func:`cdf_power`, :func:`ordered_spread`). ``reference_battles``: as if the
    reference had that many battles (to size a sample), with the distribution it has."""
    columns = tally_histograms(reference)
    if reference_battles is not None:
        columns = {c: scaled_histogram(h, reference_battles) for c, h in columns.items()}
    ordered = {c: h for c, h in columns.items() if c != "winner"}
    power = {}
    if "winner" in columns:
        power["winner"] = column_power(
            columns["winner"], kernel_battles, alpha * WINNER_SHARE, shift, winner=True
        )
    if ordered:
        rest = alpha * (1 - WINNER_SHARE) if "winner" in columns else alpha
        spread = ordered_spread(ordered, kernel_battles, rest, shift)
        power.update({c: cdf_power(h, kernel_battles, spread, shift) for c, h in ordered.items()})
    return power


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
    # The winner codes: 0 attacker, 1 defender, 2 draw, 3 / 4 a side withdrew
    # (kernels/stops.py), the last two in an answer only when a side has a stop rule.
    outcomes = ("attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew")
    for code, outcome in enumerate(outcomes):
        if outcome not in answer.win:
            continue
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
