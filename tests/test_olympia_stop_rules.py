"""Olympia's stop rules and a battle in progress (docs/olympia.md, "The battle as it
unfolds"): the kernels against the plain-Python reference in distribution, battle by
battle against the same battles without rules, and bad values as one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib
from typer.testing import CliRunner

from simulator import rulesets
from simulator.cli import app
from simulator.errors import Source
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.running.runner import thread_count
from simulator.scenario.scenario import from_data
from simulator.testing import same_distribution
from tests.reference import olympia as reference
from tests.test_olympia_errors import assert_clean_failure

runner = CliRunner()
ATTACKER_WITHDREW, DEFENDER_WITHDREW, FIGHTING = 3, 4, 5

#: A small battle with rear archers, a second unit and a noble a side: some strikes miss,
#: rows move, nobles come into reach; it lasts 5 to 60 strikes.
BATTLE = """
ruleset = "olympia"
[[attacker.units]]
men = { soldier = 8 }
[[attacker.units]]
men = [{ type = "archer", count = 4, behind = 1 }]
[[defender.units]]
men = { swordsman = 4, pikeman = 3 }
"""


def scenario_of(text: str = BATTLE, **sets: Any) -> Any:
    """The scenario of ``text`` with ``sets`` ("attacker.retreat": {...}) put in."""
    data = tomllib.loads(text)
    for path, value in sets.items():
        where = data
        *parents, last = path.split(".")
        for key in parents:
            where = where.setdefault(key, {})
        where[last] = value
    return from_data(data, Source("test.toml"))


def prepared_of(scenario: Any, kernel: str | None = None) -> OlympiaPrepared:
    prepared = rulesets.get("olympia").prepare(scenario.model)
    assert isinstance(prepared, OlympiaPrepared)
    if kernel is not None:
        prepared.use_kernel(kernel)
    return prepared


#: One rule of each kind (and two together, and both sides'), each firing in a good
#: share of the battles.
RULES = {
    "at_most": {"attacker.retreat": {"at_most": 5}},
    "at_most percent": {"defender.retreat": {"at_most": "60%"}},
    "gone": {"attacker.retreat": {"gone": "soldier"}},
    "after": {"defender.retreat": {"after": 12}},
    "outnumbered": {"attacker.retreat": {"outnumbered": 1.5}},
    "two together": {"defender.retreat": {"gone": "pikeman", "after": 20}},
    "both sides": {
        "attacker.retreat": {"at_most": 8},
        "defender.retreat": {"at_most": 1},
    },
    "from_step": {"battle.from_step": 7, "attacker.retreat": {"after": 15}},
    "alternating": {
        "battle.strike_order": "alternating",
        "attacker.retreat": {"at_most": 8},
        "defender.retreat": {"outnumbered": 2.5},
    },
}


# Slow tier (docs/testing.md): 21.4 s for its 9 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(RULES))
def test_the_kernels_withdraw_as_the_reference_does(case: str) -> None:
    scenario = scenario_of(**RULES[case])
    sample = reference.simulate(scenario.model, 3000, 1)
    assert np.isin(sample["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW)).mean() > 0.05
    prepared = prepared_of(scenario)
    for kernel in prepared.kernel_choices():
        prepared.use_kernel(kernel)
        rows = prepared.run(5, 0, 20_000)
        assert same_distribution(rows, sample) == [], (case, kernel)


def test_a_rule_that_cannot_hold_leaves_the_battles_as_they_were() -> None:
    """``after`` past the longest battle never comes: every battle is the battle without
    the rule, bit for bit (on the strike kernel; none withdraws on any)."""
    plain = prepared_of(scenario_of(), "strike").run(3, 0, 2000)
    for rule in ({"after": 100_000},):
        ruled = prepared_of(scenario_of(**{"attacker.retreat": rule}))
        for kernel in ruled.kernel_choices():
            ruled.use_kernel(kernel)
            rows = ruled.run(3, 0, 2000)
            if kernel == "strike":
                for column, values in plain.items():
                    np.testing.assert_array_equal(rows[column], values)
            assert not np.isin(rows["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW)).any()


@pytest.mark.parametrize("kernel", ["strike", "skip"])
@pytest.mark.parametrize("case", ["at_most", "gone", "after", "both sides", "from_step"])
def test_a_withdrawal_is_the_battle_so_far_never_a_decided_one(case: str, kernel: str) -> None:
    """On one kernel the same battle draws the same numbers with a rule and without until
    it withdraws: a battle that withdraws after strike S is, without the rule, still
    undecided then, in the state the rule left it (run_until S); one that does not is
    the battle without the rule, whole."""
    sets = RULES[case]
    free = {key: value for key, value in sets.items() if key.startswith("battle.")}
    ruled = prepared_of(scenario_of(**sets), kernel)
    plain = prepared_of(scenario_of(**free), kernel)
    assert plain.recording_kernel == kernel
    n = 2000
    rows = ruled.run(9, 0, n)
    whole = plain.run(9, 0, n)
    withdrew = np.isin(rows["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW))
    assert 0 < withdrew.sum() < n
    for column in rows:
        np.testing.assert_array_equal(rows[column][~withdrew], whole[column][~withdrew])
    assert (whole["steps"][withdrew] > rows["steps"][withdrew]).all()  # undecided then
    for step in np.unique(rows["steps"][withdrew]):
        at = withdrew & (rows["steps"] == step)
        cut = plain.run_until(9, 0, n, int(step))
        assert (cut["winner"][at] == FIGHTING).all()
        for column in rows:
            if column != "winner":
                np.testing.assert_array_equal(rows[column][at], cut[column][at], column)


def test_a_break_is_a_defeat_even_when_the_rule_holds_then() -> None:
    """A noble with two knights breaks when both fall (the source text's example): the
    rule "at most 0 men" holds at that strike too, and the battle is a defeat."""
    text = """
ruleset = "olympia"
[[attacker.units]]
men = { knight = 2 }
[[defender.units]]
men = { knight = 2 }
"""
    prepared = prepared_of(scenario_of(text, **{"attacker.retreat": {"at_most": 0}}))
    for kernel in prepared.kernel_choices():
        prepared.use_kernel(kernel)
        rows = prepared.run(2, 0, 5000)
        assert set(np.unique(rows["winner"])) == {0, 1}, kernel


def test_when_both_rules_hold_the_attacker_withdraws() -> None:
    """Both sides withdraw after the first strike: the attacker does, after it, in every
    battle it leaves undecided."""
    both = {"attacker.retreat": {"after": 1}, "defender.retreat": {"after": 1}}
    prepared = prepared_of(scenario_of(**both))
    for kernel in prepared.kernel_choices():
        prepared.use_kernel(kernel)
        rows = prepared.run(4, 0, 3000)
        assert (rows["winner"] == ATTACKER_WITHDREW).all(), kernel
        assert (rows["steps"] == 1).all()
    sample = reference.simulate(scenario_of(**both).model, 200, 1)
    assert (sample["winner"] == ATTACKER_WITHDREW).all() and (sample["steps"] == 1).all()


def test_a_rule_true_from_the_start_withdraws_after_the_first_strike() -> None:
    """At most 50 men of 12: true before any strike; the side withdraws after the
    first (so does ``after`` 3 of a battle given at strike 10), never before it."""
    cases = (
        {"attacker.retreat": {"at_most": 50}},
        {"battle.from_step": 10, "defender.retreat": {"after": 3}},
    )
    for sets in cases:
        prepared = prepared_of(scenario_of(**sets))
        first = 1 + prepared.from_step
        for kernel in prepared.kernel_choices():
            prepared.use_kernel(kernel)
            rows = prepared.run(4, 0, 2000)
            assert (rows["steps"] == first).all(), (sets, kernel)
            assert np.isin(rows["winner"], (ATTACKER_WITHDREW, DEFENDER_WITHDREW)).all()


def test_withdrawing_takes_no_prisoners() -> None:
    """The winner takes prisoners of a defeated side; a side that withdrew is not one."""
    prepared = prepared_of(scenario_of(**{"defender.retreat": {"at_most": 1}}))
    rows = prepared.run(6, 0, 5000)
    withdrew = rows["winner"] == DEFENDER_WITHDREW
    assert 0.05 < withdrew.mean() < 0.95
    for side in ("attacker", "defender"):
        assert (rows[f"nobles_captured.{side}"][withdrew] == 0).all()
    assert rows["nobles_captured.defender"][rows["winner"] == 0].mean() > 0.3


def test_a_battle_in_progress_counts_its_strikes_from_the_start() -> None:
    """``from_step`` 40: the same battles, every strike count 40 more."""
    plain = prepared_of(scenario_of(), "strike")
    going = prepared_of(scenario_of(**{"battle.from_step": 40}))
    assert going.from_step == 40
    for kernel in going.kernel_choices():
        going.use_kernel(kernel)
        plain.use_kernel(kernel)
        rows, before = going.run(8, 0, 1000), plain.run(8, 0, 1000)
        for column in rows:
            shift = 40 if column == "steps" else 0
            np.testing.assert_array_equal(rows[column], before[column] + shift, column)


def test_the_reference_counts_a_battle_in_progress_from_its_step() -> None:
    sample = reference.simulate(scenario_of(**{"battle.from_step": 40}).model, 300, 1)
    plain = reference.simulate(scenario_of().model, 300, 1)
    np.testing.assert_array_equal(sample["steps"], plain["steps"] + 40)


def test_same_battles_on_one_thread_and_all() -> None:
    scenario = scenario_of(**RULES["both sides"], **{"battle.from_step": 3})
    prepared = prepared_of(scenario)
    for kernel in prepared.kernel_choices():
        prepared.use_kernel(kernel)
        with thread_count(1):
            one = prepared.run(12, 100, 3000)
            one_steps = prepared.run_through(12, 100, 3000, [2, 5, 9, 30])
        many = prepared.run(12, 100, 3000)
        many_steps = prepared.run_through(12, 100, 3000, [2, 5, 9, 30])
        for column in one:
            np.testing.assert_array_equal(one[column], many[column])
            np.testing.assert_array_equal(one_steps[column], many_steps[column])


@pytest.mark.parametrize("case", ["plain", "at_most", "after", "from_step"])
def test_one_pass_through_the_steps_is_run_until_at_each(case: str) -> None:
    """run_through records every step in one pass: battle by battle what run_until
    gives at each step (a battle decided before it with its final row)."""
    sets = {} if case == "plain" else RULES[case]
    prepared = prepared_of(scenario_of(**sets))
    steps = [1, 2, 3, 5, 8, 9, 10, 13, 21, 34, 55, 89]
    through = prepared.run_through(7, 50, 1500, steps)
    assert set(through) == set(prepared.columns)
    for k, step in enumerate(steps):
        until = prepared.run_until(7, 50, 1500, step)
        for column, values in until.items():
            assert through[column].shape == (len(steps), 1500)
            np.testing.assert_array_equal(through[column][k], values, f"{column} at {step}")
    fighting = through["winner"] == FIGHTING
    assert fighting[0].mean() > 0.9 and not fighting[-1].any()
    steps_of = np.broadcast_to(np.array(steps)[:, None], fighting.shape)
    assert (through["steps"][fighting] == steps_of[fighting]).all()


# Slow tier (docs/testing.md): 2.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_state_after_a_step_with_rules_agrees_with_the_reference() -> None:
    scenario = scenario_of(**RULES["from_step"])
    prepared = prepared_of(scenario)
    for step in (9, 13):
        sample = reference.simulate(scenario.model, 3000, 1, until=step)
        assert (sample["winner"] == FIGHTING).any()
        rows = prepared.run_until(5, 0, 20_000, step)
        assert same_distribution(rows, sample) == [], step


def test_the_chain_kernel_is_never_offered_for_rules() -> None:
    """Every kernel offered runs the rules; a scenario naming one that does not is one
    line."""
    prepared = prepared_of(scenario_of(**RULES["gone"]))
    assert "chain" not in prepared.kernel_choices()
    with pytest.raises(Exception, match="does not run stop rules"):
        prepared.use_kernel("chain")


BAD = {
    "negative at_most": (
        "[attacker.retreat]\nat_most = -1\n",
        ["attacker.retreat.at_most", "below 0"],
    ),
    "after 0": ("[attacker.retreat]\nafter = 0\n", ["attacker.retreat.after"]),
    "gone not fielded": (
        '[defender.retreat]\ngone = "knight"\n',
        ["defender.retreat.gone", "'knight' is not a type this side fields"],
    ),
    "gone misspelt": (
        '[defender.retreat]\ngone = "pikemen"\n',
        ["defender.retreat.gone", "did you mean 'pikeman'"],
    ),
    "from_step negative": ("[battle]\nfrom_step = -2\n", ["battle.from_step"]),
    "chain with rules": (
        '[battle]\nkernel = "chain"\n[attacker.retreat]\nat_most = 3\n',
        ["chain", "does not run stop rules"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_values_are_one_line(case: str, tmp_path: Path) -> None:
    extra, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(BATTLE + extra)
    for command in (["validate", str(path)], ["run", str(path), "-n", "10"]):
        assert_clean_failure(runner.invoke(app, command), expected)
