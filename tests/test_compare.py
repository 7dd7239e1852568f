"""Paired comparisons on common random numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.results.stats import OUTCOMES
from simulator.studies.compare import compare

BASE = {
    "ruleset": "olympia",
    "name": "base",
    "attacker": {"units": [{"men": {"knight": 5, "soldier": 10}}]},
    "defender": {"units": [{"men": {"pikeman": 20}}]},
}


def scenario(knights: int):
    data = json.loads(json.dumps(BASE))
    data["attacker"]["units"][0]["men"]["knight"] = knights
    return simulator.from_data(data, simulator.errors.Source("test"))


def test_a_scenario_against_itself_differs_by_exactly_zero():
    a = scenario(5)
    comparison = compare(a, a, 3000, 11)
    for outcome in ("attacker", "defender", "draw"):
        d = comparison.win(outcome)
        assert d.difference == 0.0
        assert d.low <= 0.0 <= d.high and d.high - d.low < 0.002
    for column in comparison.sums:
        assert comparison.mean(column).difference == 0.0
    assert np.count_nonzero(comparison.joint - np.diag(np.diag(comparison.joint))) == 0


def test_pairing_matches_separate_runs_with_the_same_seed():
    a, b = scenario(5), scenario(6)
    comparison = compare(a, b, 2000, 5, chunk=700)
    alone_a, alone_b = simulator.simulate(a, 2000, 5), simulator.simulate(b, 2000, 5)
    assert comparison.a.win("attacker") == alone_a.win("attacker")
    assert comparison.b.win("attacker") == alone_b.win("attacker")
    rows_a, rows_b = alone_a.battles, alone_b.battles
    joint = np.zeros((len(OUTCOMES), len(OUTCOMES)), int)  # the withdrawals too
    np.add.at(joint, (rows_a["winner"].cat.codes, rows_b["winner"].cat.codes), 1)
    assert (joint == comparison.joint).all()
    d = comparison.mean("casualties.defender.pikeman")
    column = "casualties.defender.pikeman"
    expected = (rows_b[column] - rows_a[column]).mean()
    assert d.difference == pytest.approx(expected, abs=1e-12)


def small_change():
    """A small balance tweak: soldiers strike with attack 6 instead of 5."""
    return scenario(5).with_changes({"units.soldier.attack": 6})


def test_common_random_numbers_shrink_the_variance_of_the_difference():
    """Per battle, Var(D) of the paired difference is far below the p(1-p) + q(1-q) two
    independent runs would have (estimated from one long run: about 14x here, and the
    estimates' relative error at this size is a few percent)."""
    a, b = scenario(5), small_change()
    one = compare(a, b, 20000, 1)
    d = one.win("attacker")
    k = 0
    discordant = one.joint[:, k].sum() + one.joint[k, :].sum() - 2 * one.joint[k, k]
    paired_var = discordant / one.n - d.difference**2
    independent_var = d.a * (1 - d.a) + d.b * (1 - d.b)
    assert independent_var / paired_var > 5
    paired_width = d.high - d.low
    independent_width = one.win_independent("attacker").high - one.win_independent("attacker").low
    assert paired_width < independent_width / 2


# Slow tier (docs/testing.md): 2.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_replicated_paired_estimates_vary_less_than_independent_ones():
    """Over 40 seeds, the variance of the paired estimates of P_B - P_A against that of
    independent runs (B on other seeds): F-test of H0 "ratio <= 1.2" at alpha 0.001."""
    a, b = scenario(5), small_change()
    replications, battles = 40, 1000
    paired, independent = [], []
    for r in range(replications):
        paired.append(compare(a, b, battles, 100 + r).win("attacker").difference)
        p_a = simulator.simulate(a, battles, 100 + r).win("attacker")[0]
        p_b = simulator.simulate(b, battles, 5000 + r).win("attacker")[0]
        independent.append(p_b - p_a)
    ratio = np.var(independent, ddof=1) / np.var(paired, ddof=1)
    critical = stats.f.ppf(0.999, replications - 1, replications - 1)
    assert ratio / 1.2 > critical, f"variance ratio {ratio:.1f}"


def test_paired_interval_covers_the_true_difference():
    """The difference from one long paired run lies in the short run's interval."""
    a, b = scenario(5), scenario(6)
    truth = compare(a, b, 30000, 999).win("attacker").difference
    short = compare(a, b, 3000, 3).win("attacker")
    assert short.low - 0.003 <= truth <= short.high + 0.003


def test_cli_compare_json(tmp_path):
    files = []
    for knights in (5, 6):
        path = tmp_path / f"k{knights}.toml"
        path.write_text(
            f'ruleset = "olympia"\nname = "k{knights}"\n[[attacker.units]]\n'
            f"men = {{ knight = {knights}, soldier = 10 }}\n"
            "[[defender.units]]\nmen = { pikeman = 20 }\n"
        )
        files.append(str(path))
    run = CliRunner().invoke(app, ["compare", *files, "-n", "2000", "--json", "-s", "4"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    win = data["win"]["attacker"]
    assert win["difference"] == pytest.approx(win["b"] - win["a"])
    assert win["low"] <= win["difference"] <= win["high"]
    assert win["high"] - win["low"] < win["independent_high"] - win["independent_low"]
    text = CliRunner().invoke(app, ["compare", files[0], files[0], "-n", "500"])
    assert text.exit_code == 0 and "+0.00%" in text.output


def test_scenarios_whose_kernels_differ_are_paired_on_the_reference_kernel() -> None:
    from simulator.studies.compare import compare

    base = ("noble, 40 peasant", "noble, 40 peasant")
    walls = {"terrain": "ship", "attacker_structure": "galley:250"}
    sparse = simulator.inline_scenario("olympia", *base, **walls, structure="roundship:250")
    dense = simulator.inline_scenario(
        "olympia", *base, **walls, structure="roundship:0", kernel="strike"
    )
    assert simulator.simulate(sparse, 10, 1).kernel != simulator.simulate(dense, 10, 1).kernel
    result = compare(sparse, sparse.with_changes({"battle.kernel": "strike"}), 2_000, 3)
    assert result.a.kernel == result.b.kernel == "strike"
    assert result.joint[0, 1] == result.joint[1, 0] == 0  # identical battles, so fully paired


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_compare_keeps_its_numbers_whole_at_any_width(tmp_path, columns):
    """Too narrow for both intervals (60 columns), the independent one is left out and the
    caption says so; no number is cut with an ellipsis at any width."""
    path = tmp_path / "k5.toml"
    path.write_text(
        'ruleset = "olympia"\nname = "k5"\n[[attacker.units]]\n'
        "men = { knight = 5, soldier = 10 }\n[[defender.units]]\nmen = { pikeman = 20 }\n"
    )
    shown = CliRunner().invoke(
        app, ["compare", str(path), str(path), "-n", "500"], env={"COLUMNS": str(columns)}
    )
    assert shown.exit_code == 0, shown.output
    assert "…" not in shown.output
    assert all(len(line) <= columns for line in shown.output.splitlines() if " " in line.strip())
    assert shown.output.count("+0.00%") == 3
    narrow = f"not shown at {columns} columns" in " ".join(shown.output.split())
    assert narrow == (columns < 76)
    header = next(line for line in shown.output.splitlines() if "paired" in line)
    assert ("independent" in header) == (columns >= 76)
