"""The risk ruleset's rules, checked with battle-odds' own checks (simulator.testing).

Every check of a random process uses a fixed seed and a 99.9% interval (or a family-wise
0.001 false-alarm rate), so a correct ruleset passes on every run."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from risk_ruleset import reference
from risk_ruleset.exact import round_counts

import simulator
from simulator.testing import (
    exact_agreement,
    interval_contains,
    reference_agreement,
    reproducibility,
    same_distribution,
    simulate_rows,
)

SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios").glob("*.toml"))


def risk(attacker: int, defender: int, **house_rules: int) -> simulator.Scenario:
    return simulator.inline_scenario("risk", str(attacker), str(defender), **house_rules)


def test_the_plugin_is_found_through_its_entry_point() -> None:
    registration = simulator.rulesets._registry().chosen["risk"]
    assert registration.origin.startswith("battle-odds-risk ")
    assert registration.value == "risk_ruleset:RULESET"


def test_three_dice_against_two_one_round_has_the_known_odds() -> None:
    """Of the 6**5 = 7776 rolls, 2890 cost the defender two armies, 2611 one army each
    and 2275 cost the attacker two."""
    counts = round_counts(3, 2)
    assert sum(counts) == 7776
    assert [Fraction(c, 7776) for c in counts] == [
        Fraction(2890, 7776),
        Fraction(2611, 7776),
        Fraction(2275, 7776),
    ]


def test_one_die_against_one_the_attacker_wins_fifteen_in_thirty_six() -> None:
    """Single dice: the attacker needs a strictly higher die, 15 of the 36 pairs."""
    assert round_counts(1, 1) == (15, 21)
    answer = simulator.exact(risk(1, 1))
    assert answer.win["attacker"] == pytest.approx(15 / 36, abs=1e-15)
    assert answer.expected_steps == 1.0


def test_the_kernel_rolls_the_known_first_round() -> None:
    """Three against two ends in the first round exactly when the defender loses both."""
    rows = simulate_rows(risk(3, 2), 40_000, seed=3)
    ended_first_round = int(((rows["winner"] == 0) & (rows["steps"] == 1)).sum())
    assert interval_contains(ended_first_round, 40_000, 2890 / 7776)


CASES = {
    "ten against eight": risk(10, 8),
    "one against many": risk(1, 6),
    "two attacking dice, three defending": risk(12, 9, attacker_dice=2, defender_dice=3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_agrees_with_reference(case: str) -> None:
    failures = reference_agreement(
        CASES[case], reference.simulate, battles=40_000, reference_battles=3_000, seed=5
    )
    assert failures == []


def test_the_agreement_check_sees_a_changed_rule() -> None:
    """The kernel with the defender rolling one die more is flagged against the
    reference with the classic rule: the check has the power to see a rules error."""
    changed = simulate_rows(risk(10, 8, defender_dice=3), 40_000, seed=5)
    classic = reference.simulate(risk(10, 8).model, 3_000, seed=6)
    assert same_distribution(changed, classic) != []


def test_same_battles_on_any_threads_and_chunking() -> None:
    assert reproducibility(risk(20, 15), 3_000, seed=7) == []


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_exact_answers_lie_inside_the_simulated_intervals(path: Path) -> None:
    assert exact_agreement(simulator.load_scenario(path), battles=20_000, seed=11) == []


def test_exact_answers_are_the_means_of_the_reference() -> None:
    scenario = risk(5, 4)
    answer = simulator.exact(scenario)
    n = 4_000
    columns = reference.simulate(scenario.model, n, seed=13)
    wins = columns["winner"].count(0)
    assert interval_contains(wins, n, answer.win["attacker"])


def test_a_battle_too_large_for_the_exact_solver_is_refused_naming_its_size() -> None:
    with pytest.raises(simulator.BattleOddsError, match=r"4,004,001 states .* over the limit"):
        simulator.exact(risk(2000, 2000), max_states=1_000_000)
