"""Confrontation as it unfolds: stop rules (``[attacker.retreat]``), a battle in progress
(``[battle] from_step``) and the kernel's one-pass record of the state after each turn.

The kernel against tests/reference/confrontation.py in distribution for each kind of
rule; battle by battle, a rule only ends a battle the same random stream fights
without it, never one a turn decided; and the recorded turns are ``run_until``'s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kernels.stops import ATTACKER_WITHDREW, DEFENDER_WITHDREW, FIGHTING
from simulator.rulesets.base import FROM_STEP, STOP_RULES
from tests import ROOT
from tests.reference import confrontation as reference
from tests.stop_checks import (
    fails_in_one_line,
    kernel_against_reference,
    one_pass_is_run_until,
    prepared_of,
    rule_only_ends_undecided_battles,
    same_on_any_thread_count,
    scenario,
)

runner = CliRunner()
SCENARIOS = ROOT / "scenarios" / "confrontation"
#: 4 units a side, the simple policy, 10 turns; battles last 2 to 5 turns.
OPEN_FIELD = (SCENARIOS / "open_field.toml").read_text(encoding="utf-8")
#: A script of 6 turns (attack, bombard, strike in turn): from_step picks its turns.
STRIKE = (SCENARIOS / "strike.toml").read_text(encoding="utf-8")


#: Each kind of stop rule (and a battle in progress) on a scenario, and the outcomes the
#: reference must show for the case to test anything.
CASES = {
    "attacker at_most": (OPEN_FIELD, "[attacker.retreat]\nat_most = 2", "", {ATTACKER_WITHDREW}),
    "defender at_most percent": (
        OPEN_FIELD,
        '[defender.retreat]\nat_most = "75%"',
        "",
        {DEFENDER_WITHDREW},
    ),
    "attacker gone": (OPEN_FIELD, '[attacker.retreat]\ngone = "trooper"', "", {ATTACKER_WITHDREW}),
    "defender after": (OPEN_FIELD, "[defender.retreat]\nafter = 2", "", {DEFENDER_WITHDREW}),
    "attacker outnumbered": (
        OPEN_FIELD,
        "[attacker.retreat]\noutnumbered = 1.5",
        "",
        {ATTACKER_WITHDREW},
    ),
    "both sides": (
        STRIKE,
        "[attacker.retreat]\nat_most = 1\n[defender.retreat]\nat_most = 1",
        "",
        {ATTACKER_WITHDREW, DEFENDER_WITHDREW},
    ),
    "from_step scripted": (STRIKE, "", "from_step = 2", {0, 1}),
    "from_step with a rule": (
        OPEN_FIELD,
        "[defender.retreat]\nafter = 6",
        "from_step = 4",
        {DEFENDER_WITHDREW},
    ),
}


# Against the live pure-Python reference (statistical): slow tier, as the stored samples.
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_kernel_agrees_with_the_reference(tmp_path: Path, name: str) -> None:
    text, extra, battle, shown = CASES[name]
    s = scenario(tmp_path, text, extra, battle)
    slow = reference.run(s.model, 1500, 1)
    fast = prepared_of(s).run(5, 0, 20_000)
    assert kernel_against_reference(fast, slow, shown, s.model.from_step) == []


@pytest.mark.slow
def test_a_wrong_rule_is_noticed(tmp_path: Path) -> None:
    """The comparison can fail: the kernel at 2 units left against the reference at 1."""
    slow = reference.run(
        scenario(tmp_path, OPEN_FIELD, "[attacker.retreat]\nat_most = 1").model, 3000, 1
    )
    fast = prepared_of(scenario(tmp_path, OPEN_FIELD, "[attacker.retreat]\nat_most = 2")).run(
        5, 0, 20_000
    )
    assert kernel_against_reference(fast, slow, {ATTACKER_WITHDREW}, 0) != []


@pytest.mark.parametrize(
    "extra",
    [
        "[attacker.retreat]\nat_most = 2",
        '[defender.retreat]\ngone = "veteran"',
        "[attacker.retreat]\noutnumbered = 1.5\n[defender.retreat]\nafter = 3",
    ],
)
def test_a_rule_only_ends_an_undecided_battle(tmp_path: Path, extra: str) -> None:
    """Battle by battle on the same stream: a battle is the one fought without the rule,
    or a withdrawal after a turn that left that battle undecided, its row as the battle
    stood then."""
    plain = prepared_of(scenario(tmp_path, OPEN_FIELD))
    ruled = prepared_of(scenario(tmp_path, OPEN_FIELD, extra))
    rule_only_ends_undecided_battles(plain, ruled)


def test_both_sides_at_once_the_attacker_withdraws(tmp_path: Path) -> None:
    """Rules true from the start: no side leaves before the battle starts; after the
    first turn every battle it left undecided is the attacker's withdrawal."""
    both = "[attacker.retreat]\nat_most = 4\n[defender.retreat]\nat_most = 4"
    out = prepared_of(scenario(tmp_path, OPEN_FIELD, both)).run(4, 0, 3000)
    whole = prepared_of(scenario(tmp_path, OPEN_FIELD)).run(4, 0, 3000)
    assert (out["steps"] == 1).all()
    decided_first = whole["steps"] == 1
    assert np.array_equal(out["winner"][decided_first], whole["winner"][decided_first])
    assert (out["winner"][~decided_first] == ATTACKER_WITHDREW).all() and (~decided_first).any()


def test_the_last_turn_is_a_draw_not_a_withdrawal(tmp_path: Path) -> None:
    text = OPEN_FIELD.replace("turns = 10", "turns = 2")
    out = prepared_of(scenario(tmp_path, text, "[attacker.retreat]\nafter = 2")).run(1, 0, 2000)
    assert set(np.unique(out["winner"]).tolist()) <= {0, 1, 2}
    assert (out["winner"] == 2).any()


def test_from_step_counts_turns_from_the_battles_start(tmp_path: Path) -> None:
    """A battle given after 4 turns of 10 lasts at most 6 more, its turns counted on."""
    s = scenario(tmp_path, OPEN_FIELD, "", "from_step = 4")
    assert s.model.from_step == 4
    p = prepared_of(s)
    assert p.from_step == 4 and {STOP_RULES, FROM_STEP} <= p.unfolds
    out = p.run(2, 0, 2000)
    assert out["steps"].min() >= 5 and out["steps"].max() <= 10
    # The state asked for at or before the turn reached is the battle as given.
    given = p.run_until(2, 0, 50, 3)
    assert (given["winner"] == FIGHTING).all() and (given["steps"] == 4).all()
    assert all((given[c] == 0).all() for c in given if c.startswith("casualties."))


@pytest.mark.parametrize(
    ("text", "extra", "battle"),
    [
        (OPEN_FIELD, "", ""),
        (OPEN_FIELD, '[attacker.retreat]\nat_most = 2\n[defender.retreat]\ngone = "flyer"', ""),
        (STRIKE, "[defender.retreat]\nafter = 4", "from_step = 1"),
    ],
)
def test_one_pass_is_run_until_battle_by_battle(
    tmp_path: Path, text: str, extra: str, battle: str
) -> None:
    one_pass_is_run_until(prepared_of(scenario(tmp_path, text, extra, battle)))


def test_one_thread_and_all_threads_draw_the_same_battles(tmp_path: Path) -> None:
    extra = "[attacker.retreat]\noutnumbered = 1.5\n[defender.retreat]\nat_most = 2"
    p = prepared_of(scenario(tmp_path, STRIKE, extra, "from_step = 1"))
    same_on_any_thread_count(p)


@pytest.mark.parametrize(
    ("extra", "battle", "expected"),
    [
        ("[attacker.retreat]\nat_most = -1", "", ("attacker.retreat.at_most", "below 0")),
        ('[attacker.retreat]\nat_most = "120%"', "", ("attacker.retreat.at_most", "0% to 100%")),
        ("[defender.retreat]\nafter = 0", "", ("defender.retreat.after",)),
        ("[defender.retreat]\noutnumbered = 0.5", "", ("defender.retreat.outnumbered",)),
        (
            '[defender.retreat]\ngone = "troper"',
            "",
            ("defender.retreat.gone", "not a type this side fields", "did you mean 'trooper'"),
        ),
        ("[defender.retreat]\nwhen = 3", "", ("defender.retreat", "unknown key 'when'")),
        ("", "from_step = 10", ("battle.from_step", "lasts 10 turns", "expected 0 to 9")),
        ("", "from_step = -1", ("battle.from_step",)),
    ],
)
def test_bad_values_are_one_line(
    tmp_path: Path, extra: str, battle: str, expected: tuple[str, ...]
) -> None:
    text = OPEN_FIELD.replace("[battle]\n", f"[battle]\n{battle}\n", 1) + "\n" + extra
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    fails_in_one_line(path, *expected)
