"""Plots speak a player's words: every outcome column of every bundled scenario and the
sweep paths have a label in words (the ruleset's table, or the generic fallback a plugin
without a table gets)."""

from __future__ import annotations

from pathlib import Path

import pytest

import simulator
from simulator import rulesets
from simulator.rulesets import words
from tests import ROOT

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
        ("attacker.units[0].men.knight", "knights in the attacking army (unit 1)"),
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


# The plots say the same words, in units the cells use.

from typing import Any  # noqa: E402

from simulator.report import plots  # noqa: E402
from simulator.studies.compare import compare  # noqa: E402
from simulator.studies.sweep import sweep  # noqa: E402

KNIGHTS = ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml"


def texts(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_other_outcomes_are_labelled_in_words() -> None:
    result = simulator.simulate(
        simulator.load_scenario(ROOT / "scenarios" / "olympia" / "castle_siege.toml"), 300, seed=1
    )
    ax = plots.flags_panel(result)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "defender's structure collapsed" in labels and "attacker's leader captured" in labels
    assert not [label for label in labels if "_" in label or "." in label]


def test_a_categorical_sweep_is_points_not_a_line() -> None:
    terrain = sweep(simulator.load_scenario(KNIGHTS), ["battle.terrain=land,swamp"], 300, 1)
    ax = plots.sweep_panel(terrain)
    drawn = [line for line in ax.get_lines() if line.get_linestyle() not in ("None", "")]
    assert not [line for line in drawn if len(line.get_xdata()) > 1]
    assert ax.get_xlabel() == "terrain"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["land", "swamp"]
    counts = sweep(simulator.load_scenario(KNIGHTS), ["attacker.knight=9..10"], 300, 1)
    assert plots.sweep_panel(counts).get_xlabel() == "knights in the attacking army"


def test_a_heat_maps_colour_bar_is_in_the_cells_unit_and_the_titles_quantity() -> None:
    grid = sweep(
        simulator.load_scenario(KNIGHTS),
        ["attacker.knight=9..10", "units.knight.attack=40,50"],
        200,
        1,
    )
    ax = plots.heatmap_panel(grid, quantity="P(pikemen broken)")
    colorbar = ax.images[0].colorbar
    assert colorbar is not None and colorbar.ax.get_ylabel() == "P(pikemen broken), %"
    assert [t.get_text() for t in colorbar.ax.get_yticklabels()] == ["0", "25", "50", "75", "100"]
    assert "P(pikemen broken)" in ax.get_title()
    assert (
        ax.get_ylabel() == "knights in the attacking army" and ax.get_xlabel() == "knight's attack"
    )


def test_a_panel_with_nothing_to_draw_says_so() -> None:
    result = simulator.simulate(
        simulator.inline_scenario("olympia", "noble, 30 knight", "noble, 1 peasant"), 300, seed=1
    )
    assert texts(plots.casualty_panel(result, "defender")) == [
        "In every battle the defending army\nlost exactly 1 peasant."
    ]

    class AllAtTheLimit:
        def __init__(self, result: Any) -> None:
            self.result = result

        def __getattr__(self, name: str) -> Any:
            return getattr(self.result, name)

        turn_limit_battles = 300

    assert texts(plots.survival_panel(AllAtTheLimit(result))) == [  # type: ignore[arg-type]
        "Every battle reached the turn limit undecided (300 battles)."
    ]


def test_a_comparison_of_two_files_of_one_name_says_which_is_which(tmp_path: Path) -> None:
    text = KNIGHTS.read_text(encoding="utf-8")
    for folder, knights in (("before", 10), ("after", 12)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "battle.toml").write_text(
            text.replace("knight = 10", f"knight = {knights}"), encoding="utf-8"
        )
    pair = compare(
        simulator.load_scenario(tmp_path / "before" / "battle.toml"),
        simulator.load_scenario(tmp_path / "after" / "battle.toml"),
        300,
        1,
    )
    title = plots.comparison_panel(pair).get_title()
    assert title == "Knights against pikemen\nB (after/battle.toml) vs A (before/battle.toml)"


def test_a_jpg_is_accepted(tmp_path: Path) -> None:
    figure = plots.new_figure()
    figure.add_subplot().plot([0, 1])
    assert plots.save(figure, tmp_path / "x.jpg").read_bytes()[:3] == b"\xff\xd8\xff"


def test_a_comparison_of_two_unnamed_variants_says_what_b_changes() -> None:
    """Variants built in a notebook share a name and have no file: the title says what B
    is ("terrain swamp, not land"), not "variant B vs variant A"."""
    base = simulator.load_scenario(KNIGHTS)
    data = dict(base.data)
    swamp = simulator.from_data(
        {**data, "battle": {**data["battle"], "terrain": "swamp"}},
        simulator.errors.Source("notebook"),
    )
    on_land = simulator.from_data(data, simulator.errors.Source("notebook"))
    title = plots.comparison_panel(compare(on_land, swamp, 200, 1)).get_title()
    assert title == "Knights against pikemen\nB: terrain swamp, not land"


def test_a_data_path_of_men_is_said_in_words() -> None:
    assert rulesets.get("olympia").describe_path("defender.units[0].men.pikeman") == (
        "pikemen in the defending army (unit 1)"
    )
