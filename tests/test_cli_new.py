"""``battle-odds new`` writes a starter scenario that validates and runs, for every
ruleset; ``battle-odds --version`` reports the installed package's version."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator import rulesets
from simulator.cli import app
from simulator.scenario.scenario import load_scenario
from tests.test_olympia_errors import assert_clean_failure

runner = CliRunner()


@pytest.mark.parametrize("ruleset", rulesets.names())
def test_starter_validates_and_runs(ruleset: str, tmp_path: Path) -> None:
    path = tmp_path / f"{ruleset}_starter.toml"
    written = runner.invoke(app, ["new", str(path), "--ruleset", ruleset])
    assert written.exit_code == 0, written.output
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().startswith("#"), "a starter explains itself in comments"
    assert load_scenario(path).ruleset == ruleset

    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 0, checked.output
    assert f"ok ({ruleset}," in checked.output

    ran = runner.invoke(app, ["run", str(path), "--battles", "200", "--json"])
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout)
    assert summary["ruleset"] == ruleset and summary["battles"] == 200
    assert sum(summary["win"][o]["p"] for o in ("attacker", "defender", "draw")) == (
        pytest.approx(1.0)
    )


def test_existing_file_is_kept_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text("# my own scenario\n", encoding="utf-8")
    refused = runner.invoke(app, ["new", str(path), "--ruleset", "blocks"])
    assert_clean_failure(refused, ["mine.toml", "already exists", "--force"])
    assert path.read_text(encoding="utf-8") == "# my own scenario\n"

    forced = runner.invoke(app, ["new", str(path), "--ruleset", "blocks", "--force"])
    assert forced.exit_code == 0, forced.output
    assert load_scenario(path).ruleset == "blocks"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.toml"], "no temporary file left"


def test_unknown_ruleset_names_the_nearest(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    result = runner.invoke(app, ["new", str(path), "--ruleset", "olympa"])
    assert_clean_failure(result, ["--ruleset", "unknown ruleset 'olympa'", "'olympia'"])
    assert not path.exists()


def test_missing_directory_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "b.toml"
    result = runner.invoke(app, ["new", str(path), "--ruleset", "skirmish"])
    assert_clean_failure(result, ["b.toml", "no such folder", "missing"])
    assert not path.parent.exists()


def test_a_directory_is_not_a_scenario_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["new", str(tmp_path)])
    assert_clean_failure(result, ["is a directory"])


def test_version_is_the_installed_metadata() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"battle-odds {metadata.version('battle-odds')}\n"
