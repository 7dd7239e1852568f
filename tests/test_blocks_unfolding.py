"""Blocks' battle as it unfolds: stop rules (``[attacker.retreat]``), a battle in
progress (``[battle] from_step``) and the one-pass record of every phase
(``run_through``), docs/blocks.md "Stop rules and a battle in progress".

Three kinds of check: the kernel against the plain-Python reference in distribution,
with each kind of rule and from_step under both readings (text and engine); exact
checks battle by battle against the kernel's own runs (a rule never touches a battle
decided before it holds; a withdrawal with a road loses nothing; the one-pass record is
``run_until``'s rows); and the command line's one-line errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from typer.testing import CliRunner

from simulator import load_scenario, rulesets
from simulator.cli import app
from simulator.rulesets import InlineQuery
from simulator.rulesets.base import FIGHTING, FROM_STEP, STOP_RULES
from simulator.scenario.scenario import Scenario, from_query
from simulator.testing import same_distribution
from tests.reference import blocks as reference

runner = CliRunner()
ATTACKER_WITHDREW, DEFENDER_WITHDREW = 3, 4

#: A field battle with reserves on both sides and a castle the defender may hold.
FIELD = ("A2:4, B3:3, C2:3@r2", "B2:4, A2:3, C1:2@r3")
#: A field battle without reserves: decided in any of its three rounds.
SHORT = ("A3:4, B3:3, C2:2", "B2:3, C1:2, A1:2")
#: An existing siege over three turns: storms, sallies and attrition.
SIEGE = ("A3:4, B2:3, C1:2", "B2:3@castle, A1:2@castle, B1:2@r2")
SIEGE_OPTIONS = {
    "siege": "true",
    "castle_limit": "2",
    "turns": "3",
    "storm": "when_stronger",
    "sally": "when_stronger",
}


def blocks(
    armies: tuple[str, str], options: dict[str, str] | None = None, **changes: Any
) -> Scenario:
    """A one-line blocks battle with ``changes`` at dotted paths (``attacker__retreat__
    at_most`` for ``attacker.retreat.at_most``)."""
    scenario = from_query("blocks", InlineQuery(armies[0], armies[1], options or {}))
    if not changes:
        return scenario
    return scenario.with_changes({k.replace("__", "."): v for k, v in changes.items()})


def prepared(scenario: Scenario) -> Any:
    return rulesets.get("blocks").prepare(scenario.model)


def columns_of(rows: dict[str, Any]) -> list[str]:
    return [c for c in rows if not c.startswith("eliminated.") and c != "turn"]


#: Each kind of rule, on its own or together, and battles in progress: name -> scenario.
CASES = {
    "at_most": lambda rules: blocks(FIELD, {"rules": rules}, attacker__retreat__at_most=6),
    "percent_and_castle": lambda rules: blocks(
        FIELD, {"rules": rules, "castle_limit": "1"}, defender__retreat__at_most="60%"
    ),
    "gone_no_road": lambda rules: blocks(
        ("A2:2, B3:2, C2:3@r2", FIELD[1]),
        {"rules": rules, "retreat_road": "false"},
        attacker__retreat__gone="A2",
    ),
    "after_over_turns": lambda rules: blocks(
        SIEGE, {"rules": rules, **SIEGE_OPTIONS}, attacker__retreat__after=6
    ),
    "outnumbered_both": lambda rules: blocks(
        FIELD,
        {"rules": rules},
        attacker__retreat__outnumbered=1.5,
        defender__retreat__outnumbered=2.0,
    ),
    "from_round_2": lambda rules: blocks(
        FIELD, {"rules": rules, "from_step": "1"}, defender__retreat__at_most=4
    ),
    "siege_from_turn_2": lambda rules: blocks(
        (SIEGE[0], "B2:3@castle, A1:2@castle, B1:2"),
        {"rules": rules, **SIEGE_OPTIONS, "from_step": "5"},
        defender__retreat__at_most=2,
    ),
    "relief_in_round_3": lambda rules: blocks(
        (
            "Saladin A2:2/4, Mamluks A3:3",
            "B2:1/2@castle, C1:2@castle, B3:3/4 knights, B3:3 knights",
        ),
        {
            "rules": rules,
            "siege": "true",
            "castle_limit": "2",
            "sally": "when_stronger",
            "charge": "always",
            "from_step": "2",
            "attacker_role": "defender",
        },
        attacker__retreat__at_most=3,
        attacker__retreat__gone="Saladin",
    ),
    "siege_from_attrition": lambda rules: blocks(
        (SIEGE[0], "B2:3@castle, A1:2@castle, B1:2"),
        {"rules": rules, **SIEGE_OPTIONS, "from_step": "3"},
    ),
}


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
@pytest.mark.parametrize("rules", ["text", "engine"])
@pytest.mark.parametrize("case", list(CASES))
def test_stop_rules_and_from_step_agree_with_the_reference(case: str, rules: str) -> None:
    scenario = CASES[case](rules)
    kernel = prepared(scenario).run(5, 0, 20_000)
    sample = reference.simulate(scenario.model, 3000, 1)
    assert same_distribution(kernel, sample, columns_of(sample)) == []
    # The rule fires in some battles and not in all (the case checks something).
    if case.startswith("siege_from"):
        assert kernel["steps"].min() > scenario.model.from_step
    else:
        withdrew = np.isin(kernel["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW))
        assert 0.02 < withdrew.mean() < 0.98, case


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "step"), [("outnumbered_both", 2), ("after_over_turns", 5), ("relief_in_round_3", 3)]
)
def test_the_state_after_a_phase_with_rules_agrees_with_the_reference(case: str, step: int) -> None:
    scenario = CASES[case]("text")
    kernel = prepared(scenario).run_until(5, 0, 20_000, step)
    sample = reference.simulate(scenario.model, 3000, 1, until=step)
    assert (kernel["winner"] == FIGHTING).any()
    # The reference's state after a phase keeps the casualties then (its other columns
    # are the battle's end).
    columns = ["winner", "steps", *(c for c in sample if c.startswith("casualties."))]
    assert same_distribution(kernel, sample, columns) == []


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
def test_the_comparison_sees_a_rule_read_one_phase_late() -> None:
    """The agreement test can fail: a rule one phase later is noticed."""
    scenario = blocks(FIELD, attacker__retreat__after=1)
    late = blocks(FIELD, attacker__retreat__after=2)
    kernel = prepared(scenario).run(5, 0, 20_000)
    sample = reference.simulate(late.model, 3000, 1)
    assert same_distribution(kernel, sample, columns_of(sample)) != []


def test_the_prepared_scenario_declares_and_carries_its_rules() -> None:
    scenario = blocks(FIELD, {"from_step": "1"}, attacker__retreat__gone="B3")
    battle = prepared(scenario)
    assert {STOP_RULES, FROM_STEP} <= battle.unfolds
    assert battle.from_step == 1
    assert battle.stop_rules[0].gone == "B3" and battle.stop_rules[1].never
    # The kernel's row names the block by its index in the block table.
    assert battle.arrays.stops[0, 3] == battle.arrays.block_names.index(("attacker", "B3"))


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
@pytest.mark.parametrize("after", [1, 2])
def test_a_rule_never_touches_a_battle_decided_before_it_holds(after: int) -> None:
    """Battle by battle: one decided by phase ``after`` is its whole row with or without
    the rule; one still going withdraws after that phase with the state then (a
    withdrawal by the road loses nothing)."""
    plain = prepared(blocks(SHORT))
    ruled = prepared(blocks(SHORT, attacker__retreat__after=after))
    whole = plain.run(9, 0, 4000)
    withdrawn = ruled.run(9, 0, 4000)
    state = plain.run_until(9, 0, 4000, after)
    decided = whole["steps"] <= after
    assert decided.any() and (~decided).any()
    for column, values in whole.items():
        assert np.array_equal(withdrawn[column][decided], values[decided]), column
    assert (withdrawn["winner"][~decided] == ATTACKER_WITHDREW).all()
    assert (withdrawn["steps"][~decided] == after).all()
    for column in (c for c in whole if c.startswith(("casualties.", "steps_lost."))):
        assert np.array_equal(withdrawn[column][~decided], state[column][~decided]), column


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_a_rule_that_cannot_hold_changes_nothing() -> None:
    plain = prepared(blocks(FIELD)).run(3, 0, 3000)
    never = prepared(blocks(FIELD, attacker__retreat__outnumbered=1000.0)).run(3, 0, 3000)
    for column, values in plain.items():
        assert np.array_equal(never[column], values), column


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_both_sides_at_once_the_attacker_withdraws() -> None:
    """Both rules hold after the same phase: the attacker's is looked at first. A rule
    true from the start (at_most above the army) withdraws after the first phase."""
    both = prepared(blocks(FIELD, attacker__retreat__after=2, defender__retreat__after=2)).run(
        4, 0, 3000
    )
    going = prepared(blocks(FIELD)).run(4, 0, 3000)["steps"] > 2
    assert going.any() and (both["winner"][going] == ATTACKER_WITHDREW).all()
    assert (both["winner"] != DEFENDER_WITHDREW).all()
    at_once = prepared(
        blocks(FIELD, attacker__retreat__at_most=99, defender__retreat__at_most=99)
    ).run(4, 0, 3000)
    assert (at_once["steps"] == 1).all()
    undecided = ~np.isin(at_once["winner"], (0, 1, 2))
    assert undecided.any() and (at_once["winner"][undecided] == ATTACKER_WITHDREW).all()
    # In a battle in progress the first phase is the one after from_step.
    later = prepared(blocks(FIELD, {"from_step": "1"}, defender__retreat__at_most=99)).run(
        4, 0, 3000
    )
    assert (later["steps"] == 2).all() and (later["winner"] != ATTACKER_WITHDREW).all()


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_a_withdrawal_without_a_road_eliminates_what_cannot_go_into_the_castle() -> None:
    """With no road the withdrawing side's field blocks are eliminated, bar those its
    castle takes in the defender's role (one here, castle_limit = 1)."""
    armies = ("A2:4, B3:3", "B2:4, A2:3, C1:2")
    attacker = prepared(blocks(armies, {"retreat_road": "false"}, attacker__retreat__after=1)).run(
        6, 0, 2000
    )
    gone = attacker["winner"] == ATTACKER_WITHDREW
    assert gone.any() and (attacker["blocks_eliminated.attacker"][gone] == 2).all()
    assert (attacker["attacker_retreated"][gone] == 1).all()
    defender = prepared(
        blocks(armies, {"retreat_road": "false", "castle_limit": "1"}, defender__retreat__after=1)
    ).run(6, 0, 2000)
    gone = defender["winner"] == DEFENDER_WITHDREW
    assert gone.any() and (defender["blocks_eliminated.defender"][gone] == 2).all()
    assert (defender["defender_won"][gone] == 0).all()
    assert (defender["attacker_won_field"][gone] == 1).all()


RECORDED = {
    "relief": lambda: load_scenario("scenarios/blocks/relief.toml"),
    "siege_attrition": lambda: load_scenario("scenarios/blocks/siege_attrition.toml"),
    "field_reserves_engine": lambda: load_scenario(
        "scenarios/blocks/field_reserves.toml"
    ).with_changes({"battle.rules": "engine"}),
    "siege_rules": lambda: CASES["after_over_turns"]("text"),
    "outnumbered": lambda: CASES["outnumbered_both"]("engine"),
    "from_turn_2": lambda: CASES["siege_from_turn_2"]("text"),
    "relief_in_round_3": lambda: CASES["relief_in_round_3"]("engine"),
}


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
@pytest.mark.parametrize("name", list(RECORDED))
def test_the_one_pass_record_is_run_until_battle_by_battle(name: str) -> None:
    scenario = RECORDED[name]()
    battle = prepared(scenario)
    steps = list(range(1, battle.step_limit + 2))
    through = battle.run_through(7, 100, 700, steps)
    assert set(through) == set(battle.columns)
    for k, step in enumerate(steps):
        until = battle.run_until(7, 100, 700, step)
        for column, values in until.items():
            assert np.array_equal(through[column][k], values), (step, column)
    assert (through["winner"][0] == FIGHTING).any()
    # Past the turn limit: the whole battles, as the plain run's own battle function
    # (_plain_battles, beside the recording _battles) fights them.
    for column, values in battle.run(7, 100, 700).items():
        if column in through:
            assert np.array_equal(through[column][-1], values), column
    # Asked for some steps only, in one pass: the same rows.
    some = battle.run_through(7, 100, 700, [2, 5])
    assert np.array_equal(some["winner"], through["winner"][[1, 4]])
    assert battle.run_through(7, 100, 700, []) == {}


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_a_battle_in_progress_counts_its_phases_from_the_start() -> None:
    """from_step = 2: the battle's first phase is 3 (round 3, the reserves of round 3
    arriving), steps asked at or before it are the battle as given."""
    in_round_3 = ("A2:4, B3:3, C2:3", FIELD[1])
    battle = prepared(blocks(in_round_3, {"from_step": "2"}))
    whole = battle.run(2, 0, 2000)
    assert (whole["steps"] >= 3).all()
    given = battle.run_until(2, 0, 2000, 2)
    assert (given["winner"] == FIGHTING).all() and (given["steps"] == 2).all()
    assert all((given[c] == 0).all() for c in given if c.startswith("casualties."))
    assert np.array_equal(battle.run_through(2, 0, 2000, [1, 2])["winner"][1], given["winner"])
    # from_step = 0 is the battle from its start, draw for draw.
    zero = prepared(blocks(in_round_3, {"from_step": "0"})).run(2, 0, 2000)
    for column, values in prepared(blocks(in_round_3)).run(2, 0, 2000).items():
        assert np.array_equal(zero[column], values), column


# Slow tier: blocks' battle as it unfolds, which only the slow tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_one_thread_and_all_threads_give_the_same_rows() -> None:
    battle = prepared(CASES["percent_and_castle"]("engine"))
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = battle.run_through(8, 0, 1500, [1, 3, 6])
        alone = battle.run(8, 0, 1500)
    finally:
        numba.set_num_threads(threads)
    every = battle.run_through(8, 0, 1500, [1, 3, 6])
    for column, values in battle.run(8, 0, 1500).items():
        assert np.array_equal(alone[column], values), column
    for column, values in every.items():
        assert np.array_equal(one[column], values), column


SCENARIO = """\
ruleset = "blocks"
[battle]
castle_limit = 1
{battle}
[[attacker.blocks]]
name = "Saladin"
rating = "A2"
steps = 4
[[defender.blocks]]
name = "Richard"
rating = "B3"
steps = 3
{defender_block}
{retreat}
"""

BAD = {
    "from_step past the battle": (
        {"battle": "from_step = 4"},
        "from_step: 4 phases fought but the battle lasts 4",
    ),
    "from_step negative": ({"battle": "from_step = -1"}, "from_step"),
    "a reserve already arrived": (
        {"battle": "from_step = 2", "defender_block": 'at = "reserve"\nround = 2'},
        "round: block 'Richard' arrives in round 2 but 2 rounds fought already",
    ),
    "a reserve in turn 2": (
        {"battle": "turns = 2\nfrom_step = 4", "defender_block": 'at = "reserve"\nround = 3'},
        "reserves arrive in the first turn only",
    ),
    "gone names no block": (
        {"retreat": '[attacker.retreat]\ngone = "Saladn"'},
        "gone: 'Saladn' is not a type this side fields (did you mean 'Saladin'?)",
    ),
    "the defender in the attacker's role at the start": (
        {"battle": 'attacker_role = "defender"'},
        "attacker_role: 'defender' holds the attacker's role only in a battle in progress",
    ),
    "at_most negative": ({"retreat": "[defender.retreat]\nat_most = -2"}, "at_most"),
    "after 0": ({"retreat": "[attacker.retreat]\nafter = 0"}, "after"),
    "a misspelt rule": ({"retreat": "[attacker.retreat]\nafte = 2"}, "did you mean 'after'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_values_are_one_line_and_exit_2(case: str, tmp_path: Path) -> None:
    parts, expected = BAD[case]
    text = SCENARIO.format(**{"battle": "", "defender_block": "", "retreat": "", **parts})
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.strip().splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert expected in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output
