"""``battle-odds prices``: a fair price list, checked against the exact solver and by
feeding it back into the equal-cost matrix."""

from __future__ import annotations

import importlib
import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

import simulator
from simulator.cli import app
from tests.test_matrix import one_error_line

#: The module (``simulator.prices`` is the function it exports).
prices_module = importlib.import_module("simulator.studies.prices")


def exact_break_even(kind: str, base: str, budget: int, role: str) -> float:
    """The price of ``kind`` (in ``base``) at which ``budget`` men of the base and
    budget / price men of ``kind`` win equally often, from the exact solver's
    probabilities at whole counts, read between counts by the same linear interpolation
    the price search uses."""

    def score(men: int) -> float:
        mine, theirs = f"noble, {men} {kind}", f"noble, {budget} {base}"
        pair = (mine, theirs) if role == "attacker" else (theirs, mine)
        win = simulator.exact(simulator.inline_scenario("olympia", *pair)).win
        net = win["attacker"] - win["defender"]
        return net if role == "attacker" else -net

    scores = [score(n) for n in range(1, budget + 1)]
    n = next(i for i in range(1, budget) if scores[i - 1] < 0 <= scores[i])
    men = n + (0 - scores[n - 1]) / (scores[n] - scores[n - 1])
    return budget / men


@pytest.fixture(scope="module")
def small_list():
    """Three olympia types at one small budget, every count small enough to solve."""
    return simulator.prices(
        "olympia",
        "soldier,knight,swordsman",
        budgets=[12],
        battles=4000,
        seed=7,
        confidence=0.999,
    )


@pytest.mark.parametrize("kind", ["knight", "swordsman"])
@pytest.mark.parametrize("role", ["attacker", "defender"])
def test_pairwise_break_even_holds_the_exact_answer(small_list, kind, role):
    """The exact break-even price lies in the 99.9% interval of the Monte Carlo one."""
    exact = exact_break_even(kind, "soldier", 12, role)
    (pair,) = [
        q for q in small_list.prices[kind].pairwise if q.against == "soldier" and q.role == role
    ]
    assert pair.beyond is None and pair.against_men == 12
    assert pair.low <= exact <= pair.high, (kind, role, exact, pair)
    assert pair.high - pair.low < 0.25 * exact  # and the interval says something


def test_the_fair_prices_even_out_each_types_score(small_list):
    assert small_list.converged and small_list.base == "soldier"
    assert small_list.prices["soldier"].price == 1
    for kind in ("knight", "swordsman"):
        p = small_list.prices[kind]
        assert p.low < p.price < p.high
        assert abs(p.score) < 0.01  # solved up to the interpolation's tolerance
    # the knight is dearer than the swordsman, the swordsman dearer than a soldier
    assert small_list.prices["knight"].price > small_list.prices["swordsman"].price > 1


def per_type_score(matrix) -> np.ndarray:
    """Each type's average P(win) over the other types, attacking and defending."""
    p = matrix.grid("p")
    n = len(matrix.types)
    off = ~np.eye(n, dtype=bool)
    attacking = np.array([p[i, off[i]].mean() for i in range(n)])
    defending = np.array([1 - p[off[:, j], j].mean() for j in range(n)])
    return (attacking + defending) / 2


def test_fed_back_prices_even_out_the_matrix():
    """At cost 1 the knight beats everything at 20 men a side; at the suggested prices
    every type's average win rate over the matrix lies far closer to the others'."""
    types = "soldier,pikeman,archer,knight"
    fair = simulator.prices("olympia", types, budgets=[20], battles=400, seed=3)
    before = per_type_score(simulator.matrix("olympia", 20, types, battles=500, seed=9))
    after = per_type_score(
        simulator.matrix("olympia", 20, types, costs=fair.costs(), battles=500, seed=9)
    )
    spread_before, spread_after = np.ptp(before), np.ptp(after)
    assert spread_before > 0.5
    assert spread_after < spread_before / 3, (before, after)


def test_a_search_that_runs_out_of_sweeps_says_so(monkeypatch):
    """A tolerance no search can meet: the answer says it did not converge."""
    monkeypatch.setattr(prices_module, "SCORE_TOLERANCE", -1.0)
    monkeypatch.setattr(prices_module, "MAX_SWEEPS", 2)
    answer = simulator.prices("olympia", "soldier,knight,archer", budgets=[8], battles=100)
    assert not answer.converged and answer.sweeps == 2
    assert any(note.startswith("not converged") for note in answer.notes)
    assert "NOT CONVERGED" in answer.costs_toml()


def invoke(*args: str):
    return CliRunner().invoke(app, ["prices", *args])


def test_the_command_writes_json_a_costs_file_and_a_plot(tmp_path):
    costs, plot = tmp_path / "costs.toml", tmp_path / "prices.png"
    args = ["--types", "soldier,knight", "--budgets", "6,10", "-n", "100"]
    run = invoke(*args, "--json", "--write", str(costs), "-o", str(plot))
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    assert answer["base"] == "soldier" and answer["budgets"] == [6, 10]
    knight = answer["prices"]["knight"]
    assert knight["low"] <= knight["price"] <= knight["high"]
    contexts = {(q["against"], q["budget"], q["role"]) for q in knight["pairwise"]}
    assert contexts == {("soldier", b, r) for b in (6, 10) for r in ("attacker", "defender")}
    assert isinstance(answer["converged"], bool)
    written = tomllib.loads(costs.read_text())
    assert written == {"soldier": 1, "knight": pytest.approx(knight["price"], rel=1e-3)}
    assert plot.stat().st_size > 0
    # matrix reads the file as it is
    matrix = CliRunner().invoke(
        app,
        [
            "matrix",
            "--budget",
            "10",
            "--types",
            "soldier,knight",
            "--costs",
            str(costs),
            "-n",
            "10",
            "--json",
        ],
    )
    assert matrix.exit_code == 0, matrix.output
    assert json.loads(matrix.stdout)["men"]["knight"] == int(10 / written["knight"])
    table = invoke(*args)
    assert table.exit_code == 0 and "fair prices in soldiers" in " ".join(table.stdout.split())


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--types", "soldier,knigt"],
            "unknown unit type 'knigt' of olympia (did you mean 'knight'?)",
        ),
        (
            ["--types", "soldier,knight", "--base", "archer"],
            "--base archer: not one of the types offered",
        ),
        (["--types", "soldier,knight", "--base", "knigt"], "did you mean 'knight'?"),
        (["--types", "soldier,knight", "--budgets", "10,x"], "--budgets 'x': expected numbers"),
        (
            ["--types", "soldier,elite_guard", "--budgets", "1"],
            "--budgets 1 is too small for elite_guard",
        ),
        (["--types", "knight"], "at least two types"),
    ],
)
def test_bad_input_is_one_line(args, expected):
    assert expected in one_error_line(invoke(*args, "-n", "40"))


def test_a_budget_below_a_starting_price_is_one_line(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("knight = 30\n")
    line = one_error_line(
        invoke("--types", "soldier,knight", "--budgets", "10,40", "--costs", str(costs))
    )
    assert "--budgets 10 buys no knight (cost 30 soldier)" in line


def test_a_malformed_costs_file_is_one_line(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("knigt = 3\n")
    line = one_error_line(invoke("--types", "soldier,knight", "--costs", str(costs)))
    assert "costs.toml" in line and "did you mean 'knight'?" in line


def test_a_types_pairwise_searches_fight_their_cells_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A type's pairwise searches run side by side (``_Search._together``): the cells
    they all ask for next are fought in one call of the bank, so a type's searches take
    about as many fights as the longest of them, not all of theirs one after another
    (each fight a cell or two, a core idle); and each search's answer, and the cells
    fought, are the ones it gives alone."""
    given = {"types": "soldier,knight,swordsman", "budgets": [12], "battles": 200, "seed": 3}
    together = prices_module._Search._together
    fight = prices_module.CellBank.fight
    fights = [0]
    running = [False]

    def counted(self, keys):  # type: ignore[no-untyped-def]
        fights[0] += running[0]
        return fight(self, keys)

    def side_by_side(self, searches):  # type: ignore[no-untyped-def]
        running[0] = True
        try:
            return together(self, searches)
        finally:
            running[0] = False

    def alone(self, searches):  # type: ignore[no-untyped-def]
        return [side_by_side(self, [search])[0] for search in searches]

    monkeypatch.setattr(prices_module.CellBank, "fight", counted)
    answers = {}
    for way in (side_by_side, alone):
        monkeypatch.setattr(prices_module._Search, "_together", way)
        fights[0] = 0
        answers[way.__name__] = (simulator.prices("olympia", **given), fights[0])
    (together_list, together_fights), (alone_list, alone_fights) = answers.values()
    assert together_list.to_dict() == alone_list.to_dict()
    assert together_list.cells == alone_list.cells
    # Each type's 4 searches (2 others x 2 roles) fight together.
    assert 0 < together_fights < alone_fights / 2, (together_fights, alone_fights)
