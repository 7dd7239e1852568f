"""Every file a command writes is checked before its first battle: one line, exit 2."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.running.output_paths import IMAGE, check_output_path
from tests import ROOT

KNIGHTS = str(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
runner = CliRunner()


def sys_is_read_only() -> bool:
    try:
        handle, probe = tempfile.mkstemp(dir="/sys")
    except OSError:
        return True
    os.close(handle)
    os.unlink(probe)
    return False


def cases(tmp_path: Path, suffix: str) -> list[tuple[str, str]]:
    """(path, what the one line must say) for each way an output path can be wrong."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    made = [
        (str(tmp_path / "missing" / f"out{suffix}"), f"no such folder '{tmp_path / 'missing'}'"),
        (str(tmp_path), "is a folder: expected a file name"),
        (str(a_file / f"out{suffix}"), f"'{a_file}' is a file, not a folder"),
        (f"/etc/passwd/out{suffix}", "'/etc/passwd' is a file, not a folder"),
        (str(a_file / "deeper" / f"out{suffix}"), f"'{a_file}' is a file, not a folder"),
        (str(tmp_path / ("n" * 300 + suffix)), "too long"),
    ]
    if sys_is_read_only():
        made.append((f"/sys/out{suffix}", "cannot write in folder '/sys'"))
    return made


@pytest.mark.parametrize("suffix", [".png", ".csv", ""])
def test_each_way_a_path_is_wrong_has_its_line(tmp_path: Path, suffix: str) -> None:
    for path, says in cases(tmp_path, suffix):
        with pytest.raises(BattleOddsError) as caught:
            check_output_path(path, "-o")
        message = str(caught.value)
        assert message.startswith(f"-o {path}: ") and says in message, message
        assert "\n" not in message
        assert ("no such folder" in message) == ("missing" in path), message


def test_a_type_the_option_does_not_write(tmp_path: Path) -> None:
    with pytest.raises(BattleOddsError, match=r"unknown file type '\.gif': expected .png"):
        check_output_path(tmp_path / "x.gif", "-o", IMAGE)
    with pytest.raises(BattleOddsError, match=r"unknown image type \(no suffix\)"):
        check_output_path(tmp_path / "x", "-o", IMAGE, "image")
    with pytest.raises(BattleOddsError, match=r"\(no suffix\)"):
        check_output_path(tmp_path / "x", "-o", IMAGE)
    assert check_output_path(tmp_path / "x.PNG", "-o", IMAGE) == tmp_path / "x.PNG"
    assert not list(tmp_path.iterdir())  # the check leaves nothing behind


def test_a_read_only_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.csv"
    path.write_text("x")
    path.chmod(0o444)
    if os.geteuid() == 0:
        # Root may write any file, so CI (root) would never see the refusal: the mode bits
        # are asked as an ordinary user would find them.
        access = os.access
        monkeypatch.setattr(
            os,
            "access",
            lambda p, mode, **kw: mode != os.W_OK if Path(p) == path else access(p, mode, **kw),
        )
    with pytest.raises(BattleOddsError, match="read-only"):
        check_output_path(path, "--keep-battles")


# Each command and option, with a battle count that would take minutes if run: the
# error must come at once.
LONG = "200000000"
COMMANDS = [
    (["run", KNIGHTS, "-n", LONG, "--keep-battles"], "--keep-battles", ".csv"),
    (["run", KNIGHTS, "-n", LONG, "--checkpoint"], "--checkpoint", ".json"),
    (["plot", KNIGHTS, "-n", LONG, "-o"], "-o", ".png"),
    (["compare", KNIGHTS, KNIGHTS, "-n", LONG, "-o"], "-o", ".png"),
    (["sweep", KNIGHTS, "--vary", "attacker.knight=1..3", "-n", LONG, "-o"], "-o", ".png"),
    (["matrix", "--budget", "20", "-n", LONG, "-o"], "-o", ".png"),
    (["worth", KNIGHTS, "--add", "1 knight", "--in", "soldier", "-o"], "-o", ".png"),
    (["sensitivity", KNIGHTS, "--battles", LONG, "-o"], "-o", ".png"),
    (["schema", "--ruleset", "olympia", "-o"], "--output", ".json"),
    (["best", KNIGHTS, "--budget", "20", "--max-battles", LONG, "-o"], "-o", ".png"),
    (["prices", "--types", "knight,pikeman", "-n", LONG, "-o"], "-o", ".png"),
    (["prices", "--types", "knight,pikeman", "-n", LONG, "--write"], "--write", ".toml"),
    (["meta", "--budget", "20", "-n", LONG, "-o"], "-o", ".png"),
    (["retreat", KNIGHTS, "-o"], "-o", ".png"),
]


@pytest.mark.parametrize(
    ("args", "option", "suffix"), COMMANDS, ids=[f"{c[0][0]} {c[1]}" for c in COMMANDS]
)
def test_commands_check_their_output_paths_first(
    tmp_path: Path, args: list[str], option: str, suffix: str
) -> None:
    for path, says in cases(tmp_path, suffix)[:4]:
        started = time.perf_counter()
        result = runner.invoke(app, [*args, path])
        assert result.exit_code == 2, (args, path, result.output)
        lines = result.stderr.strip().splitlines()
        # A folder is refused by the option's own type as well ("is a directory").
        said = says in lines[0] or ("is a folder" in says and "is a directory" in lines[0])
        assert len(lines) == 1 and said and option in lines[0], result.stderr
        assert time.perf_counter() - started < 5


def test_regress_checks_its_junit_file_before_running(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "k.toml").write_text(Path(KNIGHTS).read_text())
    baseline = tmp_path / "balance.toml"
    assert (
        runner.invoke(
            app,
            ["regress", str(tmp_path / "s"), "--baseline", str(baseline), "--update", "-n", "200"],
        ).exit_code
        == 0
    )
    for path, says in cases(tmp_path, ".xml")[:4]:
        result = runner.invoke(
            app, ["regress", str(tmp_path / "s"), "--baseline", str(baseline), "--junit", path]
        )
        said = says in result.stderr or "is a directory" in result.stderr
        assert result.exit_code == 2 and said and "--junit" in result.stderr
    wrong = runner.invoke(
        app,
        [
            "regress",
            str(tmp_path / "s"),
            "--baseline",
            str(baseline),
            "--junit",
            str(tmp_path / "r.txt"),
        ],
    )
    assert wrong.exit_code == 2 and "expected .xml" in wrong.stderr


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["odds", "--attacker", "noble, 5 soldier", "--defender", "noble, 3 soldier"], False),
        (["run", KNIGHTS], False),
        (["run", KNIGHTS, "--keep-battles", "KEPT"], True),
    ],
    ids=["odds", "run", "run --keep-battles"],
)
def test_a_command_keeps_rows_only_to_write_them(
    args: list[str], kept: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report is made from the tally: per-battle rows (joined at the end, 0.014 s of a
    100,000-battle query) are kept only for --keep-battles to write."""
    from simulator.running import front

    plans = []
    fight = front.run_chunks

    def watched(scenario: Any, plan: Any, bar: Any = None) -> Any:
        plans.append(plan)
        return fight(scenario, plan, bar)

    monkeypatch.setattr(front, "run_chunks", watched)
    args = [str(tmp_path / "rows.csv") if a == "KEPT" else a for a in args]
    done = runner.invoke(app, [*args, "-n", "500", "--json"])
    assert done.exit_code == 0, done.output
    assert [p.keep_battles for p in plans] == [kept]
    assert (tmp_path / "rows.csv").exists() == kept
