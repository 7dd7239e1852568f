"""Skirmish: kernel against the reference, determinism, replay, exact checks, bad input."""

from __future__ import annotations

import ast
import random
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from kernels import skirmish as k
from simulator.cli import app
from simulator.rulesets.skirmish.model import field_tiles, neighbour
from simulator.rulesets.skirmish.prepare import SkirmishPrepared
from simulator.rulesets.skirmish.replay import move_log, replay
from tests import ROOT
from tests.reference import skirmish as reference
from tests.reference.agreement import check_case
from tests.reference.cases import Case, cases_of
from tests.stats_tests import ALPHA, reproducibility, simulate_rows

SCENARIOS = ROOT / "scenarios" / "skirmish"
#: |z| beyond this is a failure: a two-sided 99.9% level.
Z_LIMIT = 3.3


def bundled(name: str) -> simulator.Scenario:
    return simulator.load_scenario(SCENARIOS / f"{name}.toml")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "field.toml"
    path.write_text(text, encoding="utf-8")
    return path


def cli(*args: str) -> tuple[int, str]:
    # At a width where every column is shown (units leaves abilities out below about 70
    # columns, saying so: tests/test_terminal_output.py), so it passes in any terminal.
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})
    return result.exit_code, result.output


# --- kernel against the pure-Python reference ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", cases_of("skirmish"), ids=lambda c: c.name)
def test_kernel_agrees_with_stored_reference(case: Case) -> None:
    """The kernel against the stored reference sample of each case
    (tests/reference/agreement.py). The power of each comparison, at a family-wise
    false-alarm rate of 0.001, for a one-point shift of P(attacker wins) and, the weakest
    over the other columns, for one point of probability moved between neighbouring values:

    cavalry_charge: winner 1.00, others 0.83
    archers_and_healer: winner 0.96, others 0.83
    three_way_field: winner 1.00, others 0.84
    example_units: winner 1.00, others 0.83
    engine-cavalry_charge: winner 1.00, others 0.82
    engine-archers_and_healer: winner 1.00, others 0.82
    engine-three_way_field: winner 1.00, others 0.83
    engine-example_units: winner 0.93, others 0.83
    engine-exact-cavalry_charge: winner 1.00, others 0.83
    inline_sampled5: winner 1.00, others 0.85
    """
    assert check_case(case, test_kernel_agrees_with_stored_reference.__doc__) == []


# --- determinism ------------------------------------------------------------------------


def test_same_seed_same_battles_on_any_threads_and_chunks() -> None:
    scenario = bundled("example_units")
    assert reproducibility(scenario, 3_000, seed=9, chunks=(777,)) == []
    one = simulate_rows(scenario, 3_000, seed=9)
    other = simulate_rows(scenario, 3_000, seed=10)
    assert not np.array_equal(one["steps"], other["steps"])


# --- replay -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["example_units", "three_way_field", "example_units_sampled5"])
def test_replay_is_the_battle_that_run_simulates(name: str) -> None:
    scenario = bundled(name)
    rows = simulator.simulate(scenario, 400, seed=31, threads=1).rows
    assert rows is not None
    model = scenario.model
    for battle in (0, 1, 57, 399):
        replayed = replay(scenario, battle, seed=31)
        for column, values in rows.items():
            assert replayed.outcome[column] == values[battle], (battle, column)
        # Applying the logged moves to the starting health gives the health left.
        health = {p.id: p.health for p in model.participants}
        for m in replayed.moves:
            cap = next(p.unit.health for p in model.participants if p.id == m.target)
            health[m.target] = (
                min(health[m.target] + m.effect, cap)
                if m.move_type == "healing"
                else max(health[m.target] - m.effect, 0)
            )
        for p in model.participants:
            column = f"health_left.{('attacker', 'defender')[p.side]}.{p.id}.{p.unit.name}"
            assert health[p.id] == rows[column][battle]
        assert move_log(scenario, battle, seed=31) == [m.as_tuple() for m in replayed.moves]


def test_move_logs_follow_the_rules() -> None:
    scenario = bundled("example_units")
    model = scenario.model
    side = {p.id: p.side for p in model.participants}
    abilities = {p.id: p.unit.abilities for p in model.participants}
    for battle in range(40):
        moves = replay(scenario, battle, seed=5).moves
        healed_by: list[int] = []
        for before, m in zip([None, *moves], moves, strict=False):
            assert m.move_type in abilities[m.participant] or m.move_type == "riposte"
            if m.move_type == "riposte":
                # Only in reply to a strike, by its target, at its striker, never chained.
                assert before is not None and before.move_type == "strike"
                assert (m.participant, m.target) == (before.target, before.participant)
                assert "strike" in abilities[m.participant]
            elif m.move_type == "healing":
                assert side[m.participant] == side[m.target] and m.participant != m.target
                healed_by.append(m.participant)
            else:
                assert side[m.participant] != side[m.target]
            if m.move_type == "charge":
                assert m.turn == 1
        assert len(healed_by) == len(set(healed_by)), "healing is once per battle"


def test_chooser_takes_the_best_exact_expected_value() -> None:
    # A unicorn (attack 6, damage 4) against a giant (defence 3) and a swordsman (defence 2):
    # strike on the swordsman 2 x 4/2 x 15/21 = 2.86, charge 4/2 x 15/21 + 2 = 3.43, strike on
    # the giant 2 x 4/2 x 18/28 = 2.57: it charges the swordsman, whatever the dice.
    scenario = simulator.inline_scenario("skirmish", "unicorn", "giant, swordsman")
    assert SkirmishPrepared(scenario.model).columns  # compiles
    for battle in range(20):
        first = replay(scenario, battle, seed=3).moves[0]
        assert (first.participant, first.target, first.move_type) == (0, 2, "charge")
    assert k.expected_damage(6, 2, 4) * 2 < k.expected_damage(6, 2, 4) + 2
    assert k.expected_damage(6, 3, 4) * 2 < k.expected_damage(6, 2, 4) * 2


# --- exact checks -----------------------------------------------------------------------


def closed_form_hit(attack: int, defence: int) -> Fraction:
    a_max, d_max = max(attack, 1), max(defence, 1)
    return Fraction(sum(min(a, d_max + 1) for a in range(a_max + 1)), (a_max + 1) * (d_max + 1))


def test_hit_chance_is_the_closed_form_on_a_grid() -> None:
    for attack in range(0, 9):
        for defence in range(0, 9):
            a_max, d_max = max(attack, 1), max(defence, 1)
            enumerated = Fraction(
                sum(a > d for a in range(a_max + 1) for d in range(d_max + 1)),
                (a_max + 1) * (d_max + 1),
            )
            assert enumerated == closed_form_hit(attack, defence)
            assert (
                Fraction(int(k.hit_count(attack, defence)), (a_max + 1) * (d_max + 1)) == enumerated
            )
            for damage in (0, 1, 3):
                expected = float(enumerated * max(damage, 1) / 2)
                assert k.expected_damage(attack, defence, damage) == pytest.approx(
                    expected, rel=1e-12
                )


def test_damage_roll_follows_its_distribution_on_a_grid() -> None:
    """Chi-square of the kernel's damage rolls against the exact law, cell by cell."""
    grid = [(a, d, dmg) for a in (1, 3, 6) for d in (1, 2, 5) for dmg in (1, 4)]
    n = 20_000
    for seed, (attack, defence, damage) in enumerate(grid):
        rolls = np.empty(n, np.int64)
        k.sample_damage_rolls(seed, attack, defence, damage, rolls)
        p_hit = float(closed_form_hit(attack, defence))
        law = np.full(damage + 1, p_hit / (damage + 1))
        law[0] += 1 - p_hit
        observed = np.bincount(rolls, minlength=damage + 1)
        assert len(observed) == damage + 1
        p = stats.chisquare(observed, law * n).pvalue
        assert p > ALPHA / len(grid), (attack, defence, damage, observed, law * n)


def test_duel_expected_damage_and_turns() -> None:
    """A one-on-one duel of unkillable strikers, in closed form.

    Each turn both strike twice and each strike draws a riposte: eight independent rolls
    (a riposte at attack 0 and damage 0 is raised to 1, like the strike). The battle ends
    after the first three turns in a row where all eight rolled 0, so
    E[turns] = (1 - q^3) / ((1 - q) q^3) with q = P(roll 0)^8, and by Wald's identity
    each kind of damage totals E[turns] x 2 x its mean per roll.
    """
    text = """
ruleset = "skirmish"
[unit_types.duelist]
attack = 1
defence = 6
damage = 1
health = 1000000
abilities = ["strike"]
[battle]
attacked = [0, 0]
attacking = [0, -1]
[[stacks]]
tile = [0, -1]
owner = "a"
units = ["duelist"]
[[stacks]]
tile = [0, 0]
owner = "b"
units = ["duelist"]
"""
    import tomllib

    from simulator.errors import Source
    from simulator.scenario.scenario import from_data

    scenario = from_data(tomllib.loads(text), Source("duel"))
    n = 100_000
    rows = simulator.simulate(scenario, n, seed=77).rows
    assert rows is not None
    mean_roll = float(closed_form_hit(1, 6)) * 1 / 2
    q = (1 - float(closed_form_hit(1, 6)) / 2) ** 8
    turns = (1 - q**3) / ((1 - q) * q**3)
    assert (rows["winner"] == 2).all()  # nobody dies: every duel ends in a stalemate

    def z(values: np.ndarray, mean: float) -> float:
        return float((values.mean() - mean) / (values.std(ddof=1) / np.sqrt(len(values))))

    assert abs(z(rows["steps"], turns)) < Z_LIMIT
    for column in (
        "damage.attacker.strike",
        "damage.attacker.riposte",
        "damage.defender.strike",
        "damage.defender.riposte",
    ):
        assert abs(z(rows[column], turns * 2 * mean_roll)) < Z_LIMIT, column


def test_reference_damage_roll_has_the_same_law() -> None:
    rng = random.Random(8)
    n = 20_000
    rolls = np.bincount([reference.damage_roll(rng, 3, 2, 2) for _ in range(n)], minlength=3)
    p_hit = float(closed_form_hit(3, 2))
    law = np.array([1 - p_hit + p_hit / 3, p_hit / 3, p_hit / 3])
    assert stats.chisquare(rolls, law * n).pvalue > ALPHA


# --- field, sides and ids ---------------------------------------------------------------


def test_odd_q_neighbours() -> None:
    assert field_tiles((4, 4)) == ((4, 3), (5, 3), (5, 4), (4, 5), (3, 4), (3, 3), (4, 4))
    assert field_tiles((3, 3)) == ((3, 2), (4, 3), (4, 4), (3, 4), (2, 4), (2, 3), (3, 3))
    for point in ((0, 0), (3, 7), (-3, 2), (8, -5)):
        for d in range(6):
            # The neighbour in direction d sees the point in the opposite direction.
            assert neighbour(neighbour(point, d), (d + 3) % 6) == point


def test_three_way_field_sides_and_ids() -> None:
    model = bundled("three_way_field").model
    owners = {s.index: s.owner for s in model.stacks}
    # Yellow (allied with neither) and purple (with both) stay out.
    assert sorted(owners[i] for i in model.staying_out) == ["purple", "yellow"]
    # Ids: direction 0 (red), 1 (green), then the attacked tile (blue).
    assert [(p.side, owners[p.stack], p.unit.name) for p in model.participants] == [
        (0, "red", "giant"),
        (0, "red", "swordsman"),
        (0, "green", "archer"),
        (0, "green", "archer"),
        (0, "green", "priest"),
        (1, "blue", "cavalry"),
        (1, "blue", "unicorn"),
        (1, "blue", "swordsman"),
    ]
    assert model.participants[5].health == 5
    result = simulator.simulate(bundled("three_way_field"), 2_000, seed=1)
    assert any("stay out" in note for note in result.notes)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_bundled_scenarios_run(path: Path) -> None:
    scenario = simulator.load_scenario(path)
    assert scenario.ruleset == "skirmish" and scenario.description
    result = simulator.simulate(scenario, 2_000)
    assert result.n == 2_000
    data = result.to_dict()
    assert data["step_unit"] == "turns"
    assert abs(sum(v["p"] for v in data["win"].values()) - 1) < 1e-12


# --- command line -----------------------------------------------------------------------


def test_cli_odds_units_and_replay(tmp_path: Path) -> None:
    code, output = cli(
        "odds",
        "--ruleset",
        "skirmish",
        "--attacker",
        "cavalry, 2 swordsman",
        "--defender",
        "giant, priest",
        "-n",
        "2000",
        "--json",
    )
    assert code == 0 and '"ruleset": "skirmish"' in output
    code, output = cli("units", "--ruleset", "skirmish")
    assert code == 0 and all(t in output for t in ("swordsman", "unicorn", "healing"))
    path = SCENARIOS / "cavalry_charge.toml"
    code, output = cli("replay", str(path), "--battle", "12")
    assert code == 0
    logged = [
        ast.literal_eval(m)
        for m in re.findall(r"^\s+(\(\d+, \d+, '\w+', \d+\))", output, re.MULTILINE)
    ]
    assert logged == move_log(simulator.load_scenario(path), 12)


FIELD = """ruleset = "skirmish"
name = "bad"

[battle]
attacked = [2, 2]
attacking = [2, 1]

[[stacks]]
tile = [2, 1]
owner = "red"
units = ["cavalry"]

[[stacks]]
tile = {tile}
owner = "blue"
units = {units}
"""


def bad(tmp_path: Path, text: str, *wanted: str) -> str:
    path = write(tmp_path, text)
    code, output = cli("run", str(path), "-n", "10")
    assert code == 2, output
    assert "Traceback" not in output
    flat = " ".join(output.split())
    for w in wanted:
        assert w in flat, (w, output)
    return flat


def test_ninth_unit_in_a_stack(tmp_path: Path) -> None:
    bad(
        tmp_path,
        FIELD.format(tile="[2, 2]", units='["5 swordsman", "3 archer", "priest"]'),
        "field.toml:16:",
        "stacks[1].units",
        "at most 8 units",
        "has 9",
    )


def test_tile_that_is_not_a_neighbour(tmp_path: Path) -> None:
    bad(
        tmp_path,
        FIELD.format(tile="[4, 4]", units='["giant"]'),
        "field.toml:14:",
        "stacks[1].tile",
        "[4, 4] is not the attacked tile [2, 2]",
    )
    bad(
        tmp_path,
        FIELD.format(tile="[2, 2]", units='["giant"]').replace(
            "attacking = [2, 1]", "attacking = [2, 4]"
        ),
        "field.toml:6:",
        "battle.attacking",
        "not a neighbour of the attacked tile",
    )


def test_ability_the_ruleset_lacks(tmp_path: Path) -> None:
    text = (
        FIELD.format(tile="[2, 2]", units='["mage"]')
        + """
[unit_types.mage]
attack = 3
defence = 1
damage = 5
health = 4
abilities = ["strike", "{ability}"]
"""
    )
    bad(
        tmp_path,
        text.format(ability="fireball"),
        "field.toml:23:",
        "unit_types.mage.abilities",
        "'fireball' is not one of strike, archery, charge, healing",
    )
    bad(
        tmp_path,
        text.format(ability="archey"),
        "unit_types.mage.abilities",
        "did you mean 'archery'?",
    )


def test_misspelt_names_get_the_nearest(tmp_path: Path) -> None:
    bad(
        tmp_path,
        FIELD.format(tile="[2, 2]", units='["swordsmen"]'),
        "field.toml:16:",
        "stacks[1].units[0]",
        "unknown unit type 'swordsmen'",
        "did you mean 'swordsman'?",
    )
    bad(
        tmp_path,
        FIELD.format(tile="[2, 2]", units='["giant"]').replace('owner = "blue"', 'ownr = "blue"'),
        "field.toml:15:",
        "stacks[1]",
        "unknown key 'ownr'",
        "did you mean 'owner'?",
    )
    bad(
        tmp_path,
        FIELD.format(tile="[2, 2]", units='["giant"]').replace(
            "attacking = [2, 1]", 'attacking = [2, 1]\nexpected_value = "sampled"'
        ),
        "field.toml:7:",
        "battle.expected_value",
        "did you mean 'sampled5'?",
    )


def test_bad_inline_and_replay_input() -> None:
    code, output = cli(
        "odds", "--ruleset", "skirmish", "--attacker", "9 cavalry", "--defender", "giant"
    )
    assert code == 2 and "at most 8 units" in output and "Traceback" not in output
    code, output = cli(
        "odds",
        "--ruleset",
        "skirmish",
        "--attacker",
        "cavalry",
        "--defender",
        "giant",
        "--set",
        "expected_valu=exact",
    )
    assert code == 2 and "did you mean 'expected_value'?" in output
    code, output = cli("replay", str(SCENARIOS.parent / "olympia" / "knights_vs_pikemen.toml"))
    assert code == 2 and "keeps no move log" in output and "Traceback" not in output
