"""Waves in blocks (docs/unfolding.md, "Waves"): each wave fights the other side's blocks
as the battle before it left them: steps kept, the castle's garrison in it, the field's
in the field, reserves still on the road, retreated and eliminated blocks gone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels import blocks as k
from simulator.scenario.scenario import from_data, prepare
from tests.test_interrupt import ROOT
from tests.test_waves import _bad, scenario_of
from tests.wave_checks import check_mutation_seen, check_run_reports_waves

#: The attacker's three waves against a garrison in a keep, a host in the field and a
#: relief arriving in round 2; the attacker storms when stronger, knights charge.
ATTACKER_WAVES = ROOT / "examples" / "waves" / "assaults_on_a_keep.toml"

#: The defender brings the waves: a host that retreats when weaker (some blocks leave
#: by the road) and withdraws at two steps left, then a second host and a late reserve.
DEFENDER_WAVES = """
ruleset = "blocks"
name = "a defence in depth"

[policy]
retreat = "when_weaker"
retreat_round = 2

[[attacker.blocks]]
name = "Emirs"
rating = "B2"
steps = 4

[[attacker.blocks]]
name = "Archers"
rating = "A1"
steps = 3

[[attacker.blocks]]
name = "Late"
rating = "C3"
steps = 2
at = "reserve"
round = 3

[[defender.blocks]]
name = "Militia"
rating = "C1"
steps = 3

[defender.retreat]
at_most = 1

[[defender.waves]]
[[defender.waves.blocks]]
name = "Knights"
rating = "B3"
steps = 3
traits = ["knights"]

[[defender.waves]]
[[defender.waves.blocks]]
name = "Spears"
rating = "C2"
steps = 4

[[defender.waves.blocks]]
name = "Levy"
rating = "C1"
steps = 2
at = "reserve"
round = 2
"""

SCENARIOS = [(ATTACKER_WAVES.read_text(), "attacker"), (DEFENDER_WAVES, "defender")]


# Slow tier (docs/testing.md): 2.7 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "side", "met"),
    [(SCENARIOS[0][0], "attacker", {"castle", "field"}), (DEFENDER_WAVES, "defender", {"reserve"})],
)
def test_the_side_left_is_each_block_where_it_ended(text: str, side: str, met: set[str]) -> None:
    """Battle by battle against the rows and places: a block is left with its steps
    kept exactly when it ended in the area, in the castle where it ended there (or
    sallying), in the field where it ended there (or storming), on the road (with its
    round) where it had not arrived; and the side so written reads again."""
    scenario = scenario_of(text)
    other = "defender" if side == "attacker" else "attacker"
    first = prepare(scenario).openers[0]
    rows = first.for_waves().run(3, 0, 3_000)
    data = {k: v for k, v in scenario.data[other].items() if k != "waves"}
    index, tables = first.survivors(rows, other, data)
    assert len(tables) > 3
    places: dict[str, set[int]] = {"castle": set(), "field": set(), "reserve": set()}
    for battle in range(3_000):
        table = tables[index[battle]]
        kept = {b["name"]: b for b in (table or {}).get("blocks", [])}
        for block in first.battle.sides[("attacker", "defender").index(other)]:
            place = int(rows[f"place.{other}.{block.name}"][battle])
            lost = int(rows[f"casualties.{other}.{block.name}"][battle])
            expected = {0: "reserve", 1: "field", 2: "castle", 3: "field", 4: "castle"}
            if place not in expected:  # eliminated or gone by the road
                assert block.name not in kept
                continue
            written = kept[block.name]
            assert written["steps"] == block.steps - lost
            assert written["at"] == expected[place]
            arriving = written["at"] == "reserve"
            assert written.get("round") == (block.arrives if arriving else None)
            places[written["at"]].add(battle)
        if table is not None:
            again_data = {**scenario.data, other: table}
            again_data[side] = {k: v for k, v in again_data[side].items() if k != "waves"}
            again = from_data(again_data, scenario.source).model.sides[
                ("attacker", "defender").index(other)
            ]
            assert [(b.name, b.steps, b.at) for b in again] == [
                (b["name"], b["steps"], b["at"]) for b in table["blocks"]
            ]
    assert {at for at, battles in places.items() if battles} >= met  # each place is met


def test_a_rule_naming_a_block_gone_holds_from_the_start() -> None:
    """The other side's ``gone`` naming a block the battle eliminated is written as
    ``after = 1`` (it holds from the start of the next fight); kept where it is there."""
    text = DEFENDER_WAVES.replace(
        '[[attacker.blocks]]\nname = "Emirs"',
        '[attacker.retreat]\ngone = "Archers"\nat_most = "20%"\n\n'
        '[[attacker.blocks]]\nname = "Emirs"',
    )
    scenario = scenario_of(text)
    first = prepare(scenario).openers[0]
    field, gone, reserve = int(k.FIELD), int(k.GONE), int(k.RESERVE)
    rows = {
        "casualties.attacker.Emirs": np.array([1, 1]),
        "casualties.attacker.Archers": np.array([0, 3]),
        "casualties.attacker.Late": np.array([0, 0]),
        "place.attacker.Emirs": np.array([field, field]),
        "place.attacker.Archers": np.array([field, gone]),
        "place.attacker.Late": np.array([reserve, reserve]),
    }
    data = {k: v for k, v in scenario.data["attacker"].items() if k != "waves"}
    index, tables = first.survivors(rows, "attacker", data)
    kept, lost = tables[index[0]], tables[index[1]]
    assert kept is not None and lost is not None
    assert kept["retreat"] == {"gone": "Archers", "at_most": "20%"}
    assert lost["retreat"] == {"at_most": "20%", "after": 1}
    assert [b["name"] for b in lost["blocks"]] == ["Emirs", "Late"]
    assert lost["blocks"][0]["steps"] == 3 and lost["blocks"][1]["round"] == 3


def _garrison_out(table: dict[str, object]) -> None:
    for block in table["blocks"]:  # type: ignore[attr-defined]
        if block["at"] == "castle":
            block["at"] = "field"


def _steps_restored(table: dict[str, object]) -> None:
    for block in table["blocks"]:  # type: ignore[attr-defined]
        block["steps"] = block["max_steps"]


@pytest.mark.slow
@pytest.mark.parametrize("mutate", [_garrison_out, _steps_restored])
def test_the_blocks_reference_sees_a_wrong_survivor(mutate) -> None:  # type: ignore[no-untyped-def]
    """The comparison above has teeth: the garrison written in the field, or blocks
    back at full strength, differ from the reference."""
    check_mutation_seen(ATTACKER_WAVES.read_text(), 3_000, mutate)


def test_run_reports_blocks_waves() -> None:
    answer = check_run_reports_waves(
        ATTACKER_WAVES, "blocks", "attacker", 3, ["attacker.Turcopoles"]
    )
    assert 0.1 < answer["waves"][2]["fought"]["p"] < 0.9


FRONT = """ruleset = "blocks"
[[attacker.blocks]]
name = "A"
rating = "B2"
steps = 3
[[defender.blocks]]
name = "D"
rating = "B2"
steps = 3
"""


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        (
            '[[attacker.waves]]\nblocks = [{ name = "W", rating = "Z9", steps = 2 }]\n',
            "attacker.waves[0].blocks[0].rating: rating 'Z9' is not a block rating",
        ),
        (
            '[[attacker.waves]]\nblocks = [{ name = "W", rating = "B2", steps = 2, '
            'at = "castle" }]\n',
            "attacker.waves[0].blocks: block 'W' is in the castle but there is no castle",
        ),
        (
            "[[attacker.waves]]\nblocks = []\n",
            "attacker.waves[0].blocks: no blocks: expected at least one",
        ),
        (
            "[battle]\ncastle_limit = 1\nsiege = true\n[[attacker.waves]]\n"
            'blocks = [{ name = "W", rating = "B2", steps = 2 }]\n'
            '[[defender.blocks]]\nname = "K"\nrating = "B2"\nsteps = 1\nat = "castle"\n',
            "attacker.waves: the blocks ruleset does not give waves: an existing siege",
        ),
    ],
)
def test_bad_blocks_waves_get_one_line_naming_the_key(
    tmp_path: Path, added: str, expected: str
) -> None:
    assert expected in _bad(tmp_path, FRONT + added)


def test_the_place_columns_stay_out_of_a_plain_run() -> None:
    rows = prepare(scenario_of(FRONT)).run(1, 0, 100)
    assert not [name for name in rows if name.startswith("place.")]
    assert np.all(rows["winner"] >= 0)
