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

from .results.stats import wilson
from .running.runner import simulate
from .scenario.scenario import Scenario

__all__ = [
    "ALPHA",
    "Reference",
    "exact_agreement",
    "exact_within_intervals",
    "interval_contains",
    "pooled_mean_test",
    "reference_agreement",
    "reproducibility",
    "same_distribution",
    "simulate_rows",
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
