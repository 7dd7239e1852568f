"""Kernel choice by one table: the names listed once (olympia's keys.KERNELS), every
name run by its own kernel, an unknown name an error (never the strike kernel), and one
kernel for a group of scenarios that must draw battle i alike."""

from __future__ import annotations

import numpy as np
import pytest

import simulator
from simulator import rulesets
from simulator.errors import BattleOddsError
from simulator.rulesets.base import common_kernel, use_common_kernel
from simulator.rulesets.olympia import keys
from simulator.rulesets.olympia.prepare import KERNEL_RUNS, REFERENCE_KERNEL
from tests import ROOT

SCENARIOS = ROOT / "scenarios"
SMALL = ("noble, 10 soldier", "noble, 10 pikeman")
#: Over the chain kernel's size limit: ``auto`` runs skip.
LARGE = ("noble, 3000 soldier", "noble, 3000 pikeman")


def prepared(*armies: str, **battle: str):
    scenario = simulator.inline_scenario("olympia", *armies, **battle)
    return rulesets.get("olympia").prepare(scenario.model)


def test_the_kernel_table_runs_exactly_the_listed_names() -> None:
    assert tuple(KERNEL_RUNS) == keys.KERNELS
    assert ("auto", *keys.KERNELS) == keys.KERNEL_CHOICES
    assert REFERENCE_KERNEL in keys.KERNELS


def test_an_unknown_kernel_is_an_error_not_the_strike_kernel() -> None:
    battle = prepared(*SMALL)
    with pytest.raises(BattleOddsError, match=r"kernel 'skipp'.*did you mean 'skip'"):
        battle.run_matrix(1, 0, 10, "skipp")
    with pytest.raises(BattleOddsError, match="kernel 'fast'"):
        battle.use_kernel("fast")


def test_each_name_runs_its_own_kernel() -> None:
    """Different kernels draw battle i differently: three names, three sets of battles
    (were a name to fall back on another kernel, two would be equal)."""
    battle = prepared(*SMALL)
    runs = {name: battle.run_matrix(5, 0, 400, name) for name in keys.KERNELS}
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not np.array_equal(runs[a], runs[b]), (a, b)


def test_a_group_shares_the_fastest_kernel_all_can_run() -> None:
    small, large = prepared(*SMALL), prepared(*LARGE)
    assert small.kernel == "chain" and large.kernel == "skip"
    # Not the reference kernel: every battle can run skip.
    assert common_kernel([small, large]) == common_kernel([large, small]) == "skip"
    assert common_kernel([small, prepared(*SMALL)]) == "chain"
    named = prepared(*SMALL, kernel="chain"), prepared(*SMALL, kernel="skip")
    assert common_kernel(named) == REFERENCE_KERNEL  # named kernels with nothing else shared
    assert use_common_kernel([small, large]) == "skip"
    assert small.kernel == large.kernel == "skip"


def test_scenarios_of_rulesets_with_no_kernel_in_common_keep_theirs() -> None:
    blocks = simulator.load_scenario(sorted(SCENARIOS.glob("blocks/*.toml"))[0])
    dice = rulesets.get("blocks").prepare(blocks.model)
    small = prepared(*SMALL)
    assert common_kernel([small, dice]) is None
    use_common_kernel([small, dice])
    assert (small.kernel, dice.kernel) == ("chain", "dice")


# Slow tier: its large armies run olympia's skip kernel for deaths in batches, which
# only the slow tier compiles (tests/tiers.py, SLOW_TIER_PATHS).
@pytest.mark.slow
def test_compare_pairs_a_chain_and_a_skip_scenario_on_skip() -> None:
    a = simulator.inline_scenario("olympia", *SMALL)
    b = simulator.inline_scenario("olympia", *LARGE)
    result = simulator.compare(a, b, 20, 2)
    assert result.a.kernel == result.b.kernel == "skip"
    same = simulator.compare(a, a, 300, 2)
    assert same.a.kernel == same.b.kernel
    assert same.joint[0, 1] == same.joint[1, 0] == 0


def test_a_large_group_of_few_battles_builds_no_chain_tables() -> None:
    """A table that would cost more than the battles it speeds up is not built: with a
    few battles each the group runs skip, with many the chain kernel."""
    many = prepared("noble, 10 soldier, 8 swordsman", "noble, 40 pikeman")
    assert many.kernel_choices(100)[0] == "skip"
    assert not many._chain_built
    assert many.kernel_choices(10_000_000)[0] == "chain"


def test_a_group_settled_without_a_table_builds_none() -> None:
    """Where a scenario's kernel is settled, or another cannot run the chain kernel, the
    group's kernel is known with no chain table built (worth's scenario with the unit,
    settled on skip by its first probe, built one for every probe after it, compiling
    the chain kernel's table on a cold cache for nothing); the same kernel as with
    every table built."""
    settled, fresh = prepared(*SMALL), prepared(*SMALL)
    settled.use_kernel("skip")
    assert not settled._chain_built
    assert common_kernel([settled, fresh]) == "skip"
    assert not settled._chain_built and not fresh._chain_built
    small, large = prepared(*SMALL), prepared(*LARGE)
    assert common_kernel([small, large]) == "skip" and not small._chain_built
    # Where the table decides, it is built: the chain kernel when both fit.
    assert common_kernel([fresh, prepared(*SMALL)]) == "chain" and fresh._chain_built
    # The same answers with every table built first.
    for group in ([settled, prepared(*SMALL)], [prepared(*SMALL), prepared(*LARGE)]):
        for p in group:
            p.kernel_choices()
        assert common_kernel(group) == "skip"
