"""``battle-odds matrix``: who beats whom at equal cost, for every ruleset."""

from __future__ import annotations

import json
import re

import matplotlib.image
import pytest
from typer.testing import CliRunner

import simulator
from simulator import rulesets
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.report import plots
from simulator.results.stats import wilson
from simulator.rulesets import Army

#: (ruleset, budget, two types): small armies; confrontation and skirmish need two
#: stacks a side at these budgets (stacks hold 3 and 8).
CASES = [
    ("olympia", "3", "soldier,knight"),
    ("age_of_gods", "3", "soldier,knight"),
    ("blocks", "2", "A2,C3"),
    ("confrontation", "4", "trooper,spearman"),
    ("skirmish", "9", "swordsman,giant"),
]
Z999 = 3.290526731491926


def invoke(*args: str):
    return CliRunner().invoke(app, ["matrix", *args])


def one_error_line(run) -> str:
    """A user error: exit status 2, one line on stderr, no traceback."""
    assert run.exit_code == 2, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Traceback" not in run.output
    return lines[0]


@pytest.mark.parametrize(("ruleset", "budget", "types"), CASES, ids=[c[0] for c in CASES])
def test_every_ruleset_answers_as_json(ruleset, budget, types):
    run = invoke("--ruleset", ruleset, "--budget", budget, "--types", types, "-n", "60", "--json")
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    names = types.split(",")
    assert answer["ruleset"] == ruleset and answer["types"] == names
    assert answer["battles"] == 60 and answer["budget"] == float(budget)
    assert answer["men"] == {t: int(budget) for t in names}  # every type costs 1
    pairs = [(c["attacker"], c["defender"]) for c in answer["cells"]]
    assert pairs == [(a, d) for a in names for d in names]
    for cell in answer["cells"]:
        assert 0 <= cell["low"] <= cell["p"] <= cell["high"] <= 1
        assert cell["attacker_men"] == cell["defender_men"] == int(budget)


@pytest.mark.parametrize(("ruleset", "budget", "types"), CASES, ids=[c[0] for c in CASES])
def test_every_ruleset_prints_the_table(ruleset, budget, types):
    run = invoke("--ruleset", ruleset, "--budget", budget, "--types", types, "-n", "30")
    assert run.exit_code == 0, run.output
    text = " ".join(run.stdout.split())
    assert (
        f"{ruleset}: P(attacker wins) at equal cost, rows attack and columns defend, "
        f"budget {budget}," in text
    )
    for name in types.split(","):
        assert name.replace("_", " ") in text


def test_the_exact_answer_lies_in_every_cells_interval():
    """olympia at a tiny budget: the exact win chance of each pair (the Markov-chain
    solver) is inside the Monte Carlo cell's 99.9% interval."""
    result = simulator.matrix(
        "olympia", budget=3, types="soldier,pikeman,knight,archer", battles=4000, seed=11
    )
    for cell in result.cells:
        exact = simulator.exact(cell.result.scenario).win["attacker"]
        _, low, high = wilson(round(cell.win[0] * cell.result.n), cell.result.n, Z999)
        assert low <= exact <= high, (cell.attacker, cell.defender, exact, low, high)


def test_every_pair_runs_on_the_same_battles():
    """Common random numbers: on land a pirate is a soldier, so his row and column are
    the soldier's, battle for battle, not merely within noise."""
    result = simulator.matrix(
        "olympia", budget=5, types=["soldier", "pirate", "knight"], battles=500
    )
    grid = result.grid()
    assert (grid[0] == grid[1]).all() and (grid[:, 0] == grid[:, 1]).all()
    assert len({cell.result.seed for cell in result.cells}) == 1


def test_the_frame_is_tidy():
    result = simulator.matrix(
        "olympia", budget=4, types="knight,soldier", costs={"knight": 2}, battles=100, seed=5
    )
    frame = result.frame
    assert list(frame.columns[:8]) == [
        "attacker_type",
        "defender_type",
        "attacker_men",
        "defender_men",
        "p",
        "low",
        "high",
        "battles",
    ]
    assert (frame["seed"] == 5).all() and (frame["budget"] == 4).all()
    knight_vs_soldier = frame.query("attacker_type == 'knight' and defender_type == 'soldier'")
    assert knight_vs_soldier[["attacker_men", "defender_men"]].values.tolist() == [[2, 4]]


def test_noncombatants_are_left_out_with_a_note():
    run = invoke("--budget", "1", "-n", "5")
    assert run.exit_code == 0, run.output
    assert "left out, cannot fight alone: peasant (noncombatant)" in " ".join(run.stdout.split())
    answer = json.loads(invoke("--budget", "1", "-n", "5", "--json").stdout)
    assert "peasant" not in answer["types"] and "knight" in answer["types"]
    assert answer["notes"] and len(answer["cells"]) == len(answer["types"]) ** 2


def test_a_costs_file_sets_the_men(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("knight = 3\narcher = 1.5\n")
    run = invoke(
        "--budget",
        "6",
        "--types",
        "knight,archer,soldier",
        "--costs",
        str(costs),
        "-n",
        "20",
        "--json",
    )
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    assert answer["men"] == {"knight": 2, "archer": 4, "soldier": 6}
    assert answer["costs"] == {"knight": 3, "archer": 1.5, "soldier": 1}


def test_a_scenario_unit_type_takes_a_cost(tmp_path):
    scenario = tmp_path / "priced.toml"
    scenario.write_text(
        'ruleset = "olympia"\n[units.knight]\ncost = 3\n'
        "[[attacker.units]]\nmen = { knight = 2 }\n[[defender.units]]\nmen = { soldier = 6 }\n"
    )
    assert simulator.load_scenario(scenario).model.fighters["knight"].cost == 3
    scenario.write_text(scenario.read_text().replace("cost = 3", "cost = 0"))
    run = CliRunner().invoke(app, ["validate", str(scenario)])
    line = one_error_line(run)
    assert "priced.toml:3: units.knight.cost: 0 is out of range: expected 0.001..1,000,000" in line


@pytest.mark.parametrize(
    ("ruleset", "table"),
    [
        ("age_of_gods", "units.knight"),
        ("skirmish", "unit_types.giant"),
        ("confrontation", "units.trooper"),
    ],
)
def test_every_rulesets_scenario_checks_costs(ruleset, table):
    path, name = table.split(".")
    data = rulesets.get(ruleset).one_type_battle(Army(name, 2), Army(name, 2))
    data[path] = {name: {"cost": 2.5}}
    simulator.from_data(data, Source("x"))
    data[path] = {name: {"cost": -2}}
    with pytest.raises(BattleOddsError, match=rf"{table}.cost: -2 is out of range: expected 0.001"):
        simulator.from_data(data, Source("x"))


def test_units_lists_costs():
    for ruleset in ("olympia", "age_of_gods", "blocks", "confrontation", "skirmish"):
        run = CliRunner().invoke(app, ["units", "--ruleset", ruleset, "--json"])
        rows = json.loads(run.stdout)[ruleset]
        costs = {row["type"]: row["cost"] for row in rows if row.get("cost") is not None}
        assert costs and set(costs.values()) == {1}, ruleset
    blocks = json.loads(CliRunner().invoke(app, ["units", "--ruleset", "blocks", "--json"]).stdout)[
        "blocks"
    ]
    assert {r["type"] for r in blocks if r["kind"] == "rating"} == {
        f"{letter}{fire}" for letter in "ABC" for fire in range(1, 7)
    }


def test_heat_map(tmp_path):
    result = simulator.matrix("olympia", budget=3, types="soldier,knight,archer", battles=50)
    ax = plots.matrix_panel(result)
    assert ax.get_title().startswith("olympia: who beats whom at equal cost (budget 3)")
    assert ax.get_xlabel() == "defending army (men)" and ax.get_ylabel() == "attacking army (men)"
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "soldier (3)",
        "knight (3)",
        "archer (3)",
    ]
    texts = [t.get_text() for t in ax.texts]
    # Each cell: p over its interval, never "0% \u00b11" (an interval below nothing).
    assert len(texts) == 9 and all(re.fullmatch(r"\d+%\n\d+-\d+", t) for t in texts), texts
    for text, (p, low, high) in zip(
        texts, (result.cell(a, d).win for a in result.types for d in result.types), strict=True
    ):
        assert text == f"{100 * p:.0f}%\n{100 * low:.0f}-{100 * high:.0f}"
    assert len(plots.figure_of(ax).axes) == 2  # the heat map and its colour bar
    image = tmp_path / "matrix.png"
    run = invoke("--budget", "3", "--types", "soldier,knight", "-n", "20", "-o", str(image))
    assert run.exit_code == 0, run.output
    assert matplotlib.image.imread(image).shape[2] in (3, 4)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--types", "knigt,soldier"],
            "unknown unit type 'knigt' of olympia (did you mean 'knight'?)",
        ),
        (["--types", "peasant,soldier"], "peasant cannot fight alone (noncombatant)"),
        (["--types", "knight,knight"], "knight is named twice"),
        (["--ruleset", "blokcs"], "unknown ruleset 'blokcs' (did you mean 'blocks'?)"),
    ],
)
def test_bad_types_are_one_line(args, expected):
    line = one_error_line(invoke("--budget", "3", "-n", "5", *args))
    assert expected in line


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        ("abc", "--budget 'abc': expected a number"),
        ("0", "--budget 0: expected a finite number > 0"),
        ("-3", "--budget -3: expected a finite number > 0"),
        ("inf", "--budget inf: expected a finite number > 0"),
        ("nan", "--budget nan: expected a finite number > 0"),
    ],
)
def test_bad_budgets_are_one_line(budget, expected):
    line = one_error_line(invoke("--budget", budget, "--types", "knight,soldier", "-n", "5"))
    assert expected in line


def test_a_budget_below_a_cost_says_so(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("knight = 3\n")
    args = ["--budget", "2", "--types", "knight,soldier", "--costs", str(costs), "-n", "5"]
    line = one_error_line(invoke(*args))
    assert "--budget 2 buys no knight (cost 3): raise it to at least 3" in line


def test_too_big_an_army_for_the_field_names_the_pair():
    line = one_error_line(
        invoke("--ruleset", "skirmish", "--budget", "40", "--types", "giant", "-n", "5")
    )
    assert "--budget 40: 40 giant vs 40 giant:" in line and "seven tiles" in line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "knight = 3\nknigt = 2\n",
            "costs.toml:2: knigt: unknown unit type 'knigt' (did you mean 'knight'?)",
        ),
        ("knight = 0\n", "costs.toml:1: knight: 0 is out of range: expected 0.001..1,000,000"),
        ("knight = nan\n", "costs.toml:1: knight: nan is not a finite number"),
        ("knight = inf\n", "costs.toml:1: knight: inf is not a finite number"),
        (
            'knight = "three"\n',
            "costs.toml:1: knight: expected a number in 0.001..1,000,000, got a string 'three'",
        ),
        ("knight = \n", "costs.toml:1: malformed TOML"),
    ],
)
def test_bad_costs_files_are_one_line(tmp_path, text, expected):
    costs = tmp_path / "costs.toml"
    costs.write_text(text)
    line = one_error_line(invoke("--budget", "6", "--costs", str(costs), "-n", "5"))
    assert expected in line


def test_a_bad_image_name_fails_before_any_battle(tmp_path, monkeypatch):
    def no_battles(*args, **kwargs):
        raise AssertionError("battles were run for an image that cannot be written")

    # The matrix's cells run on the study engine: no call of it may happen.
    from simulator.running.scenarios import ScenarioBattles

    monkeypatch.setattr(ScenarioBattles, "each", no_battles)
    line = one_error_line(invoke("--budget", "2", "-o", str(tmp_path / "m.gif")))
    assert "unknown image type '.gif'" in line
    assert list(tmp_path.iterdir()) == []
