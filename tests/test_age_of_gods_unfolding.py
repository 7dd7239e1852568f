"""Age of Gods as it unfolds: stop rules (``[attacker.retreat]``), a battle in progress
(``[battle] from_step``) and the state after each asked round in one pass
(``run_through``), the kernel against its plain-Python reference and against itself."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from kernels import age_of_gods as k
from kernels.olympia import layout as ol
from kernels.stops import ATTACKER_WITHDREW, DEFENDER_WITHDREW, FIGHTING
from simulator import rulesets
from simulator.cli import app
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared
from simulator.running.runner import thread_count
from tests.reference import age_of_gods as reference
from tests.stats_tests import same_distribution

RULESET = "age_of_gods"
runner = CliRunner()


def knights_against_pikes(**changes: Any) -> simulator.Scenario:
    """Knights against pikemen with archers behind, both breaking at 10%: battles of a
    few rounds, either side can win, each side has a type the other lacks."""
    scenario = simulator.inline_scenario(
        RULESET,
        "noble, 12 knight, 4 archer@1",
        "noble, 20 pikeman, 6 archer@1",
        attacker_break=10,
        defender_break=10,
    )
    return scenario.with_changes(changes) if changes else scenario


def allies_in_round_2(**changes: Any) -> simulator.Scenario:
    """The defender's allies arrive in round 2 (the engine's round)."""
    scenario = simulator.inline_scenario(
        RULESET,
        "noble, 14 soldier, 6 knight",
        "noble, 16 soldier",
        defender_allies="noble, 10 pikeman",
    )
    return scenario.with_changes(changes) if changes else scenario


def prepared(scenario: simulator.Scenario) -> AgeOfGodsPrepared:
    made = rulesets.get(RULESET).prepare(scenario.model)
    assert isinstance(made, AgeOfGodsPrepared)
    return made


def kernel_against_reference(scenario: simulator.Scenario, seed: int) -> list[str]:
    rows = prepared(scenario).run(seed, 0, 20_000)
    sample = reference.simulate(scenario.model, 2_000, seed + 1)
    return same_distribution(rows, sample)


# --- the kernel against the reference ---------------------------------------------------

#: Every kind of rule, alone and together, with the two readings where they part (the
#: engine's prisoner rules take a withdrawing side's nobles).
RULES = {
    "at most 6 men": {"attacker.retreat": {"at_most": 6}},
    "at most 40%": {"defender.retreat": {"at_most": "40%"}},
    "archers gone": {"defender.retreat": {"gone": "archer"}},
    "knights gone": {"attacker.retreat": {"gone": "knight"}},
    "after 3 rounds, engine prisoners": {
        "attacker.retreat": {"after": 3},
        "battle.prisoner_rules": "engine",
    },
    "outnumbered, engine": {
        "defender.retreat": {"outnumbered": 1.25},
        "attacker.retreat": {"outnumbered": 4.0},
        "battle.rules": "engine",
    },
    "any of them, both sides": {
        "attacker.retreat": {"at_most": 4, "gone": "archer", "after": 4},
        "defender.retreat": {"at_most": "50%", "outnumbered": 1.2},
    },
}


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULES))
def test_stop_rules_agree_with_the_reference(name: str) -> None:
    scenario = knights_against_pikes(**RULES[name])
    rows = prepared(scenario).run(3, 0, 20_000)
    withdrew = np.isin(rows["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW))
    assert 0.02 < withdrew.mean() < 0.98, withdrew.mean()  # the rule matters here
    assert kernel_against_reference(scenario, 3) == []


# Slow tier (docs/testing.md): 3.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_garrison_holding_the_field_kills_the_nobles_it_would_take() -> None:
    """The engine: a garrison takes no prisoners, so a withdrawing side's nobles it would
    take are killed (as a beaten side's are)."""
    scenario = simulator.inline_scenario(
        RULESET,
        "noble, 20 soldier; noble, 6 knight",
        "garrison, 25 soldier",
        rules="engine",
        structure="tower:20",
    ).with_changes({"attacker.retreat": {"at_most": "40%"}})
    rows = prepared(scenario).run(3, 0, 20_000)
    withdrew = rows["winner"] == ATTACKER_WITHDREW
    assert 0.3 < withdrew.mean() < 0.9 and (rows["nobles_captured.attacker"] == 0).all()
    assert rows["nobles_killed.attacker"][withdrew].mean() > 0.25
    assert kernel_against_reference(scenario, 3) == []


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
@pytest.mark.parametrize(
    "changes",
    [
        {"battle.from_step": 1},  # the allies of round 2 are still to come
        {"battle.from_step": 2, "defender.retreat": {"at_most": 12}},  # they are there
        {"battle.from_step": 3, "attacker.retreat": {"after": 5}, "battle.rules": "engine"},
    ],
    ids=["before the allies", "allies there, a rule", "engine, after 5"],
)
def test_a_battle_in_progress_agrees_with_the_reference(changes: dict[str, Any]) -> None:
    scenario = allies_in_round_2(**changes)
    rows = prepared(scenario).run(5, 0, 20_000)
    assert (rows["steps"] > changes["battle.from_step"]).all()  # no volley, rounds go on
    assert kernel_against_reference(scenario, 5) == []


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
def test_the_state_after_a_round_of_a_battle_in_progress_agrees_with_the_reference() -> None:
    scenario = allies_in_round_2(**{"battle.from_step": 1, "attacker.retreat": {"at_most": 9}})
    made = prepared(scenario)
    for step in (2, 3):
        rows = made.run_until(7, 0, 20_000, step)
        sample = reference.simulate(scenario.model, 2_000, 8, until=step)
        assert (sample["winner"] == FIGHTING).any() and (rows["winner"] == FIGHTING).any()
        assert same_distribution(rows, sample, [c for c in rows if c in sample]) == []


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
def test_the_agreement_sees_a_withdrawal_one_round_late() -> None:
    """The comparison can tell: a rule of after 2 rounds against a reference of 3."""
    scenario = knights_against_pikes(**{"attacker.retreat": {"after": 2}})
    late = knights_against_pikes(**{"attacker.retreat": {"after": 3}})
    rows = prepared(scenario).run(3, 0, 20_000)
    assert same_distribution(rows, reference.simulate(late.model, 2_000, 4)) != []


# --- what a rule does, battle by battle ---------------------------------------------


def test_a_rule_never_fires_in_a_decided_battle_and_a_withdrawal_is_the_state_then() -> None:
    """Under the text's reading a withdrawal draws nothing: every battle decided with the
    rule is the battle without it, bit for bit, and every withdrawal is the battle without
    the rule stopped after that round, still undecided then."""
    plain = knights_against_pikes()
    ruled = knights_against_pikes(
        **{"attacker.retreat": {"at_most": 7}, "defender.retreat": {"gone": "archer"}}
    )
    n = 2_000
    whole = prepared(plain).run(9, 0, n)
    rows = prepared(ruled).run(9, 0, n)
    withdrew = np.isin(rows["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW))
    assert withdrew.any() and (~withdrew).any()
    for column, values in whole.items():
        if column in rows:
            assert np.array_equal(rows[column][~withdrew], values[~withdrew]), column
    assert (rows["decided_in.withdrawal"] == withdrew).all()
    cuts = {
        int(t): prepared(plain).run_until(9, 0, n, int(t)) for t in set(rows["steps"][withdrew])
    }
    for i in np.flatnonzero(withdrew):
        cut = cuts[int(rows["steps"][i])]
        assert cut["winner"][i] == FIGHTING  # undecided after that round without the rule
        for column in cut:
            if column not in ("winner",):
                assert cut[column][i] == rows[column][i], (i, column)


def test_both_sides_at_once_the_attacker_withdraws() -> None:
    scenario = knights_against_pikes(
        **{"attacker.retreat": {"after": 2}, "defender.retreat": {"after": 2}}
    )
    rows = prepared(scenario).run(2, 0, 3_000)
    going = rows["steps"] >= 2
    assert going.any()
    assert (rows["winner"][rows["winner"] >= ATTACKER_WITHDREW] == ATTACKER_WITHDREW).all()
    assert ((rows["winner"] == ATTACKER_WITHDREW) == (rows["winner"] > 2)).all()
    assert (rows["steps"][rows["winner"] == ATTACKER_WITHDREW] == 2).all()


def test_a_rule_true_from_the_start_withdraws_after_the_first_round() -> None:
    """At most 100% holds before a blow is struck; the side still fights round 1 (and
    the volley before it): a withdrawal after round 1, or a battle decided by then."""
    rows = prepared(knights_against_pikes(**{"defender.retreat": {"at_most": "100%"}})).run(
        4, 0, 2_000
    )
    assert set(np.unique(rows["winner"][rows["steps"] >= 1])) <= {0, 1, 2, DEFENDER_WITHDREW}
    assert (rows["steps"] <= 1).all() and (rows["winner"] == DEFENDER_WITHDREW).mean() > 0.5


def test_a_rule_that_cannot_hold_changes_nothing() -> None:
    plain = prepared(knights_against_pikes()).run(6, 0, 2_000)
    never = prepared(knights_against_pikes(**{"attacker.retreat": {"after": 999}})).run(6, 0, 2_000)
    for column, values in plain.items():
        assert np.array_equal(never[column], values), column


def test_engine_prisoners_take_a_withdrawing_sides_nobles_the_text_does_not() -> None:
    rule = {"attacker.retreat": {"after": 1}}
    text = prepared(knights_against_pikes(**rule)).run(8, 0, 4_000)
    engine = prepared(knights_against_pikes(**rule, **{"battle.prisoner_rules": "engine"})).run(
        8, 0, 4_000
    )
    for rows in (text, engine):
        assert (rows["winner"] == ATTACKER_WITHDREW).mean() > 0.9
    withdrew = text["winner"] == ATTACKER_WITHDREW
    assert (text["nobles_captured.attacker"][withdrew] == 0).all()
    # The engine: a noble standing is taken with clamp(25 W / L, 25, 75)% (W, L standing).
    taken = engine["nobles_captured.attacker"][engine["winner"] == ATTACKER_WITHDREW]
    assert 0.25 <= taken.mean() <= 0.75


def test_a_type_control_limits_keep_out_is_gone_from_the_start() -> None:
    scenario = simulator.inline_scenario(
        RULESET, "noble, 10 soldier, 2 peasant", "noble, 12 soldier", control_limits="true"
    ).with_changes({"attacker.retreat": {"gone": "peasant"}})
    rows = prepared(scenario).run(1, 0, 500)
    assert (rows["winner"][rows["steps"] >= 1] == ATTACKER_WITHDREW).all()


# --- a battle in progress -----------------------------------------------------------


def test_allies_of_a_round_fought_are_on_the_field_and_in_the_break_value() -> None:
    scenario = allies_in_round_2(**{"battle.from_step": 2})
    made = prepared(scenario)
    groups, sides = made.arrays.groups, made.arrays.sides
    allies = groups[:, k.G_ARRIVES] == 2
    value = int((groups[allies, ol.G_COUNT] * groups[allies, ol.G_VALUE]).sum())
    before = prepared(allies_in_round_2()).arrays.sides
    assert sides[1, ol.S_START] == before[1, ol.S_START] + value > before[1, ol.S_START]
    assert (sides[:, k.S_FROM_STEP] == 2).all()


def test_steps_count_from_the_battles_start() -> None:
    scenario = knights_against_pikes(**{"battle.from_step": 3, "attacker.retreat": {"after": 4}})
    rows = prepared(scenario).run(2, 0, 2_000)
    assert (rows["steps"] == 4).all()
    assert ((rows["winner"] == ATTACKER_WITHDREW) | (rows["winner"] <= 2)).all()
    made = prepared(scenario)
    early = made.run_until(2, 0, 50, 2)  # a round already fought: the battle as given
    assert (early["winner"] == FIGHTING).all() and (early["steps"] == 2).all()
    assert all((early[c] == 0).all() for c in early if c.startswith("casualties."))


# --- one pass per step --------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"attacker.retreat": {"at_most": 6}, "defender.retreat": {"gone": "archer"}},
        {"battle.from_step": 2, "battle.rules": "engine", "attacker.retreat": {"after": 5}},
    ],
    ids=["no rules", "rules", "in progress, engine"],
)
def test_one_pass_is_run_until_battle_by_battle(changes: dict[str, Any]) -> None:
    made = prepared(knights_against_pikes(**changes))
    steps = [1, 2, 3, 4, 6, 9, 30]
    through = made.run_through(12, 100, 1_500, steps)
    for i, step in enumerate(steps):
        one = made.run_until(12, 100, 1_500, step)
        assert set(through) == set(one)
        for column, values in one.items():
            assert through[column].shape == (len(steps), 1_500)
            assert np.array_equal(through[column][i], values), (step, column)
    assert made.run_through(12, 100, 1_500, []) == {}


def test_one_thread_and_every_thread_give_the_same_battles() -> None:
    """Battle i draws the same numbers on any thread count and from any first battle,
    with rules, a battle in progress and the engine's prisoners taken on withdrawal."""
    made = prepared(
        knights_against_pikes(
            **{
                "attacker.retreat": {"at_most": "50%"},
                "defender.retreat": {"outnumbered": 1.5},
                "battle.prisoner_rules": "engine",
                "battle.from_step": 1,
            }
        )
    )
    with thread_count(1):
        one = made.run(21, 0, 3_000)
        one_through = made.run_through(4, 0, 2_000, [2, 3, 5])
    every = made.run(21, 0, 3_000)
    tail = made.run(21, 2_000, 1_000)
    assert (one["winner"] >= ATTACKER_WITHDREW).any()
    for column, values in one.items():
        assert np.array_equal(every[column], values), column
        assert np.array_equal(tail[column], values[2_000:]), column
    every_through = made.run_through(4, 0, 2_000, [2, 3, 5])
    assert all(np.array_equal(one_through[c], every_through[c]) for c in one_through)


# --- bad values: one line, exit status 2 ----------------------------------------------

SCENARIO = """ruleset = "age_of_gods"
name = "retreat"

[battle]
from_step = 0

[[attacker.units]]
men = { knight = 10 }

[attacker.retreat]
at_most = 3

[[defender.units]]
men = { pikeman = 10 }
"""


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("at_most = 3", "at_most = -1", r":11: attacker.retreat.at_most: -1 is below 0"),
        ("at_most = 3", 'at_most = "130%"', r"attacker.retreat.at_most: '130%'.*0% to 100%"),
        ("at_most = 3", 'gone = "knigt"', r"retreat.gone: 'knigt' is not a type .*'knight'"),
        ("at_most = 3", 'gone = "pikeman"', r"retreat.gone: 'pikeman' is not a type this side"),
        ("at_most = 3", "after = 0", r"attacker.retreat.after: .*0"),
        ("at_most = 3", "outnumbered = 0.5", r"attacker.retreat.outnumbered: .*0.5"),
        ("at_most = 3", "at_mots = 3", r"retreat.at_mots: unknown key.*'at_most'"),
        ("from_step = 0", "from_step = -1", r":5: battle.from_step: .*-1"),
        ("from_step = 0", 'from_step = "two"', r"battle.from_step: .*two"),
        ("from_step = 0", "from_stp = 1", r"battle.from_stp: unknown key.*'from_step'"),
    ],
)
def test_bad_values_are_one_line(tmp_path: Path, old: str, new: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    assert old in SCENARIO
    path.write_text(SCENARIO.replace(old, new))
    for command in ("run", "validate"):
        res = runner.invoke(app, [command, str(path)])
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
        message = " ".join(res.output.split())
        assert re.search(expected, message), message
        assert message.count("error:") == 1, message


def test_a_battle_in_progress_runs_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "in_progress.toml"
    path.write_text(SCENARIO.replace("from_step = 0", "from_step = 2").replace("at_most = 3", ""))
    res = runner.invoke(app, ["run", str(path), "-n", "2000", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["steps"]["all"]["q10"] >= 3  # rounds 3 on, counted from 0
    path.with_name("rules.toml").write_text(SCENARIO)
    res = runner.invoke(app, ["validate", str(path.with_name("rules.toml"))])
    assert res.exit_code == 0, res.output
