"""The statistical checks of the tests: they live in :mod:`simulator.testing`, public for
rulesets written outside this package; the built-in rulesets' tests import them here."""

from simulator.testing import (
    ALPHA,
    interval_contains,
    pooled_mean_test,
    reference_agreement,
    reproducibility,
    same_distribution,
    simulate_rows,
)

__all__ = [
    "ALPHA",
    "interval_contains",
    "pooled_mean_test",
    "reference_agreement",
    "reproducibility",
    "same_distribution",
    "simulate_rows",
]
