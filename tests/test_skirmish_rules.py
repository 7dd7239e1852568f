"""Skirmish under both readings, ``rules = "text"`` and ``"engine"``: determinism, the
defaults and sides, a hand-exact check of each difference, and the setting carried by
``odds``, ``replay``, ``worth`` and ``sensitivity`` (kernel against the reference for
both readings: tests/test_skirmish.py)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import Source
from simulator.rulesets import get
from simulator.rulesets.skirmish.replay import replay
from simulator.scenario.scenario import Scenario, from_data
from simulator.studies.machinery.armies import reinforced
from tests import ROOT
from tests.reference import skirmish as reference
from tests.stats_tests import ALPHA, reproducibility

SCENARIOS = ROOT / "scenarios" / "skirmish"
#: |z| beyond this is a failure: a two-sided 99.9% level.
Z_LIMIT = 3.3
DRAW = 2


def bundled(name: str) -> Scenario:
    return simulator.load_scenario(SCENARIOS / f"{name}.toml")


def under(scenario: Scenario, rules: str) -> Scenario:
    return scenario.with_changes({"battle.rules": rules})


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def duel(
    red: dict[str, Any], blue: dict[str, Any], rules: str, **battle: Any
) -> simulator.Scenario:
    """One unit of type ``red`` attacks one of type ``blue``."""
    data = {
        "ruleset": "skirmish",
        "battle": {"attacked": [0, 0], "attacking": [0, -1], "rules": rules, **battle},
        "unit_types": {"red_unit": red, "blue_unit": blue},
        "stacks": [
            {"tile": [0, -1], "owner": "red", "units": ["red_unit"]},
            {"tile": [0, 0], "owner": "blue", "units": ["blue_unit"]},
        ],
    }
    return from_data(data, Source(f"duel under {rules} rules"))


def roll_law(attack: int, defence: int, damage: int) -> np.ndarray:
    """P(effect = e), e = 0..damage, of a damage roll, counted by hand: attack 0..A
    against defence 0..D, a strict win rolls 0..damage (ratings raised to 1)."""
    a_max, d_max, dmg = max(attack, 1), max(defence, 1), max(damage, 1)
    hit = Fraction(
        sum(a > d for a in range(a_max + 1) for d in range(d_max + 1)),
        (a_max + 1) * (d_max + 1),
    )
    law = [hit / (dmg + 1)] * (dmg + 1)
    law[0] += 1 - hit
    return np.array([float(p) for p in law])


def assert_follows(values: np.ndarray, law: np.ndarray) -> None:
    observed = np.bincount(values, minlength=len(law))
    assert len(observed) == len(law), (observed, law)
    expected = law * len(values)
    keep = expected > 0
    assert observed[~keep].sum() == 0
    assert stats.chisquare(observed[keep], expected[keep]).pvalue > ALPHA, (observed, expected)


# --- determinism (agreement with the reference: tests/test_skirmish.py) ---------------


def test_engine_rules_same_battles_on_any_threads() -> None:
    scenario = bundled("example_units_engine")
    assert reproducibility(scenario, 3_000, seed=9, chunks=(777,)) == []


# --- the default and the sides ----------------------------------------------------------


def test_text_is_the_default_and_engine_values_moves_by_five_rolls() -> None:
    text = bundled("example_units_sampled5")
    assert text.model.rules == "text"
    explicit = under(text, "text")
    one = simulator.simulate(text, 2_000, seed=3).rows
    two = simulator.simulate(explicit, 2_000, seed=3).rows
    assert one is not None and two is not None
    assert all(np.array_equal(one[c], two[c]) for c in one)

    data = dict(bundled("example_units").data)
    battle = {k: v for k, v in data["battle"].items() if k != "expected_value"}
    engine = from_data({**data, "battle": {**battle, "rules": "engine"}}, Source("engine"))
    assert engine.model.expected_value == "sampled5"
    sampled = engine.with_changes({"battle.expected_value": "sampled5"})
    exact = engine.with_changes({"battle.expected_value": "exact"})
    assert exact.model.expected_value == "exact" and exact.model.rules == "engine"
    a = simulator.simulate(engine, 2_000, seed=3).rows
    b = simulator.simulate(sampled, 2_000, seed=3).rows
    c = simulator.simulate(exact, 2_000, seed=3).rows
    assert a is not None and b is not None and c is not None
    assert all(np.array_equal(a[col], b[col]) for col in a)
    assert not np.array_equal(a["steps"], c["steps"])


def test_engine_sides_go_by_owner_alone() -> None:
    engine = under(bundled("three_way_field"), "engine")
    model = engine.model
    owners = {s.index: s.owner for s in model.stacks}
    assert model.staying_out == ()
    assert model.reseated == ("green", "purple", "yellow")
    sides = {owners[p.stack]: p.side for p in model.participants}
    assert sides == {"red": 0, "green": 1, "yellow": 1, "purple": 1, "blue": 1}
    # The reference seats them on its own, in the same id order.
    assert [(f.side, f.type) for f in reference.participants(model)] == [
        (p.side, p.unit.name) for p in model.participants
    ]
    result = simulator.simulate(engine, 500, seed=1)
    assert any("sides go by owner alone" in note for note in result.notes)
    assert not any("stay out" in note for note in result.notes)


# --- each difference checked by hand ------------------------------------------------------

#: Never dies in one turn, never rolls anything that matters beyond its strike.
HUGE = 1_000_000


def test_riposte_damage_range_by_hand() -> None:
    """One turn (turn_limit = 1): red strikes blue twice, blue ripostes after each.
    Blue has attack 5, damage 1, red defence 2. Text: each riposte rolls attack 4,
    damage 0 (raised to 1): 0 or 1. Engine: attack 4 and damage 4: 0..4. P(hit) of 4
    against 2 is 9/15 = 3/5 (a = 1..4 beat min(a, 3) defences), so engine: P(0) = 13/25,
    P(e) = 3/25 for e = 1..4; text: P(0) = 7/10, P(1) = 3/10. The two ripostes are
    independent: their sum has the law convolved with itself."""
    red = {"attack": 3, "defence": 2, "damage": 1, "health": HUGE, "abilities": ["strike"]}
    blue = {"attack": 5, "defence": 2, "damage": 1, "health": HUGE, "abilities": ["strike"]}
    assert np.allclose(roll_law(4, 2, 4), [13 / 25] + [3 / 25] * 4)
    assert np.allclose(roll_law(4, 2, 0), [7 / 10, 3 / 10])
    for rules, law in (("text", roll_law(4, 2, 0)), ("engine", roll_law(4, 2, 4))):
        scenario = duel(red, blue, rules, turn_limit=1, expected_value="exact")
        rows = simulator.simulate(scenario, 20_000, seed=41).rows
        assert rows is not None
        assert (rows["steps"] == 1).all() and (rows["turn_limit"] == 1).all()
        assert_follows(rows["damage.defender.riposte"], np.convolve(law, law))


def test_charge_damage_range_by_hand() -> None:
    """One turn: red (charge only, attack 5, damage 1) charges blue (defence 3, no
    abilities: no riposte, no move). Charge rolls attack 7 against 3: P(hit) =
    (0+1+2+3+4+4+4+4)/32 = 22/32. Text: damage 0..1; engine: the attack, 0..5."""
    red = {"attack": 5, "defence": 1, "damage": 1, "health": 10, "abilities": ["charge"]}
    blue = {"attack": 1, "defence": 3, "damage": 1, "health": HUGE, "abilities": []}
    hit = Fraction(22, 32)
    engine_law = roll_law(7, 3, 5)
    assert np.allclose(engine_law, [float(1 - hit + hit / 6)] + [float(hit / 6)] * 5)
    for rules, law in (("text", roll_law(7, 3, 1)), ("engine", engine_law)):
        scenario = duel(red, blue, rules, turn_limit=1, expected_value="exact")
        rows = simulator.simulate(scenario, 20_000, seed=43).rows
        assert rows is not None
        assert_follows(rows["damage.attacker.charge"], law)


def test_stalemate_first_turn_by_hand() -> None:
    """Two units that can do nothing: the text's stalemate compares turn 1 with the
    starting health (unchanged three times: turns 1, 2, 3); the engine's with 0, so turn 1
    counts as a change and the battle lasts turns 2, 3, 4 more."""
    idle = {"attack": 1, "defence": 1, "damage": 1, "health": 5, "abilities": []}
    for rules, turns in (("text", 3), ("engine", 4)):
        rows = simulator.simulate(duel(idle, idle, rules), 200, seed=1).rows
        assert rows is not None
        assert (rows["winner"] == DRAW).all() and (rows["steps"] == turns).all(), rules


def test_stalemate_first_turn_in_a_duel_of_chance() -> None:
    """Two unkillable strikers (attack 1, damage 1, defence 6): each turn makes eight
    independent rolls (2 strikes + 2 ripostes each), all 0 with chance q = (1 - h/2)^8,
    h = P(hit) = 1/14. Text: the battle ends after the first 3 turns in a row all 0:
    E[turns] = (1 - q^3) / ((1 - q) q^3). Engine: turn 1 never counts, so one turn more
    in expectation. (The engine's riposte at attack 0 and damage 0 is raised to 1 like
    the text's, so only the stalemate differs here; moves valued exactly under both, as
    five sampled rolls would often all be 0 and the duelists wait.)"""
    duelist = {"attack": 1, "defence": 6, "damage": 1, "health": HUGE, "abilities": ["strike"]}
    h = float(Fraction(1, 14))
    assert h == pytest.approx(roll_law(1, 6, 1)[1] * 2)
    q = (1 - h / 2) ** 8
    text_turns = (1 - q**3) / ((1 - q) * q**3)
    for rules, turns in (("text", text_turns), ("engine", text_turns + 1)):
        scenario = duel(duelist, duelist, rules, expected_value="exact")
        rows = simulator.simulate(scenario, 100_000, seed=47).rows
        assert rows is not None
        steps = rows["steps"]
        z = (steps.mean() - turns) / (steps.std(ddof=1) / np.sqrt(len(steps)))
        assert abs(z) < Z_LIMIT, (rules, steps.mean(), turns)


# --- the setting carried through the commands -----------------------------------------------


def test_odds_takes_rules_through_set() -> None:
    args = ["odds", "--ruleset", "skirmish", "--attacker", "3 cavalry"]
    args += ["--defender", "4 swordsman", "-n", "3000", "--seed", "5", "--json"]
    code, text_out = cli(*args)
    assert code == 0
    code, engine_out = cli(*args, "--set", "rules=engine")
    assert code == 0
    text, engine = json.loads(text_out), json.loads(engine_out)
    assert "text rules, exact" in text["kernel"] and "engine rules, sampled5" in engine["kernel"]
    # The engine's charge rolls the cavalry's attack 5 as damage: the charge removes more.
    assert engine["win"]["attacker"]["p"] > text["win"]["attacker"]["p"]
    code, output = cli(*args, "--set", "rules=engin")
    assert code == 2 and "did you mean 'engine'?" in output and "Traceback" not in output


def test_replay_says_which_rules() -> None:
    for rules in ("text", "engine"):
        scenario = under(bundled("cavalry_charge"), rules)
        shown = replay(scenario, 3, seed=8)
        expected_value = "exact" if rules == "text" else "sampled5"
        assert f"rules: {rules} (expected values: {expected_value})" in shown.lines()
        assert shown.to_dict()["rules"] == rules
    code, output = cli("replay", str(SCENARIOS / "example_units_engine.toml"), "--battle", "2")
    assert code == 0 and "rules: engine (expected values: sampled5)" in output


# Slow tier (docs/testing.md): 1.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_worth_and_sensitivity_keep_the_rules() -> None:
    engine = bundled("example_units_engine")
    assert engine.model.rules == "engine"
    more = reinforced(engine, "attacker", "swordsman", 1, "1 swordsman")
    assert more.model.rules == "engine" and more.model.expected_value == "sampled5"
    ruleset = get("skirmish")
    knob = next(k for k in ruleset.knobs(engine) if k.kind == "rating")
    turned = from_data(ruleset.with_knob(engine, knob, knob.value + 1), Source("knob"))
    assert turned.model.rules == "engine"
    # End to end: the base point of a sensitivity run is the engine's battle.
    result = simulator.sensitivity(engine, 400, seed=6, side="defender")
    rows = simulator.simulate(engine, 400, seed=6).rows
    assert rows is not None
    assert result.base == pytest.approx(float(np.mean(rows["winner"] == 1)))
