"""Nonsense refused in one line: replays past the run, overrides nothing reads, paired
numbers that are not the same number, and error lines in the common format."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.rulesets.skirmish.replay import replay
from simulator.scenario.scenario import load_scenario
from simulator.studies.compare import compare
from simulator.studies.regress import read_baseline
from tests import ROOT

KNIGHTS = ROOT / "scenarios/olympia/knights_vs_pikemen.toml"
CAVALRY = ROOT / "scenarios/skirmish/cavalry_charge.toml"
runner = CliRunner()


def one_line_error(*args: str) -> str:
    """The command's error line (it must fail with status 2 and one line)."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_a_replay_past_the_runs_battles_is_refused() -> None:
    scenario = load_scenario(CAVALRY)
    with pytest.raises(BattleOddsError, match=r"--battle 5000: expected 0\.\.4,999"):
        replay(scenario, 5_000, battles=5_000)
    assert replay(scenario, 4_999, battles=5_000).battle == 4_999
    with pytest.raises(BattleOddsError, match="the run has"):
        replay(scenario, scenario.battles)


@pytest.mark.parametrize("battle", ["99999999999999999999", str(2**63), "100000000000"])
def test_replay_of_a_huge_battle_number_is_one_line(battle: str) -> None:
    line = one_line_error("replay", str(CAVALRY), "--battle", battle)
    assert f"--battle {battle}" in line and "expected 0.." in line


def with_units_table(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(KNIGHTS.read_text() + f"\n[units.{name}]\nattack = 500\n")
    return path


@pytest.mark.parametrize("name", ["noble", "battering_ram", "siege_tower"])
def test_an_override_the_battle_ignores_is_refused(tmp_path: Path, name: str) -> None:
    path = with_units_table(tmp_path, name)
    line = one_line_error("validate", str(path))
    assert f"{path}:" in line and f"units.{name}:" in line and "not a unit type" in line


def test_an_override_of_a_unit_type_is_still_read(tmp_path: Path) -> None:
    scenario = load_scenario(with_units_table(tmp_path, "knight"))
    assert scenario.model.fighters["knight"].land.attack == 500


def test_compare_refuses_rulesets_whose_steps_count_different_things() -> None:
    olympia, skirmish = load_scenario(KNIGHTS), load_scenario(CAVALRY)
    with pytest.raises(BattleOddsError, match=r"steps count strikes.*steps count turns"):
        compare(olympia, skirmish, 100, 1)
    line = one_line_error("compare", str(KNIGHTS), str(CAVALRY), "-n", "100")
    assert "steps count" in line


def test_a_toml_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + KNIGHTS.read_bytes())
    assert load_scenario(path).hash == load_scenario(KNIGHTS).hash
    # A line number after the mark is still the file's line.
    path.write_bytes(b"\xef\xbb\xbf" + KNIGHTS.read_bytes().replace(b"knight = 10", b"knigt = 10"))
    with pytest.raises(BattleOddsError, match=rf"{path}:18: .*did you mean 'knight'"):
        load_scenario(path)


def test_a_second_byte_order_mark_is_named(tmp_path: Path) -> None:
    """One mark is read; a second one (a file saved as UTF-8 with a mark twice) was
    called an "Invalid statement"."""
    path = tmp_path / "twice.toml"
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + KNIGHTS.read_bytes())
    line = one_line_error("validate", str(path))
    assert f"{path}:1: a second byte-order mark" in line and "expected TOML text" in line


@pytest.mark.parametrize(
    "args",
    [
        ["matrix", "--budget", "1e308", "-n", "10"],
        ["matrix", "--ruleset", "skirmish", "--budget", "1e12", "-n", "10"],  # MemoryError
        ["matrix", "--ruleset", "blocks", "--budget", "1e12", "-n", "10"],  # MemoryError
        ["meta", "--budget", "1e300", "--types", "knight,pikeman", "-n", "10"],
        ["prices", "--types", "knight,pikeman", "--budgets", "10,1e308", "-n", "20"],
        # OverflowError, or an array of 7 TiB
        ["best", str(KNIGHTS), "--budget", "1e20", "--types", "knight,soldier", "-n", "10"],
        ["best", str(KNIGHTS), "--budget", "1e12", "--types", "knight,soldier", "-n", "10"],
    ],
    ids=lambda args: "-".join(args[:2]).replace(str(ROOT), "").strip("-/")[:30],
)
def test_an_absurd_budget_is_refused_with_its_bound(args: list[str]) -> None:
    """A budget that buys more men of a type than any battle fields printed its 300-digit
    count of men, or ran out of memory building the armies."""
    line = one_line_error(*args)
    option = "--budgets" if "--budgets" in args else "--budget"
    assert line.startswith(f"error: {option} 1e+") and "expected at most 100,000" in line
    assert len(line) < 200, line


def test_a_range_written_with_an_exponent_is_a_range() -> None:
    """``1..1e9`` was read as one value, the string '1..1e9' ("expected a whole number,
    got a string"); it is a range of a billion points, past the bound."""
    line = one_line_error("sweep", str(KNIGHTS), "--vary", "attacker.knight=1..1e9", "-n", "10")
    assert (
        line
        == "error: --vary attacker.knight: 1,000,000,000 points: at most 10,000 (a larger step?)"
    )


def test_a_path_under_a_file_is_named_so(tmp_path: Path) -> None:
    """The same words as every output path's: the system's "Not a directory" said
    neither which part is the file nor that it is one."""
    afile = tmp_path / "afile"
    afile.write_text("")
    line = one_line_error("regress", str(KNIGHTS), "--baseline", str(afile / "b.toml"))
    assert line == f"error: {afile / 'b.toml'}: '{afile}' is a file, not a folder"
    line = one_line_error("new", str(afile / "new.toml"))
    assert line == f"error: {afile / 'new.toml'}: '{afile}' is a file, not a folder"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_that_takes_no_files_is_named_so() -> None:
    """/proc exists but takes no new files; creating one says "No such file or
    directory", which the lines said of a folder that is there."""
    line = one_line_error("run", str(KNIGHTS), "-n", "10", "--keep-battles", "/proc/x.csv")
    why = "cannot write in folder '/proc' (it takes no new files)"
    assert line == f"error: --keep-battles /proc/x.csv: {why}"
    assert one_line_error("new", "/proc/x.toml") == f"error: /proc/x.toml: {why}"


BASELINE = """[settings]
level = 0.01

[scenarios."a.toml"]
ruleset = "olympia"
scenario_hash = "0123456789abcdef"
seed = 7
battles = 200
version = "0.1.0"

[scenarios."a.toml".numbers."win.attacker"]
kind = "proportion"
value = 0.5
n = 200
successes = 100
"""


@pytest.mark.parametrize(
    ("change", "line", "says"),
    [
        (("seed = 7", "seed = 99999999999999999999999"), 7, "out of range: expected 0.."),
        (("seed = 7", f"seed = {2**63}"), 7, "out of range: expected 0.."),
        (("battles = 200", "battles = 100000000000000"), 8, "out of range: expected 1.."),
        (("value = 0.5", "value = nan"), 13, "nan is not a finite number: expected a finite"),
        (("value = 0.5", "value = -inf"), 13, "not a finite number: expected a finite number"),
    ],
)
def test_a_bad_baseline_number_is_located(
    tmp_path: Path, change: tuple[str, str], line: int, says: str
) -> None:
    path = tmp_path / "balance.toml"
    path.write_text(BASELINE.replace(*change))
    with pytest.raises(BattleOddsError) as caught:
        read_baseline(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ") and says in message, message
    assert "None" not in message


def test_the_sample_baseline_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "balance.toml"
    path.write_text(BASELINE)
    assert read_baseline(path).entries["a.toml"].seed == 7
    assert simulator.load_scenario(KNIGHTS).ruleset == "olympia"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            [
                "sweep",
                str(KNIGHTS),
                "--vary",
                "attacker.knight=1..10000",
                "--vary",
                "attacker.soldier=1..10000",
            ],
            "a grid of 10,000 x 10,000 = 100,000,000 points: at most 10,000",
        ),
        (
            ["sweep", str(KNIGHTS), "--vary", "attacker.knight=1..3", "-n", "100000000000"],
            "3 points x 100,000,000,000 battles = 300,000,000,000 battles in all, more than "
            "--max-total 10,000,000,000",
        ),
        (
            [
                "sweep",
                str(KNIGHTS),
                "--vary",
                "attacker.knight=1..3",
                "-n",
                "100",
                "--max-total",
                "299",
            ],
            "= 300 battles in all, more than --max-total 299",
        ),
        (["matrix", "--budget", "20", "-n", "100000000000"], "raise --max-total"),
        (["sensitivity", str(KNIGHTS), "--battles", "100000000000"], "raise --max-total"),
        (
            [
                "worth",
                str(KNIGHTS),
                "--add",
                "1 knight",
                "--in",
                "soldier",
                "--max-battles",
                "100000000000",
            ],
            "raise --max-total",
        ),
        (
            ["worth", str(KNIGHTS), "--add", "1 knight", "--in", "soldier", "--max", str(10**18)],
            f"--max {10**18}: ",
        ),
        (
            [
                "best",
                str(KNIGHTS),
                "--budget",
                "2",
                "--types",
                "knight,soldier",
                "-n",
                "1000",
                "--max-battles",
                "1000",
                "--max-total",
                "5999",
            ],
            "best: 6 armies x --max-battles 1,000 = 6,000 battles in all, more than "
            "--max-total 5,999",
        ),
        (
            [
                "best",
                str(KNIGHTS),
                "--budget",
                "200",
                "--types",
                "knight,soldier,pikeman",
                "--max-battles",
                "100000000000",
            ],
            "best: a search of up to 241 races",
        ),
        (
            [
                "prices",
                "--types",
                "knight,pikeman",
                "--budgets",
                "10",
                "-n",
                "1000",
                "--max-total",
                "199999",
            ],
            "prices: 2 x 1 types x 1 budgets x 100 pairs of counts x --battles 1,000 = "
            "200,000 battles in all, more than --max-total 199,999",
        ),
        (
            [
                "meta",
                "--budget",
                "20",
                "--types",
                "knight,pikeman",
                "-n",
                "1000",
                "--max-total",
                "3999",
            ],
            "matrix: 2 x 2 pairs x --battles 1,000 = 4,000 battles in all, more than "
            "--max-total 3,999",
        ),
    ],
)
def test_a_commands_whole_work_is_bounded_before_it_starts(args: list[str], says: str) -> None:
    started = time.perf_counter()
    line = one_line_error(*args)
    assert says in line, line
    assert time.perf_counter() - started < 10  # no list of 10**18 values, no battle fought


def test_a_baseline_asking_for_too_many_battles_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "k.toml").write_text(KNIGHTS.read_text())
    baseline = tmp_path / "balance.toml"
    args = ["regress", str(folder), "--baseline", str(baseline)]
    assert runner.invoke(app, [*args, "--update", "-n", "200"]).exit_code == 0
    baseline.write_text(baseline.read_text().replace("battles = 200\n", "battles = 20000000000\n"))
    line = one_line_error(*args)
    assert "= 20,000,000,000 battles in all, more than --max-total" in line
    assert runner.invoke(app, [*args, "--max-total", "10", "--update"]).exit_code == 2
