"""What a newcomer sees in a terminal: tables that fit 80 columns by design and use the
room of 120, --help that reads well at 80, and the small things a first session trips
over (a misspelt --vary, units --json, schema -o, a resumed run, a .jpg plot)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator.cli import app
from tests import ROOT
from tests.terminal import too_wide

KNIGHTS = str(ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml")
CASTLE = str(ROOT / "scenarios" / "olympia" / "castle_siege.toml")
COMMANDS = [
    "run", "odds", "exact", "validate", "units", "replay", "regress", "plot", "compare",
    "sweep", "worth", "sensitivity", "matrix", "new", "new-ruleset", "schema", "serve", "warm",
    "calibrate", "retreat",
]  # fmt: skip


def show(args: list[str], columns: int = 80) -> str:
    """What the command prints in a terminal ``columns`` wide."""
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


def fits(text: str, columns: int) -> None:
    wide = too_wide(text, columns)
    assert wide == [], [*wide, text]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_reads_well_at_80_columns(command: str) -> None:
    text = show([command, "--help"] if command else ["--help"])
    fits(text, 80)
    for unreadable in ("<bool>", "<int range>", "9223372036854775807", "<=x<=", "[x>="):
        assert unreadable not in text, (command, unreadable)


def test_help_defaults_are_true_for_the_command() -> None:
    odds = " ".join(show(["odds", "--help"], 120).split())
    assert "Number of battles (default 100,000)" in odds and "scenario's" not in odds
    assert "[1 to 100 billion]" in odds and "[0 or more]" in odds
    compare = " ".join(show(["compare", "--help"], 120).split())
    assert "Number of battles (default: A's)" in compare


def test_a_description_is_not_broken_mid_sentence() -> None:
    listing = show(["--help"], 200)
    line = next(line for line in listing.splitlines() if "sensitivity " in line)
    assert "on common random numbers, sorted by effect" in line


def test_units_fits_80_columns_and_uses_120() -> None:
    narrow = show(["units", "--ruleset", "olympia"], 80)
    fits(narrow, 80)
    header = next(line for line in narrow.splitlines() if line.startswith("type"))
    assert header.split() == [
        "type", "kind", "attack", "defense", "missile", "ship", "swamp", "cost"
    ]  # fmt: skip
    assert "  blessed_soldier: survives a hit 50%" in narrow.splitlines()
    wide = show(["units", "--ruleset", "olympia"], 120)
    fits(wide, 120)
    assert "notes" in next(line for line in wide.splitlines() if line.startswith("type"))
    crowded = show(["units", "--ruleset", "confrontation"], 80)
    fits(crowded, 80)
    assert "not shown at 80 columns:" in crowded and "--json" in crowded
    assert "not shown" not in show(["units", "--ruleset", "confrontation"], 120)


def test_units_json_is_one_labelled_object() -> None:
    answer = json.loads(show(["units", "--json"]))
    assert {"olympia", "blocks", "skirmish"} <= set(answer)
    knight = next(r for r in answer["olympia"] if r["type"] == "knight")
    assert knight["attack"] == 45
    assert list(json.loads(show(["units", "--ruleset", "blocks", "--json"]))) == ["blocks"]


def test_run_and_exact_fit_80_columns() -> None:
    run = show(["run", KNIGHTS, "-n", "2000"])
    fits(run, 80)
    lines = run.splitlines()
    assert lines[0] == "Knights against pikemen (olympia): 2,000 battles"
    assert not [line for line in lines if line.rstrip().endswith(("time", "scenario"))]
    assert re.search(r"^time \d+\.\d\d s$|  time \d+\.\d\d s$", run, re.MULTILINE)
    wide = show(["run", KNIGHTS, "-n", "2000"], 120)
    assert re.search(
        r"^seed 20261121  battles 2,000  scenario hash \w+  kernel \w+  time", wide, re.M
    )
    exact = show(["exact", KNIGHTS])
    fits(exact, 80)
    assert re.match(r"Knights against pikemen \(olympia\): exact, 37,884 states, [\d.]+ s\n", exact)


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_a_long_path_stays_whole_at_any_width(tmp_path: Path, columns: int) -> None:
    """A line naming a file wraps between words, never inside the path: in a folder as
    long as some machines' temporary ones, the path is one piece whatever the width."""
    deep = tmp_path / ("a-long-folder-name-like-some-machines-have-" * 2) / "x"
    deep.mkdir(parents=True)
    scenario, schema = deep / "mine.toml", deep / "olympia.schema.json"
    for args, path in (
        (["new", str(scenario)], scenario),
        (["validate", str(scenario)], scenario),
        (["schema", "--ruleset", "olympia", "-o", str(schema)], schema),
    ):
        text = show(args, columns)
        assert any(str(path) in line for line in text.splitlines()), (columns, text)
        fits(text, columns)


def test_compare_fits_80_columns() -> None:
    text = show(["compare", KNIGHTS, CASTLE, "-n", "500"])
    fits(text, 80)
    intervals = re.findall(r"[-+]\d+\.\d\d \.\. [-+]\d+\.\d\d", text)
    assert len(intervals) >= 6  # paired and independent, three outcomes, each on one line
    # The words of a row may wrap, its numbers may not: all five on the row's first line.
    rows = [line for line in text.splitlines() if line.startswith(("knights lost", "pikemen lost"))]
    assert len(rows) == 2, text
    for row in rows:
        assert len(re.findall(r"[-+]?\d[\d,]*\.\d+", row)) == 5, row


def test_matrix_columns_are_named_and_rows_aligned() -> None:
    text = show(["matrix", "--ruleset", "olympia", "--budget", "6", "-n", "50"])
    fits(text, 80)
    lines = text.splitlines()
    header = next(line for line in lines if "soldi" in line)
    assert header.split()[:5] == ["defender", "\u2192", "soldi", "b.sol", "pikem"]
    assert "b.sol = blessed soldier" in " ".join(text.split())
    assert "attacker \u2193" in text and "defender \u2192" in text  # the sense, always
    rows = [line for line in lines if "\u00b1" in line and line.startswith(" ")]
    assert len(rows) == 10 and len({len(line.rstrip()) for line in rows}) == 1, rows


def test_a_misspelt_vary_path_suggests_the_type() -> None:
    result = CliRunner().invoke(app, ["sweep", KNIGHTS, "--vary", "attacker.knigt=1..3"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "(did you mean 'knight'?)" in result.stderr


def test_schema_output_says_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "olympia.schema.json"
    text = show(["schema", "--ruleset", "olympia", "--output", str(path)], 300)
    assert text == f"{path}: JSON Schema of olympia scenario files written\n"
    assert json.loads(path.read_text())["type"] == "object"


def test_a_resumed_run_says_it_resumed(tmp_path: Path) -> None:
    checkpoint = tmp_path / "run.ckpt"
    args = ["run", KNIGHTS, "-n", "3000", "--checkpoint", str(checkpoint)]
    assert "resumed" not in show(args)
    again = " ".join(show(args, 200).split())
    assert f"note: resumed from {checkpoint}: 3,000 of the 3,000 battles were done" in again


def test_a_jpg_plot_is_written(tmp_path: Path) -> None:
    path = tmp_path / "report.jpg"
    show(["plot", KNIGHTS, "-n", "500", "-o", str(path)])
    assert path.read_bytes()[:3] == b"\xff\xd8\xff"  # a JPEG
