"""Plots speak a player's words: every outcome column of every bundled scenario and the
sweep paths have a label in words (the ruleset's table, or the generic fallback a plugin
without a table gets)."""

from __future__ import annotations

from pathlib import Path

import pytest

import simulator
from simulator import rulesets
from simulator.rulesets import words

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*/*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_outcome_column_has_words(path: Path) -> None:
    scenario = simulator.load_scenario(path)
    result = simulator.simulate(scenario, 50, seed=1)
    ruleset = rulesets.get(scenario.ruleset)
    for column in result.tally.columns:
        label = ruleset.describe_column(column)
        assert label != column and "_" not in label, (column, label)
        assert not any(f".{side}" in label for side in words.SIDES), (column, label)


@pytest.mark.parametrize(
    ("ruleset", "column", "label"),
    [
        ("olympia", "leader_captured.defender", "defender's leader captured"),
        ("olympia", "casualties.attacker.knight", "knights lost by the attacking army"),
        ("age_of_gods", "nobles_killed.attacker", "nobles of the attacking army killed"),
        ("blocks", "castle_fell_to_attrition", "castle starved"),
        ("blocks", "eliminated.defender.Templars", "defender's Templars eliminated"),
        ("confrontation", "destroyed.defender.wall.captain", "defender's captain (wall) destroyed"),
        ("skirmish", "turn_limit", "battle reached the turn limit"),
    ],
)
def test_a_rulesets_table_names_its_columns(ruleset: str, column: str, label: str) -> None:
    assert rulesets.get(ruleset).describe_column(column) == label


def test_a_column_without_a_template_is_said_generically() -> None:
    assert words.describe_column("steps_lost.attacker") == "steps lost (attacker)"
    assert words.describe_column("morale.defender.left.guard") == "morale (defender, guard (left))"
    assert words.describe_column("casualties.defender.pikeman") == (
        "pikemen lost by the defending army"
    )


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("attacker.knight", "knights in the attacking army"),
        ("defender.pikeman", "pikemen in the defending army"),
        ("units.knight.attack", "knight's attack"),
        ("battle.terrain", "terrain"),
        ("attacker.break_point", "attacking army's break point"),
        ("attacker.units[0].men.knight", "attacker.units[0].men.knight"),
    ],
)
def test_sweep_paths_in_words(path: str, label: str) -> None:
    assert rulesets.get("olympia").describe_path(path) == label


def test_plurals() -> None:
    assert [
        words.plural(t) for t in ("knight", "pikeman", "elite_guard", "cavalry", "lt_foot")
    ] == [
        "knights",
        "pikemen",
        "elite guards",
        "cavalry",
        "lt foot",
    ]
