"""The exact best retreat rule (simulator.best_retreat, ``battle-odds retreat``).

Checked against what can be said by hand (a win worth nothing: withdraw after the first
strike, losing what that strike took, read from the exact state after strike 1; a win
worth so much that no position is worth leaving: the value of never retreating, from the
exact solver), against every fixed rule ``at_most = K`` and ``outnumbered`` solved by the
exact solver (the best rule is no worse), and against a plain-Python Monte Carlo of the
rule it found (tests/reference/olympia.py's battles, the side withdrawing where the rule
says), inside a 99.9% interval.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.rulesets.olympia.exact import exact, exact_after
from simulator.rulesets.stop_rules import NEVER, StopRule
from simulator.studies.retreat import best_retreat
from tests.reference import olympia as reference

Z999 = 3.29
BATTLE = """
ruleset = "olympia"
name = "NAME"

[units.knight]
cost = 3

[attacker]
break_point = 0

[[attacker.units]]
men = { ATTACKER }

[defender]
break_point = 0

[[defender.units]]
men = { DEFENDER }
RULE
"""


def scenario_file(
    tmp_path: Path, attacker: str, defender: str, rule: str = "", name: str = "tiny"
) -> Path:
    text = BATTLE.replace("NAME", name).replace("ATTACKER", attacker)
    text = text.replace("DEFENDER", defender).replace("RULE", rule)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def load(tmp_path: Path, attacker: str, defender: str, rule: str = "") -> simulator.Scenario:
    return simulator.load_scenario(scenario_file(tmp_path, attacker, defender, rule))


def value_of(scenario: simulator.Scenario, side: str, rule: StopRule, win_value: float) -> float:
    """The exact value of a fixed ``rule`` for ``side`` (the exact solver's chances and
    expected casualties), each man priced at his type's cost."""
    s = ("attacker", "defender").index(side)
    rules = list(scenario.model.retreat)
    rules[s] = rule
    model = dataclasses.replace(scenario.model, retreat=(rules[0], rules[1]))
    solved = exact(dataclasses.replace(scenario, model=model))
    lost = sum(
        scenario.model.fighters[t].cost * solved.casualties[f"casualties.{side}.{t}"]
        for t in scenario.model.sides[s].fielded
    )
    return win_value * solved.win[side] - lost


def test_a_win_worth_nothing_withdraws_after_the_first_strike(tmp_path: Path) -> None:
    """W = 0: fighting can only cost men, so the side withdraws after the first strike
    whatever it did, losing what it took: the value is minus the expected price of the
    side's men lost in strike 1 (the exact state after strike 1, an independent push)."""
    scenario = load(tmp_path, "soldier = 2", "soldier = 3")
    for side, s in (("attacker", 0), ("defender", 1)):
        result = best_retreat(scenario, side, win_value=0.0)
        after = exact_after(scenario, 1)
        men = scenario.model.sides[s].men
        lost = sum(p * (men - n) for n, p in after.men_left[f"{side}.soldier"].items())
        assert result.value == pytest.approx(-lost, abs=1e-12)
        assert result.rule.withdrew == pytest.approx(1.0, abs=1e-12)
        assert result.rule.won == 0.0
        assert result.never < result.value


def test_a_win_worth_much_never_withdraws_and_is_the_exact_solvers_value(
    tmp_path: Path,
) -> None:
    """A win worth 1,000 men: no position is worth leaving, so the rule is "never
    withdraw", the option is worth exactly nothing, and the value is the exact solver's
    for fighting to the end."""
    scenario = load(tmp_path, "soldier = 2", "soldier = 3")
    result = best_retreat(scenario, "attacker", win_value=1000.0)
    assert result.words() == "never withdraw"
    assert result.rule.withdrew == 0.0
    assert result.value == pytest.approx(result.never, abs=1e-9)
    assert result.never == pytest.approx(value_of(scenario, "attacker", NEVER, 1000.0))
    assert result.rule.won == pytest.approx(exact(scenario).win["attacker"], abs=1e-12)


@pytest.mark.parametrize("side", ["attacker", "defender"])
@pytest.mark.parametrize("win_value", [1.0, 3.0, 8.0])
def test_the_best_rule_is_no_worse_than_any_fixed_rule(
    tmp_path: Path, side: str, win_value: float
) -> None:
    """Against never retreating, every ``at_most = K`` and every ``outnumbered = x``
    (each solved by the exact solver), the best rule's value is at least as high, and its
    own chances add up to its value (W x P(win) - E[price lost])."""
    scenario = load(tmp_path, "soldier = 3, knight = 1", "soldier = 4")
    result = best_retreat(scenario, side, win_value=win_value)
    s = ("attacker", "defender").index(side)
    men = scenario.model.sides[s].men
    rules = [NEVER, *(StopRule(at_most=n) for n in range(men + 1))]
    rules += [StopRule(outnumbered=x) for x in (1.0, 1.5, 2.0, 3.0)]
    values = [value_of(scenario, side, rule, win_value) for rule in rules]
    assert result.never == pytest.approx(values[0], abs=1e-12)
    assert result.value >= max(values) - 1e-12
    rule = result.rule
    assert rule.value == pytest.approx(win_value * rule.won - rule.price_lost, abs=1e-12)
    total = rule.won + rule.lost + rule.drawn + rule.withdrew + rule.they_withdrew
    assert total == pytest.approx(1.0, abs=1e-12)


def test_against_the_other_sides_rule_and_beside_its_own(tmp_path: Path) -> None:
    """The defender withdraws at 2 men left (its rule in the file) while the attacker's
    best rule is found; the attacker's own rule (at most 1) is valued beside it. A
    withdrawal of the other side is not a win."""
    rules = "[attacker.retreat]\nat_most = 1\n[defender.retreat]\nat_most = 2\n"
    scenario = load(tmp_path, "soldier = 3", "soldier = 4", rules)
    result = best_retreat(scenario, "attacker", win_value=6.0)
    assert result.own == pytest.approx(value_of(scenario, "attacker", StopRule(at_most=1), 6.0))
    assert result.never == pytest.approx(value_of(scenario, "attacker", NEVER, 6.0))
    assert result.value >= max(result.own, result.never) - 1e-12
    # Break points 0: the defender withdraws at 2 before it can be beaten, and its
    # withdrawal is no win: the attacker cannot win, so a win's worth changes nothing
    # and the best rule leaves after the first strike.
    assert result.rule.won == 0.0 and result.rule.withdrew == pytest.approx(1.0)
    assert best_retreat(scenario, "attacker", win_value=0.0).value == pytest.approx(
        result.value, abs=1e-12
    )
    for k in range(4):
        assert result.value >= value_of(scenario, "attacker", StopRule(at_most=k), 6.0) - 1e-12


def _reference_value(
    scenario: simulator.Scenario, result: object, side: str, battles: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each reference battle's value to ``side`` and whether it withdrew, the side
    withdrawing where ``result``'s rule says (looked up by the men and nobles standing)."""
    frame = result.frame  # type: ignore[attr-defined]
    keys = [c for c in frame.columns if c not in ("decision", "value")]
    decide = {tuple(int(x) for x in row[keys]): row["decision"] for _, row in frame.iterrows()}
    s = ("attacker", "defender").index(side)
    battle = scenario.model
    other_rule = battle.retreat[1 - s]

    def withdrawing(_battle: object, men: list[reference.Man], steps: int) -> int | None:
        for who in (0, 1):  # the attacker looked at first
            if who == s and decide[standing(men, keys)] == "withdraw":
                return s
            if who != s and not other_rule.never and reference.holds(other_rule, men, who, steps):
                return who
        return None

    original = reference.withdrawing
    reference.withdrawing = withdrawing  # type: ignore[assignment]
    try:
        rows = reference.simulate(battle, battles, seed)
    finally:
        reference.withdrawing = original
    price = {t: battle.fighters[t].cost for t in battle.sides[s].fielded}
    lost = sum(p * rows[f"casualties.{side}.{t}"] for t, p in price.items())
    values = result.win_value * (rows["winner"] == s) - lost  # type: ignore[attr-defined]
    return values, rows["winner"] == reference.ATTACKER_WITHDREW + s


def standing(men: list[reference.Man], keys: list[str]) -> tuple[int, ...]:
    """The men and nobles standing in a reference battle, as a frame's ``keys`` name
    them (``attacker.knight``, ``defender.nobles``)."""
    count: dict[str, int] = dict.fromkeys(keys, 0)
    for m in men:
        if m.standing and m.kind in ("man", "noble"):
            name = m.type if m.kind == "man" else "nobles"
            count[f"{reference.SIDES[m.side]}.{name}"] += 1
    return tuple(count[k] for k in keys)


#: (the attacker's men, the side whose rule is played, the file's stop rules)
PLAYED = [
    ("soldier = 2, knight = 1", "attacker", ""),
    ("knight = 2", "defender", "[attacker.retreat]\nat_most = 1\n"),
]


# Slow tier (docs/testing.md): 6.6 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("attacker", "side", "rules"), PLAYED)
def test_a_plain_python_monte_carlo_of_the_rule_agrees(
    tmp_path: Path, attacker: str, side: str, rules: str
) -> None:
    """The rule found, played in the reference simulator battle by battle (fixed seed):
    its mean value and its share of withdrawals lie in their 99.9% intervals around the
    exact figures (the second battle against the attacker's own rule)."""
    scenario = load(tmp_path, attacker, "soldier = 4", rules)
    result = best_retreat(scenario, side, win_value=8.0)
    assert 0.05 < result.rule.withdrew < 0.95  # the rule does withdraw, and not always
    n = 20_000
    values, withdrew = _reference_value(scenario, result, side, n, seed=52)
    assert abs(values.mean() - result.value) <= Z999 * values.std(ddof=1) / math.sqrt(n)
    p = result.rule.withdrew
    assert abs(withdrew.mean() - p) <= Z999 * math.sqrt(p * (1 - p) / n)


def test_a_type_written_with_no_men_changes_nothing(tmp_path: Path) -> None:
    """``knight = 0`` beside the soldiers (a group of no men) gives the same answer."""
    plain = best_retreat(load(tmp_path, "soldier = 2", "soldier = 3"), "defender", 2.5)
    zero = load(tmp_path, "soldier = 2, knight = 0", "soldier = 3, knight = 0")
    with_zero = best_retreat(zero, "defender", 2.5)
    assert with_zero.value == pytest.approx(plain.value, abs=1e-12)
    assert with_zero.never == pytest.approx(plain.never, abs=1e-12)
    assert with_zero.words() == plain.words()


def test_the_frame_has_one_row_per_position(tmp_path: Path) -> None:
    scenario = load(tmp_path, "soldier = 2", "soldier = 2")
    result = best_retreat(scenario, "attacker", win_value=3.0)
    frame = result.frame
    assert set(frame.columns) == {
        "attacker.nobles", "attacker.soldier", "defender.nobles", "defender.soldier",
        "decision", "value",
    }  # fmt: skip
    keys = [c for c in frame.columns if c not in ("decision", "value")]
    assert not frame.duplicated(keys).any()
    start = frame[(frame["attacker.soldier"] == 2) & (frame["defender.soldier"] == 2)]
    start = start[(start["attacker.nobles"] == 1) & (start["defender.nobles"] == 1)]
    assert len(start) == 1
    assert start["value"].iloc[0] == pytest.approx(result.value)
    # Where the battle is decided, the value is the outcome's by definition.
    decided = frame[frame["decision"] == "decided"]
    won = decided["defender.soldier"] + decided["defender.nobles"] == 0
    lost = 2 - decided["attacker.soldier"]
    expected = np.where(won, 3.0, 0.0) - lost
    assert np.allclose(decided["value"], expected)


def test_what_it_cannot_answer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(simulator.BattleOddsError, match=r"method=exact: .*olympia battles only"):
        best_retreat(
            simulator.load_scenario("scenarios/blocks/" + _first("blocks")), method="exact"
        )
    with pytest.raises(simulator.BattleOddsError, match="too large for an exact best rule"):
        best_retreat(simulator.load_scenario("scenarios/olympia/castle_siege.toml"), method="exact")
    with pytest.raises(simulator.BattleOddsError, match="scenario with ranges"):
        best_retreat(simulator.load_scenario("examples/unknowns/scouted_pike_wall.toml"))
    alternating = load(tmp_path, "soldier = 2", "soldier = 2")
    model = dataclasses.replace(alternating.model, strike_order="alternating")
    with pytest.raises(simulator.BattleOddsError, match="random strike order only"):
        best_retreat(dataclasses.replace(alternating, model=model), method="exact")
    rule = "[defender.retreat]\nafter = 3\n"
    with pytest.raises(simulator.BattleOddsError, match="rule on the men left only"):
        best_retreat(load(tmp_path, "soldier = 2", "soldier = 2", rule), "attacker", method="exact")
    with pytest.raises(simulator.BattleOddsError, match="expected attacker, defender or both"):
        best_retreat(load(tmp_path, "soldier = 2", "soldier = 2"), "neither")
    with pytest.raises(simulator.BattleOddsError, match="win_value=-1"):
        best_retreat(load(tmp_path, "soldier = 2", "soldier = 2"), "attacker", -1.0)


def _first(ruleset: str) -> str:
    return sorted(p.name for p in Path("scenarios", ruleset).glob("*.toml"))[0]


runner = CliRunner()


@pytest.mark.parametrize("width", [60, 80, 200])
def test_the_command_fits_every_width(tmp_path: Path, width: int) -> None:
    path = scenario_file(
        tmp_path, "soldier = 2", "soldier = 2", "[attacker.retreat]\nat_most = 1\n"
    )
    image = tmp_path / ("a-long-folder-name-" * 4) / "map.png"
    image.parent.mkdir()
    result = runner.invoke(
        app,
        ["retreat", str(path), "--win-value", "3", "-o", str(image)],
        env={"COLUMNS": str(width)},
    )
    assert result.exit_code == 0, result.output
    # The answer's lines, the file's line (a path, which may be longer) set apart.
    lines = result.output.split(str(image))[0].splitlines()
    too_wide = [line for line in lines if len(line) > max(width, 40)]
    assert not too_wide, too_wide
    assert "never retreat" in result.output and "your rule" in result.output
    assert "The rule: withdraw with 2 left while they have 2." in result.output
    assert "retreat map written" in result.output and image.stat().st_size > 1000


def test_the_commands_json(tmp_path: Path) -> None:
    path = scenario_file(tmp_path, "soldier = 2", "soldier = 3")
    result = runner.invoke(app, ["retreat", str(path), "--side", "defender", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    scenario = simulator.load_scenario(path)
    expected = best_retreat(scenario, "defender")
    assert data["value"] == pytest.approx(expected.value)
    assert data["never"] == pytest.approx(expected.never)
    assert data["win_value"] == 2.0  # the attacker's two soldiers at 1 each
    assert data["own"] is None and data["gain_over_own"] is None
    assert data["gain_over_never"] == pytest.approx(expected.value - expected.never)
    for key in ("win", "withdrew", "they_withdrew", "rule", "positions", "method", "side"):
        assert key in data
    assert len(data["positions"]) == len(expected.frame)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--side", "neither"], "--side neither: expected attacker, defender or both"),
        (["--win-value", "-2"], "--win-value -2.0: expected a number 0 or more"),
        (["--win-value", "0"], "--win-value 0: expected a number more than 0"),
        (["--method", "guess"], "--method guess: expected one of exact, simulated"),
        (["--method", "exact", "--paths", "100"], "--paths: only the simulated method"),
        (["-o", "map.txt"], "-o"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, arguments: list[str], said: str) -> None:
    path = scenario_file(tmp_path, "soldier = 2", "soldier = 2")
    result = runner.invoke(app, ["retreat", str(path), *arguments])
    assert result.exit_code == 2
    assert said in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_other_rulesets_are_refused_the_exact_method_in_one_line() -> None:
    path = f"scenarios/blocks/{_first('blocks')}"
    result = runner.invoke(app, ["retreat", path, "--method", "exact"])
    assert result.exit_code == 2
    assert "--method exact: " in result.output
    assert "solved exactly for olympia battles only" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_slices_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweeps run in slices of the index range (Ctrl-C is seen between two): slices
    of 7 positions give the same rule and values as one slice of all."""
    from simulator.rulesets.olympia import retreat as module

    scenario = load(tmp_path, "soldier = 2, knight = 1", "soldier = 4")
    whole = best_retreat(scenario, "attacker", win_value=8.0)
    monkeypatch.setattr(module, "SLICE", 7)
    sliced = best_retreat(scenario, "attacker", win_value=8.0)
    assert sliced.frame.equals(whole.frame)
    assert sliced.value == whole.value and sliced.rule.withdrew == whole.rule.withdrew


def _by_hand(men: int, win_value: float) -> tuple[float, dict[tuple[int, int], str]]:
    """Bare men (tests/test_olympia_exact_stops.py's ``bare``: 5/5 men, nobles that never
    strike and are no target, a side broken at its last man): from ``a`` against ``d``
    the next change is the attacker's kill with chance a / (a + d), and a strike changes
    something with chance 1/2. The attacker's value at each position, by hand's recursion,
    each man costing 1; and its decision where it has one."""
    value: dict[tuple[int, int], float] = {}
    decision: dict[tuple[int, int], str] = {}
    for total in range(0, 2 * men + 1):
        for a in range(0, men + 1):
            d = total - a
            if not 0 <= d <= men:
                continue
            lost = men - a
            if d == 0 and a > 0:
                value[a, d] = win_value - lost
                continue
            if a == 0:
                value[a, d] = -lost
                continue
            fight = (a * value[a, d - 1] + d * value[a - 1, d]) / (a + d)
            decision[a, d] = "withdraw" if fight < -lost else "fight"
            value[a, d] = max(fight, -lost)
    # The opening: its first strike is fought; after a miss (chance 1/2) the choice.
    fight = (value[men, men - 1] + value[men - 1, men]) / 2
    value[men, men] = fight / 2 + max(fight, 0.0) / 2
    return value[men, men], decision


@pytest.mark.parametrize("men", [1, 2, 3])
@pytest.mark.parametrize("win_value", [0.5, 2.0, 2.9, 4.0])
def test_bare_men_by_hand(men: int, win_value: float) -> None:
    """One, two, three bare men a side: the value and every decision as worked by hand
    (for two a side and a win worth 2: fight on at 2 against 1 and at 1 against 1,
    withdraw at 1 against 2, fight on at the opening; value 1/12)."""
    from tests.test_olympia_exact_stops import bare

    scenario = bare({"soldier": men}, {"soldier": men})
    result = best_retreat(scenario, "attacker", win_value=win_value)
    value, decision = _by_hand(men, win_value)
    assert result.value == pytest.approx(value, abs=1e-12)
    frame = result.frame
    for (a, d), choice in decision.items():
        at = frame[(frame["attacker.soldier"] == a) & (frame["defender.soldier"] == d)]
        assert set(at["decision"]) == {choice}, (a, d)
    if (men, win_value) == (2, 2.0):
        assert value == pytest.approx(1 / 12)
        assert result.words() == "withdraw with 1 left while they have 2"


@pytest.mark.slow
@pytest.mark.parametrize("after", [1.0, 3.0, 5.0])
def test_ctrl_c_stops_the_solve_within_a_second_or_two(tmp_path: Path, after: float) -> None:
    """Ctrl-C while a chain of 4,000,000 positions is swept: the command line's handler
    ends the process between two slices (or after the exact solver's one call for never
    retreating), one line, exit 130."""
    import os
    import signal
    import time

    from tests.test_faults import finish, loaded, one_line, start, wait_for

    path = scenario_file(tmp_path, "soldier = 99, knight = 99", "pikeman = 99", name="big")
    process = start("retreat", str(path))
    wait_for(lambda: loaded(process.pid, "numba/core/typeconv") or process.poll() is not None)
    time.sleep(after)
    if process.poll() is not None:
        pytest.skip("the solve ended before Ctrl-C (a fast machine)")
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    code, out, err = finish(process)
    assert time.monotonic() - sent < 3.0
    assert code == 130 and out == ""
    assert one_line(err) == "battle-odds: interrupted"
