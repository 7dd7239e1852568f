"""The page's stop rules and battle in progress, without a browser: the form's fields
(the scenario's own ``[attacker.retreat]`` and ``[battle] from_step`` keys, in groups of
their own), the address that carries them, and their errors, which are the command
line's. In a real browser: tests/test_serve_browser.py."""

from __future__ import annotations

import shlex
from urllib.parse import parse_qsl

import pytest
import tomllib

from simulator.cli.unfolding import given_values
from simulator.errors import BattleOddsError, Source
from simulator.rulesets import InlineQuery
from simulator.rulesets.stop_rules import RETREAT, StopRule
from simulator.scenario.scenario import from_data, from_query
from simulator.serve.app import _one_line
from simulator.serve.question import FROM_STEP, Question, settings

ARMIES = {"attacker": "noble, 12 soldier, 4 archer@1", "defender": "noble, 14 pikeman"}
RULES = {
    "attacker.retreat.at_most": "30%",
    "attacker.retreat.gone": "archer",
    "defender.retreat.at_most": "5",
    "defender.retreat.after": "40",
    "defender.retreat.outnumbered": "2.5",
    "battle.from_step": "3",
}


def test_the_stop_rules_are_fields_of_their_own_groups():
    found = {s.path: s for s in settings("olympia")}
    for side in ("attacker", "defender"):
        for key in RETREAT:
            setting = found[f"{side}.retreat.{key}"]
            assert setting.field is RETREAT[key]
            assert setting.group == f"{side}.retreat"
    assert found["defender.retreat.after"].words == "after this many strikes"
    assert found[FROM_STEP].group == "progress"
    assert found[FROM_STEP].words == "strikes fought already"
    assert found["battle.terrain"].group == "settings"
    assert found["attacker.retreat.at_most"].to_dict()["group"] == "attacker.retreat"


def test_the_rules_reach_the_scenario_as_its_keys():
    question = Question.of({**ARMIES, **RULES})
    data = question.scenario.data
    assert data["attacker"]["retreat"] == {"at_most": "30%", "gone": "archer"}
    assert data["defender"]["retreat"] == {"at_most": 5, "after": 40, "outnumbered": 2.5}
    assert data["battle"]["from_step"] == 3
    model = question.scenario.model
    assert model.retreat == (
        StopRule(at_most_percent=30.0, gone="archer"),
        StopRule(at_most=5, after=40, outnumbered=2.5),
    )
    assert model.from_step == 3
    # The TOML copy is the same battle (run answers it with the same numbers).
    copied = from_data(tomllib.loads(question.to_toml()), Source("copy.toml"))
    assert copied.model == model


def test_the_address_carries_every_rule_and_a_link_restores_them():
    question = Question.of({**ARMIES, **RULES, "seed": "7"})
    address = question.address()
    for key, value in RULES.items():
        assert (key, value) in parse_qsl(address)
    again = Question.of(dict(parse_qsl(address)))
    assert again == question
    assert again.scenario.hash == question.scenario.hash


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("attacker.retreat.at_most", "-5", "-5 is below 0: expected a count of men, 0 or more"),
        ("attacker.retreat.at_most", "150%", "expected a whole number of men (5) or a percentage"),
        ("defender.retreat.at_most", "five", "expected a whole number of men (5) or a percentage"),
        ("attacker.retreat.gone", "knigt", "'knigt' is not a type this side fields"),
        ("defender.retreat.after", "0", "0 is out of range: expected 1..1,000,000"),
        ("defender.retreat.after", "x", "expected a whole number in 1..1,000,000, got a string"),
        ("attacker.retreat.outnumbered", "0.5", "0.5 is out of range: expected 1.0..1000.0"),
        ("battle.from_step", "-1", "-1: expected a step 0 or more"),
    ],
)
def test_bad_rules_are_the_command_lines_line(key, value, words):
    """The page's line is the one ``odds`` prints for the same option, its option named
    as the page names the field (``--attacker-retreat`` is "Attacker withdraws")."""
    with pytest.raises(BattleOddsError) as caught:
        Question.of({**ARMIES, key: value})
    line = _one_line(str(caught.value))
    assert words in line and "\n" not in line
    assert line.split(":")[0].split(" -")[0] in (
        "Attacker withdraws",
        "Defender withdraws",
        "Steps fought already",
    )
    side, _, rule = key.partition(".retreat.")
    with pytest.raises(BattleOddsError) as said:
        if rule:
            text = f"{rule.replace('_', ' ')} {value}"
            given = given_values(None, *((text, None) if side == "attacker" else (None, text)))
        else:
            given = given_values(int(value), None, None)
        from_query("olympia", InlineQuery(ARMIES["attacker"], ARMIES["defender"], {}), given)
    assert _one_line(str(said.value)) == line


def test_the_command_asks_the_same_scenario():
    question = Question.of({**ARMIES, **RULES, "battle.terrain": "swamp"})
    words = shlex.split(question.command())
    assert words[words.index("--attacker-retreat") + 1] == "at most 30%, gone archer"
    assert words[words.index("--from-step") + 1] == "3"
    given = given_values(3, "at most 30%, gone archer", "at most 5, after 40, outnumbered 2.5")
    query = InlineQuery(ARMIES["attacker"], ARMIES["defender"], {"terrain": "swamp"})
    assert from_query("olympia", query, given).hash == question.scenario.hash
