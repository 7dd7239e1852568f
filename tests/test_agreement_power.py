"""The whole-distribution comparison of simulator.testing and the power it states.

The agreement tests' docstrings quote the power :func:`agreement_power` computes from the
noncentral chi-square; here that figure is checked against the rate at which the test
really flags samples drawn with the shift, and the comparison itself is checked to see a
change of shape that keeps the mean (which a test of means cannot).
"""

from __future__ import annotations

import numpy as np
import pytest

from simulator.results.stats import Histogram, Tally
from simulator.testing import (
    column_alphas,
    column_power,
    histogram_test,
    interval_contains,
    pooled_table,
    same_distribution,
    tally_differences,
)
from tests.reference import generate
from tests.reference.cases import cases_of

#: Repetitions of the simulated power check: the 99.9% interval of a rate is then +-0.09.
REPETITIONS = 300


def histogram(values: list[int], counts: np.ndarray) -> Histogram:
    keep = counts > 0
    return Histogram(np.asarray(values, np.int64)[keep], counts[keep].astype(np.int64))


@pytest.mark.parametrize(
    ("probabilities", "move", "winner", "alpha"),
    [
        # A winner with a few draws: one point and a half from attacker to defender wins.
        ([0.55, 0.43, 0.02], (0, 1), True, 5e-4),
        # A column of nine values; the move between its two most common neighbours.
        ([0.02, 0.05, 0.1, 0.2, 0.25, 0.2, 0.1, 0.05, 0.03], (3, 4), False, 2e-5),
    ],
)
def test_stated_power_is_the_rate_at_which_a_shift_is_flagged(
    probabilities: list[float], move: tuple[int, int], winner: bool, alpha: float
) -> None:
    rng = np.random.default_rng(17)
    n_reference, n_kernel, shift = 20_000, 400_000, 0.015
    p = np.array(probabilities)
    moved = p.copy()
    moved[move[0]] -= shift
    moved[move[1]] += shift
    values = list(range(p.size))
    expected = histogram(values, np.round(p * n_reference).astype(np.int64))
    power = column_power(expected, n_kernel, alpha, shift, winner=winner)
    assert 0.2 < power < 0.95, power  # a figure in the range where the check means something
    flagged = 0
    for _ in range(REPETITIONS):
        reference = histogram(values, rng.multinomial(n_reference, p))
        kernel = histogram(values, rng.multinomial(n_kernel, moved))
        flagged += histogram_test(kernel, reference) < alpha
    # The computed power is for the weakest move; this move is the weakest one here.
    assert interval_contains(flagged, REPETITIONS, power), (flagged / REPETITIONS, power)


def test_no_shift_is_flagged_at_about_the_stated_rate() -> None:
    rng = np.random.default_rng(5)
    p = np.array([0.3, 0.3, 0.2, 0.1, 0.05, 0.03, 0.015, 0.005])
    values = list(range(p.size))
    flagged = 0
    for _ in range(2_000):
        a = histogram(values, rng.multinomial(3_000, p))
        b = histogram(values, rng.multinomial(60_000, p))
        flagged += histogram_test(a, b) < 0.05
    assert interval_contains(flagged, 2_000, 0.05)


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


def test_half_the_family_rate_goes_to_the_winner() -> None:
    rates = column_alphas(["winner", "steps", "a", "b"], 0.001)
    assert rates["winner"] == 0.0005
    assert rates["steps"] == rates["a"] == pytest.approx(0.0005 / 3)
    assert sum(rates.values()) == pytest.approx(0.001)


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
