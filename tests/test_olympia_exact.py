"""The exact solver (issue 3) against the strike kernel, the source's figures and the CLI.

Every comparison with a simulation uses a fixed seed and a 99.9% interval, so a broken
solver (or kernel) fails and a correct one passes on every run.
"""

from __future__ import annotations

import json
import math
import time
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.results.stats import wilson
from simulator.rulesets.olympia.exact import chain_size
from simulator.rulesets.olympia.keys import KERNEL_CHOICES
from simulator.rulesets.olympia.prepare import OlympiaPrepared, chain_refusal, compile_battle
from simulator.testing import exact_within_intervals

Z999 = float(stats.norm.ppf(0.9995))
#: Battles per kernel per generated scenario: intervals of +-1.2% on a probability.
BATTLES = 20_000
#: Generated scenarios are kept small enough to solve in milliseconds.
SMALL = 1_000_000

FIGHTERS = (
    "soldier",
    "pikeman",
    "knight",
    "archer",
    "crossbowman",
    "blessed_soldier",
    "peasant",
    "swordsman",
    "pirate",
)


@st.composite
def armies(draw: Any, side: str, structure_allowed: bool) -> dict[str, Any]:
    units = []
    for _ in range(draw(st.integers(1, 2))):
        noble: dict[str, Any] = {"health": draw(st.sampled_from([100, 100, 40, 1]))}
        if draw(st.booleans()):
            noble["items"] = [
                {
                    "name": "sword",
                    "attack": draw(st.integers(0, 30)),
                    "defense": draw(st.integers(0, 30)),
                }
            ]
        men = []
        for _ in range(draw(st.integers(0, 2))):
            men.append(
                {
                    "type": draw(st.sampled_from(FIGHTERS)),
                    "count": draw(st.integers(1, 4)),
                    "behind": draw(st.sampled_from([0, 0, 1])),
                }
            )
        units.append({"noble": noble, "men": men})
    break_point = draw(st.sampled_from([50, 50, 0, 30, 80, 100]))
    army: dict[str, Any] = {"units": units, "break_point": break_point}
    if structure_allowed and draw(st.booleans()):
        army["structure"] = {
            "kind": draw(st.sampled_from(["tower", "other", "castle"])),
            "defense": draw(st.integers(0, 6)),
            "damage": draw(st.integers(85, 99)),
        }
    return army


@st.composite
def small_battles(draw: Any) -> dict[str, Any]:
    terrain = draw(st.sampled_from(["land", "land", "swamp", "ship"]))
    data: dict[str, Any] = {
        "ruleset": "olympia",
        "name": "generated",
        "battle": {
            "terrain": terrain,
            "weather": draw(st.sampled_from([[], [], ["rain"], ["wind"], ["wind", "rain"]])),
        },
        "attacker": draw(armies("attacker", terrain == "ship")),
        "defender": draw(armies("defender", True)),
    }
    if "structure" in data["defender"] and terrain != "ship" and draw(st.booleans()):
        engine = draw(st.sampled_from(["catapult", "battering_ram"]))
        data["attacker"]["siege_engines"] = {engine: 1}
    return data


def scenario_of(data: dict[str, Any], order: str) -> simulator.Scenario:
    data = {**data, "battle": {**data["battle"], "strike_order": order}}
    return simulator.from_data(data, Source("generated"))


def assert_agrees(
    scenario: simulator.Scenario, kernel: str, seed: int, battles: int = BATTLES
) -> None:
    """The kernel's 99.9% intervals contain the exact probabilities and expectations (the
    chain kernel where it runs: the random strike order)."""
    if kernel == "chain" and chain_refusal(compile_battle(scenario.model)) is not None:
        return
    prepared = OlympiaPrepared(scenario.model)
    matrix = prepared.run_matrix(seed, 0, battles, kernel)
    rows = {name: matrix[:, col] for name, col in prepared.columns.items()}
    failures = exact_within_intervals(simulator.exact(scenario), rows)
    assert failures == [], (failures, scenario.data)


#: Every olympia kernel a scenario can choose ("auto" picks one of them).
KERNELS = [name for name in KERNEL_CHOICES if name != "auto"]


# Slow tier (docs/testing.md): 3.0 s, quiet, the kernels cached
@pytest.mark.slow
@settings(
    max_examples=24,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=small_battles())
def test_generated_battles_agree_with_every_kernel_in_both_strike_orders(
    data: dict[str, Any],
) -> None:
    for order in ("random", "alternating"):
        scenario = scenario_of(data, order)
        if chain_size(scenario.model).states > SMALL:
            SKIPPED.append(order)
            continue
        # A seed of its own per scenario and kernel: battles of similar small scenarios
        # drawn from the same streams would be correlated, and so would their checks.
        seed = zlib.crc32(json.dumps(scenario.data, sort_keys=True).encode())
        for index, kernel in enumerate(KERNELS):
            assert_agrees(scenario, kernel, seed=seed + index)
        SOLVED.append(order)


SOLVED: list[str] = []
SKIPPED: list[str] = []


# Slow tier, beside the generated battles it counts: in the first tier, without them, it
# ran them all again (every kernel against the exact solver on 24 battles, 4.8 s quiet
# on a fresh clone);
# test_every_kernel_agrees_with_exact_answers_on_a_siege keeps the first tier's check of
# every kernel against the exact solver.
@pytest.mark.slow
def test_at_least_a_dozen_generated_battles_were_solved_in_each_order() -> None:
    if not SOLVED and not SKIPPED:
        test_generated_battles_agree_with_every_kernel_in_both_strike_orders()
    assert SOLVED.count("random") >= 12, (SOLVED, SKIPPED)
    assert SOLVED.count("alternating") >= 12, (SOLVED, SKIPPED)


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_agrees_with_exact_answers_on_a_siege(kernel: str) -> None:
    """A siege with rare defender wins (0.07% under the alternating order): 200,000
    battles, so the rare outcome is counted in the hundreds."""
    data = {
        "ruleset": "olympia",
        "attacker": {
            "units": [
                {"men": {"soldier": 3, "blessed_soldier": 2}},
                {"behind": 0, "men": [{"type": "archer", "count": 2, "behind": 1}]},
            ],
            "siege_engines": {"catapult": 1},
        },
        "defender": {
            "units": [{"men": {"pikeman": 3}}],
            "structure": {"kind": "tower", "defense": 4, "damage": 90},
        },
    }
    for order in ("random", "alternating"):
        assert_agrees(scenario_of({**data, "battle": {}}, order), kernel, 7, 10 * BATTLES)


@pytest.mark.parametrize(
    "army",
    [
        "noble, 3 soldier",
        "noble, 2 knight, 2 archer@1",
        "noble, 3 blessed_soldier; noble(health=5), 2 pikeman",
        "noble(attack=20), 4 peasant, 1 swordsman",
    ],
)
def test_identical_sides_under_random_order_win_one_half_each(army: str) -> None:
    answer = simulator.exact(simulator.inline_scenario("olympia", army, army))
    assert answer.win["attacker"] == pytest.approx(0.5, abs=1e-12)
    assert answer.win["defender"] == pytest.approx(0.5, abs=1e-12)
    assert answer.win["draw"] == pytest.approx(0.0, abs=1e-12)
    for name, value in answer.casualties.items():
        other = (
            name.replace("attacker", "defender")
            if "attacker" in name
            else name.replace("defender", "attacker")
        )
        assert value == pytest.approx(answer.casualties[other], rel=1e-12)


def test_alternating_order_favours_the_side_that_strikes_first() -> None:
    # Identical sides: the attacker strikes first in every cycle of the released engine.
    answer = simulator.exact(
        simulator.inline_scenario(
            "olympia", "noble, 3 swordsman", "noble, 3 swordsman", strike_order="alternating"
        )
    )
    assert answer.win["attacker"] > 0.5 + 1e-6
    assert sum(answer.win.values()) == pytest.approx(1.0, abs=1e-12)


def test_source_figures_two_knights_lose_when_both_knights_die() -> None:
    # A noble with two knights (value 340, threshold 170) loses when both knights are
    # down (170 <= 170), so nobody ever hits his noble; with pikemen he fights on (230/115).
    knights = simulator.exact(
        simulator.inline_scenario("olympia", "noble, 2 knight", "noble, 40 soldier")
    )
    assert knights.extras["nobles_wounded.attacker"] == 0.0
    assert knights.extras["nobles_killed.attacker"] == 0.0
    pikemen = simulator.exact(
        simulator.inline_scenario("olympia", "noble, 2 pikeman", "noble, 40 soldier")
    )
    assert pikemen.extras["nobles_wounded.attacker"] > 0.0


def test_forty_men_of_two_types_a_side_solve_in_seconds() -> None:
    simulator.exact(simulator.inline_scenario("olympia", "noble, 1 soldier", "noble, 1 soldier"))
    scenario = simulator.inline_scenario(
        "olympia", "noble, 20 soldier, 20 archer@1", "noble, 20 knight, 20 pikeman"
    )
    started = time.perf_counter()
    answer = simulator.exact(scenario)
    seconds = time.perf_counter() - started
    assert answer.states == (21 * 21 * 2) ** 2
    # The issue asks for "under a few seconds"; the bound leaves room for a loaded machine.
    assert seconds < 10, seconds
    assert sum(answer.win.values()) == pytest.approx(1.0, abs=1e-9)


def test_too_large_battles_are_refused_naming_the_size() -> None:
    scenario = simulator.inline_scenario(
        "olympia", "noble, 200 soldier, 200 archer", "noble, 300 pikeman"
    )
    with pytest.raises(BattleOddsError, match=r"too large for an exact answer: [\d,]+ states"):
        simulator.exact(scenario)


def test_the_rule_that_makes_the_chain_too_large_is_named() -> None:
    alternating = simulator.inline_scenario(
        "olympia",
        "noble, 20 soldier, 20 archer@1",
        "noble, 20 knight, 20 pikeman",
        strike_order="alternating",
    )
    with pytest.raises(BattleOddsError, match="alternating strike order"):
        simulator.exact(alternating)
    castle = simulator.inline_scenario(
        "olympia", "noble, 80 soldier", "noble, 80 pikeman", structure="castle:500"
    )
    with pytest.raises(BattleOddsError, match="castle"):
        simulator.exact(castle)


def test_other_rulesets_are_refused() -> None:
    class Fake:
        ruleset = "skirmish"
        source = Source("fake")

    with pytest.raises(BattleOddsError, match="no exact solver for the 'skirmish' ruleset"):
        simulator.exact(Fake())  # type: ignore[arg-type]


runner = CliRunner()


def test_cli_exact_prints_json_with_the_win_contract(tmp_path: Any) -> None:
    path = tmp_path / "duel.toml"
    path.write_text(
        'ruleset = "olympia"\n[[attacker.units]]\nmen = { knight = 3 }\n'
        "[[defender.units]]\nmen = { pikeman = 5 }\n"
    )
    result = runner.invoke(app, ["exact", str(path), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert set(answer["win"]) == {"attacker", "defender", "draw"}
    for outcome in answer["win"].values():
        assert outcome["low"] == outcome["p"] == outcome["high"]
    expected = simulator.exact(simulator.load_scenario(path))
    assert answer["win"]["attacker"]["p"] == pytest.approx(expected.win["attacker"], abs=1e-15)
    assert answer["casualties"]["attacker.knight"]["mean"] == pytest.approx(
        expected.casualties["casualties.attacker.knight"]
    )
    table = runner.invoke(app, ["exact", str(path)])
    assert table.exit_code == 0 and "attacker wins" in table.stdout


def test_cli_odds_exact_and_refusal() -> None:
    result = runner.invoke(
        app,
        [
            "odds",
            "--attacker",
            "noble, 3 knight",
            "--defender",
            "noble, 5 pikeman",
            "--exact",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["method"] == "exact"
    refused = runner.invoke(
        app,
        [
            "odds",
            "--attacker",
            "noble, 5000 soldier",
            "--defender",
            "noble, 5000 pikeman",
            "--exact",
        ],
    )
    assert refused.exit_code == 2
    assert "too large for an exact answer" in refused.stderr
    assert "Traceback" not in refused.output


def test_exact_answers_are_the_means_of_the_reference_simulator() -> None:
    reference = pytest.importorskip("tests.reference.olympia")
    scenario = simulator.inline_scenario(
        "olympia", "noble, 3 soldier, 2 archer@1", "noble, 2 pikeman, 1 knight", weather="wind"
    )
    answer = simulator.exact(scenario)
    n = 3000
    columns = reference.simulate(scenario.model, n, 5)
    wins = int((np.asarray(columns["winner"]) == 0).sum())
    _, lo, hi = wilson(wins, n, Z999)
    assert lo <= answer.win["attacker"] <= hi
    steps = np.asarray(columns["steps"], float)
    z = (steps.mean() - answer.expected_steps) / (steps.std(ddof=1) / math.sqrt(n))
    assert abs(z) < Z999
