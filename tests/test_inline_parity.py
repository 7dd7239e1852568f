"""The one-line army syntax of ``odds`` and the scenario file accept and reject the same
armies, for every ruleset: each case writes one attacker both ways; both must load, or
both must fail with a user error (exit status 2), the one-line one naming its option."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.errors import BattleOddsError
from simulator.rulesets import InlineQuery
from simulator.scenario.scenario import from_query, load_scenario

HUGE = "99999999999999999999"

#: ruleset -> (defender on one line, file text with {attacker} for the attacker's part).
TEMPLATES = {
    "olympia": (
        "noble, 10 soldier",
        'ruleset = "olympia"\n{attacker}\n[[defender.units]]\nmen = {{ soldier = 10 }}\n',
    ),
    "age_of_gods": (
        "noble, 10 pikeman",
        'ruleset = "age_of_gods"\n{attacker}\n[[defender.units]]\nmen = {{ pikeman = 10 }}\n',
    ),
    "skirmish": (
        "2 swordsman",
        'ruleset = "skirmish"\n[battle]\nattacked = [2, 2]\nattacking = [2, 1]\n'
        'tile_owner = "defender"\n'
        '[[stacks]]\ntile = [2, 1]\nowner = "attacker"\n{attacker}\n'
        '[[stacks]]\ntile = [2, 2]\nowner = "defender"\nunits = ["2 swordsman"]\n',
    ),
    "blocks": (
        "B2:4",
        'ruleset = "blocks"\n[battle]\ncastle_limit = 0\n{attacker}\n'
        '[[defender.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 4\n',
    ),
    "confrontation": (
        "trooper",
        'ruleset = "confrontation"\n[battle]\nturns = 10\npolicy = "simple"\n'
        '[[attacker.stacks]]\nname = "a"\nat = [0, 0]\n{attacker}\n'
        '[[defender.stacks]]\nname = "d"\nat = [1, 0]\nunits = [{{ type = "trooper" }}]\n',
    ),
}

OLYMPIA_LIKE = [
    ("valid", "noble, 5 knight", "[[attacker.units]]\nmen = { knight = 5 }"),
    ("count 0", "noble, 0 knight", "[[attacker.units]]\nmen = { knight = 0 }"),
    ("negative", "noble, -3 knight", "[[attacker.units]]\nmen = { knight = -3 }"),
    ("huge", f"noble, {HUGE} knight", f"[[attacker.units]]\nmen = {{ knight = {HUGE} }}"),
    ("unknown type", "noble, 5 knigt", "[[attacker.units]]\nmen = { knigt = 5 }"),
    (
        "misspelt option",
        "noble(helth=5), 5 knight",
        "[[attacker.units]]\nnoble = { helth = 5 }\nmen = { knight = 5 }",
    ),
    (
        "nan",
        "noble(health=nan), 5 knight",
        "[[attacker.units]]\nnoble = { health = nan }\nmen = { knight = 5 }",
    ),
    (
        "health 0",
        "noble(health=0), 5 knight",
        "[[attacker.units]]\nnoble = { health = 0 }\nmen = { knight = 5 }",
    ),
    (
        "row 12",
        "noble, 5 knight@12",
        '[[attacker.units]]\nmen = [{ type = "knight", count = 5, behind = 12 }]',
    ),
]
CASES = {
    "olympia": OLYMPIA_LIKE,
    "age_of_gods": OLYMPIA_LIKE,
    "skirmish": [
        ("valid", "swordsman, archer", 'units = ["swordsman", "archer"]'),
        ("count 0", "0 giant, swordsman", 'units = ["0 giant", "swordsman"]'),
        (
            "count 0 table",
            "0 giant, swordsman",
            'units = [{ type = "giant", count = 0 }, "swordsman"]',
        ),
        ("negative", "-1 swordsman", 'units = ["-1 swordsman"]'),
        ("too many", "9 swordsman", 'units = ["9 swordsman"]'),
        ("huge", f"{HUGE} swordsman", f'units = ["{HUGE} swordsman"]'),
        ("unknown type", "swordsmen", 'units = ["swordsmen"]'),
        ("misspelt option", "swordsman(helth=3)", 'units = ["swordsman(helth=3)"]'),
        ("nan", "swordsman(health=nan)", 'units = ["swordsman(health=nan)"]'),
        ("health 0", "swordsman(health=0)", 'units = ["swordsman(health=0)"]'),
        ("health too high", "swordsman(health=6)", 'units = ["swordsman(health=6)"]'),
    ],
    "blocks": [
        ("valid", "B2:4", '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 4'),
        ("count 0", "B2:0", '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 0'),
        ("negative", "B2:-1", '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = -1'),
        ("huge", f"B2:{HUGE}", f'[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = {HUGE}'),
        ("unknown type", "Z9:4", '[[attacker.blocks]]\nname = "Z9"\nrating = "Z9"\nsteps = 4'),
        (
            "misspelt option",
            "B2:4 knigths",
            '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 4\ntraits = ["knigths"]',
        ),
        (
            "max below steps",
            "B2:3/2",
            '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 3\nmax_steps = 2',
        ),
        (
            "reserve round 9",
            "B2:4@r9",
            '[[attacker.blocks]]\nname = "B2"\nrating = "B2"\nsteps = 4\nat = "reserve"\nround = 9',
        ),
    ],
    "confrontation": [
        ("valid", "2 trooper", 'units = [{ type = "trooper" }, { type = "trooper" }]'),
        ("count 0", "0 trooper", "units = []"),
        ("negative", "trooper(arms=-1)", 'units = [{ type = "trooper", arms = -1 }]'),
        (
            "huge",
            f"trooper(integrity={HUGE})",
            f'units = [{{ type = "trooper", integrity = {HUGE} }}]',
        ),
        ("unknown type", "troper", 'units = [{ type = "troper" }]'),
        ("misspelt option", "trooper(arm=3)", 'units = [{ type = "trooper", arm = 3 }]'),
        ("nan", "trooper(arms=nan)", 'units = [{ type = "trooper", arms = nan }]'),
        ("too many", "4 trooper", "units = [" + ", ".join(['{ type = "trooper" }'] * 4) + "]"),
    ],
}


def outcome(load: object) -> str | None:
    """None if the scenario loads, else the user error's text (anything else fails)."""
    try:
        load()  # type: ignore[operator]
    except BattleOddsError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(
    ("ruleset", "case", "line", "file_part"),
    [(r, *case) for r, cases in CASES.items() for case in cases],
    ids=[f"{r}-{case[0]}" for r, cases in CASES.items() for case in cases],
)
def test_one_line_and_file_agree(
    ruleset: str, case: str, line: str, file_part: str, tmp_path: Path
) -> None:
    defender, template = TEMPLATES[ruleset]
    path = tmp_path / "army.toml"
    path.write_text(template.format(attacker=file_part))
    from_file = outcome(lambda: load_scenario(path))
    query = InlineQuery(line, defender, {})
    inline = outcome(lambda: from_query(ruleset, query))
    assert (from_file is None) == (inline is None), (from_file, inline)
    if case == "valid":
        assert from_file is None
    if inline is not None:
        assert "--attacker" in inline, inline
