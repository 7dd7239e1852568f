"""Olympia: the source text's figures, symmetry, and kernel against the reference."""

from __future__ import annotations

import numpy as np
import pytest

import simulator
from simulator.rulesets.olympia.keys import KERNEL_CHOICES
from simulator.rulesets.olympia.prepare import chain_refusal, compile_battle
from tests.reference import olympia as reference
from tests.reference.agreement import check_case
from tests.reference.cases import Case, cases_of
from tests.stats_tests import interval_contains, same_distribution


def start_and_threshold(army: str) -> tuple[int, float]:
    scenario = simulator.inline_scenario("olympia", army, "noble")
    start = compile_battle(scenario.model).start_value[0]
    return start, start * 50 / 100


def test_source_text_values_and_break_points() -> None:
    assert start_and_threshold("noble, 2 pikeman") == (230, 115)
    assert start_and_threshold("noble, 2 knight") == (340, 170)


def test_noble_with_two_knights_loses_when_both_knights_die() -> None:
    scenario = simulator.inline_scenario("olympia", "noble, 2 knight", "noble, 3 swordsman")
    rows = simulator.simulate(scenario, 20_000, seed=3).rows
    assert rows is not None
    knights_dead = rows["casualties.attacker.knight"] == 2
    noble_out = rows["nobles_wounded.attacker"] + rows["nobles_killed.attacker"] > 0
    attacker_lost = rows["winner"] == 1
    assert knights_dead.any() and attacker_lost.any()
    # 340 - 180 = 160 <= 170: losing both knights breaks the side at once ...
    assert np.all(attacker_lost[knights_dead])
    # ... and a loss always comes from the knights or the noble.
    assert np.all((knights_dead | noble_out)[attacker_lost])


def test_noble_with_two_pikemen_fights_on_when_both_pikemen_die() -> None:
    scenario = simulator.inline_scenario("olympia", "noble, 2 pikeman", "noble, 3 swordsman")
    rows = simulator.simulate(scenario, 20_000, seed=4).rows
    assert rows is not None
    pikemen_dead = rows["casualties.attacker.pikeman"] == 2
    noble_out = rows["nobles_wounded.attacker"] + rows["nobles_killed.attacker"] > 0
    attacker_lost = rows["winner"] == 1
    # 230 - 70 = 160 > 115: the pikemen alone never break the side; the noble must fall.
    assert np.all(noble_out[attacker_lost])
    # And the side does fight on after losing them: some such battles are won.
    assert np.any(pikemen_dead & (rows["winner"] == 0))


@pytest.mark.parametrize(
    "army", ["noble, 10 soldier", "noble, 5 knight, 8 archer@1; noble, 6 pikeman"]
)
def test_identical_sides_win_half_each(army: str) -> None:
    scenario = simulator.inline_scenario("olympia", army, army)
    result = simulator.simulate(scenario, 200_000, seed=11, keep_battles=False)
    assert result.tally.wins[2] == 0  # one strike changes one side: no draws
    assert interval_contains(int(result.tally.wins[0]), result.n, 0.5)


KERNELS = [name for name in KERNEL_CHOICES if name != "auto"]


@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("case", cases_of("olympia"), ids=lambda c: c.name)
def test_kernel_agrees_with_stored_reference(case: Case, kernel: str) -> None:
    """Every olympia kernel against the stored reference sample of each case
    (tests/reference/agreement.py). The power of each comparison, at a family-wise
    false-alarm rate of 0.001, for a one-point shift of P(attacker wins) and, the weakest
    over the other columns, for one point of probability moved between neighbouring values:

    open field, rear archers: winner 1.00, others 0.81
    tower, catapult, shielding: winner 0.99, others 0.85
    alternating, peasants, items, blessed: winner 1.00, others 0.84
    ship, wind, pirates: winner 1.00, others 0.81
    swamp, rain, last man: winner 0.97, others 0.84
    """
    if kernel == "chain" and chain_refusal(compile_battle(case.build().model)) is not None:
        pytest.skip("the chain kernel runs the random strike order only")
    assert (
        check_case(
            case, test_kernel_agrees_with_stored_reference.__doc__, {"battle.kernel": kernel}
        )
        == []
    )


# Slow tier (docs/testing.md): 1.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_agreement_check_detects_a_broken_rule() -> None:
    """The agreement test has the power to see a real rules error: the same battle
    with the knights' defense changed by a third is flagged."""
    scenario = simulator.inline_scenario(
        "olympia", "noble, 8 soldier", "noble, 2 knight, 2 soldier"
    )
    changed = scenario.with_changes({"units.knight.defense": 30})
    kernel = simulator.simulate(changed, 100_000, seed=5).rows
    assert kernel is not None
    slow = reference.simulate(scenario.model, 1_500, seed=6)
    assert same_distribution(kernel, slow) != []
