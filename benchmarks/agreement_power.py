"""The power of each kernel-against-reference agreement test at three stages:
``python benchmarks/agreement_power.py``.

*Now*: :func:`simulator.testing.agreement_power` of each case's stored sample against the
kernel battles its test runs (tests/reference/cases.py), as the tests' docstrings state
it: the winner by chi-square, every other column by the CDF comparison, a one-point move
between neighbouring values.

*Chi-square*: the first stored samples (EARLIER battles, the sizes the winner alone
needed) through the first whole-distribution test: every column by a chi-square on
pooled bins, 0.001 shared as half to the winner and half evenly over the other columns;
each other column's figure is the weakest power of its chi-square (noncentral) to see one
point moved between neighbouring pooled bins, at the stored sample's probabilities.

*Before*: the tests before stored samples, a fresh pure-Python sample of 1,500-4,000
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

from simulator.histogram_tests import pool_bins, shift_power
from simulator.results.stats import Histogram
from simulator.testing import (
    ALPHA,
    ONE_POINT,
    agreement_power,
    column_power,
    scaled_histogram,
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


#: Reference battles of each case's first stored sample (sized for the winner alone).
EARLIER = {
    "olympia--open_field_rear_archers": 20_000,
    "olympia--tower_catapult_shielding": 50_000,
    "olympia--alternating_peasants_items_blessed": 20_000,
    "olympia--ship_wind_pirates": 20_000,
    "olympia--swamp_rain_last_man": 60_000,
    "age_of_gods--volley_rear_archers_pikes": 50_000,
    "age_of_gods--knights_mountain_shielding": 100_000,
    "age_of_gods--tower_wind_fleeing": 25_000,
    "age_of_gods--hiding_behind_a_thin_front": 70_000,
    "age_of_gods--control_limits_blessed_items": 70_000,
    "age_of_gods--special_attack_swamp": 45_000,
    "blocks--field_battle": 50_000,
    "blocks--field_reserves": 20_000,
    "blocks--storm": 60_000,
    "blocks--siege_attrition": 20_000,
    "blocks--relief": 20_000,
    "blocks--listed_ties_and_retreats": 60_000,
    "blocks--withdraw_when_weaker_then_storm": 20_000,
    "blocks--relief_with_storm_and_sally": 20_000,
    "blocks--besieged_attacker_sallies_over_turns": 100_000,
    "confrontation--attack": 40_000,
    "confrontation--bombard": 40_000,
    "confrontation--morale_cascade": 40_000,
    "confrontation--open_field": 20_000,
    "confrontation--strike": 55_000,
    "confrontation--attack-flat1": 30_000,
    "confrontation--attack-nearby2-cycle": 20_000,
    "confrontation--open-field-alternate": 20_000,
    "skirmish--cavalry_charge": 20_000,
    "skirmish--archers_and_healer": 60_000,
    "skirmish--three_way_field": 20_000,
    "skirmish--example_units": 45_000,
    "skirmish--engine-cavalry_charge": 20_000,
    "skirmish--engine-archers_and_healer": 30_000,
    "skirmish--engine-three_way_field": 20_000,
    "skirmish--engine-example_units": 75_000,
    "skirmish--engine-exact-cavalry_charge": 20_000,
    "skirmish--inline_sampled5": 20_000,
}


def chi_square_power(histogram: Histogram, n_other: int, alpha: float) -> float:
    """The weakest power of a column's chi-square on pooled bins to see one point moved
    between two neighbouring bins, either way (a column of one value: to a new value)."""
    n = histogram.n
    bins = pool_bins(histogram.counts * (n + n_other) / n, min(n, n_other) / (n + n_other))
    q = np.bincount(bins, histogram.counts).astype(float) / n
    if q.size == 1:
        return shift_power(np.array([1.0, 0.0]), [(0, 1)], n, n_other, alpha)
    moves = [(j, j + 1) for j in range(q.size - 1) if q[j] >= ONE_POINT]
    moves += [(j + 1, j) for j in range(q.size - 1) if q[j + 1] >= ONE_POINT]
    return shift_power(q, moves, n, n_other, alpha)


def chi_square(case: Case) -> tuple[int, float] | None:
    """The first stored sample's size and its weakest other column's chi-square power
    (None: the case came after the chi-square test, as age_of_gods' engine cases)."""
    if case.key not in EARLIER:
        return None
    battles = EARLIER[case.key]
    columns = tally_histograms(load_sample(case))
    others = [c for c in columns if c != "winner"]
    alpha = ALPHA / 2 / len(others)
    kernel = KERNEL_BATTLES[case.ruleset]
    powers = [
        chi_square_power(scaled_histogram(columns[c], battles), kernel, alpha) for c in others
    ]
    return battles, min(powers)


def before(case: Case) -> tuple[int, float, float] | None:
    """The old test's reference battles, winner's power and weakest other column's
    (None: the case had no test then, as the skirmish engine-* cases)."""
    if case.key not in EARLIER or (case.ruleset == "skirmish" and case.name not in BEFORE_SKIRMISH):
        return None
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
        "| case | reference battles before / chi-square / now | winner before | winner now |"
        " other columns before (means only) | chi-square | now (CDF) |"
    )
    print("|---|---|---|---|---|---|---|")
    for case in CASES:
        if stale_reason(case) is not None:
            print(f"| {case.key} | {stale_reason(case)} |")
            continue
        old = before(case)
        n_before, winner_before, other_before = (
            (f"{old[0]:,}", f"{old[1]:.3f}", f"{old[2]:.3f}") if old else ("-", "", "")
        )
        earlier = chi_square(case)
        n_earlier, other_earlier = (
            (f"{earlier[0]:,}", f"{earlier[1]:.2f}") if earlier else ("-", "")
        )
        sample = load_sample(case)
        power = agreement_power(sample, KERNEL_BATTLES[case.ruleset])
        winner = power.pop("winner")
        print(
            f"| {case.ruleset}: {case.name} | {n_before} / {n_earlier} / {sample.battles:,} |"
            f" {winner_before} | {winner:.2f} | {other_before} | {other_earlier} |"
            f" {min(power.values()):.2f} |"
        )


if __name__ == "__main__":
    main()
