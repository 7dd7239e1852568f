"""``battle-odds new-ruleset``: the skeleton installs, passes its own tests and answers
``odds``; bad names and existing folders are one line and leave nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simulator import atomic, skeleton
from simulator.cli import app
from simulator.testing import interval_contains

runner = CliRunner()
NAME = "dice_duel"
DIST = "battle-odds-dice-duel"


def found_by_a_fresh_interpreter(dist: str, env: dict[str, str] | None = None) -> bool:
    probe = f"import importlib.metadata as m; m.distribution({dist!r})"
    return (
        subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0
    )


# pip installs the skeleton and runs its tests (37 s at load 4): slow tier.
@pytest.mark.slow
def test_the_skeleton_installs_passes_its_tests_and_answers_odds(tmp_path: Path) -> None:
    written = runner.invoke(app, ["new-ruleset", NAME, "--path", str(tmp_path)])
    assert written.exit_code == 0, written.output
    folder = tmp_path / NAME
    assert sorted(p.name for p in tmp_path.iterdir()) == [NAME]
    # Installed into a folder of its own, never into the environment running the tests.
    site = tmp_path / "site"
    install = ["install", "--no-deps", "--no-build-isolation", "--no-compile", "--target"]
    subprocess.run(
        [sys.executable, "-m", "pip", "--quiet", *install, str(site), str(folder)], check=True
    )
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    assert found_by_a_fresh_interpreter(DIST, env)
    assert not found_by_a_fresh_interpreter(DIST)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout
    query = ["odds", "--ruleset", NAME, "--attacker", "1", "--defender", "1"]
    odds = subprocess.run(
        [sys.executable, "-m", "simulator", *query, "-n", "20000", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert odds.returncode == 0, odds.stderr
    answer = json.loads(odds.stdout)
    assert answer["ruleset"] == NAME and answer["battles"] == 20_000
    # The trivial rule: one die each, the attacker needs a higher one (15 of 36 pairs).
    wins = round(answer["win"]["attacker"]["p"] * 20_000)
    assert interval_contains(wins, 20_000, 15 / 36)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("My-Game", "expected a lowercase Python identifier"),
        ("2dice", "expected a lowercase Python identifier"),
        ("class", "expected a lowercase Python identifier"),
        ("olympia", "a built-in ruleset's name"),
    ],
)
def test_a_bad_name_is_one_line(tmp_path: Path, name: str, reason: str) -> None:
    result = runner.invoke(app, ["new-ruleset", name, "--path", str(tmp_path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert f"NAME '{name}'" in result.stderr and reason in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_never_written_over(tmp_path: Path) -> None:
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / "mine.txt").write_text("my work\n")
    result = runner.invoke(app, ["new-ruleset", NAME, "--path", str(tmp_path)])
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert [p.name for p in (tmp_path / NAME).iterdir()] == ["mine.txt"]
    assert [p.name for p in tmp_path.iterdir()] == [NAME]


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[Path] = []

    def fail_on_the_third(path: Any, data: Any) -> None:
        written.append(Path(path))
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        Path(path).write_text(data)

    monkeypatch.setattr(atomic, "write_atomically", fail_on_the_third)
    result = runner.invoke(app, ["new-ruleset", NAME, "--path", str(tmp_path)])
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert len(written) == 3 and list(tmp_path.iterdir()) == []


def test_every_template_is_used_and_fully_filled() -> None:
    files = skeleton.files(NAME)
    assert len(files) == len(skeleton.LAYOUT)
    for path, text in files.items():
        assert "${" not in text and "dice_duel" in text + path, path
