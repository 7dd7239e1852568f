"""Runs to a precision target."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.results.stats import Z95, wilson
from simulator.running.precision import reported_probabilities, simulate_to_precision

TOML = """
ruleset = "olympia"
name = "precision test"
seed = 5
[[attacker.units]]
men = { knight = 5, soldier = 10 }
[[defender.units]]
men = { pikeman = 20 }
"""


def scenario():
    return simulator.from_data(__import__("tomllib").loads(TOML), simulator.errors.Source("t"))


def test_every_reported_probability_meets_the_half_width():
    result = simulate_to_precision(scenario(), 0.01, 5, first_round=1000, chunk=4000)
    info = result.extra["precision"]
    assert info["reached"] and info["battles"] == result.n
    probabilities = reported_probabilities(result.tally, result.flags)
    assert len(probabilities) > 3  # the outcomes and the ruleset's yes/no extras
    for successes, trials in probabilities.values():
        _, low, high = wilson(successes, trials)
        assert (high - low) / 2 < 0.01
    # Not wastefully many: within 25% of what the widest estimate needs.
    worst = max(min(s / n, 1 - s / n) for s, n in probabilities.values())
    assert result.n < 1.25 * Z95**2 * worst * (1 - worst) / 0.01**2 + 1000


def test_the_result_equals_one_run_of_that_many_battles():
    result = simulate_to_precision(scenario(), 0.015, 5, first_round=700, chunk=999)
    single = simulator.simulate(scenario(), result.n, 5)
    assert (result.tally.wins == single.tally.wins).all()
    for name, histogram in single.tally.columns.items():
        assert (result.tally.columns[name].counts == histogram.counts).all()
    assert np.array_equal(result.battles["steps"], single.battles["steps"])


def test_the_cap_stops_and_says_so():
    result = simulate_to_precision(scenario(), 0.001, 5, max_battles=3000, first_round=1000)
    assert result.n == 3000
    assert not result.extra["precision"]["reached"]
    assert "NOT reached" in str(result.extra["precision"])


def test_cli_run_and_odds_with_precision(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(TOML)
    run = CliRunner().invoke(app, ["run", str(path), "--precision", "0.02", "--json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert data["precision"]["reached"] and data["battles"] == data["precision"]["battles"]
    for w in data["win"].values():
        assert (w["high"] - w["low"]) / 2 < 0.02
    odds = CliRunner().invoke(
        app,
        [
            "odds",
            "--attacker",
            "noble, 5 knight",
            "--defender",
            "noble, 12 pikeman",
            "--precision",
            "0.02",
        ],
    )
    assert odds.exit_code == 0, odds.output
    assert "reached" in odds.output
    both = CliRunner().invoke(app, ["run", str(path), "--precision", "0.02", "-n", "10"])
    assert both.exit_code == 2 and "give one" in both.output


def test_ctrl_c_during_a_precision_run_gives_a_partial_result() -> None:
    import os
    import signal

    from simulator.running.precision import simulate_to_precision

    scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
    interrupted = []

    def press_ctrl_c(done: int, total: int) -> None:
        if done >= 4_000 and not interrupted:
            interrupted.append(done)
            os.kill(os.getpid(), signal.SIGINT)

    result = simulate_to_precision(
        scenario, 0.0005, 1, chunk=2_000, progress=press_ctrl_c, interruptible=True
    )
    assert interrupted and result.partial
    assert 4_000 <= result.n < 100_000 and result.rows is None
    assert result.to_dict()["partial"] is True


def test_a_precision_run_past_the_row_limit_keeps_no_rows() -> None:
    from simulator.running.precision import simulate_to_precision
    from simulator.running.runner import KEEP_ROWS_LIMIT

    tiny = simulator.inline_scenario("olympia", "noble, 2 soldier", "noble, 2 soldier")
    result = simulate_to_precision(tiny, 0.0002, 1, max_battles=KEEP_ROWS_LIMIT + 200_000)
    assert result.n == KEEP_ROWS_LIMIT + 200_000
    assert result.rows is None and not result.partial
