"""Ranges and distributions for what a player does not know (docs/unknowns.md): a range
of one is the fixed value exactly; the integrated answer is the weighted mixture of the
fixed-input answers; the draws follow their weights and the randomness contract; bad
ranges get one line and exit status 2; the one-line syntax; no exact answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.rulesets.base import Prepared
from simulator.scenario.scenario import prepare, unknowns_of
from simulator.scenario.unknowns import (
    ABSENT,
    BLOCK,
    Mixture,
    Unknown,
    _Cuts,
    parse_unknown,
    substituted,
)
from tests import ROOT
from tests.stats_tests import interval_contains, reproducibility
from tests.test_human_output import raw_identifiers, too_wide

runner = CliRunner()


def knights(pikemen: Any, break_point: Any = 50, **battle: Any) -> simulator.Scenario:
    data = {
        "ruleset": "olympia",
        "name": "knights",
        "battle": battle,
        "attacker": {"units": [{"men": {"knight": 10, "soldier": 20}}]},
        "defender": {"break_point": break_point, "units": [{"men": {"pikeman": pikemen}}]},
    }
    return simulator.from_data(data, Source("test"))


def rows(scenario: simulator.Scenario, battles: int, seed: int, **options: Any) -> dict:
    kept = simulator.simulate(scenario, battles, seed=seed, keep_battles=True, **options).rows
    assert kept is not None
    return kept


def test_a_range_of_one_is_the_fixed_value_exactly() -> None:
    fixed = rows(knights(40), 3_000, seed=5)
    for written in ("40..40", "40:1", "40:100%", {"values": [40]}):
        same = rows(knights(written), 3_000, seed=5)
        assert unknowns_of(knights(written)) == ()
        assert set(same) == set(fixed)
        assert all(np.array_equal(same[c], fixed[c]) for c in fixed), written


def test_the_integrated_answer_is_the_weighted_mixture_of_fixed_answers() -> None:
    """35 pikemen with weight 1, 45 with weight 3: P(attacker wins) of the mixture is
    P(35) / 4 + 3 P(45) / 4, each estimated by its own fixed run; the difference is
    inside its 99.9% normal interval. The table given each value agrees with its fixed
    run too, from the same battles."""
    n = 40_000
    mixed = simulator.simulate(knights("35:1, 45:3"), n, seed=11)
    p35 = simulator.simulate(knights(35), n, seed=12).win()[0]
    p45 = simulator.simulate(knights(45), n, seed=13).win()[0]
    p = mixed.win()[0]
    expected = p35 / 4 + 3 * p45 / 4
    variance = p * (1 - p) / n + (p35 * (1 - p35) / 16 + 9 * p45 * (1 - p45) / 16) / n
    z = stats.norm.ppf(0.9995)
    assert abs(p - expected) < z * variance**0.5, (p, expected)
    (effect,) = mixed.unknown_effects()
    by_value = {row["value"]: row for row in effect["values"]}
    for value, fixed in ((35, p35), (45, p45)):
        row = by_value[value]
        successes = round(row["attacker"]["p"] * row["battles"])
        assert interval_contains(successes, row["battles"], fixed), (value, row, fixed)
    assert abs(by_value[35]["battles"] / n - 0.25) < 0.01


def test_draws_follow_their_weights() -> None:
    """Each value's share of 200,000 draws against its weight, by a chi-square test at
    the 0.001 level; the chance of rain in 30% of them, and left out in the rest."""
    scenario = knights("30..39", weather=["rain:30%"])
    mixture = scenario.model
    weather, pikemen = (u.path for u in mixture.unknowns)
    assert (weather, pikemen) == ("battle.weather[0]", "defender.units[0].men.pikeman")
    drawn = mixture.draws(7, 0, 200_000)
    counts = np.bincount(drawn[:, 1], minlength=10)
    assert len(counts) == 10 and stats.chisquare(counts).pvalue > 0.001
    rain = drawn[:, 0] == 0
    assert interval_contains(int(rain.sum()), len(rain), 0.3)
    assert mixture.unknowns[0].values == ("rain", ABSENT)
    # The inputs are a function of (seed, battle) only.
    assert np.array_equal(mixture.draws(7, 150_000, 10), drawn[150_000:150_010])


@pytest.mark.parametrize("weights", [[1] * 51, [1, 2], [1, 1e-12, 3], list(range(1, 300))])
def test_a_draws_value_looked_up_by_its_bucket_is_the_searched_one(weights: list[float]) -> None:
    """A draw's value by its top bits (_Cuts) is the number of cut points at or below
    it: at, just under and just over every cut point, at both ends and at random."""
    cuts = Unknown("x", "x", tuple(range(len(weights))), tuple(weights), True).thresholds()
    draws = np.concatenate(
        [
            np.random.default_rng(3).integers(0, 1 << 53, 50_000, dtype=np.uint64),
            cuts - np.uint64(1),
            cuts,
            cuts + np.uint64(1),
            np.array([0, (1 << 53) - 1], np.uint64),
        ]
    )
    expected = np.searchsorted(cuts, draws, side="right")
    assert np.array_equal(_Cuts.of(cuts).value_index(draws), expected)


def test_each_battle_is_its_combinations_battle_of_the_contract() -> None:
    """Battle j of the mixture, the r-th of its block to draw combination c, is battle
    (block x BLOCK + r) of c's own scenario, validated on its own, on c's seed: what the
    grouped calls and the one scatter per column must give back in battle order."""
    scenario = knights("35..37", "20..21")
    mixture = scenario.model
    first, count = BLOCK - 200, 500  # across a block's end
    got = prepare(scenario).run(11, first, count)

    def alone(c: int) -> Prepared:
        values = mixture.values_of(c)
        pikemen = values["defender.units[0].men.pikeman"]
        own = prepare(knights(pikemen, values["defender.break_point"]))
        own.use_kernel(mixture.prepared_of(c).kernel)
        return own

    assert battles_of_their_combinations(got, mixture, 11, first, alone) == count


def battles_of_their_combinations(
    got: dict[str, np.ndarray], mixture: Mixture, seed: int, first: int, alone: Any
) -> int:
    """Check that ``got``, the rows of battles ``first ..`` of a mixture (two blocks at
    most), are each battle's combination's own: battle j, the r-th of its block to draw
    combination c, is battle block x BLOCK + r of ``alone(c)`` (c's prepared scenario) on
    c's seed, every column of it (a column only other combinations have: 0). Returns
    the battles checked."""
    count = len(got["winner"])
    combos = mixture.draws(seed, 0, 2 * BLOCK) @ mixture.strides
    seeds = mixture.combination_seeds(seed, np.arange(mixture.combinations))
    checked = 0
    for c in range(mixture.combinations):
        own = None
        for block in (0, 1):
            mine = np.flatnonzero(combos[block * BLOCK : (block + 1) * BLOCK] == c)
            here = mine[(mine + block * BLOCK >= first) & (mine + block * BLOCK < first + count)]
            if not len(here):
                continue
            own = own or alone(c)
            r = int(np.searchsorted(mine, here[0]))
            want = own.run(int(seeds[c]), block * BLOCK + r, len(here))
            at = here + block * BLOCK - first
            for column, values in want.items():
                if column in got:
                    assert np.array_equal(got[column][at], values), (c, block, column)
            others = set(got) - set(want) - {n for n in got if n.startswith("unknown.")}
            for column in others:
                assert not got[column][at].any(), (c, column)
            checked += len(here)
    return checked


def test_a_combination_is_validated_from_data_of_its_own() -> None:
    """Each combination's data is copied along the paths it changes: the scenario's own
    data and the other combinations' stay as they were."""
    data = {"defender": {"units": [{"men": {"pikeman": "30..40"}}]}, "battle": {"w": [1]}}
    one = substituted(data, {"defender.units[0].men.pikeman": 31, "battle.w[0]": ABSENT})
    two = substituted(data, {"defender.units[0].men.pikeman": 32})
    assert data == {"defender": {"units": [{"men": {"pikeman": "30..40"}}]}, "battle": {"w": [1]}}
    assert one == {"defender": {"units": [{"men": {"pikeman": 31}}]}, "battle": {"w": []}}
    assert two == {"defender": {"units": [{"men": {"pikeman": 32}}]}, "battle": {"w": [1]}}


def test_same_battles_on_any_threads_chunks_and_blocks() -> None:
    scenario = knights("35..45", "20..40")
    assert reproducibility(scenario, battles=3_000, seed=3, chunks=(1_000, 77)) == []
    # Across a block's end: one call, or the same battles in pieces.
    prepared = prepare(scenario)
    whole = prepared.run(9, BLOCK - 300, 700)
    pieces = [
        prepared.run(9, BLOCK - 300 + a, b - a) for a, b in ((0, 299), (299, 301), (301, 700))
    ]
    for column, values in whole.items():
        assert np.array_equal(values, np.concatenate([p[column] for p in pieces])), column


# Slow tier (docs/testing.md): 3.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_json_and_text_say_what_the_unknowns_do(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'ruleset = "olympia"\n[battle]\nweather = ["rain:50%"]\n'
        '[attacker]\nbreak_point = "0..50"\n'
        "[[attacker.units]]\nmen = { soldier = 20, archer = 10 }\n"
        '[defender]\n[[defender.units]]\nmen = { pikeman = "25..35" }\n'
    )
    result = runner.invoke(app, ["run", str(path), "-n", "20000", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    keys = [e["key"] for e in answer["unknowns"]]
    assert sorted(keys) == sorted(
        ["battle.weather[0]", "attacker.break_point", "defender.units[0].men.pikeman"]
    )
    spreads = [e["spread"] for e in answer["unknowns"]]
    assert spreads == sorted(spreads, reverse=True)
    assert not any(k.startswith("unknown.") for k in answer["extras"])
    weather = next(e for e in answer["unknowns"] if e["key"] == "battle.weather[0]")
    assert [v["value"] for v in weather["values"]] == ["rain", None]
    text = runner.invoke(app, ["run", str(path), "-n", "5000"], env={"COLUMNS": "60"})
    words = " ".join(text.stdout.split())
    assert text.exit_code == 0 and "What the unknowns do (most first)" in words
    assert "pikemen in the defending army" in words and "25..35 pikemen" in words
    for columns in (60, 80, 200):
        shown = runner.invoke(app, ["run", str(path), "-n", "2000"], env={"COLUMNS": str(columns)})
        assert too_wide(shown.stdout, columns) == []
        assert raw_identifiers(shown.stdout, "olympia") == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"30..20"', "range '30..20': its low end is above its high end"),
        ('"30:-1, 40:2"', "a weight is negative"),
        ('"30:0, 40:0"', "the weights sum to zero"),
        ('"30:60%, 40:50%"', "the chances sum to 110%, over 100%"),
        ("{ values = [30, 40], weights = [1] }", "expected 2 weights"),
    ],
)
def test_bad_ranges_get_one_line_naming_file_line_and_key(
    tmp_path: Path, value: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        f'ruleset = "olympia"\n[[attacker.units]]\nmen = {{ knight = 5 }}\n'
        f"[[defender.units]]\nmen = {{ pikeman = {value} }}\n"
    )
    result = runner.invoke(app, ["run", str(path), "-n", "100"])
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert f"{path}:5: defender.units[0].men.pikeman: " in line and expected in line
    assert "Traceback" not in result.output


def test_a_range_on_a_key_that_cannot_vary_names_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'ruleset = "olympia"\n[battle]\nterrain = "1..3"\n'
        "[[attacker.units]]\nmen = { knight = 5 }\n[[defender.units]]\nmen = { pikeman = 9 }\n"
    )
    result = runner.invoke(app, ["run", str(path), "-n", "100"])
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert f"{path}:3: battle.terrain:" in line and "(of '1..3')" in line


def test_parse_unknown_reads_each_form() -> None:
    src = Source("t")
    assert parse_unknown("7", "k", src) is None and parse_unknown(7, "k", src) is None
    assert parse_unknown("12..12", "k", src) == 12
    spread = parse_unknown("3..5", "k", src)
    assert spread.values == (3, 4, 5) and spread.is_range
    weighted = parse_unknown("3:1, 5:2.5, 7:1", "k", src)
    assert weighted.values == (3, 5, 7) and weighted.weights == (1.0, 2.5, 1.0)
    chance = parse_unknown("rain:30%", "k", src)
    assert chance.values == ("rain", ABSENT) and chance.weights == (30.0, 70.0)
    never = knights(40, weather=["rain:0%"])
    assert unknowns_of(never) == () and never.model.weather == ()
    with pytest.raises(BattleOddsError, match="give every weight in % or none"):
        parse_unknown("3:10%, 5:1", "k", src)


def test_one_line_armies_take_ranges_of_counts() -> None:
    result = runner.invoke(
        app,
        [
            "odds",
            "--attacker",
            "noble, 20..30 soldier",
            "--defender",
            "noble, 25 soldier",
            "-n",
            "4000",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    (effect,) = json.loads(result.stdout)["unknowns"]
    assert [v["value"] for v in effect["values"]] == list(range(20, 31))
    assert effect["label"].startswith("soldiers in the attacking army")
    # More soldiers win more often: the first value against the last.
    first, last = effect["values"][0]["attacker"], effect["values"][-1]["attacker"]
    assert first["high"] < last["low"]


def small(knights: Any, break_point: Any) -> simulator.Scenario:
    data = {
        "ruleset": "olympia",
        "attacker": {"units": [{"men": {"knight": knights}}]},
        "defender": {"break_point": break_point, "units": [{"men": {"pikeman": 8}}]},
    }
    return simulator.from_data(data, Source("test"))


def test_the_exact_answer_of_ranges_is_the_mixture_of_exact_answers() -> None:
    """2..4 knights (a third each) against 8 pikemen breaking at 25% or 50% (alike): the
    exact answer is the mean of the six fixed answers; the run's interval holds it."""
    mixed = simulator.exact(small("2..4", "25:1, 50:1"))
    parts = [simulator.exact(small(k, b)) for k in (2, 3, 4) for b in (25, 50)]
    for outcome, p in mixed.win.items():
        assert p == pytest.approx(sum(part.win[outcome] for part in parts) / 6, abs=1e-12)
    assert mixed.expected_steps == pytest.approx(sum(p.expected_steps for p in parts) / 6)
    run = simulator.simulate(small("2..4", "25:1, 50:1"), 100_000, seed=4)
    assert interval_contains(int(run.tally.wins[0]), run.n, mixed.win["attacker"])


def test_too_many_combinations_for_an_exact_answer_are_refused() -> None:
    result = runner.invoke(
        app,
        ["odds", "--attacker", "noble, 1..80 knight", "--defender", "noble, 8 pikeman", "--exact"],
    )
    assert result.exit_code == 2
    assert "no exact answer for 80 combinations of inputs" in " ".join(result.output.split())


def test_the_page_takes_ranges_in_its_army_fields() -> None:
    """The page reads its army fields with the one-line parser: a range is an unknown
    there too, and the stream's last answer is the run's own."""
    pytest.importorskip("starlette")
    from simulator.running.plan import RunPlan
    from simulator.running.runner import run_chunks
    from simulator.running.stream import stream_battles
    from simulator.serve.question import Question

    asked = {"attacker": "noble, 10..20 soldier, 4 archer@1", "defender": "noble, 14 pikeman"}
    scenario = Question.of(asked).scenario
    assert [u.written for u in unknowns_of(scenario)] == ["10..20"]
    plan = RunPlan.of(scenario, 6_000, 11)
    last = list(stream_battles(scenario, plan, every=0.0))[-1].result
    assert last.tally.to_dict() == run_chunks(scenario, plan).tally.to_dict()


def test_a_bad_range_in_a_one_line_army_names_the_option() -> None:
    result = runner.invoke(
        app, ["odds", "--attacker", "noble, 30..20 soldier", "--defender", "noble, 5 soldier"]
    )
    assert result.exit_code == 2
    assert "--attacker: unit 1, item 1, count: range '30..20': its low end is above" in (
        " ".join(result.output.split())
    )


def test_the_scenario_schema_takes_unknowns_and_refuses_nonsense() -> None:
    """Editors checking a file against ``battle-odds schema`` accept what the reader
    accepts: the worked example's range, table of weights and chance of rain."""
    import jsonschema
    import tomllib

    from simulator.rulesets import keys

    example = ROOT / "examples/unknowns/scouted_pike_wall.toml"
    data = tomllib.loads(example.read_text())
    check = jsonschema.Draft7Validator(keys.schema("olympia"))
    check.validate(data)
    data["defender"]["units"][0]["men"]["pikeman"] = "thirty"
    assert not check.is_valid(data)


def test_sensitivity_refuses_ranges_in_one_line() -> None:
    example = str(ROOT / "examples/unknowns/scouted_pike_wall.toml")
    result = runner.invoke(app, ["sensitivity", example, "--battles", "100"])
    assert result.exit_code == 2
    assert "sensitivity turns numbers one step and this scenario has ranges" in (
        " ".join(result.output.split())
    )
