"""``battle-odds calibrate``: the scores against a small example computed by hand, the
file format (its schema, located errors, skipped battles) and the command's answer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import tomllib
from typer.testing import CliRunner

from simulator.cli import app
from simulator.results.stats import Histogram
from simulator.studies import calibrate as cal
from tests import ROOT

EXAMPLE = ROOT / "examples/calibration/made_up_reports.toml"
runner = CliRunner()

#: Ten values 0..9, ten battles each: 5% quantile 0, median 4, 95% quantile 9.
EVEN = Histogram(np.arange(10, dtype=np.int64), np.full(10, 10, np.int64))


def prediction(p_attacker: float, winner: str, larger: str, losses=()) -> cal.Prediction:
    p = {"attacker": p_attacker, "defender": 1.0 - p_attacker, "draw": 0.0}
    return cal.Prediction("x", winner, p, 1000, tuple(losses), None, larger)


def test_a_real_figure_is_placed_in_the_models_distribution() -> None:
    inside = cal.place(EVEN, "casualties.attacker.soldier", 4)
    assert (inside.low, inside.median, inside.high) == (0, 4, 9)
    assert inside.pit == pytest.approx((40 + 10 / 2) / 100) and inside.place == "inside"
    assert cal.place(EVEN, "c", 0).place == "inside"  # the band is inclusive
    assert cal.place(EVEN, "c", 9).place == "inside"
    above = cal.place(EVEN, "c", 12)
    assert above.place == "above" and above.pit == 1.0
    high = Histogram(np.arange(5, 10, dtype=np.int64), np.full(5, 20, np.int64))
    below = cal.place(high, "c", 2)
    assert below.place == "below" and below.pit == 0.0


def test_scores_of_a_small_example_computed_by_hand() -> None:
    """Three battles: the model said P(attacker wins) 0.8, 0.3, 0.5; the attacker won the
    first two. By hand: Brier (0.2^2 + 0.7^2 + 0.5^2) / 3 = 0.26; log loss
    -(ln 0.8 + ln 0.3 + ln 0.5) / 3. Base rate 2/3 attacker: Brier (1/9 + 1/9 + 4/9) / 3,
    log loss -(2 ln 2/3 + ln 1/3) / 3. The larger side (attacker, defender, attacker)
    won once in three: it is given 1/3, the smaller 2/3; Brier (4/9 + 1/9 + 1/9) / 3."""
    losses = (
        [cal.place(EVEN, "c", 4)],
        [cal.place(EVEN, "c", 12)],
        [cal.place(Histogram(np.arange(5, 10, dtype=np.int64), np.full(5, 20, np.int64)), "c", 2)],
    )
    rows = [
        prediction(0.8, "attacker", "attacker", losses[0]),
        prediction(0.3, "attacker", "defender", losses[1]),
        prediction(0.5, "defender", "attacker", losses[2]),
    ]
    rows = [cal.Prediction(f"b{i}", *list(vars(r).values())[1:]) for i, r in enumerate(rows)]
    answer = cal.score(rows)
    assert answer.brier == pytest.approx(0.26)
    assert answer.log_loss == pytest.approx(-(math.log(0.8) + math.log(0.3) + math.log(0.5)) / 3)
    base, larger = answer.baselines
    assert base.name == "base rate" and larger.name == "larger army wins"
    assert base.brier == pytest.approx(6 / 27)
    assert base.log_loss == pytest.approx(-(2 * math.log(2 / 3) + math.log(1 / 3)) / 3)
    assert larger.brier == pytest.approx(6 / 27)
    assert larger.log_loss == pytest.approx(-(math.log(1 / 3) + 2 * math.log(2 / 3)) / 3)
    assert (answer.coverage, answer.below, answer.above) == pytest.approx((1 / 3,) * 3)
    assert answer.losses == 3
    assert answer.pit_counts == [1, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    assert [n for n, _, _ in answer.reliability] == [0, 0, 0, 1, 0, 1, 0, 0, 1, 0]
    assert answer.reliability[3][1:] == (0.3, 1.0)
    # Worst predicted first: the real winner had 0.3, then 0.5, then 0.8.
    assert [r.name for r in answer.rows] == ["b1", "b2", "b0"]


def test_a_winner_the_model_never_saw_counts_as_half_a_battle() -> None:
    row = prediction(0.0, "attacker", "even")
    assert row.log_loss == pytest.approx(-math.log(0.5 / 1000))
    assert row.brier == 1.0


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "real.toml"
    path.write_text(body)
    return path


def swordsmen(name: str, winner: str, lost: str) -> str:
    """A [[battles]] entry of 8 swordsmen a side, with the record given."""
    recorded = f"lost = {{ {lost} }}\n" if lost else ""
    return f"""
[[battles]]
name = "{name}"
winner = "{winner}"
{recorded}[battles.scenario]
ruleset = "olympia"
[[battles.scenario.attacker.units]]
men = {{ swordsman = 8 }}
[[battles.scenario.defender.units]]
men = {{ swordsman = 8 }}
"""


SMALL = """
[[battles]]
name = "soldiers against peasants"
winner = "attacker"
lost = { "attacker.soldier" = 2, "defender.peasant" = 12 }
steps = 40
[battles.scenario]
ruleset = "olympia"
[[battles.scenario.attacker.units]]
men = { soldier = 15 }
[[battles.scenario.defender.units]]
men = { peasant = 25 }
""" + "".join(
    swordsmen(name, winner, lost)
    for name, winner, lost in (
        ("even swordsmen", "defender", ""),
        ("a misspelt winner", "atacker", ""),
    )
)
TOO_MANY_LOST = swordsmen("too many lost", "defender", '"attacker.swordsman" = 9')


def test_json_answer_scores_its_rows_and_lists_what_was_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL)
    result = runner.invoke(app, ["calibrate", str(path), "-n", "2000", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    rows = answer["rows"]
    assert answer["battles_scored"] == 2 and len(rows) == 2 and answer["partial"] is False
    expected = sum((r["p"]["attacker"] - (r["winner"] == "attacker")) ** 2 for r in rows) / 2
    assert answer["brier"] == pytest.approx(expected, abs=1e-5)
    places = [x["place"] for r in rows for x in r["lost"]]
    assert answer["coverage"] == pytest.approx(places.count("inside") / len(places), abs=1e-6)
    assert answer["losses_placed"] == 2 and sum(answer["pit_histogram"]) == 2
    soldiers = next(r for r in rows if r["name"] == "soldiers against peasants")
    assert soldiers["steps"]["real"] == 40 and soldiers["larger"] == "defender"
    (skipped,) = answer["skipped"]
    assert skipped["name"] == "a misspelt winner"
    # One line naming the file, the line and the key.
    line = next(i for i, t in enumerate(SMALL.splitlines(), 1) if 'winner = "atacker"' in t)
    assert f"{path}:{line}: battles[2].winner" in skipped["reason"]
    text = runner.invoke(app, ["calibrate", str(path), "-n", "2000"], env={"COLUMNS": "60"})
    assert text.exit_code == 0
    assert "skipped a misspelt winner" in text.stdout and "larger army wins" in text.stdout
    words = " ".join(text.stdout.split())
    assert "soldiers lost by the attacking army: 2 (" in words


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("description = 'none'\n", "battles: is required"),
        (
            "[[battles]]\nscenario = 'nowhere.toml'\nwinner = 'attacker'\n",
            "no battle could be scored",
        ),
        ("batles = []\n", "unknown key 'batles' (did you mean 'battles'?)"),
    ],
)
def test_bad_calibration_files_get_one_line_and_exit_2(
    tmp_path: Path, body: str, expected: str
) -> None:
    result = runner.invoke(app, ["calibrate", str(write(tmp_path, body))])
    assert result.exit_code == 2
    assert expected in " ".join(result.output.split()) and "Traceback" not in result.output


def test_losses_beyond_the_army_refuse_the_file_in_one_line(tmp_path: Path) -> None:
    """More men lost than a side fields is a mistake in the record, not a battle the
    model cannot score: the file is refused, naming file, line and key, and nothing is
    run."""
    body = SMALL + TOO_MANY_LOST
    path = write(tmp_path, body)
    result = runner.invoke(app, ["calibrate", str(path), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    line = next(i for i, t in enumerate(body.splitlines(), 1) if '"attacker.swordsman" = 9' in t)
    said = " ".join(result.output.split())
    assert f"{path}:{line}: battles[3].lost.attacker.swordsman: 9 lost, more than the 8" in said
    assert "Traceback" not in result.output


def test_a_bad_battle_is_skipped_with_its_reason(tmp_path: Path) -> None:
    read = cal.read_calibration(
        write(
            tmp_path,
            SMALL
            + """
[[battles]]
name = "unknown loss"
scenario = "../nowhere.toml"
winner = "atacker"

[[battles]]
name = "bad key"
winner = "attacker"
lost = { "attacker.knigt" = 1 }
[battles.scenario]
ruleset = "olympia"
[[battles.scenario.attacker.units]]
men = { knight = 2 }
[[battles.scenario.defender.units]]
men = { knight = 2 }
[battles.scenario.battle]
terain = "land"
""",
        )
    )
    assert [b.name for b in read.battles] == ["soldiers against peasants", "even swordsmen"]
    reasons = {s.name: s.reason for s in read.skipped}
    assert "no such file" in reasons["unknown loss"]
    # An inline scenario's errors name the key from the file's top.
    assert "battles[4].scenario.battle.terain: unknown key 'terain'" in reasons["bad key"]


def test_the_example_file_follows_its_schema() -> None:
    data = tomllib.loads(EXAMPLE.read_text())
    jsonschema.Draft7Validator(cal.schema()).validate(data)
    read = cal.read_calibration(EXAMPLE)
    assert not read.skipped and len(read.battles) == 6
    result = runner.invoke(app, ["schema", "--calibration"])
    assert result.exit_code == 0 and json.loads(result.stdout) == cal.schema()


def test_the_figure_has_the_reliability_diagram_and_the_pit_histogram(tmp_path: Path) -> None:
    figure = tmp_path / "calibration.svg"
    path = write(tmp_path, SMALL)
    result = runner.invoke(app, ["calibrate", str(path), "-n", "500", "-o", str(figure)])
    assert result.exit_code == 0, result.output
    drawn = figure.read_text()
    assert "share the attacker won" in drawn and "recorded losses" in drawn


def test_a_real_battle_with_unknowns_is_scored_over_them(tmp_path: Path) -> None:
    """A report that does not print the defender's break point or his exact numbers:
    the battle integrates over both; losses are bounded by the most it may field."""
    body = """
[[battles]]
name = "unknown garrison"
winner = "defender"
lost = { "defender.pikeman" = 33 }
[battles.scenario]
ruleset = "olympia"
[[battles.scenario.attacker.units]]
men = { knight = 10, soldier = 20 }
[battles.scenario.defender]
break_point = "0..50"
[[battles.scenario.defender.units]]
men = { pikeman = "30..40" }
"""
    result = runner.invoke(app, ["calibrate", str(write(tmp_path, body)), "-n", "3000", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (row,) = answer["rows"]
    assert row["lost"][0]["q95"] <= 40 and row["lost"][0]["real"] == 33
    beyond = body.replace("= 33", "= 41")
    result = runner.invoke(app, ["calibrate", str(write(tmp_path, beyond)), "--json"])
    assert result.exit_code == 2
    assert "41 lost, more than the 40 the scenario fields" in " ".join(result.output.split())


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_the_text_answer_fits_the_terminal_and_speaks_words(tmp_path: Path, columns: int) -> None:
    from tests.test_human_output import raw_identifiers, too_wide

    body = SMALL[: SMALL.index('[[battles]]\nname = "a misspelt winner"')]
    path = write(tmp_path, body)
    result = runner.invoke(
        app, ["calibrate", str(path), "-n", "500"], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.output
    assert too_wide(result.stdout, columns) == []
    assert raw_identifiers(result.stdout, "olympia") == []
