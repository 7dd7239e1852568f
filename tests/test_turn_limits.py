"""Every battle's work is bounded: battles built to stall end at their ruleset's turn
limit as draws, in the kernel and in the pure-Python reference alike, and the summary
says how many did."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import Source
from simulator.rulesets.skirmish.model import field_tiles
from simulator.scenario.scenario import from_data
from tests.reference import confrontation as confrontation_reference
from tests.reference import skirmish as skirmish_reference
from tests.stats_tests import same_distribution

DRAW = 2


def assert_stalled_at_limit(rows: dict[str, np.ndarray], limit: int) -> None:
    """No battle outlasts the limit; those the limit ended are draws at it."""
    hit = rows["turn_limit"] == 1
    assert rows["steps"].max() <= limit
    assert hit.any()
    assert (rows["steps"][hit] == limit).all()
    assert (rows["winner"][hit] == DRAW).all()


def assert_reported(scenario: simulator.Scenario, battles: int) -> None:
    """The result, its JSON and its text all give the number of battles the limit ended."""
    result = simulator.simulate(scenario, battles, seed=5)
    assert result.rows is not None
    hits = int(result.rows["turn_limit"].sum())
    assert result.turn_limit_battles == hits > 0
    assert result.to_dict()["turn_limit_battles"] == hits
    summary = result.summary()
    flag = summary[summary.metric == "turn_limit"]
    assert flag["mean"].item() == hits / battles


# --- skirmish: two titans who cannot get through a million health each -------------------

TITAN = {"attack": 5, "defence": 5, "damage": 5, "health": 1_000_000, "abilities": ["strike"]}


def titans(turn_limit: int | None) -> dict[str, Any]:
    battle: dict[str, Any] = {"attacked": [0, 0], "attacking": [1, 0]}
    if turn_limit is not None:
        battle["turn_limit"] = turn_limit
    return {
        "ruleset": "skirmish",
        "battle": battle,
        "unit_types": {"titan": TITAN},
        "stacks": [
            {"tile": [1, 0], "owner": "a", "units": ["titan"]},
            {"tile": [0, 0], "owner": "b", "units": ["titan"]},
        ],
    }


def test_skirmish_stall_ends_at_turn_limit_in_kernel_and_reference() -> None:
    scenario = from_data(titans(40), Source("titans"))
    rows = simulator.simulate(scenario, 3_000, seed=1).rows
    assert rows is not None
    expected = skirmish_reference.run(scenario.model, seed=2, count=400)
    assert_stalled_at_limit(rows, 40)
    assert_stalled_at_limit(expected, 40)
    assert same_distribution(rows, expected, ["winner", "steps", "turn_limit"]) == []
    assert_reported(scenario, 500)


def test_skirmish_default_turn_limit_bounds_the_giants() -> None:
    scenario = from_data(titans(None), Source("titans"))
    limit = scenario.model.turn_limit
    rows = simulator.simulate(scenario, 20, seed=1).rows
    assert rows is not None
    assert_stalled_at_limit(rows, limit)


def test_skirmish_turn_limit_out_of_range_is_one_line(tmp_path: Any) -> None:
    import tomli_w

    path = tmp_path / "titans.toml"
    path.write_text(tomli_w.dumps(titans(0)))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "battle.turn_limit" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_skirmish_largest_field_stays_bounded() -> None:
    """Seven full stacks of titans: every battle ends at the limit, none runs on."""
    tiles = field_tiles((2, 2))
    data = titans(3)
    data["battle"] = {"attacked": [2, 2], "attacking": list(tiles[0]), "turn_limit": 3}
    data["stacks"] = [
        {"tile": list(tile), "owner": "a" if d < 6 and d % 2 == 0 else "b", "units": ["8 titan"]}
        for d, tile in enumerate(tiles)
    ]
    rows = simulator.simulate(from_data(data, Source("field")), 64, seed=3).rows
    assert rows is not None
    assert rows["steps"].max() <= 3


def test_text_summary_says_how_many_battles_hit_the_limit(tmp_path: Any) -> None:
    import tomli_w

    path = tmp_path / "titans.toml"
    path.write_text(tomli_w.dumps(titans(10)))
    result = CliRunner().invoke(app, ["run", str(path), "-n", "200", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)["turn_limit_battles"]
    assert 0 < hits <= 200
    text = CliRunner().invoke(app, ["run", str(path), "-n", "200"]).output
    assert f"{hits:,} of 200 battles" in " ".join(text.split())
    assert "turn limit" in text


# --- confrontation: units of no strength and a million integrity ---------------------------


def harmless(turns: int) -> dict[str, Any]:
    unit = {"type": "trooper", "arms": 0, "resolve": 0, "integrity": 1_000_000}
    return {
        "ruleset": "confrontation",
        "battle": {"turns": turns, "policy": "simple"},
        "attacker": {"stacks": [{"name": "a", "at": [0, 0], "units": [unit, unit]}]},
        "defender": {"stacks": [{"name": "d", "at": [1, 0], "units": [unit]}]},
    }


# Slow tier (docs/testing.md): 14.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_confrontation_stall_ends_at_turn_limit_in_kernel_and_reference() -> None:
    scenario = from_data(harmless(30), Source("harmless"))
    rows = simulator.simulate(scenario, 2_000, seed=1).rows
    assert rows is not None
    expected = confrontation_reference.run(scenario.model, 200, seed=2)
    assert_stalled_at_limit(rows, 30)
    assert_stalled_at_limit(expected, 30)
    assert rows["turn_limit"].all() and expected["turn_limit"].all()
    assert same_distribution(rows, expected, ["winner", "steps", "turn_limit"]) == []
    assert_reported(scenario, 300)


def test_confrontation_decided_battles_are_not_counted() -> None:
    scenario = simulator.load_scenario("scenarios/confrontation/open_field.toml")
    rows = simulator.simulate(scenario, 2_000, seed=1).rows
    assert rows is not None
    assert ((rows["turn_limit"] == 1) == (rows["winner"] == DRAW)).all()
    assert (rows["steps"][rows["winner"] == DRAW] == scenario.model.turns).all()
