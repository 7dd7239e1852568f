"""Waves in skirmish (docs/unfolding.md, "Waves"): each wave fights the other side's
participants as the battle before it left them, its own stacks in place of the field's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simulator.rulesets.skirmish.prepare import health_column
from simulator.scenario.scenario import from_data, prepare
from tests.test_interrupt import ROOT
from tests.test_waves import _bad, scenario_of
from tests.wave_checks import check_mutation_seen, check_run_reports_waves

#: The attacker's three waves: two swordsmen, then a swordsman and an archer that
#: withdraw at one left, then two cavalry, against a giant, a priest (a healer) and a
#: wounded archer on a second tile; a hermit's archer stays out.
ATTACKER_WAVES = ROOT / "examples" / "waves" / "riders_on_a_town.toml"

#: The defender brings the waves: a swordsman, then a priest and a wounded swordsman,
#: then two archers on another tile, against a cavalry and a swordsman.
DEFENDER_WAVES = """
ruleset = "skirmish"
name = "a town defended in depth"

[battle]
attacked = [0, 0]
attacking = [1, 0]

[[stacks]]
tile = [1, 0]
owner = "riders"
units = ["cavalry", "swordsman"]

[[stacks]]
tile = [0, 0]
owner = "town"
units = ["swordsman"]

[[defender.waves]]
[[defender.waves.stacks]]
tile = [0, 0]
owner = "town"
units = ["priest", "swordsman(health=3)"]

[[defender.waves]]
[[defender.waves.stacks]]
tile = [0, 1]
owner = "town"
units = ["2 archer"]
"""

SCENARIOS = [(ATTACKER_WAVES.read_text(), "attacker"), (DEFENDER_WAVES, "defender")]


@pytest.mark.parametrize(("text", "side"), SCENARIOS)
def test_the_side_left_is_each_participant_alive_at_its_health(text: str, side: str) -> None:
    """Battle by battle, the side a fight left holds exactly the participants alive at
    its end, each at the health its row gives, on its own tile and with its owner; and
    that side, read again, is a scenario whose participants start so."""
    scenario = scenario_of(text)
    first = prepare(scenario).openers[0]
    other = "defender" if side == "attacker" else "attacker"
    rows = first.run(3, 0, 2_000)
    index, tables = first.survivors(rows, other, {})
    own = ("attacker", "defender").index(other)
    fighters = [p for p in first.battle.participants if p.side == own]
    assert len(tables) > 3 and None in tables  # several states, and a side wiped out
    for battle in range(2_000):
        table = tables[index[battle]]
        alive = [(p, int(rows[health_column(p)][battle])) for p in fighters]
        # Stack by stack (the table's order; a tile's stacks keep theirs).
        alive = sorted(((p, h) for p, h in alive if h > 0), key=lambda ph: ph[0].stack)
        if table is None:
            assert not alive
            continue
        written = [
            (tuple(stack["tile"]), stack["owner"], unit["type"], unit["health"])
            for stack in table["stacks"]
            for unit in stack["units"]
        ]
        stacks = first.battle.stacks
        assert written == [
            (stacks[p.stack].tile, stacks[p.stack].owner, p.unit.name, h) for p, h in alive
        ]
    # Read again against the wave, the side starts as it was left.
    table = next(t for t in tables if t is not None)
    data = {**scenario.data, other: table}
    data[side] = {k: v for k, v in data.get(side, {}).items() if k != "waves"}
    again = from_data(data, scenario.source).model
    started = [(p.unit.name, p.health, p.healed) for p in again.participants if p.side == own]
    assert sorted(started) == sorted(
        (unit["type"], unit["health"], False) for s in table["stacks"] for unit in s["units"]
    )


def test_a_rule_naming_a_type_gone_holds_from_the_start() -> None:
    """The other side's ``gone`` naming a type the battle killed off is written as
    ``after = 1`` (it holds from the start of the next fight); kept where it is there."""
    rule = '[attacker.retreat]\ngone = "cavalry"\n\n'
    text = DEFENDER_WAVES.replace("[[defender.waves]]", rule + "[[defender.waves]]", 1)
    scenario = scenario_of(text)
    first = prepare(scenario).openers[0]
    attackers = [p for p in first.battle.participants if p.side == 0]
    assert [p.unit.name for p in attackers] == ["cavalry", "swordsman"]
    health = {"cavalry": np.array([3, 0]), "swordsman": np.array([2, 4])}
    rows = {health_column(p): health[p.unit.name] for p in attackers}
    index, tables = first.survivors(rows, "attacker", scenario.data["attacker"])
    kept, lost = tables[index[0]], tables[index[1]]
    assert kept is not None and lost is not None
    assert kept["retreat"] == {"gone": "cavalry"}
    assert lost["retreat"] == {"after": 1}
    swordsman = {"type": "swordsman", "health": 4}
    assert lost["stacks"] == [{"tile": [1, 0], "owner": "riders", "units": [swordsman]}]


def _wounds_forgotten(table: dict[str, object]) -> None:
    for stack in table["stacks"]:  # type: ignore[attr-defined]
        for unit in stack["units"]:
            unit.pop("health")


@pytest.mark.slow
def test_the_skirmish_reference_sees_a_wound_forgotten() -> None:
    """The comparison above has teeth: survivors back at full health (the battle's
    wounds forgotten) differ from the reference."""
    check_mutation_seen(ATTACKER_WAVES.read_text(), 3_000, _wounds_forgotten)


# Slow tier (docs/testing.md): 1.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_run_reports_skirmish_waves() -> None:
    """The bundled example through `battle-odds run`: the waves' table at any width,
    each wave's answer in JSON."""
    answer = check_run_reports_waves(
        ATTACKER_WAVES, "skirmish", "attacker", 3, ["attacker.cavalry"]
    )
    assert answer["waves"][2]["fought"]["p"] > 0.9  # the first two mostly fail


FIELD = """ruleset = "skirmish"
[battle]
attacked = [0, 0]
attacking = [1, 0]
[[stacks]]
tile = [1, 0]
owner = "red"
units = ["swordsman"]
[[stacks]]
tile = [0, 0]
owner = "blue"
units = ["giant"]
"""
WAVE = '[[attacker.waves]]\nstacks = [{{ tile = {tile}, owner = "{owner}", units = {units} }}]\n'


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        (
            WAVE.format(tile="[1, 0]", owner="blue", units='["cavalry"]'),
            ":14: attacker.waves[0].stacks[0].owner: 'blue' does not fight for the attacker on "
            "this field (its owner 'red' or an ally does)",
        ),
        (
            WAVE.format(tile="[5, 5]", owner="red", units='["cavalry"]'),
            ":14: attacker.waves[0].stacks[0].tile: [5, 5] is not the attacked tile [0, 0]",
        ),
        (
            WAVE.format(tile="[1, 0]", owner="red", units='["cavalier"]'),
            "attacker.waves[0].stacks[0].units[0]: unknown unit type 'cavalier' (did you mean "
            "'cavalry'?)",
        ),
        (
            "[[attacker.waves]]\nstacks = []\n",
            "attacker.waves[0].stacks: no stacks: expected at least one [[attacker.stacks]] entry",
        ),
        (
            '[defender]\nstacks = [{ tile = [0, 0], owner = "red", units = ["giant"] }]\n',
            "defender.stacks[0].owner: 'red' does not fight for the defender",
        ),
    ],
)
def test_bad_skirmish_waves_get_one_line_naming_the_key(
    tmp_path: Path, added: str, expected: str
) -> None:
    assert expected in _bad(tmp_path, FIELD + added)
