"""Olympia's exact solver with stop rules and from a battle in progress (issue 51).

Answers are checked against closed forms on tiny battles, against an independent
recursion over battles of equal men, against the solver itself (a battle is a Markov
chain: the answer from the opening is the answer from each position reached after N
strikes, weighted by its chance) and, for rules that can never hold, against the
answer without them.

The tiny battles strike like bare men: each side's noble stands in the rear row with
no missile (he never strikes, and is no target while his men live) and the break point
is set so that a side breaks exactly when its last man falls.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simulator
from kernels.olympia import layout as k
from simulator.errors import BattleOddsError, Source
from simulator.rulesets.olympia.exact import _push, exact, exact_after
from simulator.rulesets.olympia.prepare import compile_battle, encode_stops
from simulator.rulesets.olympia.space import layout
from simulator.rulesets.stop_rules import NEVER, StopRule
from simulator.testing import exact_within_intervals

ABS = 1e-12


def with_rules(
    scenario: simulator.Scenario,
    attacker: StopRule = NEVER,
    defender: StopRule = NEVER,
    from_step: int = 0,
) -> simulator.Scenario:
    """``scenario`` with the sides' stop rules and the strikes already fought set on its
    model (``[attacker.retreat]``, ``[battle] from_step``), for rules the file's keys
    cannot all say at once in a parametrized test."""
    model = dataclasses.replace(scenario.model, retreat=(attacker, defender), from_step=from_step)
    return dataclasses.replace(scenario, model=model)


def bare_break_point(men: int) -> int:
    """The break point at which a side of a noble (80/80) and ``men`` 5/5 men breaks
    exactly when its last man falls: value 160 + 10 m left, start 160 + 10 men."""
    start = 160 + 10 * men
    for percent in range(101):
        if 160 * 100 <= start * percent < 170 * 100:
            return percent
    raise AssertionError(f"no break point for {men} men")


def bare_side(men: dict[str, int]) -> dict[str, Any]:
    rows = [{"type": kind, "count": n, "behind": 0} for kind, n in men.items() if n]
    return {
        "units": [{"men": rows, "behind": 1, "noble": {}}],
        "break_point": bare_break_point(sum(men.values())),
    }


def bare(attacker: dict[str, int], defender: dict[str, int]) -> simulator.Scenario:
    """Men of 5/5 (soldiers and "militia", a type of the same ratings) against men."""
    data = {
        "ruleset": "olympia",
        "name": "bare men",
        "units": {"militia": {"attack": 5, "defense": 5}},
        "attacker": bare_side(attacker),
        "defender": bare_side(defender),
    }
    return simulator.from_data(data, Source("test"))


THREE = bare({"soldier": 3}, {"soldier": 3})


# ---------------------------------------------------------------- closed forms


def test_three_against_three_attacker_withdraws_at_its_first_loss() -> None:
    """In position (a, d) the next change kills a defender with chance a / (a + d):
    the attacker wins only by killing three first, 3/6 x 3/5 x 3/4 = 0.225; every
    change takes 2 strikes on average (a hit is 1/2), and the changes number 1 (1/2),
    2 (1/2 x 2/5) or 3 (the rest)."""
    answer = exact(with_rules(THREE, attacker=StopRule(at_most=2)))
    assert answer.win == pytest.approx(
        {
            "attacker": 0.225,
            "defender": 0.0,
            "draw": 0.0,
            "attacker_withdrew": 0.775,
            "defender_withdrew": 0.0,
        },
        abs=ABS,
    )
    assert answer.expected_steps == pytest.approx(2 * (0.5 + 2 * 0.2 + 3 * 0.3), abs=ABS)
    assert answer.casualties["casualties.attacker.soldier"] == pytest.approx(0.775, abs=ABS)
    lost = 1 * 0.5 * 0.4 + 2 * 0.5 * 0.6 * 0.25 + 3 * 0.225
    assert answer.casualties["casualties.defender.soldier"] == pytest.approx(lost, abs=ABS)


def test_both_rules_at_the_first_loss_each_side_withdraws_half_the_time() -> None:
    answer = exact(with_rules(THREE, StopRule(at_most=2), StopRule(at_most=2)))
    assert answer.win["attacker_withdrew"] == pytest.approx(0.5, abs=ABS)
    assert answer.win["defender_withdrew"] == pytest.approx(0.5, abs=ABS)
    assert answer.expected_steps == pytest.approx(2.0, abs=ABS)


@pytest.mark.parametrize("rule", [StopRule(at_most=3), StopRule(at_most_percent=100.0)])
def test_a_rule_true_from_the_start_withdraws_after_the_first_strike(rule: StopRule) -> None:
    """One strike is fought (a hit on either side: 1/4 each), then the attacker goes."""
    answer = exact(with_rules(THREE, attacker=rule))
    assert answer.win["attacker_withdrew"] == pytest.approx(1.0, abs=ABS)
    assert answer.expected_steps == pytest.approx(1.0, abs=ABS)
    for side in ("attacker", "defender"):
        assert answer.casualties[f"casualties.{side}.soldier"] == pytest.approx(0.25, abs=ABS)


def test_when_both_rules_hold_at_once_the_attacker_withdraws() -> None:
    answer = exact(with_rules(THREE, StopRule(at_most=3), StopRule(at_most=3)))
    assert answer.win["attacker_withdrew"] == pytest.approx(1.0, abs=ABS)
    assert answer.win["defender_withdrew"] == pytest.approx(0.0, abs=ABS)


def test_outnumbered_at_the_start_the_first_strike_can_lift_the_rule() -> None:
    """Two against three, withdrawing when outnumbered 1.5 to 1: it holds at the start,
    so after the first strike the attacker withdraws unless it killed a man (1/5),
    which makes it 2 against 2; from there it withdraws at its first loss, at (1, 2),
    but not at (1, 1) after a defender fell first."""
    answer = exact(
        with_rules(bare({"soldier": 2}, {"soldier": 3}), attacker=StopRule(outnumbered=1.5))
    )
    from_two_two_attacker = 0.5 * (2 / 3 + 1 / 3 * 0.5)
    from_two_two_defender = 0.5 * 1 / 3 * 0.5
    assert answer.win == pytest.approx(
        {
            "attacker": 0.2 * from_two_two_attacker,
            "defender": 0.2 * from_two_two_defender,
            "draw": 0.0,
            "attacker_withdrew": 0.8 + 0.2 * 0.5,
            "defender_withdrew": 0.0,
        },
        abs=ABS,
    )


@pytest.mark.parametrize(
    ("from_step", "fighting_then"),
    [(0, 1 / 8), (1, 1 / 4), (2, 1 / 2), (3, 1 / 2), (10, 1 / 2)],
)
def test_after_n_strikes_one_man_each(from_step: int, fighting_then: float) -> None:
    """One man against one: every strike ends the battle with chance 1/2, either way.
    Withdrawing after strike 3 of the battle, given ``from_step`` strikes in: the rest,
    at least one strike (a rule past already withdraws after the first)."""
    one = bare({"soldier": 1}, {"soldier": 1})
    answer = exact(with_rules(one, attacker=StopRule(after=3), from_step=from_step))
    strikes = max(1, 3 - from_step)
    assert fighting_then == 0.5**strikes
    assert answer.win == pytest.approx(
        {
            "attacker": (1 - fighting_then) / 2,
            "defender": (1 - fighting_then) / 2,
            "draw": 0.0,
            "attacker_withdrew": fighting_then,
            "defender_withdrew": 0.0,
        },
        abs=ABS,
    )
    expected = from_step + sum(0.5**t for t in range(strikes))
    assert answer.expected_steps == pytest.approx(expected, abs=ABS)


def test_from_step_shifts_the_strike_of_the_state_after() -> None:
    one = bare({"soldier": 1}, {"soldier": 1})
    state = exact_after(with_rules(one, from_step=4), 6)
    assert state.step == 6
    assert state.fighting == pytest.approx(0.25, abs=ABS)
    assert state.decided == pytest.approx({"attacker": 0.375, "defender": 0.375, "draw": 0.0})
    ruled = exact_after(with_rules(one, defender=StopRule(after=5), from_step=4), 6)
    assert ruled.fighting == 0.0
    assert ruled.decided["defender_withdrew"] == pytest.approx(0.5, abs=ABS)
    for before in (3, 4):
        with pytest.raises(BattleOddsError, match="expected a strike 5 or more") as refused:
            exact_after(with_rules(one, from_step=4), before)
        assert str(refused.value).endswith("(the battle is given after strike 4)")


# ------------------------------------------------- an independent recursion


@cache
def recursion(
    attacker: tuple[int, int], defender: tuple[int, int], rules: tuple[StopRule, StopRule]
) -> dict[str, float]:
    """Outcome chances of bare men (soldiers, militia) on each side from a position,
    change by change (every strike hits with 1/2, so a change is the striking side's
    with chance its men over all men, its victim uniform among the enemy's men),
    stop rules looked at after each change, the attacker's first; ``first``: the
    opening, where a rule holding lets one strike happen."""
    return _recurse(attacker, defender, rules, first=False)


def _holds(rule: StopRule, mine: tuple[int, int], enemy: tuple[int, int], start: int) -> bool:
    men = sum(mine)
    at_most = rule.men_at_most(start)
    if at_most is not None and men <= at_most:
        return True
    if rule.outnumbered is not None and sum(enemy) >= rule.outnumbered * men - 1e-9:
        return True
    kind = {"soldier": 0, "militia": 1}
    return rule.gone is not None and mine[kind[rule.gone]] == 0


STARTS: dict[str, int] = {}


def _recurse(
    attacker: tuple[int, int],
    defender: tuple[int, int],
    rules: tuple[StopRule, StopRule],
    first: bool,
) -> dict[str, float]:
    a, d = sum(attacker), sum(defender)
    out = dict.fromkeys(("attacker", "defender", "attacker_withdrew", "defender_withdrew"), 0.0)
    if d == 0:
        return {**out, "attacker": 1.0}
    if a == 0:
        return {**out, "defender": 1.0}
    withdraws = None
    if _holds(rules[0], attacker, defender, STARTS["attacker"]):
        withdraws = "attacker_withdrew"
    elif _holds(rules[1], defender, attacker, STARTS["defender"]):
        withdraws = "defender_withdrew"
    if withdraws is not None and not first:
        return {**out, withdraws: 1.0}
    weight = 0.5 if first and withdraws is not None else 1.0  # the first strike's change
    if withdraws is not None:
        out[withdraws] += 1 - weight
    for striker, victims, share in ((0, defender, a / (a + d)), (1, attacker, d / (a + d))):
        for kind in range(2):
            if victims[kind] == 0:
                continue
            hit = list(victims)
            hit[kind] -= 1
            pair = (attacker, tuple(hit)) if striker == 0 else (tuple(hit), defender)
            after = recursion(pair[0], pair[1], rules)  # type: ignore[arg-type]
            for outcome, p in after.items():
                out[outcome] += weight * share * victims[kind] / sum(victims) * p
    return out


RULES = [
    (StopRule(gone="militia"), NEVER),
    (NEVER, StopRule(gone="soldier")),
    (StopRule(gone="soldier"), StopRule(at_most=1)),
    (StopRule(at_most_percent=50.0), StopRule(outnumbered=2.0)),
    (StopRule(outnumbered=1.2, gone="militia"), StopRule(at_most=2, gone="militia")),
    (StopRule(at_most=5), StopRule(at_most=0)),
]


def _fields(rule: StopRule, men: tuple[int, int]) -> bool:
    """Whether a side of ``men`` (soldiers, militia) fields the type ``rule`` names (a
    scenario file naming another is refused)."""
    return rule.gone is None or men[("soldier", "militia").index(rule.gone)] > 0


#: Every pair of armies with every pair of rules it can be given.
RECURSION_CASES = [
    (attacker, defender, attacker_rule, defender_rule)
    for attacker, defender in [((2, 1), (1, 2)), ((1, 3), (3, 0)), ((2, 2), (2, 1))]
    for attacker_rule, defender_rule in RULES
    if _fields(attacker_rule, attacker) and _fields(defender_rule, defender)
]


@pytest.mark.parametrize(
    ("attacker", "defender", "attacker_rule", "defender_rule"), RECURSION_CASES
)
def test_rules_on_men_left_agree_with_a_recursion_over_changes(
    attacker: tuple[int, int],
    defender: tuple[int, int],
    attacker_rule: StopRule,
    defender_rule: StopRule,
) -> None:
    scenario = bare(
        dict(zip(("soldier", "militia"), attacker, strict=True)),
        dict(zip(("soldier", "militia"), defender, strict=True)),
    )
    STARTS.update(attacker=sum(attacker), defender=sum(defender))
    recursion.cache_clear()
    wanted = _recurse(attacker, defender, (attacker_rule, defender_rule), first=True)
    answer = exact(with_rules(scenario, attacker_rule, defender_rule))
    assert answer.win["draw"] == 0.0
    for outcome, p in wanted.items():
        assert answer.win[outcome] == pytest.approx(p, abs=ABS), outcome


# ------------------------------------------------ the battle from a given state


#: A battle whose positions after a few strikes are all battles of their own: one unit
#: a side, fighting to the last man, nobles in front (they fight once their men fall).
MIXED = {
    "ruleset": "olympia",
    "name": "from a position",
    "attacker": {
        "units": [{"men": {"soldier": 2, "archer": 1}, "noble": {"health": 60}}],
        "break_point": 0,
    },
    "defender": {"units": [{"men": {"pikeman": 2}, "noble": {"health": 30}}], "break_point": 0},
}


def _position_scenario(cnt: np.ndarray, groups: np.ndarray) -> simulator.Scenario | None:
    """The battle as it stands in position ``cnt`` (None where a noble has fallen: no
    unit without its noble can be written, and his side has then lost)."""
    data = {**MIXED, "attacker": dict(MIXED["attacker"]), "defender": dict(MIXED["defender"])}
    for s, side in enumerate(("attacker", "defender")):
        unit = dict(data[side]["units"][0])
        men = dict(unit["men"])
        for g in range(groups.shape[0]):
            if groups[g, k.G_SIDE] != s:
                continue
            if groups[g, k.G_KIND] == k.NOBLE and cnt[g] == 0:
                return None
        names = list(men)
        men_groups = [g for g in range(groups.shape[0]) if groups[g, k.G_SIDE] == s]
        men_groups = [g for g in men_groups if groups[g, k.G_KIND] == k.MAN]
        for name, g in zip(names, men_groups, strict=True):
            men[name] = int(cnt[g])
        unit["men"] = men
        data[side] = {**data[side], "units": [unit]}
    return simulator.from_data(data, Source("test"))


@pytest.mark.parametrize(
    ("attacker_rule", "defender_rule", "strikes"),
    [
        (NEVER, NEVER, 3),
        (StopRule(at_most=1), NEVER, 4),
        (NEVER, StopRule(outnumbered=2.0), 2),
        (StopRule(after=9), StopRule(gone="pikeman"), 5),
    ],
)
def test_the_answer_from_the_start_is_the_answer_from_each_position_after_n_strikes(
    attacker_rule: StopRule, defender_rule: StopRule, strikes: int
) -> None:
    """A battle's exact answer equals the mix, over the positions it reaches after N
    strikes, of the exact answers of those positions written as scenarios of their own
    (men left, nobles' health) given N strikes in (``from_step``), plus the battles over
    by then: the solver starts from the scenario's armies and counts ``after`` from the
    battle's start."""
    opening = simulator.from_data(MIXED, Source("test"))
    whole = with_rules(opening, attacker_rule, defender_rule)
    answer = exact(whole)
    battle = whole.model
    arrays = compile_battle(battle)
    space = layout(arrays)
    pushed = _push(arrays, space, strikes, encode_stops(battle, arrays))
    assert pushed is not None
    fighting, status, ended, withdrawn, _fought = pushed
    mixed = dict.fromkeys(answer.win, 0.0)
    for outcome, code in (("attacker", k.ATTACKER), ("defender", k.DEFENDER), ("draw", k.DRAW)):
        mixed[outcome] += float(ended[status == code].sum())
    for side, outcome in enumerate(("attacker_withdrew", "defender_withdrew")):
        if outcome in mixed:
            mixed[outcome] += float(withdrawn[side].sum())
    cnt = np.zeros(arrays.groups.shape[0], np.int64)
    positions = 0
    for index in np.flatnonzero(fighting):
        for g in range(arrays.groups.shape[0]):
            cnt[g] = (index // space.stride[g]) % space.radix[g]
        written = _position_scenario(cnt, arrays.groups)
        assert written is not None, "a fighting position has both nobles"
        given = with_rules(written, attacker_rule, defender_rule, from_step=strikes)
        # at_most and outnumbered are counts of men: the same in the position's scenario.
        part = exact(given)
        for outcome, p in part.win.items():
            mixed[outcome] += fighting[index] * p
        positions += 1
    assert positions >= 3
    for outcome, p in answer.win.items():
        assert mixed[outcome] == pytest.approx(p, abs=1e-9), outcome


# ------------------------------------------------------ rules that never hold


SIEGE = {
    "ruleset": "olympia",
    "name": "a rule that never holds",
    "attacker": {
        "units": [
            {"men": {"soldier": 3, "archer": 2}, "noble": {"health": 40}},
            {"men": [{"type": "knight", "count": 1, "behind": 1}]},
        ],
        "siege_engines": {"catapult": 1},
        "break_point": 80,
    },
    "defender": {
        "units": [{"men": {"pikeman": 3}, "noble": {"health": 70}}],
        "structure": {"kind": "tower", "defense": 3, "damage": 92},
        "break_point": 80,
    },
}


@pytest.mark.parametrize("order", ["random", "alternating"])
@pytest.mark.parametrize(
    "rules",
    [
        # Each side breaks at 80% of its value, which it falls to before its last
        # fighter does (its nobles are worth less than that): never down to no men, or
        # outnumbered a thousand to one, while undecided.
        (StopRule(at_most=0), StopRule(outnumbered=1000.0)),
        (StopRule(at_most_percent=0.0), NEVER),
    ],
)
def test_a_rule_that_never_holds_changes_nothing(
    order: str, rules: tuple[StopRule, StopRule]
) -> None:
    data = {**SIEGE, "battle": {"strike_order": order}}
    plain = exact(simulator.from_data(data, Source("test")))
    ruled = exact(with_rules(simulator.from_data(data, Source("test")), *rules))
    assert set(ruled.win) == {*plain.win, "attacker_withdrew", "defender_withdrew"}
    assert ruled.win["attacker_withdrew"] == ruled.win["defender_withdrew"] == 0.0
    for name, p in plain.win.items():
        assert ruled.win[name] == pytest.approx(p, abs=ABS)
    assert ruled.expected_steps == pytest.approx(plain.expected_steps, rel=1e-12)
    for name, mean in {**plain.casualties, **plain.extras}.items():
        assert {**ruled.casualties, **ruled.extras}[name] == pytest.approx(mean, abs=ABS)


def test_no_rule_no_withdrawal_in_the_answer() -> None:
    answer = exact(THREE)
    assert list(answer.win) == ["attacker", "defender", "draw"]
    assert list(answer.to_dict()["win"]) == ["attacker", "defender", "draw"]
    state = exact_after(THREE, 5)
    assert list(state.decided) == ["attacker", "defender", "draw"]


def test_withdrawals_in_the_json_are_shaped_as_the_wins() -> None:
    shown = exact(with_rules(THREE, attacker=StopRule(at_most=2))).to_dict()["win"]
    assert list(shown) == ["attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew"]
    withdrew = shown["attacker_withdrew"]
    assert set(withdrew) == set(shown["attacker"]) == {"p", "low", "high"}
    assert withdrew["p"] == withdrew["low"] == withdrew["high"] == pytest.approx(0.775)
    assert shown["defender_withdrew"]["p"] == 0.0


def test_after_is_refused_in_one_line_over_the_limit() -> None:
    long_after = with_rules(simulator.from_data(SIEGE, Source("test")), StopRule(after=10**6))
    with pytest.raises(BattleOddsError, match="too large for an exact answer") as refused:
        exact(long_after)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("order", ["random", "alternating"])
def test_an_after_past_every_battles_end_is_the_answer_without_it(order: str) -> None:
    """Pushed strike by strike (the budgets and turn kept per position under
    alternating order) for longer than any battle lasts, the answer is the sweep's."""
    data = {**MIXED, "battle": {"strike_order": order}}
    plain = exact(simulator.from_data(data, Source("test")))
    pushed = exact(with_rules(simulator.from_data(data, Source("test")), StopRule(after=3000)))
    assert pushed.win["attacker_withdrew"] < 1e-12
    for name, p in plain.win.items():
        assert pushed.win[name] == pytest.approx(p, abs=1e-9)
    assert pushed.expected_steps == pytest.approx(plain.expected_steps, rel=1e-9)
    for name, mean in {**plain.casualties, **plain.extras}.items():
        assert {**pushed.casualties, **pushed.extras}[name] == pytest.approx(mean, abs=1e-9)


# Slow tier (docs/testing.md): 1.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_battle_in_progress_is_solved_from_every_part_of_its_state() -> None:
    """Men left of several types, a wounded noble, a structure with its defense worn
    down and damage taken, a siege engine left: the exact answer is the mean of the
    reference simulator (tests/reference/olympia.py) from that state, every outcome and
    every column in its 99.9% interval (Bonferroni over the columns)."""
    reference = pytest.importorskip("tests.reference.olympia")
    data = {
        "ruleset": "olympia",
        "name": "in progress",
        "attacker": {
            "units": [{"men": {"soldier": 2, "archer": 1}, "noble": {"health": 35}}],
            "siege_engines": {"battering_ram": 1},
        },
        "defender": {
            "units": [{"men": {"pikeman": 1, "soldier": 1}, "noble": {"health": 12}}],
            "structure": {"kind": "tower", "defense": 2, "damage": 90},
            "break_point": 30,
        },
    }
    scenario = simulator.from_data(data, Source("test"))
    answer = exact(scenario)
    assert answer.extras["structure_collapsed.defender"] > 0.05
    assert answer.extras["nobles_killed.defender"] > 0.01
    assert answer.extras["engines_lost.attacker"] > 0.01
    columns = reference.simulate(scenario.model, 4000, 51)
    assert exact_within_intervals(answer, columns) == []


# ----------------------------------------------------------- the command line


#: Three soldiers a side as a scenario file, the attacker withdrawing at its first loss.
THREE_FILE = """
ruleset = "olympia"
name = "three a side"
[battle]
from_step = FROM
[attacker]
break_point = 85
[[attacker.units]]
behind = 1
men = [ { type = "soldier", count = COUNT, behind = 0 } ]
RETREAT
[defender]
break_point = 85
[[defender.units]]
behind = 1
men = [ { type = "soldier", count = COUNT, behind = 0 } ]
"""


def _exact_command(
    tmp_path: Path, retreat: str, *args: str, from_step: int = 0, men: int = 3
) -> Any:
    """``battle-odds exact FILE ARGS`` on three soldiers (``men``) a side with the
    attacker's ``[attacker.retreat]`` table ``retreat`` (none when empty)."""
    from typer.testing import CliRunner

    from simulator.cli import app

    text = THREE_FILE.replace("FROM", str(from_step)).replace("COUNT", str(men))
    text = text.replace("RETREAT", f"[attacker.retreat]\n{retreat}" if retreat else "")
    path = tmp_path / "three.toml"
    path.write_text(text, encoding="utf-8")
    return CliRunner().invoke(app, ["exact", str(path), *args], env={"COLUMNS": "80"})


def test_the_exact_command_shows_withdrawals(tmp_path: Path) -> None:
    import json

    shown = _exact_command(tmp_path, "at_most = 2", "--json")
    assert shown.exit_code == 0, shown.output
    win = json.loads(shown.output)["win"]
    assert win["attacker_withdrew"]["p"] == pytest.approx(0.775)
    assert win["defender_withdrew"]["p"] == 0.0
    for columns in ("60", "80", "200"):
        from typer.testing import CliRunner

        from simulator.cli import app

        text = CliRunner().invoke(
            app, ["exact", str(tmp_path / "three.toml")], env={"COLUMNS": columns}
        )
        assert text.exit_code == 0, text.output
        said = " ".join(text.output.split())
        assert "attacker withdrew 77.5000%" in said and "attacker wins 22.5000%" in said
        assert "strikes until it ended 3.600" in said
    after = _exact_command(tmp_path, 'at_most = "67%"', "--after", "4")
    assert after.exit_code == 0, after.output
    assert "attacker withdrew" in after.output
    assert "strikes until decided" in _exact_command(tmp_path, "").output
    plain = _exact_command(tmp_path, "", "--json")
    assert "withdrew" not in plain.output
    assert list(json.loads(plain.output)["win"]) == ["attacker", "defender", "draw"]


def test_the_exact_command_counts_strikes_from_the_battles_start(tmp_path: Path) -> None:
    import json

    shown = _exact_command(tmp_path, "after = 9", "--json", from_step=8)
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.output)
    # Strike 9 of the battle is the first from here; no strike decides three a side.
    assert answer["win"]["attacker_withdrew"]["p"] == pytest.approx(1.0)
    assert answer["steps"]["all"]["mean"] == pytest.approx(9.0)
    state = _exact_command(tmp_path, "after = 9", "--json", "--after", "9", from_step=8)
    assert json.loads(state.output)["fighting"]["p"] == 0.0


@pytest.mark.parametrize(
    ("retreat", "men", "from_step", "args", "words"),
    [
        # 21 x 21 x 2 x 2 states pushed through a million strikes: over the limit.
        ("after = 1000000", 20, 0, (), "too large for an exact answer"),
        ("", 3, 7, ("--after", "7"), "strike 7: expected a strike 8 or more"),
    ],
)
def test_the_exact_command_refuses_in_one_line(
    tmp_path: Path, retreat: str, men: int, from_step: int, args: tuple[str, ...], words: str
) -> None:
    refused = _exact_command(tmp_path, retreat, *args, from_step=from_step, men=men)
    assert refused.exit_code == 2, refused.output
    assert words in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    assert "Traceback" not in refused.output


@pytest.mark.parametrize(
    "rule", [StopRule(after=1), StopRule(after=30), StopRule(at_most=3), StopRule(gone="soldier")]
)
def test_a_battle_broken_before_its_first_strike_is_decided_by_it(rule: StopRule) -> None:
    """At break point 100 both sides are broken at the start: the kernel fights one
    strike, then the break decides the battle, whatever the stop rules say."""
    data = {
        "ruleset": "olympia",
        "name": "broken",
        "attacker": {**bare_side({"soldier": 3}), "break_point": 100},
        "defender": {**bare_side({"soldier": 3}), "break_point": 100},
    }
    plain = exact(simulator.from_data(data, Source("test")))
    ruled = exact(with_rules(simulator.from_data(data, Source("test")), rule, rule))
    assert ruled.win["attacker_withdrew"] == ruled.win["defender_withdrew"] == 0.0
    for name, p in plain.win.items():
        assert ruled.win[name] == pytest.approx(p, abs=ABS)
    assert ruled.expected_steps == plain.expected_steps == 1.0


# ------------------------------------------------------------ the Monte Carlo


#: Small battles with rules of every kind, in both strike orders; the Monte Carlo's
#: 99.9% intervals (Bonferroni over the columns) hold the exact answer.
MONTE_CARLO = [
    pytest.param(THREE, StopRule(at_most=2), StopRule(outnumbered=2.0), 0, id="bare-men"),
    pytest.param(
        simulator.from_data(MIXED, Source("test")),
        StopRule(gone="archer"),
        StopRule(at_most_percent=50.0),
        0,
        id="gone-and-percent",
    ),
    pytest.param(
        simulator.from_data(MIXED, Source("test")),
        StopRule(after=12),
        StopRule(at_most=0),
        5,
        id="after-from-step",
    ),
    pytest.param(
        simulator.from_data({**SIEGE, "battle": {"strike_order": "alternating"}}, Source("t")),
        StopRule(at_most=4),
        StopRule(outnumbered=2.5),
        0,
        id="alternating-siege",
    ),
    pytest.param(
        simulator.from_data({**MIXED, "battle": {"strike_order": "alternating"}}, Source("t")),
        StopRule(after=11),
        StopRule(gone="pikeman"),
        3,
        id="alternating-after-from-step",
    ),
]


@pytest.mark.parametrize(("scenario", "attacker_rule", "defender_rule", "given"), MONTE_CARLO)
def test_the_monte_carlo_holds_the_exact_answer(
    scenario: simulator.Scenario, attacker_rule: StopRule, defender_rule: StopRule, given: int
) -> None:
    from simulator.rulesets.olympia.prepare import OlympiaPrepared

    ruled = with_rules(scenario, attacker_rule, defender_rule, from_step=given)
    answer = exact(ruled)
    assert answer.win["attacker_withdrew"] + answer.win["defender_withdrew"] > 0.05
    rows = OlympiaPrepared(ruled.model).run(51, 0, 20_000)
    assert exact_within_intervals(answer, rows) == []


@pytest.mark.parametrize("order", ["random", "alternating"])
@pytest.mark.parametrize("strikes", [3, 9])
def test_the_monte_carlo_state_after_n_strikes_holds_the_exact_one(
    strikes: int, order: str
) -> None:
    from simulator.rulesets.olympia.prepare import OlympiaPrepared
    from simulator.testing import interval_contains

    ruled = with_rules(
        simulator.from_data({**MIXED, "battle": {"strike_order": order}}, Source("test")),
        StopRule(at_most=1, after=7),
        StopRule(outnumbered=2.0),
        from_step=1,
    )
    state = exact_after(ruled, strikes)
    n = 20_000
    rows = OlympiaPrepared(ruled.model).run_until(52, 0, n, strikes)
    shares = {**state.decided, "fighting": state.fighting}
    codes = ["attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew", "fighting"]
    confidence = 1 - 0.001 / len(codes)
    for code, outcome in enumerate(codes):
        hits = int((rows["winner"] == code).sum())
        assert interval_contains(hits, n, shares[outcome], confidence), (outcome, hits)


def test_the_reference_simulator_holds_the_exact_answer_with_rules() -> None:
    """tests/reference/olympia.py, strike by strike in plain Python, with the rules and a
    battle given two strikes in."""
    reference = pytest.importorskip("tests.reference.olympia")
    ruled = with_rules(
        simulator.from_data(MIXED, Source("test")),
        StopRule(gone="archer"),
        StopRule(at_most=1, after=9),
        from_step=2,
    )
    answer = exact(ruled)
    assert answer.win["attacker_withdrew"] > 0.05 and answer.win["defender_withdrew"] > 0.05
    columns = reference.simulate(ruled.model, 4000, 53)
    assert exact_within_intervals(answer, columns) == []
