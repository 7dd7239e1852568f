"""Sweeps and target searches."""

from __future__ import annotations

import json
import re
from itertools import pairwise

import matplotlib.image
import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.studies import sweep

TOML = """
ruleset = "olympia"
name = "sweep test"
seed = 3
[[attacker.units]]
men = { knight = 5, soldier = 10 }
[[defender.units]]
men = { pikeman = 20 }
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "base.toml"
    path.write_text(TOML)
    return path


def test_parse_values():
    assert sweep.parse_values("1..5", "x") == (1, 2, 3, 4, 5)
    assert sweep.parse_values("30..60:10", "x") == (30, 40, 50, 60)
    assert sweep.parse_values("0.1..0.3:0.1", "x") == (0.1, 0.2, 0.3)
    assert sweep.parse_values("land,swamp", "x") == ("land", "swamp")
    with pytest.raises(BattleOddsError, match="LOW <= HIGH"):
        sweep.parse_values("5..1", "x")


def test_olympia_paths_resolve_to_data_paths(base):
    scenario = simulator.load_scenario(base)
    resolve = simulator.rulesets.get("olympia").sweep_path
    assert resolve(scenario.data, "attacker.knight") == "attacker.units[0].men.knight"
    assert resolve(scenario.data, "attacker.knights") == "attacker.units[0].men.knight"
    assert resolve(scenario.data, "defender.1.archer") == "defender.units[0].men.archer"
    assert resolve(scenario.data, "units.knight.attack") == "units.knight.attack"
    with pytest.raises(BattleOddsError, match=r"units 1\.\.1"):
        resolve(scenario.data, "attacker.3.knight")


def test_more_knights_never_lower_the_win_probability(base):
    """Monotone within noise: every step up must not fall by more than 3.3 standard errors
    of a difference (the points share their random numbers, so this is conservative)."""
    result = sweep.sweep(simulator.load_scenario(base), ["attacker.knight=2..12:2"], 3000, 3)
    frame = result.frame
    assert list(frame["attacker.knight"]) == [2, 4, 6, 8, 10, 12]
    p = frame["p"].to_numpy()
    se = np.sqrt(p * (1 - p) / 3000)
    drops = p[:-1] - p[1:]
    assert (drops < 3.3 * np.hypot(se[:-1], se[1:])).all()
    assert p[-1] - p[0] > 0.5  # and it does rise, clearly


def test_each_point_equals_a_run_of_the_changed_scenario(base):
    scenario = simulator.load_scenario(base)
    result = sweep.sweep(scenario, ["units.knight.attack=60..120:60"], 1500, 9)
    direct = simulator.simulate(scenario.with_changes({"units.knight.attack": 120}), 1500, 9)
    assert result.results[1].win("attacker") == direct.win("attacker")


def test_target_search_brackets_the_answer(base):
    scenario = simulator.load_scenario(base)
    search = sweep.find_target(
        scenario, "attacker.knight=1..30", 0.8, 3, battles=2000, max_battles=64000
    )
    assert search.value is not None
    frame = search.frame
    answer = frame[frame["attacker.knight"] == search.value].iloc[0]
    assert answer["side"].startswith("reaches")
    below = frame[frame["attacker.knight"] == search.value - 1]
    assert len(below) == 1 and below.iloc[0]["side"].startswith("below")
    # An independent check at the answer and one below, on another seed and more battles.
    at = simulator.simulate(
        scenario.with_changes({"attacker.units[0].men.knight": search.value}), 20000, 77
    ).win("attacker")
    under = simulator.simulate(
        scenario.with_changes({"attacker.units[0].men.knight": search.value - 1}), 20000, 77
    ).win("attacker")
    assert at[2] >= 0.8 - 0.01 and under[1] <= 0.8 + 0.01


def test_target_not_reached_says_so(base):
    search = sweep.find_target(simulator.load_scenario(base), "attacker.knight=0..2", 0.9, 3)
    assert search.value is None and len(search.probes) == 1


# Slow tier (docs/testing.md): 1.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_cli_sweep_table_plot_and_heatmap(base, tmp_path):
    curve = tmp_path / "curve.png"
    run = CliRunner().invoke(
        app,
        [
            "sweep",
            str(base),
            "--vary",
            "attacker.knight=4..8:2",
            "-n",
            "1000",
            "-o",
            str(curve),
            "--json",
        ],
    )
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    assert [p["attacker.knight"] for p in data["points"]] == [4, 6, 8]
    assert matplotlib.image.imread(curve).shape[:2] == (500, 800)
    grid = tmp_path / "grid.svg"
    run = CliRunner().invoke(
        app,
        [
            "sweep",
            str(base),
            "--vary",
            "attacker.knight=4..8:4",
            "--vary",
            "units.knight.attack=60..120:60",
            "-n",
            "500",
            "-o",
            str(grid),
        ],
    )
    assert run.exit_code == 0, run.output
    # A grid: the knights down, the attack across, both named in words.
    said = " ".join(run.output.split())
    assert "rows: knights in the attacking army; columns: knight's attack" in said
    assert re.search(r"^\s+4\s+[\d.]+\u00b1[\d.]+\s+[\d.]+\u00b1[\d.]+\s*$", run.output, re.M)
    assert grid.read_text().startswith("<?xml")
    bad = CliRunner().invoke(
        app,
        [
            "sweep",
            str(base),
            "--vary",
            "attacker.knight=1..3",
            "--vary",
            "units.knight.attack=1..2",
            "--target",
            "0.5",
        ],
    )
    assert bad.exit_code == 2 and "--target searches one value" in bad.output


def test_a_bad_sweep_value_is_a_user_error(base):
    run = CliRunner().invoke(app, ["sweep", str(base), "--vary", "attacker.knight=-2..1"])
    assert run.exit_code == 2
    assert "Traceback" not in run.output


def test_target_search_finds_the_exact_answer():
    """On battles small enough for the exact solver (issue 3), the --target search returns
    the smallest count whose exact win probability reaches the target."""
    from simulator.errors import Source
    from simulator.studies.exact import exact

    def battle(soldiers: int) -> simulator.Scenario:
        return simulator.from_data(
            {
                "ruleset": "olympia",
                "name": "exact target",
                "attacker": {"units": [{"men": {"soldier": soldiers}}]},
                "defender": {"units": [{"men": {"soldier": 6, "archer": 2}}]},
            },
            Source("test"),
        )

    counts = range(1, 17)
    exact_p = [exact(battle(k)).win["attacker"] for k in counts]
    # Bisection's premise: each extra soldier raises the win probability.
    assert all(b > a for a, b in pairwise(exact_p))
    # The targets sit at least `margin` from every exact value (0.40 lies between 7 and 8
    # soldiers' 0.337 and 0.477, 0.68 between 9 and 10 soldiers' 0.615 and 0.735). A probe of
    # 2,000 battles has a standard error of at most 0.0112, and the search's Bonferroni
    # z (~3.2 here) makes its interval +-0.036 at most: a probe is placed on the wrong side
    # only if its estimate is off by more than (margin + 0.036) / 0.0112 ~ 7.7 standard errors,
    # and it is undecided at the 32,000-battle cap only if off by more than 14.
    margin = 0.05
    for target in (0.40, 0.68):
        assert min(abs(p - target) for p in exact_p) >= margin, target
        expected = next(k for k, p in zip(counts, exact_p, strict=True) if p >= target)
        search = sweep.find_target(
            battle(1), "attacker.soldier=1..16", target, 11, battles=2000, max_battles=32000
        )
        assert search.value == expected, (target, search.frame)
        assert search.sure


@pytest.mark.parametrize("written", ["two", "three", "any"])
def test_a_progress_callback_is_called_as_it_is_written(base, written):
    """A target search reports what it is at as a third argument; a callback written
    for (done, total), as the other studies call it, still works, and one that takes
    the detail gets it."""
    heard = []
    progress = {
        "two": lambda done, total: heard.append((done, total)),
        "three": lambda done, total, detail: heard.append((done, total, detail)),
        "any": lambda *reported: heard.append(reported),
    }[written]
    search = sweep.find_target(
        simulator.load_scenario(base),
        "attacker.knight=1..6",
        0.8,
        3,
        battles=200,
        max_battles=800,
        progress=progress,
        threads=1,
    )
    assert search.probes and heard
    sizes = {len(reported) for reported in heard}
    if written == "two":
        assert sizes == {2}
    else:
        assert 3 in sizes and any(isinstance(r[2], str) and r[2] for r in heard if len(r) == 3)
    assert all(isinstance(r[0], int) and isinstance(r[1], int) for r in heard)
