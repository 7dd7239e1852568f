"""age_of_gods: the source text's figures, exact small battles, the pikeman rule,
the kernel against the reference, reproducibility, scenarios and bad input."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
import simulator.errors
from kernels import age_of_gods as k
from kernels.olympia import layout as ol
from simulator.cli import app
from simulator.rulesets.age_of_gods.model import SIDES
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared
from tests import ROOT
from tests.reference import age_of_gods as reference
from tests.reference.agreement import check_case
from tests.reference.cases import DRAGON, Case, cases_of
from tests.reference.cases import age_of_gods_custom as custom
from tests.stats_tests import (
    interval_contains,
    reproducibility,
    same_distribution,
)

RULESET = "age_of_gods"
SCENARIOS = sorted((ROOT / "scenarios" / RULESET).glob("*.toml"))
runner = CliRunner()


def battle(attacker: str, defender: str, **options: object) -> simulator.Scenario:
    return simulator.inline_scenario(RULESET, attacker, defender, **options)


def rows_of(scenario: simulator.Scenario, battles: int, seed: int) -> dict[str, np.ndarray]:
    rows = simulator.simulate(scenario, battles, seed=seed).rows
    assert rows is not None
    return rows


def assert_probability(hits: np.ndarray, p: float) -> None:
    """``hits`` (0/1 per battle) agree with probability ``p`` at the 99.9% level."""
    assert interval_contains(int(hits.sum()), len(hits), p), (hits.mean(), p)


# --- the source text's figures ------------------------------------------------------


def start_and_threshold(army: str) -> tuple[int, int]:
    sides = AgeOfGodsPrepared(battle(army, "noble").model).arrays.sides
    return int(sides[0, ol.S_START]), int(sides[0, ol.S_START] * sides[0, ol.S_BREAK] // 100)


def test_source_text_value_and_break_point() -> None:
    # "a noble plus two pikemen has an offensive value of (80+80) + (5+20) + (5+20) = 210
    # with a break point of 105"; knights are 90/90 in this table.
    assert start_and_threshold("noble, 2 pikeman") == (210, 105)
    assert start_and_threshold("noble, 2 knight") == (520, 260)


def test_noble_with_two_pikemen_fights_on_and_with_two_knights_does_not() -> None:
    for army, column, fights_on in (
        ("noble, 2 pikeman", "pikeman", True),
        ("noble, 2 knight", "knight", False),
    ):
        rows = rows_of(battle(army, "noble, 6 lt_foot"), 20_000, seed=3)
        dead = rows[f"casualties.attacker.{column}"] == 2
        noble_out = rows["nobles_wounded.attacker"] + rows["nobles_killed.attacker"] > 0
        lost = rows["winner"] == 1
        assert dead.any()
        if fights_on:  # 210 - 50 = 160 > 105: only the noble's fall loses the battle
            assert np.all(noble_out[lost])
            assert np.any(dead & (rows["winner"] == 0))
        else:  # 520 - 360 = 160 <= 260: losing both knights loses at once (or draws,
            # when the enemy breaks in the same phase)
            assert np.all(rows["winner"][dead] != 0) and np.any(lost[dead])


# --- exact small battles -------------------------------------------------------------


def test_missile_cap_is_own_defenders_and_second_hits_are_wasted() -> None:
    # Defender: two soldiers in front, their noble shielded by them (2 defenders), ten
    # archers behind: the volley makes 2 strikes at the lone attacking noble (35
    # against 80); one hit ends it.
    scenario = battle("noble", "noble, 2 soldier, 10 archer@1")
    rows = rows_of(scenario, 20_000, seed=7)
    assert_probability(rows["decided_in.volley"], 1 - (80 / 115) ** 2)
    assert (rows["nobles_wounded.attacker"] + rows["nobles_killed.attacker"]).max() == 1


def test_rain_grounds_archers_and_wind_halves_missiles() -> None:
    rain = rows_of(battle("noble", "noble, 2 soldier, 10 archer@1", weather="rain"), 5_000, 8)
    assert rain["decided_in.volley"].sum() == 0
    wind = rows_of(battle("noble", "noble, 2 soldier, 10 archer@1", weather="wind"), 20_000, 8)
    assert_probability(wind["decided_in.volley"], 1 - (80 / 97) ** 2)


def test_melee_cap_is_four_strikes_per_enemy_front_man() -> None:
    # 21 attackers against one noble: 4 of them strike in round 1, drawn without
    # replacement; the noble (80) is hit by the attacking noble with 1/2, by a soldier
    # with 5/85. The attacker (360, threshold 180) cannot break in round 1.
    rows = rows_of(battle("noble, 20 soldier", "noble"), 20_000, seed=9)
    miss = 80 / 85
    survives = 4 / 21 * 0.5 * miss**3 + 17 / 21 * miss**4
    assert_probability(rows["steps"] == 1, 1 - survives)


@pytest.mark.parametrize(
    ("terrain", "win", "lose"),
    [("land", 1 / 3, 1 / 3), ("mountain", 1 / 7, 4 / 7), ("forest", 4 / 19, 9 / 19)],
)
def test_noble_against_noble_simultaneous_melee_and_terrain(
    terrain: str, win: float, lose: float
) -> None:
    # Each melee phase both nobles strike once; both hit is a draw. With the defender's
    # multiplier m, a = 1 / (1 + m) and d = m / (1 + m); the attacker wins with
    # a (1 - d) / (1 - (1 - a)(1 - d)).
    rows = rows_of(battle("noble", "noble", terrain=terrain), 20_000, seed=10)
    assert_probability(rows["winner"] == 0, win)
    assert_probability(rows["winner"] == 1, lose)
    assert np.all(rows["decided_in.melee"] == 1)


def test_identical_front_line_armies_are_symmetric() -> None:
    rows = rows_of(
        battle("noble, 10 soldier, 3 knight", "noble, 10 soldier, 3 knight"), 40_000, seed=11
    )
    a, d = int((rows["winner"] == 0).sum()), int((rows["winner"] == 1).sum())
    assert (rows["winner"] == 2).any()  # simultaneous breaks are draws
    assert stats.binomtest(a, a + d, 0.5).pvalue > 0.001


def test_special_attack_strikes_its_targets_in_the_special_phase() -> None:
    # A dragon with no attack of its own breathes on 3 targets (60 against 80); the
    # lone defending noble leaves at the first hit, in round 1's special phase.
    fire = {"name": "dragonfire", "strength": 60, "targets": 3}
    scenario = custom(
        [("dragon", 1, 0)], [], {"dragon": {"attack": 0, "defense": 50, "special": fire}}
    )
    rows = rows_of(scenario, 20_000, seed=12)
    assert_probability(
        (rows["steps"] == 1) & (rows["decided_in.special"] == 1), 1 - (80 / 140) ** 3
    )
    assert "decided_in.stalemate" in rows  # a man with no attack can stall a round


def test_control_limits_field_the_strongest_men() -> None:
    scenario = battle("noble, 30 soldier, 4 knight", "noble, 50 peasant", control_limits="true")
    prepared = AgeOfGodsPrepared(scenario.model)
    # 4 knights and 6 soldiers fight for the attacker, 30 peasants for the defender.
    sides = prepared.arrays.sides
    assert sides[0, ol.S_START] == 160 + 4 * 180 + 6 * 10
    assert sides[1, ol.S_START] == 160 + 30 * 2
    assert any("24 attacker men" in n for n in prepared.notes)
    rows = rows_of(scenario, 2_000, seed=13)
    assert rows["casualties.attacker.soldier"].max() <= 6
    assert rows["casualties.defender.peasant"].max() <= 30


def test_peasants_flee_and_count_as_casualties() -> None:
    rows = rows_of(battle("noble, 30 peasant", "noble, 10 soldier, 5 archer@1"), 20_000, 14)
    fled, lost = rows["fled.attacker.peasant"], rows["casualties.attacker.peasant"]
    assert fled.mean() > 0 and np.all(fled <= lost)


# --- the strike caps count defenders ---------------------------------------------------


def kernel_caps(
    scenario: simulator.Scenario, down: set[tuple[str, str]], collapsed: set[str]
) -> list[tuple[int, int]]:
    """(missile cap, melee cap) per side from the kernel's survey of a hand-built state:
    every man of the (side, type) pairs in ``down`` is out, the structures of the sides
    in ``collapsed`` have fallen."""
    arrays = AgeOfGodsPrepared(scenario.model).arrays
    groups, sides = arrays.groups, arrays.sides
    cnt = groups[:, ol.G_COUNT].copy()
    for g in range(len(groups)):
        if groups[g, ol.G_KIND] == ol.MAN:
            side, type_ = arrays.columns[groups[g, ol.G_COLUMN] - k.O_COLUMNS].split(".")[1:]
            if (side, type_) in down:
                cnt[g] = 0
    standing = np.array(
        [sides[s, ol.S_HAS_STRUCTURE] * (SIDES[s] not in collapsed) for s in (0, 1)]
    )
    rating, w, t, pool = np.zeros((4, len(groups)), np.int64)
    ws, ts, others, front, pool_total, missile, melee = np.zeros((7, 2), np.int64)
    unit_men = np.zeros(int(groups[:, ol.G_UNIT].max()) + 1, np.int64)
    scratch = (unit_men, rating, w, t, ws, ts, others, front, pool, pool_total)
    k.survey(groups, cnt, sides, standing, *scratch, missile, melee)
    return [(int(missile[s]), int(melee[s])) for s in (0, 1)]


def reference_caps(
    scenario: simulator.Scenario, down: set[tuple[str, str]], collapsed: set[str]
) -> list[tuple[int, int]]:
    """The same from the reference's own count, on the same state."""
    fight = reference.Fight(scenario.model, random.Random(0))
    for man in fight.men:
        man.present = (SIDES[man.side], man.type) not in down
    for s, structure in enumerate(fight.structures):
        if structure is not None and SIDES[s] in collapsed:
            structure.standing = False
    fight.survey()
    return [fight.caps(s) for s in (0, 1)]


CAP_STATES = {
    # The knights' noble is shielded by them: 5 defenders, not 6, so the soldiers make
    # at most 4 x 5 melee strikes. Each missile cap is the side's own defenders.
    "shielded noble": (
        ("noble, 20 soldier", "noble, 5 knight", {}),
        set(),
        set(),
        [(20, 20), (5, 80)],
    ),
    # Knights down: their noble is now the one defender.
    "unshielded noble": (
        ("noble, 20 soldier", "noble, 5 knight", {}),
        {("defender", "knight")},
        set(),
        [(20, 4), (1, 80)],
    ),
    # 2 soldiers in front and 9 archers behind: more behind than in front, so the
    # attacker's melee counts half of the 11 targetable men, rounded down: 5.
    "rear rows": (
        ("noble, 3 soldier", "noble, 2 soldier, 9 archer@1", {}),
        set(),
        set(),
        [(3, 20), (2, 12)],
    ),
    # As many behind as in front is no hiding: the front's 3 count.
    "rear rows, not more": (
        ("noble, 3 soldier", "noble, 3 soldier, 3 archer@1", {}),
        set(),
        set(),
        [(3, 12), (3, 12)],
    ),
    # The tower is one defender: 3 in front (2 soldiers and the tower), 9 behind, so
    # half of 12; the tower also lets the 9 archers shoot 3 strikes.
    "structure": (
        ("noble, 3 soldier", "noble, 2 soldier, 9 archer@1", {"structure": "tower:5:0"}),
        set(),
        set(),
        [(3, 24), (3, 12)],
    ),
    # A fallen tower counts for nothing; with the soldiers down the archers are the
    # front (9 defenders, none behind) and their noble stays shielded by them.
    "structure fallen, front gone": (
        ("noble, 3 soldier", "noble, 2 soldier, 9 archer@1", {"structure": "tower:5:0"}),
        {("defender", "soldier")},
        {"defender"},
        [(3, 36), (9, 12)],
    ),
    # The leader (no men of his own) is shielded by everyone else, the second noble by
    # his soldiers; the third noble, alone in rear row 1, is a target there but one
    # behind against two in front is no hiding.
    "nobles": (
        ("noble; noble, 2 soldier; noble@1", "noble, 8 soldier", {}),
        set(),
        set(),
        [(2, 32), (8, 8)],
    ),
}


@pytest.mark.parametrize("case", sorted(CAP_STATES))
def test_caps_count_defenders_in_kernel_and_reference(case: str) -> None:
    (attacker, defender, options), down, collapsed, expected = CAP_STATES[case]
    scenario = battle(attacker, defender, **options)
    assert kernel_caps(scenario, down, collapsed) == expected
    assert reference_caps(scenario, down, collapsed) == expected


#: The released engine's figures for "noble, 20 soldier" against "noble, 5 knight",
#: from 100,000 battles: attacker wins and draws. Their origin: the game's released engine
#: (its C source, which the ruleset's missing rules were read from) run for 100,000
#: battles when the strike caps were made to count defenders, recorded in that change's
#: commit message (893edbf, "strike caps count defenders, as the released engine does":
#: 0.837 / 0.064 before, 0.823 / 0.069 after, engine 0.8230 / 0.0698). The engine is not
#: part of this repository, so the figures cannot be re-derived here; the rule they check
#: is also pinned by a hand count, test_caps_count_defenders_in_kernel_and_reference.
ENGINE_BATTLES = 100_000
ENGINE_WIN, ENGINE_DRAW = 0.8230, 0.0698


def test_shielded_noble_gives_no_melee_strikes_as_in_the_released_engine() -> None:
    """Counting the knights' shielded noble as a defender would give the soldiers four
    more melee strikes a round (attacker 0.837 instead of 0.823). Our estimate and the
    engine's each have their binomial error: the difference must lie within 3.29
    standard errors of the difference (99.9%)."""
    n = 150_000
    winner = rows_of(battle("noble, 20 soldier", "noble, 5 knight"), n, seed=23)["winner"]
    z = float(stats.norm.ppf(0.9995))
    for ours, engine in ((np.mean(winner == 0), ENGINE_WIN), (np.mean(winner == 2), ENGINE_DRAW)):
        se = math.sqrt(engine * (1 - engine) / ENGINE_BATTLES + ours * (1 - ours) / n)
        assert abs(ours - engine) <= z * se, (ours, engine, z * se)


# --- the pikeman rule ------------------------------------------------------------------


def test_pikemen_double_their_defense_against_mounted_men() -> None:
    """Knights against pikemen, and the same knights on foot (equal ratings, not
    mounted): the pikemen must do clearly better against the mounted knights."""
    mounted = battle("noble, 10 knight", "noble, 30 pikeman")
    on_foot = mounted.with_changes({"units.knight": {"mounted": False}})
    p_mounted = rows_of(mounted, 20_000, 15)["winner"] == 1
    p_foot = rows_of(on_foot, 20_000, 16)["winner"] == 1
    diff = p_mounted.mean() - p_foot.mean()
    se = math.sqrt(p_mounted.var() / len(p_mounted) + p_foot.var() / len(p_foot))
    assert diff > 0.05 and diff / se > 10, (p_mounted.mean(), p_foot.mean())


# --- kernel against the reference -----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("case", cases_of(RULESET), ids=lambda c: c.name)
def test_kernel_agrees_with_stored_reference(case: Case) -> None:
    """The kernel against the stored reference sample of each case
    (tests/reference/agreement.py). The power of each comparison, at a family-wise
    false-alarm rate of 0.001, for a one-point shift of P(attacker wins) and, the weakest
    over the other columns, for one point of probability moved between neighbouring values:

    volley, rear archers, pikes: winner 0.98, others 0.82
    knights, mountain, shielding: winner 1.00, others 0.82
    tower, wind, fleeing: winner 1.00, others 0.83
    hiding behind a thin front: winner 0.91, others 0.83
    control limits, blessed, items: winner 0.92, others 0.84
    special attack, swamp: winner 0.99, others 0.83
    engine, forest, ranks, beasts, dragon: winner 0.93, others 0.84
    engine, tower, garrison, allies in round 2: winner 0.92, others 0.83
    engine, sea, knights, monster stack: winner 0.94, others 0.83
    text terrain, engine structures and prisoners: winner 0.96, others 0.85
    engine, wholly behind a tower: winner 1.00, others 0.81
    """
    assert check_case(case, test_kernel_agrees_with_stored_reference.__doc__) == []


# Slow tier (docs/testing.md): 1.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_agreement_check_detects_a_broken_rule() -> None:
    """The agreement test can see a real rules error: the kernel run without the
    pikeman rule is flagged against the reference with it."""
    scenario = battle("noble, 4 knight", "noble, 12 pikeman")
    broken = scenario.with_changes({"units.pikeman": {"pike": False}})
    kernel = rows_of(broken, 50_000, seed=5)
    slow = reference.simulate(scenario.model, 1_500, seed=6)
    assert same_distribution(kernel, slow) != []


# --- reproducibility -------------------------------------------------------------------


def test_same_seed_same_battles_on_any_threads_and_chunks() -> None:

    scenario = custom(
        [("soldier", 10, 0), ("dragon", 2, 0), ("archer", 5, 1)],
        [("pikeman", 12, 0), ("peasant", 10, 0), ("archer", 4, 1)],
        {"dragon": DRAGON},
    )
    assert reproducibility(scenario, 3_000, seed=21) == []


# --- bundled scenarios and the command line -------------------------------------------


def test_bundled_scenarios_run() -> None:
    assert len(SCENARIOS) >= 4
    for path in SCENARIOS:
        scenario = simulator.load_scenario(path)
        assert scenario.ruleset == RULESET and scenario.description
        result = simulator.simulate(scenario, 2_000)
        assert result.n == 2_000


def test_cli_odds_units_and_json() -> None:
    res = runner.invoke(
        app,
        [
            "odds",
            "--ruleset",
            RULESET,
            "--attacker",
            "noble, 20 hvy_foot, 10 archer@1",
            "--defender",
            "noble, 30 pikemen",
            "-n",
            "2000",
            "--json",
            "--set",
            "control_limits=false",
        ],
    )
    assert res.exit_code == 0, res.output
    assert '"step_unit": "rounds"' in res.output and "decided_in.melee" in res.output
    res = runner.invoke(app, ["units", "--ruleset", RULESET])
    assert res.exit_code == 0 and "hvy_foot" in res.output and "pikeman" in res.output


def cli_error(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    return " ".join(res.output.split())


SCENARIO = """ruleset = "age_of_gods"
name = "bad"

[battle]
terrain = "land"

[[attacker.units]]
men = { soldier = 10 }

[[defender.units]]
men = { pikeman = 10 }
"""


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("soldier = 10", "swordsman = 10", r":8: .*'swordsman' is a unit of the olympia ruleset"),
        (
            "pikeman = 10",
            "pikemn = 10",
            r":11: .*unknown unit type 'pikemn' \(did you mean 'pikeman'\?\)",
        ),
        (
            'terrain = "land"',
            'terrain = "montain"',
            r":5: battle.terrain: .*did you mean 'mountain'",
        ),
        (
            'terrain = "land"',
            "control_limit = true",
            r":5: battle.control_limit: unknown key 'control_limit' "
            r"\(did you mean 'control_limits'\?\)",
        ),
        (
            "men = { soldier = 10 }",
            "men = { soldier = 10 }\n[attacker.siege_engines]\ncatapult = 1",
            r"attacker.siege_engines: siege engines belong to the olympia ruleset",
        ),
        (
            "[battle]",
            '[units.dragon]\nattack = 5\ndefense = 5\nspecial = { name = "fire" }\n[battle]',
            r"units.dragon.special.strength: is required",
        ),
    ],
)
def test_bad_scenarios_name_the_key_line_and_nearest_name(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    assert old in SCENARIO
    path.write_text(SCENARIO.replace(old, new))
    for command in ("run", "validate"):
        message = cli_error([command, str(path)])
        assert re.search(expected, message), message
        assert str(path) in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--attacker", "noble, 5 swordsman"], "'swordsman' is a unit of the olympia ruleset"),
        (["--attacker", "noble, 5 hvy_fot"], "did you mean 'hvy_foot'"),
        (["--set", "control_limit=true"], "did you mean 'control_limits'"),
        (["--set", "control_limits=maybe"], "'maybe' is not true or false"),
        (["--terrain", "hills"], "--terrain: 'hills' is not one of"),
        (["--strike-order", "alternating"], "strike_order: not an option of age_of_gods"),
    ],
)
def test_bad_inline_queries(args: list[str], expected: str) -> None:
    base = {"--attacker": "noble, 5 soldier", "--defender": "noble, 5 pikeman"}
    for key, value in zip(args[::2], args[1::2], strict=True):
        base[key] = value
    flat = [item for pair in base.items() for item in pair]
    message = cli_error(["odds", "--ruleset", RULESET, *flat, "-n", "100"])
    assert expected in message, message
