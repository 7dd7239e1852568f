"""What waves promise in every ruleset that gives them beyond confrontation
(tests/test_waves.py), on each ruleset's attacker's and defender's waves: the randomness
contract, the first wave as the battle without waves, the chain's bookkeeping, and the
reference chain's agreement (each ruleset's own checks: tests/test_waves_<ruleset>.py)."""

from __future__ import annotations

import pytest

from simulator.testing import reproducibility
from tests import test_waves
from tests.test_waves import scenario_of
from tests.test_waves_blocks import SCENARIOS as BLOCKS
from tests.test_waves_skirmish import SCENARIOS as SKIRMISH
from tests.wave_checks import check_first_wave, check_reference_agreement

CASES = [
    pytest.param(text, side, id=f"{ruleset}-{side}")
    for ruleset, scenarios in (("skirmish", SKIRMISH), ("blocks", BLOCKS))
    for text, side in scenarios
]
#: The first tier's: blocks' defender's waves join a battle in progress, which runs its
#: battle as it unfolds, compiled by the slow tier only (tests/tiers.py).
FIRST_TIER_CASES = [
    pytest.param(*case.values, id=case.id, marks=pytest.mark.slow)
    if case.id == "blocks-defender"
    else case
    for case in CASES
]


# Slow tier (docs/testing.md): 4.2 s for its 4 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("text", "side"), CASES)
def test_waves_keep_the_randomness_contract(text: str, side: str) -> None:
    """One thread and all, chunks of 1,000 and 77, the last third alone: every wave's
    columns alike, battle by battle. The chain's blocks of 4,096 battles (chunks starting
    inside one, more than two of them) are ruleset-blind: tests/test_waves.py crosses
    them with confrontation's 9,000 battles; here each ruleset's own side left."""
    assert reproducibility(scenario_of(text), battles=1_500, seed=4) == []


@pytest.mark.parametrize(("text", "side"), FIRST_TIER_CASES)
def test_the_first_wave_is_the_battle_without_waves(text: str, side: str) -> None:
    check_first_wave(text)


@pytest.mark.parametrize(("text", "side"), FIRST_TIER_CASES)
def test_a_battle_is_the_chain_of_its_waves(text: str, side: str) -> None:
    test_waves.test_the_whole_battle_is_the_chain_of_its_waves(text, side)


@pytest.mark.slow
@pytest.mark.parametrize(("text", "side"), CASES)
def test_waves_agree_with_the_reference(text: str, side: str) -> None:
    """Every column (the whole battle's and each wave's) of 20,000 battles against the
    plain-Python chain of the ruleset's reference battles (tests/reference/waves.py over
    tests/reference/wave_fights_<ruleset>.py), which rebuilds the side a battle left from
    the reference's own fighters: no difference at a family-wise false-alarm rate of
    0.001."""
    check_reference_agreement(text, 3_000)
