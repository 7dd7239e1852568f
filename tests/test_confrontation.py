"""Confrontation: worked examples, exact damage distributions, morale, kernel against the
reference, determinism, bundled scenarios and bad input."""

from __future__ import annotations

import json
import math
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from kernels import confrontation as kernel
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.rulesets.confrontation import model
from simulator.rulesets.confrontation.model import hundredths
from simulator.scenario.scenario import from_data
from tests import ROOT
from tests.reference import confrontation as reference
from tests.reference.agreement import check_case
from tests.reference.cases import Case, cases_of
from tests.stats_tests import ALPHA, reproducibility

SCENARIOS = sorted((ROOT / "scenarios" / "confrontation").glob("*.toml"))
SCENARIO = {p.stem: p for p in SCENARIOS}
runner = CliRunner()

# Strength 7.5 against 2.625: N = floor(4.875) = 4 (worked out in the test below).
STRONG = "unit(arms=4, resolve=2, advantages=2, integrity=1000)"
WEAK = "unit(arms=3, resolve=1, advantages=-1, integrity=1000)"


def two_dice_pmf(faces: int, dice: int = 2) -> dict[int, float]:
    """Exact distribution of the sum of ``dice`` uniform dice with ``faces`` faces."""
    pmf = np.array([1.0])
    for _ in range(dice):
        pmf = np.convolve(pmf, np.full(faces, 1.0 / faces))
    return {dice + i: float(p) for i, p in enumerate(pmf)}


def fits(sample: np.ndarray, pmf: dict[int, float]) -> float:
    """p-value of a chi-square goodness-of-fit test of ``sample`` against ``pmf``."""
    values = np.array(sorted(pmf))
    assert set(np.unique(sample)) <= set(values.tolist()), "values outside the support"
    observed = np.array([(sample == v).sum() for v in values])
    expected = np.array([pmf[v] for v in values]) * len(sample)
    return float(stats.chisquare(observed, expected).pvalue)


def odds(attacker: str, defender: str, **options: Any) -> simulator.Scenario:
    return simulator.inline_scenario("confrontation", attacker, defender, **options)


def rows(scenario: simulator.Scenario, battles: int, seed: int = 1) -> dict[str, np.ndarray]:
    result = simulator.simulate(scenario, battles, seed)
    assert result.rows is not None
    return result.rows


# -- Exact checks -----------------------------------------------------------------------------


def test_strength_of_worked_examples_by_hand() -> None:
    # (4 x 1 + 2 x 1/2) x (1 + 2/4) = 5 x 1.5 = 7.5; (3 + 0.5) x (1 - 1/4) = 2.625.
    assert model.strength(4, 2, 1, 0.5, 2) == 7.5
    assert model.strength(3, 1, 1, 0.5, -1) == 2.625
    assert model.dice_faces(7.5, 2.625) == 4
    # The source's examples: 6 against 3 rolls 2d3; 3 against 5 still rolls 2d1 = 2.
    assert model.dice_faces(6, 3) == 3
    assert model.dice_faces(3, 5) == 1
    # Psi weights (a = 0.5, b = 1.5): 2 x 0.5 + 3 x 1.5 = 5.5; strength never below 0.
    assert model.strength(2, 3, 0.5, 1.5, 0) == 5.5
    assert model.strength(1, -4, 1, 0.5, 0) == 0.0
    assert model.strength(4, 2, 1, 0.5, -5) == 0.0


#: a and b from 0.1 to 2.0 as a TOML file gives them (the float nearest each decimal).
TENTHS = [float(f"{i / 10:.1f}") for i in range(1, 21)]


# Slow tier (docs/testing.md): 4.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_strength_is_exact_on_the_decimals_written() -> None:
    # 1 x 0.1 + 3.5 x 1.4 is 5 in decimal and 4.999999999999999 in binary floating point,
    # which would roll 2d4 instead of 2d5.
    assert 1 * 0.1 + 3.5 * 1.4 < 5
    assert model.strength(1, 3.5, 0.1, 1.4, 0) == 5
    assert model.dice_faces(model.strength(1, 3.5, 0.1, 1.4, 0), 0) == 5
    # The whole class: the kernel's integer strength is the model's exact one, and the
    # float formula's die differs on many of these combinations.
    combos = list(product(TENTHS, TENTHS, (0, 1, 2, 3, 5, 7), range(-4, 9), (-1, 0, 2)))
    units = np.zeros((len(combos), kernel.N_UNIT_FIELDS), np.int64)
    floats = np.zeros((len(combos), kernel.N_FLOAT_FIELDS), np.float64)
    resolve2 = np.zeros(len(combos), np.int64)
    wrong_die = 0
    for u, (a, b, arms, half_points, advantages) in enumerate(combos):
        resolve = half_points / 2
        units[u, kernel.U_ADVANTAGES] = advantages
        floats[u] = [hundredths(arms), hundredths(a), hundredths(b)]
        resolve2[u] = half_points
        exact = model.strength(arms, resolve, a, b, advantages)
        assert kernel.strength(units, floats, resolve2, u) == exact * kernel.STRENGTH_SCALE
        binary = max(0.0, (arms * a + resolve * b) * (1 + advantages / 4))
        wrong_die += math.floor(binary) != math.floor(exact)
    assert wrong_die >= 200, wrong_die  # 213 of the 93,600 combinations here


def test_units_table_shows_strength_as_a_number() -> None:
    result = runner.invoke(app, ["units", "--ruleset", "confrontation", "--json"])
    assert result.exit_code == 0, result.output
    rows_ = json.loads(result.stdout)["confrontation"]
    veteran = next(r for r in rows_ if r["type"] == "veteran")
    assert veteran["strength"] == 7.5


def test_strength_five_in_decimal_rolls_2d5() -> None:
    five = "unit(arms=1, a=0.1, resolve=3.5, b=1.4, integrity=1000)"
    zero = "unit(arms=0, resolve=0, integrity=1000)"
    out = rows(odds(five, zero, ability="bombard"), 20_000, seed=14)
    assert out["damage.defender"].max() == 10
    assert fits(out["damage.defender"], two_dice_pmf(5)) > ALPHA
    ref = reference.run(odds(five, zero, ability="bombard").model, 2000, seed=14)
    assert fits(ref["damage.defender"], two_dice_pmf(5)) > ALPHA


def test_one_confrontation_is_two_uniform_dice() -> None:
    out = rows(odds(STRONG, WEAK, ability="bombard"), 100_000, seed=11)
    assert fits(out["damage.defender"], two_dice_pmf(4)) > ALPHA
    assert np.all(out["damage.attacker"] == 0)  # bombard is not answered
    ref = reference.run(odds(STRONG, WEAK, ability="bombard").model, 4000, seed=11)
    assert fits(ref["damage.defender"], two_dice_pmf(4)) > ALPHA


def test_attack_counter_attack_damage() -> None:
    # Two confrontations of 2d4 on the defender; the weaker defender's answer rolls 2d1 = 2.
    out = rows(odds(STRONG, WEAK, ability="attack"), 100_000, seed=12)
    assert fits(out["damage.defender"], two_dice_pmf(4, dice=4)) > ALPHA
    assert np.all(out["damage.attacker"] == 2)
    # flat1 (the source's worked example): a defender that is not stronger deals exactly 1.
    flat = rows(odds(STRONG, WEAK, ability="attack", min_damage_rule="flat1"), 20_000, seed=12)
    assert np.all(flat["damage.attacker"] == 1)
    assert fits(flat["damage.defender"], two_dice_pmf(4, dice=4)) > ALPHA


def test_destruction_chance_of_one_exchange_matches_the_dice() -> None:
    # Integrity 5 falls to one 2d4 roll of 5 or more: P = 10/16.
    scenario = odds(
        STRONG, "unit(arms=3, resolve=1, advantages=-1, integrity=5)", ability="bombard"
    )
    result = simulator.simulate(scenario, 40_000, seed=13)
    p, _, _ = result.win("attacker")
    assert abs(p - 10 / 16) < 3.3 * np.sqrt(10 / 16 * 6 / 16 / 40_000)
    assert result.rows is not None
    destroyed = result.rows["destroyed.defender.d.unit"] == 1
    assert np.array_equal(destroyed, result.rows["integrity.defender.d.unit"] == 0)
    assert np.array_equal(destroyed, result.rows["winner"] == 0)


def strike_data(speed: int, reach: bool) -> dict[str, Any]:
    return {
        "ruleset": "confrontation",
        "battle": {"turns": 1},
        "attacker": {
            "stacks": [
                {
                    "name": "raid",
                    "at": [0, 0],
                    "units": [{"arms": 10, "resolve": 0, "integrity": 100}],
                }
            ]
        },
        "defender": {
            "stacks": [
                {
                    "name": "column",
                    "at": [1, 0],
                    "units": [
                        {"name": "cart", "arms": 1, "resolve": 0, "integrity": 100, "reach": reach},
                        {"name": "mule", "arms": 0, "resolve": 0, "integrity": 100},
                    ],
                },
                {
                    "name": "wing",
                    "at": [3, 0],
                    "units": [
                        {
                            "name": "hawk",
                            "arms": 3,
                            "resolve": 0,
                            "integrity": 100,
                            "aerial": True,
                            "speed": speed,
                        }
                    ],
                },
            ]
        },
        "script": [{"actions": [{"by": "raid", "ability": "strike", "target": "column"}]}],
    }


def test_strike_reach_and_aerial_intercept() -> None:
    def run(speed: int, reach: bool) -> dict[str, np.ndarray]:
        return rows(from_data(strike_data(speed, reach), Source("test")), 3000)

    def hit(out: dict[str, np.ndarray], unit: str) -> np.ndarray:
        return out[f"integrity.defender.{unit}"] < 100

    # Nobody can answer: strike acts as bombard, every unit in the space is hit.
    alone = run(speed=1, reach=False)
    assert np.all(hit(alone, "column.cart") & hit(alone, "column.mule"))
    assert not np.any(hit(alone, "wing.hawk")) and np.all(alone["damage.attacker"] == 0)
    # The hawk is 2 spaces away with speed 2: it intercepts and answers (2d1 = 2).
    air = run(speed=2, reach=False)
    assert np.all(hit(air, "wing.hawk")) and not np.any(hit(air, "column.cart"))
    assert np.all(air["damage.attacker"] == 2)
    # The cart has reach but the hawk is stronger: the hawk defends.
    both = run(speed=2, reach=True)
    assert np.all(hit(both, "wing.hawk")) and not np.any(hit(both, "column.cart"))
    # Only reach: the cart defends.
    reach = run(speed=1, reach=True)
    assert np.all(hit(reach, "column.cart")) and not np.any(hit(reach, "column.mule"))


def test_morale_on_destruction_and_trend() -> None:
    data = {
        "ruleset": "confrontation",
        "battle": {"turns": 1, "nearby": 1},
        "attacker": {
            "stacks": [
                {
                    "name": "a",
                    "at": [0, 0],
                    "units": [{"name": "bold", "arms": 2, "resolve": 3, "integrity": 50}],
                }
            ]
        },
        "defender": {
            "stacks": [
                {
                    "name": "x",
                    "at": [1, 0],
                    "units": [
                        {"name": "doomed", "arms": 0, "resolve": 0, "integrity": 1},
                        {"name": "mate", "arms": 0, "resolve": 1, "integrity": 50},
                    ],
                },
                {
                    "name": "y",
                    "at": [2, -1],
                    "units": [{"name": "near", "arms": 0, "resolve": 4, "integrity": 50}],
                },
                {
                    "name": "z",
                    "at": [3, 0],
                    "units": [{"name": "far", "arms": 0, "resolve": -1, "integrity": 50}],
                },
            ]
        },
        "script": [
            {
                "actions": [
                    {"by": "a", "ability": "bombard", "target": "x"},
                    {"by": "a", "ability": "bombard", "target": [1, 0]},
                ]
            }
        ],
    }
    out = rows(from_data(data, Source("test")), 2000)
    assert np.all(out["destroyed.defender.x.doomed"] == 1)
    # On destruction: the attacker (adjacent) 3 -> 4, "mate" (same space) 1 -> 0, "near"
    # (adjacent) 4 -> 3, "far" (2 spaces) untouched. End of turn: 4 -> 3.5, 0 -> 0.5,
    # -1 -> -0.5; 3 stays.
    assert np.all(out["resolve_x2.attacker.a.bold"] == 7)
    assert np.all(out["resolve_x2.defender.x.mate"] == 1)
    assert np.all(out["resolve_x2.defender.y.near"] == 6)
    assert np.all(out["resolve_x2.defender.z.far"] == -1)
    assert np.all(out["resolve_x2.defender.x.doomed"] == 0)  # frozen when destroyed
    assert np.all(out["casualties.defender.unit"] == 1)
    ref = reference.run(from_data(data, Source("test")).model, 200, seed=1)
    for column in ("bold", "mate", "near", "far"):
        name = next(c for c in out if c.startswith("resolve_x2") and c.endswith(column))
        assert np.array_equal(ref[name], out[name][:200])


def trended(resolve: float, turns: int) -> float:
    """Resolve after ``turns`` ends of turn with nobody destroyed, in closed form: below 1
    it rises half a point a turn and stops at 1, above 3 it falls half a point a turn and
    stops at 3, from 1 to 3 it stays."""
    if resolve < 1:
        return min(1.0, resolve + turns / 2)
    if resolve > 3:
        return max(3.0, resolve - turns / 2)
    return resolve


def trend_data(turns: int) -> dict[str, Any]:
    def unit(name: str, resolve: float, integrity: int = 1000) -> dict[str, Any]:
        return {"name": name, "arms": 0, "resolve": resolve, "integrity": integrity}

    def stack(name: str, at: list[int], *units: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "at": at, "units": list(units)}

    gunner = {"name": "gunner", "arms": 2, "resolve": 3, "integrity": 1000}
    return {
        "ruleset": "confrontation",
        "battle": {"turns": turns, "nearby": 1, "after_script": "stop"},
        "attacker": {
            "stacks": [
                stack("a", [0, 0], gunner),
                stack("b", [-3, 0], unit("routed", -2), unit("level", 1), unit("wavering", 0.5)),
            ]
        },
        "defender": {
            "stacks": [
                stack("x", [1, 0], unit("doomed", 0, integrity=1), unit("steady", 1)),
                stack("y", [4, 0], unit("shaken", -1.5), unit("firm", 1.5), unit("proud", 4.5)),
            ]
        },
        # Turn 1 only: "doomed" falls to the first die (2dN is at least 2), then nothing.
        "script": [{"actions": [{"by": "a", "ability": "bombard", "target": "x"}]}],
    }


#: Resolve when "doomed" has fallen on turn 1, before the first end of turn: the gunner
#: (adjacent) 3 + 1, "steady" (same space) 1 - 1; stacks b and y are 4 and 3 spaces away.
AFTER_THE_FALL = {
    "attacker.a.gunner": 4.0,
    "attacker.b.routed": -2.0,
    "attacker.b.level": 1.0,
    "attacker.b.wavering": 0.5,
    "defender.x.steady": 0.0,
    "defender.y.shaken": -1.5,
    "defender.y.firm": 1.5,
    "defender.y.proud": 4.5,
}


@pytest.mark.parametrize("turns", [1, 2, 3, 4, 6])
def test_morale_trend_stops_at_one_and_three_in_half_points(turns: int) -> None:
    # By hand, for example after 3 turns: gunner 4 -> 3.5 -> 3 -> 3, steady 0 -> 0.5 -> 1
    # -> 1, routed -2 -> -1.5 -> -1 -> -0.5, level and firm stay at 1 and 1.5. Every battle
    # is the same (only the dice of the undying units vary), so every row must match.
    scenario = from_data(trend_data(turns), Source("test"))
    expected = {name: 2 * trended(r, turns) for name, r in AFTER_THE_FALL.items()}
    kernel_rows = rows(scenario, 500, seed=5)
    reference_rows = reference.run(scenario.model, 50, seed=5)
    for out in (kernel_rows, reference_rows):
        assert np.all(out["destroyed.defender.x.doomed"] == 1)
        assert np.all(out["winner"] == 2) and np.all(out["steps"] == turns)
        for name, resolve_x2 in expected.items():
            assert np.all(out[f"resolve_x2.{name}"] == resolve_x2), (name, turns)


# -- Kernel against reference -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", cases_of("confrontation"), ids=lambda c: c.name)
def test_kernel_agrees_with_stored_reference(case: Case) -> None:
    """The kernel against the stored reference sample of each case
    (tests/reference/agreement.py). The power of each comparison, at a family-wise
    false-alarm rate of 0.001, for a one-point shift of P(attacker wins) and, the weakest
    over the other columns, for one point of probability moved between neighbouring values:

    attack: winner 1.00, others 0.82
    bombard: winner 1.00, others 0.82
    morale_cascade: winner 1.00, others 0.84
    open_field: winner 1.00, others 0.84
    strike: winner 0.98, others 0.81
    attack-flat1: winner 1.00, others 0.84
    attack-nearby2-cycle: winner 1.00, others 0.85
    open-field-alternate: winner 1.00, others 0.84
    """
    assert check_case(case, test_kernel_agrees_with_stored_reference.__doc__) == []


# -- Determinism ---------------------------------------------------------------------------------


def test_same_seed_same_battles_on_any_thread_count_and_chunking() -> None:

    scenario = simulator.load_scenario(SCENARIO["open_field"])
    assert reproducibility(scenario, 3000, seed=99, chunks=(1000, 777)) == []
    # A different seed gives different battles.
    one = rows(scenario, 3000, seed=99)
    other = rows(scenario, 3000, seed=100)
    assert not np.array_equal(one["damage.defender"], other["damage.defender"])


# -- Bundled scenarios ---------------------------------------------------------------------------


def test_bundled_scenarios_cover_each_ability_and_morale() -> None:
    assert len(SCENARIOS) >= 4
    used = set()
    for path in SCENARIOS:
        scenario = simulator.load_scenario(path)
        for key in ("ruleset", "name", "description", "battles", "seed"):
            assert key in scenario.data, (path.name, key)
        used |= {a.ability for turn in scenario.model.script for a in turn}
    assert {"attack", "bombard", "strike"} <= used
    cascade = simulator.load_scenario(SCENARIO["morale_cascade"])
    assert len(cascade.model.stacks) >= 4


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_bundled_scenario_runs_from_the_command_line(path: Path) -> None:
    result = runner.invoke(app, ["run", str(path), "--battles", "2000", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ruleset"] == "confrontation" and report["step_unit"] == "turns"
    assert abs(sum(w["p"] for w in report["win"].values()) - 1) < 1e-9
    assert "damage.defender" in report["extras"]


def test_morale_cascades_down_the_line() -> None:
    # Morale cascade: the stacks further down the line end with less resolve than they
    # started with (3) whenever their neighbours fell.
    out = rows(simulator.load_scenario(SCENARIO["morale_cascade"]), 5000, seed=3)
    l2 = out["resolve_x2.defender.l2.recruit1"]
    l1_gone = (out["destroyed.defender.l1.recruit1"] == 1) & (
        out["destroyed.defender.l1.recruit2"] == 1
    )
    assert l1_gone.any()
    assert np.all(l2[l1_gone & (out["destroyed.defender.l2.recruit1"] == 0)] < 6)


# -- Bad input ------------------------------------------------------------------------------------

GOOD = """ruleset = "confrontation"
name = "bad"

[[attacker.stacks]]
name = "a1"
at = [0, 0]
units = [
  { type = "trooper" },
  { type = "trooper" },
]

[[defender.stacks]]
name = "d1"
at = [1, 0]
units = [{ type = "spearman" }]

[[script]]
actions = [
  { by = "a1", ability = "attack", target = "d1" },
]
"""


def fails(args: list[str], *expected: str) -> str:
    result = runner.invoke(app, args)
    text = result.output
    assert result.exit_code == 2, text
    assert "Traceback" not in text and not isinstance(result.exception, BattleOddsError)
    for part in expected:
        assert part in text, (part, text)
    return text


def bad_file(tmp_path: Path, old: str, new: str) -> str:
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new))
    return str(path)


def test_good_file_validates(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", bad_file(tmp_path, "", "")])
    assert result.exit_code == 0, result.output


def test_fourth_unit_in_a_stack(tmp_path: Path) -> None:
    path = bad_file(
        tmp_path,
        '  { type = "trooper" },\n]',
        '  { type = "trooper" },\n  { type = "veteran" },\n  { type = "militia" },\n]',
    )
    fails(["validate", path], "bad.toml:7:", "attacker.stacks[0].units", "4 units", "at most 3")
    fails(
        [
            "odds",
            "--ruleset",
            "confrontation",
            "--attacker",
            "2 trooper, 2 veteran",
            "--defender",
            "trooper",
            "--ability",
            "attack",
        ],
        "--attacker",
        "at most 3",
    )


def test_unit_with_no_integrity(tmp_path: Path) -> None:
    path = bad_file(tmp_path, '{ type = "spearman" }', "{ arms = 3, resolve = 1 }")
    fails(
        ["validate", path], "bad.toml:15:", "defender.stacks[0].units[0].integrity", "no integrity"
    )
    path = bad_file(
        tmp_path, '  { type = "trooper" },\n]', '  { type = "trooper", integrity = 0 },\n]'
    )
    fails(
        ["validate", path], "bad.toml:9:", "attacker.stacks[0].units[1].integrity", "out of range"
    )
    fails(
        [
            "odds",
            "--ruleset",
            "confrontation",
            "--attacker",
            "unit(arms=3, resolve=1)",
            "--defender",
            "trooper",
        ],
        "integrity",
        "no integrity",
    )


def test_unknown_ability(tmp_path: Path) -> None:
    path = bad_file(tmp_path, 'ability = "attack"', 'ability = "bombrad"')
    fails(
        ["run", path],
        "bad.toml:19:",
        "script[0].actions[0].ability",
        "'bombrad'",
        "did you mean 'bombard'",
    )
    fails(
        [
            "odds",
            "--ruleset",
            "confrontation",
            "--attacker",
            "trooper",
            "--defender",
            "trooper",
            "--ability",
            "strik",
        ],
        "--ability",
        "'strik'",
        "did you mean 'strike'",
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            '{ type = "spearman" }',
            '{ type = "spearmen" }',
            ("bad.toml:15:", "unknown unit type", "did you mean 'spearman'"),
        ),
        (
            '{ type = "spearman" }',
            '{ type = "spearman", integrety = 3 }',
            ("bad.toml:15:", "unknown key 'integrety'", "did you mean 'integrity'"),
        ),
        (
            '{ type = "spearman" }',
            '{ type = "spearman", name = 7 }',
            ("bad.toml:15:", "units[0].name", "expected a string"),
        ),
        (
            '{ type = "spearman" }',
            '{ type = "spearman", name = "pike.1" }',
            ("bad.toml:15:", "'pike.1' is not a name"),
        ),
        ('by = "a1"', 'by = "a11"', ("bad.toml:19:", "unknown stack 'a11'", "did you mean 'a1'")),
        ('target = "d1"', 'target = "a1"', ("bad.toml:19:", "same side")),
        ("at = [1, 0]", "at = [0, 0]", ("bad.toml:14:", "already holds stack 'a1'")),
        (
            'name = "bad"',
            'name = "bad"\n[battle]\nmin_damage_rule = "flat"',
            ("bad.toml:4:", "battle.min_damage_rule", "did you mean 'flat1'"),
        ),
    ],
)
def test_other_bad_input(tmp_path: Path, old: str, new: str, expected: tuple[str, ...]) -> None:
    fails(["validate", bad_file(tmp_path, old, new)], *expected)


def test_bad_inline_options() -> None:
    base = ["odds", "--ruleset", "confrontation", "--attacker", "trooper", "--defender", "trooper"]
    fails([*base, "--set", "turn=3"], "turn", "did you mean 'turns'")
    fails([*base, "--terrain", "swamp"], "--terrain", "not used by the confrontation ruleset")
    fails(
        ["odds", "--ruleset", "confrontation", "--attacker", "troper", "--defender", "trooper"],
        "unknown unit type 'troper'",
        "did you mean 'trooper'",
    )
    with pytest.raises(BattleOddsError, match="a stack holds at most 3 units"):
        odds("4 militia", "trooper")
