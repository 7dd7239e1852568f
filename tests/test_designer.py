"""The designer's questions: ``worth`` (what is a unit worth) and ``sensitivity`` (which
number matters), for every ruleset, from the command line and from Python."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.studies.compare import compare
from simulator.studies.machinery.armies import reinforced
from tests import ROOT
from tests.tiers import slow_for

SCENARIOS = ROOT / "scenarios"
runner = CliRunner()

#: A scenario of each ruleset, and a worth question that applies to it.
WORTH = {
    "olympia": ("olympia/knights_vs_pikemen.toml", "1 knight", "soldier", 12),
    "age_of_gods": ("age_of_gods/pikemen_vs_knights.toml", "1 knight", "soldier", 12),
    "confrontation": ("confrontation/open_field.toml", "1 veteran", "trooper", 2),
    "skirmish": ("skirmish/cavalry_charge.toml", "1 cavalry", "swordsman", 5),
}
SENSITIVITY = {
    "olympia": "olympia/knights_vs_pikemen.toml",
    "age_of_gods": "age_of_gods/pikemen_vs_knights.toml",
    "blocks": "blocks/field_battle.toml",
    "confrontation": "confrontation/open_field.toml",
    "skirmish": "skirmish/cavalry_charge.toml",
}
SMALL = ["--battles", "300", "--max-battles", "1200"]


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("ruleset", sorted(WORTH))
def test_worth_answers_for_every_ruleset_that_has_unit_types(ruleset):
    path, add, in_, most = WORTH[ruleset]
    run = invoke("worth", SCENARIOS / path, "--add", add, "--in", in_, "--max", most, *SMALL)
    assert run.exit_code == 0, run.output
    assert f"{add} is worth" in " ".join(run.output.split())
    as_json = invoke(
        "worth", SCENARIOS / path, "--add", add, "--in", in_, "--max", most, *SMALL, "--json"
    )
    assert as_json.exit_code == 0, as_json.output
    answer = json.loads(as_json.stdout)
    assert answer["ruleset"] == ruleset and answer["battles"] > 0
    assert {"p", "low", "high"} <= set(answer["with_x"])
    probes = {p["n"]: p for p in answer["probes"]}
    if answer["resolved"]:
        n = answer["n"]
        assert probes[n]["verdict"] == "reaches"
        assert n == 0 or probes[n - 1]["verdict"] == "below"
    elif answer["range"] is not None:
        low, high = answer["range"]
        assert low < (most if high is None else high)
    for probe in probes.values():
        assert probe["low"] <= probe["p"] <= probe["high"]
        assert probe["diff_low"] <= probe["diff"] <= probe["diff_high"]


def test_worth_does_not_apply_to_blocks():
    run = invoke("worth", SCENARIOS / SENSITIVITY["blocks"], "--add", "1 knight", "--in", "soldier")
    assert run.exit_code == 2
    assert "worth does not apply to blocks" in run.output and "Traceback" not in run.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--add", "1 knigt", "--in", "soldier"],
            "unknown unit type 'knigt' (did you mean 'knight'?)",
        ),
        (
            ["--add", "1 knight", "--in", "soldjer"],
            "--in: unknown unit type 'soldjer' (did you mean",
        ),
        (["--add", "knight", "--in", "soldier"], "--add 'knight': expected a count"),
        (["--add", "0 knight", "--in", "soldier"], "expected a count of at least 1"),
        (
            ["--add", "1 knight", "--in", "soldier", "--side", "left"],
            "--side left: expected attacker or defender",
        ),
        (["--add", "1 knight", "--in", "soldier", "--confidence", "1.5"], "--confidence 1.5"),
        (["--add", "1 knight", "--in", "soldier", "-o", "probes.gif"], "unknown image type '.gif'"),
    ],
)
def test_worth_bad_input_is_one_line_and_exit_2(args, expected):
    run = invoke("worth", SCENARIOS / WORTH["olympia"][0], *args)
    assert run.exit_code == 2, run.output
    assert expected in " ".join(run.output.split())
    assert "Traceback" not in run.output


def test_worth_draws_its_probes(tmp_path):
    path, add, in_, most = WORTH["olympia"]
    picture = tmp_path / "probes.png"
    run = invoke(
        "worth", SCENARIOS / path, "--add", add, "--in", in_, "--max", most, *SMALL, "-o", picture
    )
    assert run.exit_code == 0, run.output
    assert "plot of the probes written" in " ".join(run.output.split())
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_worth_beyond_a_stack_s_room_is_refused():
    path = SCENARIOS / WORTH["skirmish"][0]
    run = invoke("worth", path, "--add", "6 cavalry", "--in", "swordsman")
    assert run.exit_code == 2
    assert "room for 5 more" in run.output
    capped = invoke("worth", path, "--add", "1 cavalry", "--in", "swordsman", "--max", "9", *SMALL)
    assert capped.exit_code == 0
    assert "--max 9 lowered to 5" in " ".join(capped.output.split())


def test_worth_says_when_more_never_reaches():
    # Pikemen are worth little to the attacker against pikemen: two of them never match
    # ten knights, and the answer says so (surely below at --max).
    run = invoke(
        "worth",
        SCENARIOS / WORTH["olympia"][0],
        "--add",
        "10 knight",
        "--in",
        "peasant",
        "--max",
        "2",
        *SMALL,
        "--json",
    )
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    assert answer["range"] is None and answer["n"] is None
    assert "is worth more than 2 peasants" in answer["answer"]


def test_worth_of_a_type_in_itself_is_its_count():
    scenario = simulator.load_scenario(SCENARIOS / WORTH["olympia"][0])
    answer = simulator.worth(
        scenario, add="2 knights", in_="knight", battles=200, max_battles=400, max_n=6
    )
    assert answer.n == 2
    frame = answer.frame
    assert {"n", "p", "low", "high", "diff", "seed", "battles"} <= set(frame.columns)
    assert (frame["seed"] == scenario.seed).all()


def small_olympia(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(
        'ruleset = "olympia"\nname = "small"\nseed = 7\n'
        "[[attacker.units]]\nmen = { soldier = 2 }\n"
        "[[defender.units]]\nmen = { soldier = 6 }\n"
    )
    return path


def test_worth_matches_the_exact_solver(tmp_path):
    """In a battle small enough to solve, the exact worth (the exact win chance with X and
    with n = 0, 1, 2, ... men of Y added) is what the command answers."""
    path = small_olympia(tmp_path)
    scenario = simulator.load_scenario(path)

    def exact_p(count: int, kind: str) -> float:
        return simulator.exact(reinforced(scenario, "attacker", kind, count, "x")).win["attacker"]

    with_knight = exact_p(1, "knight")
    chances = [exact_p(n, "soldier") for n in range(9)]
    worth = next(n for n, p in enumerate(chances) if p >= with_knight)
    # A case that is not within noise: both neighbours of the answer are clearly apart.
    assert min(with_knight - chances[worth - 1], chances[worth] - with_knight) > 0.03
    run = invoke(
        "worth",
        path,
        "--add",
        "1 knight",
        "--in",
        "soldier",
        "--max",
        "8",
        "--confidence",
        "0.999",
        "--battles",
        "4000",
        "--max-battles",
        "128000",
        "--json",
    )
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)
    assert answer["resolved"] and answer["n"] == worth


# Blocks', confrontation's and age_of_gods' share is the slow tier's (each 5 to 6 s in a
# loaded first-tier run, under 3 s quiet: a tornado of every parameter); olympia's and
# skirmish's keep the first tier's check.
@pytest.mark.parametrize(
    "ruleset",
    slow_for(sorted(SENSITIVITY), {"blocks", "confrontation", "age_of_gods"}),
)
def test_sensitivity_for_every_ruleset(ruleset, tmp_path):
    path = SCENARIOS / SENSITIVITY[ruleset]
    picture = tmp_path / "tornado.png"
    run = invoke("sensitivity", path, "--battles", "200", "-o", picture)
    assert run.exit_code == 0, run.output
    said = " ".join(run.output.split())  # the line wraps where the folder's length puts it
    assert "tornado plot written" in said and "change" in said
    assert picture.stat().st_size > 10_000
    as_json = invoke("sensitivity", path, "--battles", "200", "--json")
    assert as_json.exit_code == 0
    result = json.loads(as_json.stdout)
    assert result["ruleset"] == ruleset and result["changes"]
    # Sorted by effect: each knob's larger |change| never grows down the list.
    effects: dict[str, float] = {}
    for change in result["changes"]:
        if change["diff"] is not None:
            effects[change["knob"]] = max(effects.get(change["knob"], 0.0), abs(change["diff"]))
        assert change["diff"] is not None or change["note"]
    ordered = list(effects.values())
    assert ordered == sorted(ordered, reverse=True)
    assert {"count", "rating"} == {c["kind"] for c in result["changes"]}


def test_sensitivity_changes_are_paired_runs_of_the_changed_scenarios():
    """Each change's P is that of the changed scenario on the same seed and battles, and
    the difference is taken against the scenario as it stands."""
    scenario = simulator.load_scenario(SCENARIOS / SENSITIVITY["olympia"])
    result = simulator.sensitivity(scenario, 400, 5, rating_step=0.1)
    frame = result.frame
    row = frame[(frame.knob == "knight attack") & (frame.direction == "up")].iloc[0]
    assert (row["from"], row["to"]) == (45, 50)  # 10% of 45 rounded half up: 5
    ruleset = simulator.rulesets.get("olympia")
    knob = next(k for k in ruleset.knobs(scenario) if k.label == "knight attack")
    changed = simulator.from_data(
        ruleset.with_knob(scenario, knob, 50), simulator.errors.Source("t")
    )
    paired = compare(scenario, changed, 400, 5).win("attacker")
    assert (row["p"], row["diff"]) == (paired.b, paired.difference)
    assert result.base == paired.a
    count = frame[(frame.knob == "attacker knight") & (frame.direction == "down")].iloc[0]
    assert (count["from"], count["to"]) == (10, 9)


def test_sensitivity_steps_are_configurable():
    scenario = simulator.load_scenario(SCENARIOS / SENSITIVITY["olympia"])
    frame = simulator.sensitivity(scenario, 100, count_step=3, rating_step=0.5).frame
    knight = frame[frame.knob == "attacker knight"].set_index("direction")
    assert (knight.loc["down", "to"], knight.loc["up", "to"]) == (7, 13)
    attack = frame[frame.knob == "knight attack"].set_index("direction")
    assert (attack.loc["down", "to"], attack.loc["up", "to"]) == (22, 68)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--side", "both"], "--side both: expected attacker or defender"),
        (["--rating-step", "0"], "--rating-step 0.0: expected a fraction"),
        (["--count-step", "0"], "--count-step 0: expected at least 1"),
        (["-o", "tornado.gif"], "unknown image type '.gif'"),
    ],
)
def test_sensitivity_bad_input_is_one_line_and_exit_2(args, expected):
    run = invoke("sensitivity", SCENARIOS / SENSITIVITY["olympia"], "--battles", "50", *args)
    assert run.exit_code == 2, run.output
    assert expected in " ".join(run.output.split())


def test_counts_are_added_where_each_ruleset_puts_reinforcements():
    confrontation = simulator.load_scenario(SCENARIOS / WORTH["confrontation"][0])
    added = reinforced(confrontation, "attacker", "veteran", 2, "+2")
    # The first stack is full (three units): both join the next one.
    stacks = added.data["attacker"]["stacks"]
    assert [u["type"] for u in stacks[1]["units"]] == ["artillery", "veteran", "veteran"]
    skirmish = simulator.load_scenario(SCENARIOS / WORTH["skirmish"][0])
    fewer = reinforced(skirmish, "defender", "swordsman", -1, "-1")
    assert fewer.data["stacks"][1]["units"] == ["3 swordsman"]
    olympia = simulator.load_scenario(SCENARIOS / WORTH["olympia"][0])
    more = reinforced(olympia, "attacker", "archer", 4, "+4")
    assert more.data["attacker"]["units"][0]["men"] == {"knight": 10, "soldier": 20, "archer": 4}
