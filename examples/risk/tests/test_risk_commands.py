"""The risk plugin through every command of battle-odds, as a user types them: it gets
what the built-ins get, and a command it has no hook for says why in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from risk_ruleset import keys
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.testing import interval_contains

runner = CliRunner()
SCENARIOS = Path(__file__).parent.parent / "scenarios"
TEN_EIGHT = str(SCENARIOS / "ten_against_eight.toml")
DICE = str(SCENARIOS / "three_defender_dice.toml")


def ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def one_line_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_odds_simulated_and_exact_agree() -> None:
    query = ["odds", "--ruleset", "risk", "--attacker", "10", "--defender", "8"]
    exact = json.loads(ok([*query, "--exact", "--json"]))
    simulated = json.loads(ok([*query, "-n", "20000", "--json"]))
    assert exact["method"] == "exact" and simulated["battles"] == 20_000
    wins = round(simulated["win"]["attacker"]["p"] * 20_000)
    assert interval_contains(wins, 20_000, exact["win"]["attacker"]["p"])


def test_run_validate_exact_units_and_plot(tmp_path: Path) -> None:
    summary = json.loads(ok(["run", TEN_EIGHT, "-n", "3000", "--json"]))
    assert summary["ruleset"] == "risk" and summary["battles"] == 3_000
    assert "(risk," in ok(["validate", TEN_EIGHT])
    assert "rounds until decided" in ok(["exact", TEN_EIGHT])
    assert json.loads(ok(["units", "--ruleset", "risk", "--json"]))
    figure = tmp_path / "outcomes.png"
    ok(["plot", TEN_EIGHT, "-n", "2000", "-o", str(figure)])
    assert figure.stat().st_size > 0


def test_compare_and_sweep() -> None:
    compared = json.loads(ok(["compare", TEN_EIGHT, DICE, "-n", "3000", "--json"]))
    # A third defending die helps the defender: the attacker wins clearly less often.
    assert compared["win"]["attacker"]["high"] < 0
    swept = ok(["sweep", TEN_EIGHT, "--vary", "attacker.armies=6,10", "-n", "2000", "--json"])
    points = json.loads(swept)["points"]
    assert [p["attacker.armies"] for p in points] == [6, 10]
    assert points[0]["high"] < points[1]["low"]


def test_worth_and_sensitivity_count_armies() -> None:
    worth = json.loads(
        ok(["worth", TEN_EIGHT, "--add", "1 army", "--in", "army", "--battles", "2000", "--json"])
    )
    assert worth["n"] == 1 and worth["resolved"]
    table = ok(["sensitivity", TEN_EIGHT, "--battles", "2000"])
    assert "attacker army" in table and "defender army" in table


def test_regress_against_its_own_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.toml"
    ok(["regress", str(SCENARIOS), "--baseline", str(baseline), "--update", "-n", "2000"])
    assert "all within noise" in ok(["regress", str(SCENARIOS), "--baseline", str(baseline)])


# Slow tier (docs/testing.md): 3.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_dask_run_gives_the_local_answer() -> None:
    args = ["run", TEN_EIGHT, "-n", "4000", "--json"]
    local = json.loads(ok(args))
    remote = json.loads(ok([*args, "--scheduler", "local:2"]))
    assert local["win"] == remote["win"]


def test_new_and_schema_describe_the_same_file_format(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    starter = tmp_path / "mine.toml"
    ok(["new", str(starter), "--ruleset", "risk"])
    assert "(risk," in ok(["validate", str(starter)])
    schema = json.loads(ok(["schema", "--ruleset", "risk"]))
    assert schema["properties"]["attacker"]["required"] == ["armies"]
    jsonschema.Draft7Validator(schema).validate(simulator.load_scenario(starter).data)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("armies = 0", ["bad.toml:8:", "attacker.armies", f"1..{keys.MOST_ARMIES:,}"]),
        ("armies = 10\nfleets = 2", ["bad.toml:9:", "attacker.fleets", "unknown key"]),
        ("armies = 1.5", ["bad.toml:8:", "attacker.armies", "whole number"]),
    ],
)
def test_a_bad_key_is_named_with_its_line_and_range(
    tmp_path: Path, text: str, named: list[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        Path(TEN_EIGHT).read_text(encoding="utf-8").replace("armies = 10", text, 1),
        encoding="utf-8",
    )
    message = one_line_error(["validate", str(bad)])
    for part in named:
        assert part in message, (part, message)


def test_commands_without_a_hook_say_why() -> None:
    assert "no matrix of types to fight" in one_line_error(
        ["matrix", "--ruleset", "risk", "--budget", "100"]
    )
    assert "keeps no move log" in one_line_error(["replay", TEN_EIGHT])
    assert "--attacker" in one_line_error(
        ["odds", "--ruleset", "risk", "--attacker", "ten", "--defender", "8"]
    )


def test_the_session_leaves_the_environment_alone(
    added_by_the_session: bool, environment_outside: dict[str, str]
) -> None:
    """Only this test process finds the plugin: a fresh interpreter in the same environment
    (a user's shell while the suite runs) does not, so nothing was installed into it."""
    import subprocess
    import sys

    if not added_by_the_session:
        pytest.skip("the plugin is installed in this environment; the session added nothing")
    assert simulator.rulesets.get("risk").name == "risk"
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.metadata as m; m.distribution('battle-odds-risk')",
        ],
        env=environment_outside,
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0 and "PackageNotFoundError" in probe.stderr
