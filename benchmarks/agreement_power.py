"""The power of each kernel-against-reference agreement test, before and after the stored
reference samples: ``python benchmarks/agreement_power.py``.

*After*: :func:`simulator.testing.agreement_power` of each case's stored sample against
the kernel battles its test runs (tests/reference/cases.py), as the tests' docstrings
state it. *Before*: the tests as they were, a fresh pure-Python sample of 1,500-4,000
battles against 20,000-100,000 kernel battles through the old ``same_distribution``
(chi-square on the winner, a t-test of the means on every other column, 0.001 shared
equally over the columns): the winner's power from the noncentral chi-square at the
stored sample's probabilities, and each other column's the power of its t-test to see
one point of probability moved between two values one apart (its mean moves by 0.01).
A change of shape that keeps the mean was never seen (power = its false-alarm rate).
Prints a Markdown table (docs/testing.md quotes it).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.results.stats import Histogram
from simulator.testing import (
    ALPHA,
    ONE_POINT,
    agreement_power,
    column_power,
    tally_histograms,
)
from tests.reference.cases import CASES, KERNEL_BATTLES, Case
from tests.reference.generate import load_sample, stale_reason

#: (kernel battles, reference battles) of each ruleset's agreement test before.
BEFORE = {
    "olympia": (100_000, 1_500),
    "age_of_gods": (50_000, 1_500),
    "blocks": (30_000, 3_000),
    "confrontation": (20_000, 2_500),
}
BEFORE_SKIRMISH = {
    "cavalry_charge": (40_000, 4_000),
    "archers_and_healer": (40_000, 4_000),
    "three_way_field": (40_000, 3_000),
    "example_units": (20_000, 2_000),
    "inline_sampled5": (40_000, 3_000),
}


def before(case: Case) -> tuple[int, float, float]:
    kernel, reference = (
        BEFORE_SKIRMISH[case.name] if case.ruleset == "skirmish" else BEFORE[case.ruleset]
    )
    columns = tally_histograms(load_sample(case))
    alpha = ALPHA / len(columns)
    wins = columns["winner"]
    counts = np.round(wins.counts * reference / wins.n).astype(np.int64)
    scaled = Histogram(wins.values[counts > 0], counts[counts > 0])
    winner = column_power(scaled, kernel, alpha, winner=True)
    z = float(stats.norm.isf(alpha / 2))
    weakest = 1.0
    for name, h in columns.items():
        if name == "winner" or h.std() == 0:
            continue
        se = h.std() * math.sqrt(1 / reference + 1 / kernel)
        shift = ONE_POINT / se
        weakest = min(weakest, float(stats.norm.sf(z - shift) + stats.norm.cdf(-z - shift)))
    return reference, winner, weakest


def main() -> None:
    print(
        "| case | reference battles before / after | winner before | winner after |"
        " other columns before (means only) | other columns after (whole distribution) |"
    )
    print("|---|---|---|---|---|---|")
    for case in CASES:
        if stale_reason(case) is not None:
            print(f"| {case.key} | {stale_reason(case)} |")
            continue
        n_before, winner_before, other_before = before(case)
        power = agreement_power(load_sample(case), KERNEL_BATTLES[case.ruleset])
        winner = power.pop("winner")
        print(
            f"| {case.ruleset}: {case.name} | {n_before:,} / {load_sample(case).battles:,} |"
            f" {winner_before:.3f} | {winner:.2f} | {other_before:.3f} |"
            f" {min(power.values()):.2f} |"
        )


if __name__ == "__main__":
    main()
