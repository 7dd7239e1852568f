"""Olympia runs: same seed same numbers, the Python API, and the bundled scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from tests import ROOT
from tests.stats_tests import reproducibility

SCENARIOS = sorted(ROOT.glob("scenarios/olympia/*.toml"))
# The words these tests look for, at a width where a table's cells hold them on one line
# (how the tables wrap and what they leave out at 60, 80 and 200 columns is
# tests/test_terminal_output.py's), so that they pass in any terminal.
runner = CliRunner(env={"COLUMNS": "120"})


@pytest.fixture(scope="module")
def castle() -> simulator.Scenario:
    return simulator.load_scenario(Path("scenarios/olympia/castle_siege.toml"))


def test_same_battles_on_any_threads_chunking_and_offset(castle: simulator.Scenario) -> None:
    assert reproducibility(castle, 3_000, seed=9, chunks=(333,)) == []


def test_merged_statistics_equal_the_rows(castle: simulator.Scenario) -> None:
    result = simulator.simulate(castle, 2_000, seed=2, chunk=300)
    frame = result.battles
    summary = result.summary().set_index(["group", "metric"])
    assert summary.loc[("win", "attacker"), "mean"] == (frame.winner == "attacker").mean()
    assert summary.loc[("steps", "all"), "mean"] == pytest.approx(frame.steps.mean(), rel=1e-12)
    assert summary.loc[("steps", "all"), "q50"] == np.quantile(
        frame.steps, 0.5, method="inverted_cdf"
    )
    for column in (c for c in frame if c.startswith("casualties.")):
        metric = column.removeprefix("casualties.")
        assert summary.loc[("casualties", metric), "mean"] == pytest.approx(frame[column].mean())
        assert summary.loc[("casualties", metric), "q90"] == np.quantile(
            frame[column], 0.9, method="inverted_cdf"
        )


def test_different_seeds_give_different_battles(castle: simulator.Scenario) -> None:
    a = simulator.simulate(castle, 500, seed=1).rows
    b = simulator.simulate(castle, 500, seed=2).rows
    assert a is not None and b is not None
    assert not np.array_equal(a["steps"], b["steps"])


def test_python_api_for_notebooks() -> None:
    scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
    result = simulator.simulate(scenario, battles=5_000, seed=1)
    battles = result.battles
    assert isinstance(battles, pd.DataFrame) and len(battles) == 5_000
    assert {
        "battle",
        "seed",
        "winner",
        "steps",
        "casualties.attacker.knight",
        "casualties.defender.pikeman",
    } <= set(battles.columns)
    assert (battles.seed == 1).all()
    summary = result.summary()
    assert {"group", "metric", "mean", "low", "high", "q10", "q50", "q90"} <= set(summary.columns)
    p, lo, hi = result.win("attacker")
    assert lo <= p <= hi
    assert result.win("attacker")[0] + result.win("defender")[0] + result.win("draw")[0] == 1


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_bundled_scenario_runs_and_reports(path: Path) -> None:
    result = runner.invoke(app, ["run", str(path), "--battles", "2000", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    win = report["win"]
    assert set(win) == {"attacker", "defender", "draw"}
    for outcome in win.values():
        assert 0 <= outcome["low"] <= outcome["p"] <= outcome["high"] <= 1
    assert sum(o["p"] for o in win.values()) == pytest.approx(1)
    assert report["battles"] == 2000 and report["ruleset"] == "olympia"
    assert report["seed"] == simulator.load_scenario(path).seed
    assert len(report["scenario_hash"]) == 16
    assert report["casualties"] and report["steps"]["all"]["q50"] >= 1


def test_bundled_scenarios_cover_every_rule() -> None:
    models = [simulator.load_scenario(p).model for p in SCENARIOS]
    sides = [s for m in models for s in m.sides]
    assert len(SCENARIOS) >= 6
    assert {m.terrain for m in models} == {"land", "swamp", "ship"}
    assert {w for m in models for w in m.weather} == {"wind", "rain"}
    assert {m.strike_order for m in models} == {"random", "alternating"}
    assert any(s.structure and s.structure.kind == "castle" for s in sides)
    assert {"catapult", "battering_ram"} <= {name for s in sides for name, _ in s.engines}
    assert any(men.behind > 0 for s in sides for u in s.units for men in u.men)
    assert any(u.noble.health < 100 for s in sides for u in s.units)
    assert any(u.noble.attack_bonus for s in sides for u in s.units)
    assert any(men.type == "blessed_soldier" for s in sides for u in s.units for men in u.men)
    assert any(men.type == "pirate" for s in sides for u in s.units for men in u.men)


def test_run_prints_tables_with_the_seed_and_hash() -> None:
    result = runner.invoke(
        app, ["run", "scenarios/olympia/knights_vs_pikemen.toml", "-n", "3000", "--seed", "42"]
    )
    assert result.exit_code == 0, result.output
    for text in (
        "attacker wins",
        "defender wins",
        "draw",
        "95% interval",
        "Casualties",
        "knights lost by the attacking army",
        "seed 42",
        "battles 3,000",
        "scenario hash",
        "leader",
    ):
        assert text in result.stdout, text


def test_odds_matches_the_equivalent_scenario_file(tmp_path: Path) -> None:
    """A one-line army and the same army in TOML are the same battles."""
    toml = tmp_path / "same.toml"
    toml.write_text(
        'ruleset = "olympia"\n[battle]\nterrain = "swamp"\n'
        "[[attacker.units]]\nmen = { knight = 3, soldier = 4 }\n"
        '[defender]\nstructure = { kind = "tower", defense = 5 }\n'
        "[[defender.units]]\nmen = { pikeman = 9 }\n"
    )
    file_run = runner.invoke(app, ["run", str(toml), "-n", "4000", "-s", "5", "--json"])
    line_run = runner.invoke(
        app,
        [
            "odds",
            "--attacker",
            "noble, 3 knights, 4 soldiers",
            "--defender",
            "noble, 9 pikemen",
            "--terrain",
            "swamp",
            "--structure",
            "tower:5",
            "-n",
            "4000",
            "-s",
            "5",
            "--json",
        ],
    )
    assert file_run.exit_code == 0 and line_run.exit_code == 0, line_run.output
    assert json.loads(file_run.stdout)["win"] == json.loads(line_run.stdout)["win"]


def test_units_lists_the_fighter_table() -> None:
    result = runner.invoke(app, ["units", "--ruleset", "olympia"])
    assert result.exit_code == 0
    for name in ("elite_guard", "blessed_soldier", "catapult", "pikeman"):
        assert name in result.stdout


def test_structure_protects_only_its_capacity() -> None:
    from kernels.olympia import G_COUNT, G_PROTECTED, G_SIDE
    from simulator.rulesets.olympia.prepare import compile_battle

    scenario = simulator.inline_scenario(
        "olympia", "noble, 5 soldier", "noble, 80 soldier; noble, 40 pikeman", structure="tower:10"
    )
    groups = compile_battle(scenario.model).groups
    defender = groups[groups[:, G_SIDE] == 1]
    protected = defender[defender[:, G_PROTECTED] == 1, G_COUNT].sum()
    assert protected == 100  # a tower holds the first 100: two nobles and 98 men
    assert defender[:, G_COUNT].sum() == 122
