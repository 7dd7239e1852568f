"""``battle-odds meta``: the equal-cost matrix as a zero-sum game, its equilibrium and
how far the noise of the matrix moves it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.studies.machinery.games import dominated, solve_game, symmetric_payoff
from simulator.studies.meta import meta_from_counts
from tests.test_matrix import one_error_line

BATTLES = 10_000


def counts(attacker_wins_share: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Win counts of BATTLES battles a cell with no draws."""
    wins = np.rint(np.asarray(attacker_wins_share) * BATTLES).astype(np.int64)
    return wins, BATTLES - wins


def rock_paper_scissors(win: float) -> np.ndarray:
    """P(attacker wins): rock beats scissors, scissors paper, paper rock, with ``win``;
    a type against itself is even."""
    beats = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    return np.where(beats == 1, win, np.where(beats.T == 1, 1 - win, 0.5))


def test_rock_paper_scissors_is_played_a_third_each():
    wins, losses = counts(rock_paper_scissors(0.9))
    answer = meta_from_counts(["rock", "paper", "scissors"], wins, losses, BATTLES)
    assert answer.weights == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert answer.value == pytest.approx(0, abs=1e-9)
    assert list(answer.support) == [1.0, 1.0, 1.0]  # far from noise at 10,000 battles
    assert answer.dominated_by == {}
    assert [answer.counter(t)[0] for t in answer.types] == ["paper", "scissors", "rock"]
    assert answer.counter("rock")[1] == pytest.approx(0.8)  # (0.9 - 0.1 + 0.9 - 0.1) / 2


def test_a_strictly_dominated_type_gets_no_weight():
    """Rock-paper-scissors at 75% and a dud that loses every battle: the dud is strictly
    dominated by each of the three, and the mix stays a third each."""
    share = np.full((4, 4), 0.0)
    share[:3, :3] = rock_paper_scissors(0.75)
    share[:3, 3] = 1.0  # the three beat the dud attacking ...
    share[3, :3] = 0.0  # ... and defending
    share[3, 3] = 0.5
    wins, losses = counts(share)
    answer = meta_from_counts(["rock", "paper", "scissors", "dud"], wins, losses, BATTLES)
    assert answer.weights == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0], abs=1e-9)
    assert answer.dominated_by == {"dud": "rock"}
    assert answer.dominated_share == {"dud": 1.0}
    assert answer.support[3] == 0.0 and answer.mix.keys() == {"rock", "paper", "scissors"}
    assert answer.against_mix()[3] == pytest.approx(-1.0)


def test_a_dominant_type_is_the_whole_mix():
    share = np.array([[0.5, 0.9], [0.2, 0.5]])
    wins, losses = counts(share)
    answer = meta_from_counts(["knight", "soldier"], wins, losses, BATTLES)
    assert answer.mix == {"knight": pytest.approx(1.0)}
    assert answer.dominated_by == {"soldier": "knight"}


def test_a_game_that_is_not_symmetric_has_its_textbook_answer():
    """[[3, -1], [-2, 1]]: the row player plays 3/7, 4/7 and gains 1/7."""
    solved = solve_game(np.array([[3.0, -1.0], [-2.0, 1.0]]))
    assert solved.weights == pytest.approx([3 / 7, 4 / 7], abs=1e-9)
    assert solved.value == pytest.approx(1 / 7, abs=1e-9)


def test_a_weight_that_rests_on_noise_says_so():
    """Two types that are the same army (a clone of rock): the game cannot tell them
    apart, the solver puts the weight on one of them, and the redrawn games put it on
    either, so neither is in the mix every time, while paper and scissors always are."""
    share = np.full((4, 4), 0.5)
    rps = rock_paper_scissors(0.8)
    index = [0, 1, 2, 0]  # the fourth type is rock again
    share = rps[np.ix_(index, index)]
    wins = np.rint(share * 400).astype(np.int64)
    answer = meta_from_counts(
        ["rock", "paper", "scissors", "stone"], wins, 400 - wins, 400, bootstrap=200, seed=3
    )
    assert answer.support[1] == answer.support[2] == 1.0
    assert 0.05 < answer.support[0] < 0.95 and 0.05 < answer.support[3] < 0.95
    assert answer.weights[0] + answer.weights[3] == pytest.approx(1 / 3, abs=1e-9)


def test_the_attackers_edge_does_not_decide_the_mix():
    """Attackers win more often whoever they are (as in blocks, the other way round):
    knights attacking soldiers win 90%, soldiers attacking knights 60%. Over both roles the
    knight is ahead by (0.8 - 0.2) / 2 = 0.3, so the mix is all knights."""
    share = np.array([[0.5, 0.9], [0.6, 0.5]])
    wins, losses = counts(share)
    answer = meta_from_counts(["knight", "soldier"], wins, losses, BATTLES)
    assert answer.mix == {"knight": pytest.approx(1.0)}
    assert answer.payoff[0, 1] == pytest.approx(0.3)


def test_the_payoff_counts_both_roles():
    net = np.array([[0.0, 0.6], [-0.2, 0.0]])
    assert symmetric_payoff(net).tolist() == [[0.0, 0.4], [-0.4, 0.0]]
    assert dominated(symmetric_payoff(net)) == {1: 0}


def test_bad_counts_are_refused():
    with pytest.raises(BattleOddsError, match="expected 2 x 2"):
        meta_from_counts(["a", "b"], np.zeros((3, 3)), np.zeros((3, 3)), 10)
    with pytest.raises(BattleOddsError, match="wins <= battles"):
        meta_from_counts(["a", "b"], np.full((2, 2), 8), np.full((2, 2), 8), 10)


def invoke(*args: str):
    return CliRunner().invoke(app, ["meta", *args])


def test_meta_of_olympia_answers_as_json_and_as_a_table(tmp_path):
    args = ["--budget", "4", "--types", "soldier,knight,archer", "-n", "200", "--bootstrap", "20"]
    run = invoke(*args, "--json")
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    assert answer["types"] == ["soldier", "knight", "archer"] and answer["budget"] == 4
    assert sum(answer["weights"].values()) == pytest.approx(1)
    assert answer["value"] == pytest.approx(0, abs=1e-9)  # a symmetric game
    assert set(answer["counters"]) == {"soldier", "knight", "archer"}
    assert all(0 <= s <= 1 for s in answer["support"].values())
    plot = tmp_path / "meta.png"
    run = invoke(*args, "-o", str(plot))
    assert run.exit_code == 0, run.output
    assert "the mix:" in run.stdout and plot.stat().st_size > 0


def test_meta_from_python_fights_the_matrix_once():
    answer = simulator.meta("olympia", 3, "soldier,knight", battles=100, bootstrap=5)
    assert answer.matrix is not None and answer.matrix.types == ("soldier", "knight")
    assert list(answer.frame.columns[:3]) == ["type", "weight", "in_support"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--budget", "4", "--types", "soldier,knigt"], "did you mean 'knight'?"),
        (["--budget", "0.5", "--types", "soldier,knight"], "buys no"),
        (["--budget", "4", "--types", "soldier,knight", "--bootstrap", "-1"], "--bootstrap"),
        (["--budget", "4", "--types", "knight"], "at least two types"),
    ],
)
def test_bad_input_is_one_line(args, expected):
    assert expected in one_error_line(invoke(*args, "-n", "10"))


def test_a_malformed_costs_file_is_one_line(tmp_path):
    costs = tmp_path / "costs.toml"
    costs.write_text("knight = \n")
    line = one_error_line(invoke("--budget", "4", "--costs", str(costs)))
    assert "costs.toml" in line
