"""Skirmish as it unfolds: stop rules (``[attacker.retreat]``), a battle in progress
(``[battle] from_step``) and the kernel's one-pass record of the state after each turn.

The kernel against tests/reference/skirmish.py in distribution for each kind of rule;
battle by battle, a rule only ends a battle the same random stream fights without it,
never one a turn decided; the recorded turns are ``run_until``'s; a replay shows a
withdrawal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kernels.stops import ATTACKER_WITHDREW, DEFENDER_WITHDREW, FIGHTING
from simulator.cli import app
from simulator.rulesets.base import FROM_STEP, STOP_RULES
from simulator.rulesets.skirmish.replay import replay
from tests import ROOT
from tests.reference import skirmish as reference
from tests.stop_checks import (
    fails_in_one_line,
    kernel_against_reference,
    one_pass_is_run_until,
    prepared_of,
    rule_only_ends_undecided_battles,
    same_on_any_thread_count,
    scenario,
    slow_but,
)

runner = CliRunner()
SCENARIOS = ROOT / "scenarios" / "skirmish"
#: 3 cavalry (charge on the first turn) against 4 swordsmen; battles last 2 to 8 turns.
CAVALRY = (SCENARIOS / "cavalry_charge.toml").read_text(encoding="utf-8")
#: 3 archers, a veteran archer and a priest (who heals once) against a giant.
ARCHERS = (SCENARIOS / "archers_and_healer.toml").read_text(encoding="utf-8")
#: The same, the priest's healing used already and the archers wounded.
ARCHERS_HEALED = ARCHERS.replace(
    'units = ["3 archer", "veteran_archer", "priest"]',
    'units = ["archer(health=2)", "2 archer", "veteran_archer", '
    '{ type = "priest", healed = true }]',
)


#: Each kind of stop rule (and a battle in progress) on a scenario, and the outcomes the
#: reference must show for the case to test anything.
CASES = {
    "attacker at_most": (CAVALRY, "[attacker.retreat]\nat_most = 1", "", {ATTACKER_WITHDREW}),
    "defender at_most percent": (
        CAVALRY,
        '[defender.retreat]\nat_most = "50%"',
        "",
        {DEFENDER_WITHDREW},
    ),
    "attacker gone": (ARCHERS, '[attacker.retreat]\ngone = "priest"', "", {ATTACKER_WITHDREW}),
    "defender after": (CAVALRY, "[defender.retreat]\nafter = 3", "", {DEFENDER_WITHDREW}),
    "attacker outnumbered": (
        CAVALRY,
        "[attacker.retreat]\noutnumbered = 2.0",
        "",
        {ATTACKER_WITHDREW},
    ),
    "both sides": (
        CAVALRY,
        "[attacker.retreat]\nat_most = 2\n[defender.retreat]\nat_most = 2",
        "",
        {ATTACKER_WITHDREW, DEFENDER_WITHDREW},
    ),
    "from_step": (CAVALRY, "", "from_step = 2", {0, 1}),
    "from_step with a rule": (
        ARCHERS_HEALED,
        "[defender.retreat]\nafter = 6",
        "from_step = 2",
        {DEFENDER_WITHDREW},
    ),
}
#: The cases run by default: the rest are slow.
QUICK = ("both sides", "from_step")


# Slow tier (docs/testing.md): 2.6 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("name", slow_but(list(CASES), QUICK))
def test_kernel_agrees_with_the_reference(tmp_path: Path, name: str) -> None:
    text, extra, battle, shown = CASES[name]
    s = scenario(tmp_path, text, extra, battle)
    slow = reference.run(s.model, 1, 2000)
    fast = prepared_of(s).run(5, 0, 20_000)
    assert kernel_against_reference(fast, slow, shown, s.model.from_step) == []


@pytest.mark.slow
def test_a_wrong_rule_is_noticed(tmp_path: Path) -> None:
    """The comparison can fail: the kernel withdrawing after turn 3, the reference after 4."""
    slow = reference.run(
        scenario(tmp_path, CAVALRY, "[defender.retreat]\nafter = 4").model, 1, 2000
    )
    fast = prepared_of(scenario(tmp_path, CAVALRY, "[defender.retreat]\nafter = 3")).run(
        5, 0, 20_000
    )
    assert kernel_against_reference(fast, slow, {DEFENDER_WITHDREW}, 0) != []


@pytest.mark.parametrize(
    ("text", "extra"),
    [
        (CAVALRY, "[attacker.retreat]\nat_most = 1"),
        (ARCHERS, '[attacker.retreat]\ngone = "archer"'),
        (CAVALRY, "[attacker.retreat]\noutnumbered = 2.0\n[defender.retreat]\nafter = 4"),
    ],
)
def test_a_rule_only_ends_an_undecided_battle(tmp_path: Path, text: str, extra: str) -> None:
    """Battle by battle on the same stream: a battle is the one fought without the rule,
    or a withdrawal after a turn that left that battle undecided, its row as the battle
    stood then."""
    plain = prepared_of(scenario(tmp_path, text))
    ruled = prepared_of(scenario(tmp_path, text, extra))
    rule_only_ends_undecided_battles(plain, ruled)


def test_both_sides_at_once_the_attacker_withdraws(tmp_path: Path) -> None:
    """Rules true from the start: no side leaves before the battle starts; after the
    first turn every battle it left undecided is the attacker's withdrawal."""
    both = "[attacker.retreat]\nat_most = 3\n[defender.retreat]\nat_most = 4"
    out = prepared_of(scenario(tmp_path, CAVALRY, both)).run(4, 0, 3000)
    assert (out["steps"] == 1).all() and (out["winner"] == ATTACKER_WITHDREW).all()
    assert (out["damage.attacker.charge"] > 0).any()  # the first turn was fought


def test_from_step_counts_turns_from_the_battles_start(tmp_path: Path) -> None:
    """A battle given after 2 turns: no charge (first turn only), turns counted on, the
    turn limit counted from the battle's start, the state asked at or before turn 2 the
    battle as given."""
    s = scenario(tmp_path, CAVALRY, "", "from_step = 2\nturn_limit = 5")
    assert s.model.from_step == 2
    p = prepared_of(s)
    assert p.from_step == 2 and {STOP_RULES, FROM_STEP} <= p.unfolds
    out = p.run(2, 0, 3000)
    assert (out["damage.attacker.charge"] == 0).all()
    assert out["steps"].min() >= 3 and out["steps"].max() == 5
    assert (out["turn_limit"] == (out["steps"] == 5) & (out["winner"] == 2)).all()
    given = p.run_until(2, 0, 50, 2)
    assert (given["winner"] == FIGHTING).all() and (given["steps"] == 2).all()
    assert all((given[c] == 0).all() for c in given if c.startswith("casualties."))
    # From turn 0 the charge comes first.
    assert (
        prepared_of(scenario(tmp_path, CAVALRY)).run(2, 0, 300)["damage.attacker.charge"] > 0
    ).any()


def test_a_healer_that_has_healed_heals_no_more(tmp_path: Path) -> None:
    assert ARCHERS_HEALED != ARCHERS
    fresh = prepared_of(scenario(tmp_path, ARCHERS)).run(1, 0, 2000)
    used = prepared_of(scenario(tmp_path, ARCHERS_HEALED)).run(1, 0, 2000)
    assert (fresh["healing.attacker"] > 0).any() and (used["healing.attacker"] == 0).all()


def test_the_docs_battle_in_progress_validates(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "skirmish.md").read_text(encoding="utf-8")
    block = next(b for b in page.split("```toml\n")[1:] if "from_step = 2" in b)
    s = scenario(tmp_path, 'ruleset = "skirmish"\n' + block.split("```")[0])
    assert s.model.from_step == 2
    assert [p.healed for p in s.model.participants].count(True) == 1
    out = prepared_of(s).run(1, 0, 500)
    assert (out["steps"] >= 3).all() and (out["healing.defender"] == 0).all()


@pytest.mark.parametrize(
    ("text", "extra", "battle"),
    [
        (CAVALRY, "", ""),
        (CAVALRY, "[attacker.retreat]\nat_most = 1\n[defender.retreat]\noutnumbered = 3.0", ""),
        (ARCHERS, '[attacker.retreat]\ngone = "archer"', 'from_step = 1\nrules = "engine"'),
    ],
)
def test_one_pass_is_run_until_battle_by_battle(
    tmp_path: Path, text: str, extra: str, battle: str
) -> None:
    one_pass_is_run_until(prepared_of(scenario(tmp_path, text, extra, battle)))


def test_one_thread_and_all_threads_draw_the_same_battles(tmp_path: Path) -> None:
    extra = "[attacker.retreat]\noutnumbered = 2.0\n[defender.retreat]\nat_most = 2"
    p = prepared_of(scenario(tmp_path, CAVALRY, extra, "from_step = 1"))
    same_on_any_thread_count(p)


def test_a_replay_shows_the_withdrawal(tmp_path: Path) -> None:
    extra = "[defender.retreat]\nat_most = 2"
    s = scenario(tmp_path, CAVALRY, extra, "from_step = 1")
    rows = prepared_of(s).run(s.seed, 0, 200)
    battle = int(np.flatnonzero(rows["winner"] == DEFENDER_WITHDREW)[0])
    replayed = replay(s, battle, battles=200)
    assert replayed.outcome["winner"] == DEFENDER_WITHDREW
    assert min(m.turn for m in replayed.moves) == 2  # turn 1 was fought before
    result = runner.invoke(
        app,
        ["replay", str(tmp_path / "s.toml"), "--battle", str(battle), "--battles", "200"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    turns = replayed.outcome["steps"]
    assert f"defender withdrew after {turns} turns" in result.output
    assert "the defender withdraws at 2 men left or fewer" in result.output
    assert "a battle in progress: 1 turn fought before" in result.output
    # The defender had at most 2 swordsmen left when it withdrew.
    left = [v for k, v in replayed.outcome.items() if k.startswith("health_left.defender")]
    assert sum(1 for v in left if v > 0) <= 2


@pytest.mark.parametrize(
    ("extra", "battle", "expected"),
    [
        ("[attacker.retreat]\nat_most = -1", "", ("attacker.retreat.at_most", "below 0")),
        ('[attacker.retreat]\nat_most = "x%"', "", ("attacker.retreat.at_most", "percentage")),
        ("[defender.retreat]\nafter = 0", "", ("defender.retreat.after",)),
        ("[defender.retreat]\noutnumbered = 0.5", "", ("defender.retreat.outnumbered",)),
        (
            '[defender.retreat]\ngone = "swordsmen"',
            "",
            ("defender.retreat.gone", "not a type this side fields", "did you mean 'swordsman'"),
        ),
        ('[attacker.retreat]\ngone = "swordsman"', "", ("attacker.retreat.gone",)),
        ("[attacker]\nretreet = 3", "", ("attacker", "unknown key 'retreet'", "'retreat'")),
        (
            "",
            "",
            ("units[0].healed", "a swordsman has no healing"),
        ),
        (
            "",
            "turn_limit = 10\nfrom_step = 10",
            ("battle.from_step", "turn_limit = 10", "expected 0 to 9"),
        ),
        ("", "from_step = -1", ("battle.from_step",)),
    ],
)
def test_bad_values_are_one_line(
    tmp_path: Path, extra: str, battle: str, expected: tuple[str, ...]
) -> None:
    text = CAVALRY.replace("[battle]\n", f"[battle]\n{battle}\n", 1) + "\n" + extra
    if not extra and not battle:
        text = text.replace('"4 swordsman"', '{ type = "swordsman", count = 4, healed = true }')
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    fails_in_one_line(path, *expected)
