"""The whole-distribution comparisons of simulator.testing and the power they state.

The agreement tests' docstrings quote the power :func:`agreement_power` computes: for the
winner from the noncentral chi-square, for every other column from the normal law of the
difference of the two CDFs at the threshold a one-point move crosses. Here both figures
are checked against the rate at which the tests really flag samples drawn with the
shift, the CDF comparison is checked to keep its false-alarm rate when nothing changed,
and to see a change of shape that keeps the mean (which a test of means cannot).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from simulator.histogram_tests import (
    critical_values,
    threshold_levels,
    threshold_power,
    threshold_spread,
)
from simulator.results.stats import Histogram, Tally
from simulator.testing import (
    cdf_power,
    column_power,
    histogram_test,
    interval_contains,
    ordered_differences,
    ordered_spread,
    pooled_table,
    same_distribution,
    tally_differences,
)
from tests.reference import generate
from tests.reference.cases import cases_of

#: Repetitions of the simulated power check of the winner: the 99.9% interval of a rate is
#: then +-0.09.
REPETITIONS = 300
#: Replicate pairs of samples of the CDF checks: the 99.9% interval of a rate near one
#: half is then +-0.037, of one near 0.05 +-0.017.
REPLICATES = 2_000
#: A column of ten ordered values; its CDF crosses one half between 3 and 4.
COLUMN = np.array([0.03, 0.07, 0.12, 0.18, 0.2, 0.16, 0.11, 0.07, 0.04, 0.02])


def histogram(values: list[int], counts: np.ndarray) -> Histogram:
    keep = counts > 0
    return Histogram(np.asarray(values, np.int64)[keep], counts[keep].astype(np.int64))


def test_stated_power_of_the_winner_is_the_rate_at_which_a_shift_is_flagged() -> None:
    # A winner with a few draws: one point and a half from attacker to defender wins.
    rng = np.random.default_rng(17)
    n_reference, n_kernel, shift, alpha = 20_000, 400_000, 0.015, 5e-4
    p = np.array([0.55, 0.43, 0.02])
    moved = p + np.array([-shift, shift, 0])
    values = list(range(p.size))
    expected = histogram(values, np.round(p * n_reference).astype(np.int64))
    power = column_power(expected, n_kernel, alpha, shift, winner=True)
    assert 0.2 < power < 0.95, power  # a figure in the range where the check means something
    flagged = 0
    for _ in range(REPETITIONS):
        reference = histogram(values, rng.multinomial(n_reference, p))
        kernel = histogram(values, rng.multinomial(n_kernel, moved))
        flagged += histogram_test(kernel, reference) < alpha
    # The computed power is for the weakest move; this move is the weakest one here.
    assert interval_contains(flagged, REPETITIONS, power), (flagged / REPETITIONS, power)


@pytest.mark.slow
def test_stated_power_of_a_column_is_the_rate_at_which_a_one_point_move_is_flagged() -> None:
    """One point moved from value 4 to value 3 (the CDF at 3, 0.40, rises to 0.41):
    the power :func:`cdf_power` states for the column (the weakest move) is the rate at
    which :func:`ordered_differences` flags it, in 2,000 replicate pairs of samples."""
    rng = np.random.default_rng(23)
    n_reference, n_kernel, alpha = 20_000, 400_000, 0.01
    moved = COLUMN + np.eye(COLUMN.size)[3] * 0.01 - np.eye(COLUMN.size)[4] * 0.01
    values = list(range(COLUMN.size))
    expected = histogram(values, np.round(COLUMN * n_reference).astype(np.int64))
    spread = ordered_spread({"x": expected}, n_kernel, alpha)
    power = cdf_power(expected, n_kernel, spread)
    # This move is the weakest one, or as weak: its own power is the column's.
    pooled = 0.40 + 0.01 * n_kernel / (n_reference + n_kernel)
    critical = critical_values(np.array([pooled]), n_reference, n_kernel, spread)[0]
    assert threshold_power(0.40, n_reference, n_kernel, critical, 0.01) == pytest.approx(power)
    assert 0.3 < power < 0.7, power  # where a rate says most about the figure
    flagged = 0
    for _ in range(REPLICATES):
        reference = histogram(values, rng.multinomial(n_reference, COLUMN))
        kernel = histogram(values, rng.multinomial(n_kernel, moved))
        flagged += ordered_differences({"x": kernel}, {"x": reference}, alpha) != []
    assert interval_contains(flagged, REPLICATES, power), (flagged / REPLICATES, power)


@pytest.mark.slow
def test_no_change_is_flagged_at_no_more_than_the_family_rate() -> None:
    """Two columns, nothing changed, a family rate of 5%: the CDF comparisons (exact at
    each threshold, a weighted Bonferroni over the thresholds of both columns) flag no
    more than 5% of 2,000 replicate pairs of samples."""
    rng = np.random.default_rng(5)
    alpha, n_reference, n_kernel = 0.05, 3_000, 60_000
    other = np.array([0.6, 0.3, 0.08, 0.015, 0.004, 0.001])  # a column with a thin tail
    flagged = 0
    for _ in range(REPLICATES):
        reference, kernel = {}, {}
        for name, p in (("x", COLUMN), ("y", other)):
            values = list(range(p.size))
            reference[name] = histogram(values, rng.multinomial(n_reference, p))
            kernel[name] = histogram(values, rng.multinomial(n_kernel, p))
        flagged += ordered_differences(kernel, reference, alpha) != []
    rate = flagged / REPLICATES
    # At most alpha (Bonferroni is conservative), up to simulation error: one-sided,
    # 3.3 standard errors over alpha (a false failure once in 2,000 runs). It came out
    # at 0.041.
    assert rate < alpha + 3.3 * np.sqrt(alpha * (1 - alpha) / REPLICATES), rate


def test_levels_sum_to_the_rate_and_give_every_threshold_the_same_power() -> None:
    """The weighted Bonferroni: the levels of thresholds anywhere in a CDF sum to the
    family's rate, and a one-point shift either way at any of them is seen with the same
    power Phi(spread), a tail's threshold at a far smaller level than the median's."""
    pooled = np.array([0.02, 0.1, 0.3, 0.5, 0.7, 0.95])
    n_fixed, n_moved, alpha = 20_000, 400_000, 1e-3
    levels = threshold_levels(pooled, n_fixed, n_moved, alpha)
    assert levels.sum() == pytest.approx(alpha, rel=1e-9)
    assert levels[0] < levels[3] / 10 and levels[-1] < levels[3] / 10
    spread = threshold_spread(pooled, n_fixed, n_moved, alpha)
    critical = critical_values(pooled, n_fixed, n_moved, spread)
    for share, z in zip(pooled, critical, strict=True):
        powers = [
            threshold_power(share - move * n_moved / (n_fixed + n_moved), n_fixed, n_moved, z, move)
            for move in (0.01, -0.01)
        ]
        # The weaker way has power Phi(spread) (up to the far tail's tiny share).
        assert min(powers) == pytest.approx(stats.norm.cdf(spread), abs=1e-6)


def test_sparse_values_are_pooled_so_every_bin_expects_five_in_the_smaller_sample() -> None:
    a = Histogram(np.arange(10, dtype=np.int64), np.array([500, 300, 100, 40, 20, 9, 5, 3, 2, 1]))
    b = Histogram(np.arange(10, dtype=np.int64), 10 * a.counts)
    table = pooled_table(a, b)
    assert table.sum() == a.n + b.n
    assert (table.sum(axis=0) * a.n / (a.n + b.n) >= 5).all()


def test_a_change_of_shape_with_the_same_mean_is_seen() -> None:
    rng = np.random.default_rng(3)
    spread = rng.choice([0, 2], size=4_000)  # mean 1, values 0 and 2
    narrow = rng.choice([0, 1, 2], size=4_000, p=[0.25, 0.5, 0.25])  # mean 1, values 0-2
    winner = np.zeros(4_000, np.int64)
    failures = same_distribution({"winner": winner, "x": spread}, {"winner": winner, "x": narrow})
    assert [f.split(":")[0] for f in failures] == ["x"]
    cdf = ordered_differences({"x": Histogram.of(spread)}, {"x": Histogram.of(narrow)}, 0.001)
    assert [f.split(":")[0] for f in cdf] == ["x"]


def test_a_value_the_reference_never_takes_is_seen() -> None:
    """A column always 0 in the reference, 1 in one kernel battle of a hundred: the
    stated power is about 1, and the comparison flags it."""
    rng = np.random.default_rng(11)
    reference = Histogram(np.array([0]), np.array([20_000]))
    assert column_power(reference, 400_000, 0.001) > 0.999
    kernel = histogram([0, 1], rng.multinomial(400_000, [0.99, 0.01]))
    assert ordered_differences({"x": kernel}, {"x": reference}, 0.001) != []


def test_tally_differences_name_the_column_that_moved() -> None:
    rng = np.random.default_rng(8)

    def tally(n: int, p_attacker: float, p_two: float) -> Tally:
        winner = rng.choice(3, size=n, p=[p_attacker, 1 - p_attacker - 0.01, 0.01])
        x = rng.choice(3, size=n, p=[0.5 - p_two / 2, 0.5 - p_two / 2, p_two])
        return Tally.of({"winner": winner, "steps": rng.integers(1, 4, n), "x": x})

    reference = tally(50_000, 0.4, 0.2)
    assert tally_differences(tally(500_000, 0.4, 0.2), reference) == []
    moved = tally_differences(tally(500_000, 0.4, 0.23), reference)
    assert [f.split(":")[0] for f in moved] == ["x"]
    assert "winner" in tally_differences(tally(500_000, 0.43, 0.2), reference)[0]
    assert (
        "only in the kernel"
        in tally_differences(
            Tally.of(
                {"winner": np.zeros(9, np.int64), "steps": np.ones(9, np.int64), "y": np.ones(9)}
            ),
            Tally.of({"winner": np.zeros(9, np.int64), "steps": np.ones(9, np.int64)}),
        )[0]
    )


@pytest.mark.parametrize("changed", ["reference_hash", "scenario_hash"])
def test_a_changed_reference_or_scenario_asks_for_the_sample_to_be_regenerated(
    changed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = cases_of("blocks")[0]
    assert generate.stale_reason(case) is None
    monkeypatch.setattr(generate, changed, lambda _: "0123456789abcdef")
    with pytest.raises(AssertionError, match=f"regenerate it with `{generate.COMMAND} {case.key}`"):
        generate.load_sample(case)
