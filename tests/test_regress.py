"""CI regression of balance numbers: real drift is caught, noise is not, files are safe."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.rulesets.olympia import model
from simulator.studies import regress
from simulator.studies.machinery import inference

runner = CliRunner()

KNIGHTS = """ruleset = "olympia"
name = "knights"
battles = 20000
seed = 3
[[attacker.units]]
men = { knight = 3, soldier = 4 }
[[defender.units]]
men = { pikeman = 9 }
"""
ARCHERS = """ruleset = "olympia"
name = "archers"
battles = 10000
seed = 4
[[attacker.units]]
men = [ { type = "soldier", count = 6 }, { type = "archer", count = 4, behind = 1 } ]
[[defender.units]]
men = { swordsman = 3 }
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "knights.toml").write_text(KNIGHTS)
    (scenarios / "archers.toml").write_text(ARCHERS)
    return tmp_path


def invoke(folder: Path, *extra: str) -> object:
    return runner.invoke(
        app,
        ["regress", str(folder / "scenarios"), "--baseline", str(folder / "balance.toml"), *extra],
    )


def test_unchanged_code_passes_with_identical_numbers(folder: Path) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    result = invoke(folder, "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    report = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert report["passed"] and report["moved"] == []
    assert report["scenarios"] == {"scenarios/archers.toml": "ok", "scenarios/knights.toml": "ok"}
    baseline = regress.read_baseline(folder / "balance.toml")
    entry = baseline.entries["scenarios/knights.toml"]
    assert (entry.seed, entry.battles, entry.version, entry.ruleset) == (
        3,
        20000,
        simulator.__version__,
        "olympia",
    )
    assert {
        "win.attacker",
        "win.defender",
        "win.draw",
        "steps.median",
        "casualties.attacker.knight",
        "casualties.defender.pikeman",
    } <= set(entry.numbers)


def raise_knight_attack(monkeypatch: pytest.MonkeyPatch, factor: float) -> None:
    table = model.standard_fighters()
    table["knight"]["attack"] = round(table["knight"]["attack"] * factor)
    monkeypatch.setattr(model, "standard_fighters", lambda: {k: dict(v) for k, v in table.items()})
    # The package's fighter types are read once per process: a fresh cache reads the
    # changed table (the monkeypatch puts the old one back afterwards).
    monkeypatch.setattr(model, "_package_fighter", cache(model._package_fighter.__wrapped__))


def test_a_rules_change_of_twenty_percent_is_caught(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    raise_knight_attack(monkeypatch, 1.2)
    result = invoke(folder)
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert "scenarios/knights.toml" in result.stdout and "moved" in result.stdout  # type: ignore[attr-defined]
    # In words on the terminal (the baseline's keys stay in --json and --junit).
    assert "P(attacker wins)" in result.stdout  # type: ignore[attr-defined]
    report = regress.check(
        [folder / "scenarios"],
        regress.read_baseline(folder / "balance.toml"),
        folder / "balance.toml",
    )
    assert report.statuses == {"scenarios/archers.toml": "ok", "scenarios/knights.toml": "moved"}
    moved = {c.number for c in report.moved}
    assert {"win.attacker", "casualties.defender.pikeman"} <= moved


def test_a_tolerance_larger_than_the_change_silences_it(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    path = folder / "balance.toml"
    path.write_text(
        path.read_text().replace(
            "[settings]\nlevel = 0.01", "[settings]\nlevel = 0.01\ntolerance = 100.0"
        )
    )
    raise_knight_attack(monkeypatch, 1.2)
    assert invoke(folder).exit_code == 0  # type: ignore[attr-defined]
    # --update keeps the hand-set tolerance.
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    assert regress.read_baseline(path).tolerance == 100.0


# A false-alarm rate simulated over many seeds (statistical, 11 s at load 4): slow tier.
@pytest.mark.slow
def test_false_alarm_rate_with_other_seeds_is_at_most_the_level(tmp_path: Path) -> None:
    """The same code, baseline and check each with their own seed, many times: each
    number's p-value is calibrated (p < level about `level` of the time) and Holm keeps
    the share of runs with any alarm at or under the level.

    Each repetition draws a new baseline too: with one fixed baseline the runs would
    share its noise and their alarms would not be independent trials."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario = folder / "s.toml"
    baseline_path = tmp_path / "balance.toml"
    runs, level = 300, 0.1
    alarms = small_p = 0
    for k in range(runs):
        scenario.write_text(
            KNIGHTS.replace("battles = 20000", "battles = 1500").replace(
                "seed = 3", f"seed = {10_000 + k}"
            )
        )
        regress.update([folder], baseline_path, level=level)
        report = regress.check(
            [folder], regress.read_baseline(baseline_path), baseline_path, seed=20_000 + k
        )
        alarms += not report.passed
        small_p += next(c.p for c in report.comparisons if c.number == "win.attacker") < level
    assert alarms <= stats.binom.ppf(0.999, runs, level)
    assert stats.binom.ppf(0.0005, runs, level) <= small_p <= stats.binom.ppf(0.9995, runs, level)


def test_interrupted_update_keeps_the_old_baseline(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    path = folder / "balance.toml"
    before = path.read_bytes()
    (folder / "scenarios" / "knights.toml").write_text(KNIGHTS.replace("knight = 3", "knight = 4"))
    calls = []

    def interrupted(*args: object, **kwargs: object) -> simulator.Result:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return simulator.simulate(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.raises(KeyboardInterrupt):
        regress.update([folder / "scenarios"], path, run=interrupted)
    assert path.read_bytes() == before

    def failing_rename(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("simulator.atomic.os.replace", failing_rename)
    with pytest.raises(OSError):
        regress.update([folder / "scenarios"], path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["balance.toml", "scenarios"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[settings\nlevel = 0.01\n", "balance.toml:1: malformed TOML"),
        ('[settings]\nlevel = "high"\n', "settings.level"),
        (
            '[scenarios."scenarios/knights.toml"]\nruleset = "olympia"\n',
            "scenario_hash: is required",
        ),
        (
            '[scenarios."a.toml"]\nruleset = "olympia"\nscenario_hash = "x"\nseed = 1\n'
            'battles = 10\n[scenarios."a.toml".numbers."win.attacker"]\nkind = "proportion"\n'
            "value = 0.5\nn = 10\nsuccesses = 11\n",
            "out of range",
        ),
        ("[setings]\n", "did you mean 'settings'"),
    ],
)
def test_corrupt_baseline_is_a_clear_error(folder: Path, text: str, expected: str) -> None:
    (folder / "balance.toml").write_text(text)
    result = invoke(folder)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert expected in result.stderr and "Traceback" not in result.output  # type: ignore[attr-defined]
    assert "balance.toml" in result.stderr  # type: ignore[attr-defined]


def test_changed_new_and_missing_scenarios_are_reported_as_such(folder: Path) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    scenarios = folder / "scenarios"
    (scenarios / "knights.toml").write_text(KNIGHTS.replace("pikeman = 9", "pikeman = 10"))
    (scenarios / "archers.toml").rename(scenarios / "bowmen.toml")
    junit = folder / "report.xml"
    result = invoke(folder, "--json", "--junit", str(junit))
    assert result.exit_code == 1  # type: ignore[attr-defined]
    report = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert report["scenarios"] == {
        "scenarios/archers.toml": "missing",
        "scenarios/bowmen.toml": "new",
        "scenarios/knights.toml": "changed",
    }
    assert report["moved"] == []  # a changed file is not drift
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "3"
    texts = [f.text or "" for f in suite.iter("failure")]
    assert any("file changed" in t for t in texts) and any("--update" in t for t in texts)


def test_junit_lists_moved_numbers(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    raise_knight_attack(monkeypatch, 1.2)
    junit = folder / "report.xml"
    assert invoke(folder, "--junit", str(junit)).exit_code == 1  # type: ignore[attr-defined]
    cases = {c.get("name"): c for c in ElementTree.parse(junit).getroot().iter("testcase")}
    assert cases["scenarios/archers.toml"].find("failure") is None
    failure = cases["scenarios/knights.toml"].find("failure")
    assert failure is not None and "win.attacker" in (failure.text or "")


def test_holm_controls_the_family() -> None:
    assert inference.holm([0.001, 0.04, 0.03], 0.05) == [
        (True, 0.05 / 3),
        (False, 0.05),
        (False, 0.05 / 2),
    ]
    assert [r for r, _ in inference.holm([0.01, 0.02, 0.03], 0.1)] == [True, True, True]


def test_written_files_get_the_usual_mode(tmp_path):
    """An output file gets the mode a plain open() would give it, not mkstemp's 0600,
    and a rewritten file keeps its mode."""
    import os

    from simulator.atomic import write_atomically

    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.toml"
        write_atomically(fresh, "x = 1\n")
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.toml"
        kept.write_text("x = 0\n")
        kept.chmod(0o640)
        write_atomically(kept, "x = 2\n")
        assert kept.stat().st_mode & 0o777 == 0o640
        assert kept.read_text() == "x = 2\n"
    finally:
        os.umask(umask)
