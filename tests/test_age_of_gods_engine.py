"""age_of_gods under the released engine's reading (`[battle] rules = "engine"` and
each point's own switch): hand-exact small battles for terrain, tactics, control
limits, a garrison, the engine's structure, allies and prisoners; the sea; the one-line
syntax; bad values of every new key. The kernel against the reference under these
rules is in tests/test_age_of_gods.py (the "engine, ..." agreement cases)."""

from __future__ import annotations

import copy
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from kernels import age_of_gods as k
from kernels.olympia import layout as ol
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared, fielded
from tests.reference.cases import AGE_OF_GODS_ENGINE, age_of_gods_data
from tests.stats_tests import interval_contains, reproducibility

RULESET = "age_of_gods"
runner = CliRunner()

#: Scenario types for probes: a "wall" that never strikes and is hardly ever hit, a
#: target of a given defense, a shooter, a special attacker and a ram.
WALL = {"attack": 0, "defense": 10_000}
PROBE_TYPES = {
    "wall": WALL,
    "target": {"attack": 0, "defense": 35},
    "shooter": {"attack": 0, "defense": 10_000, "missile": 35},
    "caster": {**WALL, "special": {"name": "bolt", "strength": 35}},
    "ram": {"attack": 1, "defense": 10_000},
}
#: A noble who neither strikes nor is worth anything (his side breaks with its men).
NOBODY = {"ratings": {"attack": 0, "defense": 0, "missile": 0}}
SHELTERED = {"ratings": {"attack": 0, "defense": 10_000, "missile": 0}}


def scenario(data: dict[str, Any]) -> simulator.Scenario:
    full = {"ruleset": RULESET, "units": PROBE_TYPES, **copy.deepcopy(data)}
    return simulator.from_data(full, Source("test"))


def rows_of(sc: simulator.Scenario, battles: int, seed: int) -> dict[str, np.ndarray]:
    rows = simulator.simulate(sc, battles, seed=seed).rows
    assert rows is not None
    return rows


def assert_probability(hits: np.ndarray, p: float) -> None:
    """``hits`` (0/1 per battle) agree with probability ``p`` at the 99.9% level."""
    assert interval_contains(int(hits.sum()), len(hits), float(p)), (hits.mean(), float(p))


# --- terrain: the issue's three probes, exactly --------------------------------------

#: One strike a round decides each probe at its first hit, so P(decided in round 1) is
#: the hit chance. The defender's terrain multiplier (forest x1.5) under the text's
#: reading: on his melee attack and his defense in every phase; under the engine's: on
#: his defense in the missile and melee phases only, and not inside a structure.
PROBES: dict[str, dict[str, Any]] = {
    # The defender's noble strikes the attacker's 0-attack noble in melee.
    "defender melee": {
        "attacker": {"units": [{"noble": {"ratings": {"attack": 0, "defense": 80}}}]},
        "defender": {"units": [{}]},
    },
    # One shooter behind a wall shoots the defender's only man (defense 35).
    "attacker missile": {
        "attacker": {
            "units": [
                {
                    "noble": SHELTERED,
                    "men": [
                        {"type": "wall", "count": 1},
                        {"type": "shooter", "count": 1, "behind": 1},
                    ],
                }
            ]
        },
        "defender": {"units": [{"noble": NOBODY, "men": {"target": 1}}]},
    },
    # A special attack (strength 35) at the defender's only man.
    "attacker special": {
        "attacker": {"units": [{"noble": SHELTERED, "men": {"caster": 1}}]},
        "defender": {"units": [{"noble": NOBODY, "men": {"target": 1}}]},
    },
}
FOREST = Fraction(3, 2)
PROBE_CHANCES = {
    # (probe, terrain reading): hit chance in a forest; on land every probe is 1/2.
    ("defender melee", "text"): 80 * FOREST / (80 * FOREST + 80),
    ("defender melee", "engine"): Fraction(1, 2),
    ("attacker missile", "text"): 35 / (35 + 35 * FOREST),
    ("attacker missile", "engine"): 35 / (35 + 35 * FOREST),
    ("attacker special", "text"): 35 / (35 + 35 * FOREST),
    ("attacker special", "engine"): Fraction(1, 2),
}


@pytest.mark.parametrize(("probe", "reading"), sorted(PROBE_CHANCES))
@pytest.mark.parametrize("by", ["rules", "terrain_rules"])
def test_terrain_probes(probe: str, reading: str, by: str) -> None:
    for terrain, chance in (("land", Fraction(1, 2)), ("forest", PROBE_CHANCES[probe, reading])):
        data = {**PROBES[probe], "battle": {"terrain": terrain, by: reading}}
        rows = rows_of(scenario(data), 40_000, seed=11)
        assert_probability(rows["steps"] == 1, chance)


def test_no_terrain_bonus_inside_a_structure_under_the_engine() -> None:
    """The missile probe inside a tower of defense 0: the shot picks the man or the
    tower (1/2 each); the man's defense is multiplied by the forest under the text's
    reading (hit 2/5) and not under the engine's (1/2)."""
    probe = copy.deepcopy(PROBES["attacker missile"])
    probe["defender"]["structure"] = {"kind": "tower", "defense": 0}
    for reading, hit in (("text", Fraction(2, 5)), ("engine", Fraction(1, 2))):
        data = {**probe, "battle": {"terrain": "forest", "terrain_rules": reading}}
        rows = rows_of(scenario(data), 40_000, seed=12)
        assert_probability(rows["steps"] == 1, hit / 2)


@pytest.mark.parametrize(
    ("who", "tactics", "chance"),
    [
        # Attack tactics 25 weeks: x1.5 on every strike of the defender's unit.
        ("defender", {"attack_tactics": 25}, Fraction(120, 200)),
        # Defense tactics 25 weeks on the attacker's noble: his defense x1.5.
        ("attacker", {"defense_tactics": 25}, Fraction(80, 200)),
        # Tactics stop at x2 (100 weeks would be x3).
        ("defender", {"attack_tactics": 100}, Fraction(160, 240)),
    ],
)
def test_tactics_multiply_a_units_strikes_or_defense(
    who: str, tactics: dict[str, int], chance: Fraction
) -> None:
    data = copy.deepcopy(PROBES["defender melee"])
    noble = data[who]["units"][0].setdefault("noble", {})
    noble.update(tactics)
    rows = rows_of(scenario(data), 40_000, seed=13)
    assert_probability(rows["steps"] == 1, chance)


# --- prisoners ----------------------------------------------------------------------


@pytest.mark.parametrize(("reading", "percent"), [("text", 75), ("engine", 100)])
def test_a_loser_with_nobody_standing_is_taken_at_75_or_100_percent(
    reading: str, percent: int
) -> None:
    """The melee probe's attacker noble, once hit, is the whole of his side: the text's
    clamp takes him with 75%, the engine (combat.c, determine_prisoners) with 100%, if
    his wound (1..100 off 100 health) leaves him alive (99/100)."""
    data = {**PROBES["defender melee"], "battle": {"prisoner_rules": reading}}
    rows = rows_of(scenario(data), 40_000, seed=14)
    assert np.all(rows["winner"] == 1)
    assert_probability(rows["nobles_captured.attacker"], Fraction(99, 100) * percent / 100)


# --- a garrison of n soldiers against one noble ----------------------------------------


def garrison_odds(n: int) -> tuple[Fraction, Fraction, Fraction]:
    """P(attacker wins), P(garrison wins), P(draw) for one noble (80/80) against a
    garrison (leader 0/0, break point 0) of n soldiers (5/5), exactly. Each round's
    melee: the noble strikes once (hits 80/85); min(4, k) of the k soldiers strike him
    (the cap: 4 per enemy defender), each hitting 5/85; a hit noble leaves and his side
    has lost; the garrison has lost with its last soldier."""
    kill = Fraction(80, 85)
    win, lose, draw = Fraction(0), Fraction(0), Fraction(0)
    reach = Fraction(1)  # P(a round starts with k soldiers left)
    for k_left in range(n, 0, -1):
        hit = 1 - (1 - Fraction(5, 85)) ** min(4, k_left)
        again = (1 - kill) * (1 - hit)
        ends = reach / (1 - again)  # the round in which something happens, k soldiers left
        if k_left == 1:
            win += ends * kill * (1 - hit)
            draw += ends * kill * hit
            lose += ends * (1 - kill) * hit
        else:
            lose += ends * hit
            reach = ends * kill * (1 - hit)
    return win, lose, draw


GARRISON = {
    "attacker": {"units": [{}]},
    "defender": {"units": [{"noble": {"garrison": True}, "men": {"soldier": 3}}]},
}


@pytest.mark.parametrize(("rules", "capture"), [("text", Fraction(3, 4)), ("engine", 1)])
def test_garrison_of_soldiers_against_one_noble(rules: str, capture: Fraction) -> None:
    """The garrison's break point defaults to 0 and its leader is worth nothing, so it
    loses with its last soldier; it takes no prisoners but kills those it would take
    (combat.c, determine_prisoners): the noble, beaten, dies of his wound (1/100) or is
    killed where he would be taken (75% of the rest under the text's rule, all under
    the engine's, as nobody of his side stands)."""
    win, lose, draw = garrison_odds(3)
    rows = rows_of(scenario({**GARRISON, "battle": {"rules": rules}}), 60_000, seed=15)
    assert_probability(rows["winner"] == 0, win)
    assert_probability(rows["winner"] == 1, lose)
    assert_probability(rows["winner"] == 2, draw)
    killed = lose * (Fraction(1, 100) + Fraction(99, 100) * capture) + draw / 100
    assert_probability(rows["nobles_killed.attacker"], killed)
    assert rows["nobles_captured.attacker"].sum() == 0
    wounded = rows["nobles_wounded.attacker"] == 1
    assert not np.any(wounded & (rows["nobles_killed.attacker"] == 1))


def test_garrison_and_monster_stack_leaders() -> None:
    model = scenario(
        {
            "units": {**PROBE_TYPES, "wolf": {"attack": 5, "defense": 6, "animal": True}},
            "attacker": {"units": [{"noble": {"beast": "wolf"}, "men": {"wolf": 4}}]},
            "defender": {"units": [{"noble": {"garrison": True}, "men": {"soldier": 2}}]},
        }
    ).model
    arrays = AgeOfGodsPrepared(model).arrays
    nobles = arrays.groups[arrays.groups[:, ol.G_KIND] == ol.NOBLE]
    # The beast leads as one wolf (5/6); the garrison's leader is 0/0/0.
    assert [tuple(g[[ol.G_FRONT, ol.G_DEF, ol.G_REAR]]) for g in nobles] == [(5, 6, 0), (0, 0, 0)]
    assert model.attacker.break_point == model.defender.break_point == 0
    assert arrays.sides[0, k.S_NO_PRISONERS] == 0 and arrays.sides[1, k.S_NO_PRISONERS] == 1
    assert arrays.sides[0, ol.S_START] == 5 * 11 and arrays.sides[1, ol.S_START] == 2 * 10


# --- control limits -----------------------------------------------------------------

LIMITED = {
    "units": {**PROBE_TYPES, "wolf": {"attack": 5, "defense": 5, "animal": True}},
    "battle": {"rules": "engine"},
}
MEN = {"soldier": 30, "knight": 5, "wolf": 4}


def fielded_men(leader: dict[str, Any], side: str, rules: str = "engine") -> dict[str, int]:
    other = "defender" if side == "attacker" else "attacker"
    data = {
        **LIMITED,
        "battle": {"rules": rules, "control_limits": True},
        side: {"units": [{"noble": leader, "men": MEN}]},
        other: {"units": [{}]},
    }
    model = scenario(data).model
    s = 0 if side == "attacker" else 1
    unit, chief, _ = model.units_of(s)[0]
    return {m.type: m.count for m in fielded(model, s, unit, chief)}


@pytest.mark.parametrize(
    ("leader", "side", "expected"),
    [
        # 10 + 3 experience + 7 (baron): knights first (strongest), then soldiers; 2 wolves.
        (
            {"rank": "baron", "control_battle": 3, "use_beasts": 2},
            "attacker",
            {"knight": 5, "soldier": 15, "wolf": 2},
        ),
        # Defending: 20 more men; the beasts' limit gains nothing.
        (
            {"rank": "baron", "control_battle": 3, "use_beasts": 2},
            "defender",
            {"knight": 5, "soldier": 30, "wolf": 2},
        ),
        # A king: 10 + 20; no Use-beasts: no wolves.
        ({"rank": "king"}, "attacker", {"knight": 5, "soldier": 25}),
        # A garrison: 20 (+20 defending), no beasts.
        ({"garrison": True}, "defender", {"knight": 5, "soldier": 30}),
        # A monster stack: no limit.
        ({"beast": "wolf"}, "attacker", {"knight": 5, "soldier": 30, "wolf": 4}),
    ],
)
def test_engine_control_limits(leader: dict[str, Any], side: str, expected: dict[str, int]) -> None:
    assert fielded_men(leader, side) == expected


def test_text_control_limits_ignore_rank_and_count_beasts_as_men() -> None:
    leader = {"rank": "king", "control_battle": 9, "use_beasts": 9}
    assert fielded_men(leader, "attacker", "text") == {"knight": 5, "soldier": 5}
    assert fielded_men(leader, "defender", "text") == {"knight": 5, "soldier": 25}


# --- the engine's structure --------------------------------------------------------


def structure_battle(rules: str, rams: int, wall: int, structure: dict[str, int]) -> Any:
    return scenario(
        {
            "battle": {"structure_rules": rules},
            "attacker": {"units": [{"noble": SHELTERED, "men": {"ram": rams}}]},
            "defender": {
                "structure": {"kind": "tower", **structure},
                "units": [{"noble": {"garrison": True}, "men": {"target": 1}}],
            },
            "units": {
                **PROBE_TYPES,
                "ram": {"attack": 100, "defense": 10_000},
                "target": {"attack": 0, "defense": wall},
            },
        }
    )


# Slow tier (docs/testing.md): 1.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_engine_structure_bonus_to_the_men_it_covers() -> None:
    """One ram (100) strikes a round, at the man or the tower (1/2 each). The engine's
    tower of defense 10,000 at damage 50 adds 10,000 x 50 / 100 hundredths (50 points)
    to the man inside: he is hit 100 / (100 + 100 + 50); the tower, 100 / 10,100, takes
    a point of damage. The text's bonus is the whole defense: 100 / 10,200."""
    structure = {"defense": 10_000, "damage": 50}
    for rules, man in (("engine", Fraction(100, 250)), ("text", Fraction(100, 10_200))):
        rows = rows_of(structure_battle(rules, 1, 100, structure), 10_000, seed=16)
        assert_probability(rows["steps"] == 1, man / 2)


def test_one_structure_hit_is_a_point_of_damage() -> None:
    """Two rams (100) strike a round at a man (100) or a tower (defense 100, damage 50).
    The tower is hit 1/2; the man 10,000 / (10,000 + 10,000 + 50) in hundredths (the
    tower's bonus 100 x 50 / 100). Decided in round 1 with one structure hit: one ram
    kills the man, the other hits the tower. Under the engine that hit is a point of
    damage (51) and the defense stays; under the text's rules it takes a defense point."""
    man = Fraction(10_000, 20_050)
    rows = rows_of(structure_battle("engine", 2, 100, {"defense": 100, "damage": 50}), 60_000, 17)
    first = rows["steps"] == 1
    assert_probability(first & (rows["structure_damage.defender"] == 51), man * Fraction(1, 2) / 2)
    assert np.all(rows["structure_defense.defender"] == 100)
    text = rows_of(structure_battle("text", 2, 100, {"defense": 100, "damage": 50}), 20_000, 17)
    assert np.all(text["structure_damage.defender"][text["steps"] == 1] == 50)
    assert np.any(text["structure_defense.defender"] < 100)


def wholly_behind(rules: str) -> dict[str, Any]:
    """A ram against a tower (damage 97: three points from falling) with the defender's
    whole side, a target and a shooter, in rear row 1 behind it."""
    return {
        "battle": {"structure_rules": rules},
        "attacker": {"units": [{"noble": SHELTERED, "men": {"ram": 2}}]},
        "defender": {
            "structure": {"kind": "tower", "defense": 10, "damage": 97},
            "units": [
                {"noble": {"garrison": True}, "men": {"target": 2, "shooter": 1}, "behind": 1}
            ],
        },
        "units": {**PROBE_TYPES, "ram": {"attack": 100, "defense": 35}},
    }


# Slow tier (docs/testing.md): 3.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_side_wholly_behind_its_structure_under_the_engine() -> None:
    """The engine's structure is a fighter of the front row: a side whose every man is
    in a rear row behind it is legal, its men are no targets while it stands (hit only
    in battles where it fell) and shoot from behind it; once it falls they move up. The
    text's rules still refuse the side."""
    rows = rows_of(scenario(wholly_behind("engine")), 20_000, seed=23)
    hit = rows["casualties.defender.target"] > 0
    fell = rows["structure_collapsed.defender"] == 1
    assert np.all(fell[hit])
    assert fell.mean() > 0.2 and hit.mean() > 0.05
    assert np.any(rows["casualties.attacker.ram"] > 0)  # the shooter shoots from behind
    with pytest.raises(BattleOddsError, match="rear row 1 has nothing in front of it"):
        scenario(wholly_behind("text"))
    data = wholly_behind("engine")
    del data["defender"]["structure"]
    with pytest.raises(BattleOddsError, match="rear row 1 has nothing in front of it"):
        scenario(data)


# --- allies --------------------------------------------------------------------------


def test_allies_arrive_in_their_round_and_the_threshold_is_recomputed() -> None:
    """The ram (1 against 1: hit 1/2) decides round 1 by killing the defender's only man
    (worth 1, the garrison 0). In round 2 an ally noble (0/0/0) and his man (0/1) join:
    the side's start is 2, so one man down (1 left) breaks it at 50% and the ram decides
    round 2 with one hit at either man. Without the recomputed threshold (start 1) the
    side would stand until both men fell, never in round 2."""
    data = {
        "attacker": {"units": [{"noble": SHELTERED, "men": {"ram": 1}}]},
        "defender": {
            "break_point": 50,
            "units": [{"noble": {"garrison": True}, "men": {"target": 1}}],
            "allies": {"round": 2, "units": [{"noble": NOBODY, "men": {"target": 1}}]},
        },
        "units": {**PROBE_TYPES, "target": {"attack": 0, "defense": 1}},
    }
    rows = rows_of(scenario(data), 40_000, seed=18)
    steps = rows["steps"]
    assert_probability(steps == 1, Fraction(1, 2))
    assert_probability(steps == 2, Fraction(1, 4))
    assert np.all(rows["casualties.defender.target"][steps == 1] == 1)
    assert np.all(rows["winner"] == 0)


def test_engine_battles_are_the_same_on_any_threads_and_chunks() -> None:
    sc = age_of_gods_data(AGE_OF_GODS_ENGINE["engine, tower, garrison, allies in round 2"])()
    assert reproducibility(sc, 3_000, seed=22) == []


# --- the sea ------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "knight"), [("text", (90, 90)), ("engine", (40, 40))])
def test_knights_at_sea(rules: str, knight: tuple[int, int]) -> None:
    """The engine takes 50 off knights, paladins and cavaliers at sea as in a swamp
    (combat.c, init_attack_defense); pirates are 30/30 on a ship under both."""
    sc = scenario(
        {
            "battle": {"terrain": "ship", "sea_rules": rules},
            "attacker": {"units": [{"men": {"knight": 1, "pirate": 1}}]},
            "defender": {"units": [{}]},
        }
    )
    groups = AgeOfGodsPrepared(sc.model).arrays.groups
    men = groups[groups[:, ol.G_KIND] == ol.MAN]
    assert [tuple(g[[ol.G_FRONT, ol.G_DEF]]) for g in men] == [knight, (30, 30)]


# --- the text's reading of terrain --------------------------------------------------


def test_text_reading_is_the_default_and_engine_selects_every_point() -> None:
    text = scenario({"attacker": {"units": [{}]}, "defender": {"units": [{}]}}).model
    engine = scenario(
        {"battle": {"rules": "engine"}, "attacker": {"units": [{}]}, "defender": {"units": [{}]}}
    ).model
    points = ("terrain_rules", "control_rules", "structure_rules", "prisoner_rules", "sea_rules")
    assert {getattr(text, p) for p in points} == {"text"} and not text.control_limits
    assert {getattr(engine, p) for p in points} == {"engine"} and engine.control_limits


# --- one-line syntax ----------------------------------------------------------------


def test_inline_leaders_options_and_allies() -> None:
    sc = simulator.inline_scenario(
        RULESET,
        "noble(rank=duke, control_battle=4, use_beasts=1, attack_tactics=10, "
        "ratings=100/60, health=90), 30 soldier; beast(angel)@1, 2 angel@1",
        "garrison, 20 soldier",
        rules="engine",
        defender_allies="noble(defense_tactics=5), 4 pikeman",
        allies_round=3,
        terrain_rules="text",
    )
    model = sc.model
    (duke, _, _), (angel, _, _) = model.units_of(0)[0], model.units_of(0)[1]
    leaders = model.leaders[0]
    assert leaders[0].rank == "duke" and leaders[0].control_battle == 4
    assert leaders[0].attack_tactics == 10 and leaders[0].ratings is not None
    assert (leaders[0].ratings.attack, leaders[0].ratings.defense) == (100, 60)
    assert duke.noble.health == 90 and leaders[1].beast == "angel" and angel.behind == 1
    assert model.leaders[1][0].kind == "garrison"
    allies = model.allies[1]
    assert allies is not None and allies.round == 3 and allies.leaders[0].defense_tactics == 5
    assert model.terrain_rules == "text" and model.structure_rules == "engine"


# --- bad values ---------------------------------------------------------------------

SCENARIO = """ruleset = "age_of_gods"
name = "bad"

[battle]
rules = "engine"

[units.wolf]
attack = 5
defense = 5
animal = true

[[attacker.units]]
noble = { rank = "duke", control_battle = 3 }
men = { soldier = 10 }

[[defender.units]]
men = { pikeman = 10 }

[defender.allies]
round = 2
[[defender.allies.units]]
men = { soldier = 3 }
"""


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('rules = "engine"', 'rules = "engnie"', r":5: battle.rules: .*did you mean 'engine'"),
        (
            'rules = "engine"',
            'terrain_rules = "txt"',
            r":5: battle.terrain_rules: 'txt' is not one of text, engine \(did you mean 'text'",
        ),
        (
            'rules = "engine"',
            'prisoners_rules = "engine"',
            r":5: battle.prisoners_rules: unknown key .*did you mean 'prisoner_rules'",
        ),
        ('rank = "duke"', 'rank = "duk"', r":13: attacker.units\[0\].noble.rank: .*'duke'"),
        (
            "control_battle = 3",
            "control_battle = -3",
            r":13: attacker.units\[0\].noble.control_battle: .*0..10,000",
        ),
        (
            "control_battle = 3",
            "use_beasts = 2.5",
            r":13: attacker.units\[0\].noble.use_beasts: .*whole number",
        ),
        (
            "control_battle = 3",
            "attack_tactics = 20000",
            r"attacker.units\[0\].noble.attack_tactics: .*0..10,000",
        ),
        (
            "control_battle = 3",
            "defence_tactics = 2",
            r"noble.defence_tactics: unknown key .*did you mean 'defense_tactics'",
        ),
        (
            "control_battle = 3",
            "ratings = { attack = 1, defence = 2 }",
            r"noble.ratings.defence: unknown key .*did you mean 'defense'",
        ),
        (
            'rank = "duke", control_battle = 3',
            "garrison = true, ratings = { attack = 5 }",
            r"noble.ratings: a garrison has no ratings",
        ),
        (
            'rank = "duke", control_battle = 3',
            'beast = "wolff"',
            r"noble.beast: unknown beast 'wolff'.*did you mean 'wolf'",
        ),
        (
            "men = { soldier = 3 }",
            "noble = { garrison = true }\nmen = { soldier = 3 }",
            r"defender.allies.units\[0\].noble.garrison: a garrison leads its stack",
        ),
        (
            "round = 2",
            "round = 0",
            r":20: defender.allies.round: 0 is out of range: expected 1..1000",
        ),
        ("round = 2", "rounds = 2", r"defender.allies.rounds: unknown key .*did you mean 'round'"),
        ("animal = true", 'animal = "yes"', r"units.wolf.animal: expected true or false"),
    ],
)
def test_bad_new_keys_name_the_key_line_and_nearest_name(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    assert old in SCENARIO
    path.write_text(SCENARIO.replace(old, new, 1))
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    message = " ".join(res.output.split())
    assert re.search(expected, message), message
    assert str(path) in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "rules=engnie"], "--set rules=engnie: expected one of text, engine"),
        (["--set", "sea_rules=x"], "--set sea_rules=x: expected one of text, engine"),
        (["--set", "terain_rules=text"], "did you mean 'terrain_rules'"),
        (["--attacker", "noble(rank=dukee), 5 soldier"], "did you mean 'duke'"),
        (["--attacker", "noble(control_battle=x), 5 soldier"], "'x' is not a whole number"),
        (["--attacker", "noble(ratings=5), 5 soldier"], "expected ratings=ATTACK/DEFENSE"),
        (["--attacker", "beast(angle), 5 angel"], "did you mean 'angel'"),
        (["--attacker", "garrison(x), 5 soldier"], "a garrison takes no options"),
        (["--set", "allies_round=2"], "--set allies_round: no allies to arrive"),
        (
            ["--set", "defender_allies=noble, 5 sword", "--set", "allies_round=2"],
            "did you mean",
        ),
        (
            ["--set", "defender_allies=noble, 5 soldier", "--set", "allies_round=0"],
            "--defender: allies, round: 0 is out of range",
        ),
    ],
)
def test_bad_inline_values(args: list[str], expected: str) -> None:
    base = {"--attacker": "noble, 5 soldier", "--defender": "noble, 5 pikeman"}
    extra: list[str] = []
    for key, value in zip(args[::2], args[1::2], strict=True):
        if key == "--set":
            extra += [key, value]
        else:
            base[key] = value
    flat = [item for pair in base.items() for item in pair]
    res = runner.invoke(app, ["odds", "--ruleset", RULESET, *flat, *extra, "-n", "100"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    message = " ".join(res.output.split())
    assert expected in message, message


def test_inline_errors_are_battle_odds_errors() -> None:
    with pytest.raises(BattleOddsError, match="beast"):
        simulator.inline_scenario(RULESET, "beast, 3 angel", "noble")
