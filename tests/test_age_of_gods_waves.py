"""Age of Gods' waves (docs/unfolding.md, "Waves"; docs/age_of_gods.md): each next army
fights the other side as the battle before left it (olympia's men per unit and row and
wounded nobles, with the men control limits kept out back in their unit, allies who
came among its units and allies still to come on their way)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kernels import age_of_gods as k
from kernels.olympia import layout as ol
from simulator.rulesets.age_of_gods.model import SIDES
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared
from simulator.rulesets.olympia.waves import LEFT_PREFIX
from simulator.scenario.scenario import prepare
from simulator.testing import reproducibility
from tests import ROOT
from tests.test_waves import _bad, scenario_of, without_waves
from tests.test_waves import test_the_whole_battle_is_the_chain_of_its_waves as whole_chain
from tests.wave_checks import (
    check_first_wave,
    check_mutation_seen,
    check_reference_agreement,
    check_run_reports_waves,
)

EXAMPLE = ROOT / "examples/waves/keep_under_siege.toml"
#: Three assaults on a tower: control limits keep men out, peasants flee, allies join
#: in round 3.
KEEP = EXAMPLE.read_text()
#: The defender brings the waves, under the engine's rules: knights and a soldier (whose
#: noble is hit once he is down) against pikemen, then soldiers, then soldiers with
#: archers behind.
DEFENDER_WAVES = """
ruleset = "age_of_gods"
name = "a defence in depth"
[battle]
rules = "engine"
[attacker]
break_point = 0
[[attacker.units]]
men = { knight = 6 }
[[attacker.units]]
men = { soldier = 1 }
[[defender.units]]
men = { pikeman = 8 }
[[defender.waves]]
[[defender.waves.units]]
men = { soldier = 10 }
[[defender.waves]]
[[defender.waves.units]]
men = [{ type = "soldier", count = 6 }, { type = "archer", count = 4, behind = 1 }]
"""


# Slow tier (docs/testing.md): 13.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_waves_keep_the_randomness_contract() -> None:
    assert reproducibility(scenario_of(KEEP), battles=1_500, seed=4) == []
    assert reproducibility(scenario_of(DEFENDER_WAVES), battles=1_500, seed=4) == []


# Slow tier (docs/testing.md): 6.2 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("text", [KEEP, DEFENDER_WAVES])
def test_the_first_wave_is_the_battle_without_waves(text: str) -> None:
    check_first_wave(text)


# Slow tier (docs/testing.md): 10.4 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("text", "side"), [(KEEP, "attacker"), (DEFENDER_WAVES, "defender")])
def test_the_whole_battle_is_the_chain_of_its_waves(text: str, side: str) -> None:
    whole_chain(text, side)


def test_each_groups_state_at_the_end_adds_up_to_the_battles_row() -> None:
    """A run that keeps the groups' state gives the battles a plain run gives (its rows
    and its rows after each round alike), and each side's men left of each type and its
    nobles' wounds agree with its row, battle by battle; an ally who never came is
    none."""
    model = without_waves(KEEP).model
    plain = AgeOfGodsPrepared(model)
    kept = plain.for_waves()
    rows = kept.run(7, 0, 3_000)
    for name, column in plain.run(7, 0, 3_000).items():
        assert np.array_equal(rows[name], column), name
    for name, column in plain.run_through(7, 0, 3_000, [1, 3]).items():
        assert np.array_equal(kept.run_through(7, 0, 3_000, [1, 3])[name], column), name
    groups, origins = kept.arrays.groups, kept.arrays.origins
    assert kept.memory_bytes(1_000) - plain.memory_bytes(1_000) == 8 * len(groups) * 1_000
    came = model.allies[1].round <= rows["steps"]
    assert (~came).any() and came.any()
    for s, side in enumerate(SIDES):
        units = model.units_of(s)
        men = [g for g, (gs, _, j) in enumerate(origins) if gs == s and j >= 0]
        for t in {units[origins[g][1]][0].men[origins[g][2]].type for g in men}:
            mine = [g for g in men if units[origins[g][1]][0].men[origins[g][2]].type == t]
            left = sum(rows[f"{LEFT_PREFIX}{g}"] for g in mine)
            # The men of the groups on the field at the end (allies once they came).
            brought = sum(
                groups[g, ol.G_COUNT] * (groups[g, k.G_ARRIVES] <= rows["steps"]) for g in mine
            )
            assert np.array_equal(left, brought - rows[f"casualties.{side}.{t}"]), (side, t)
        nobles = [g for g, (gs, _, j) in enumerate(origins) if gs == s and j < 0]
        health = np.stack([rows[f"{LEFT_PREFIX}{g}"] for g in nobles])
        assert np.array_equal((health <= 0).sum(axis=0), rows[f"nobles_killed.{side}"])


def test_the_side_left_brings_back_the_men_kept_out_and_the_allies_to_come() -> None:
    """The tables the next wave meets: the defender's soldiers and peasants (six peasants
    kept out by control limits are back, fielded or not), its structure, the allies on
    their way with the rounds they still had to wait, or among its units once they came."""
    prepared = prepare(scenario_of(KEEP))
    first = prepared.openers[0]
    rows = first.run(3, 0, 2_000)
    index, tables = first.survivors(rows, "defender", prepared.waves.data["defender"])
    steps = rows["steps"]
    for b in range(0, 2_000, 97):
        table = tables[index[b]]
        assert table is not None
        fled = rows["casualties.defender.peasant"][b]
        assert _men(table, "peasant") == 12 - fled
        if steps[b] < 3:
            assert table["allies"]["round"] == 3 - steps[b]
            assert len(table["units"]) == 1
        else:
            assert "allies" not in table
            assert _men(table, "pikeman") == 10 - rows["casualties.defender.pikeman"][b]
        assert table["structure"]["damage"] == rows["structure_damage.defender"][b]


def _men(table: dict[str, Any], kind: str) -> int:
    return sum(m["count"] for u in table["units"] for m in u["men"] if m["type"] == kind)


@pytest.mark.slow
@pytest.mark.parametrize(("text", "reference_battles"), [(KEEP, 1_000), (DEFENDER_WAVES, 1_500)])
def test_waves_agree_with_the_reference(text: str, reference_battles: int) -> None:
    """Every column (the whole battle's and each wave's) of 20,000 battles against the
    plain-Python chain of reference Age of Gods battles, which rebuilds the side a
    battle left from its own men (tests/reference/wave_fights_age_of_gods.py)."""
    check_reference_agreement(text, reference_battles)


@pytest.mark.slow
def test_the_reference_sees_a_wrong_survivor() -> None:
    """The comparison above has teeth: a package whose allies still on their way never
    came (the defender's pikemen forgotten) differs from the reference."""

    def no_allies(table: dict[str, Any]) -> None:
        table.pop("allies", None)

    check_mutation_seen(KEEP, 1_000, no_allies)


# Slow tier (docs/testing.md): 8.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_example_runs_with_its_waves_table() -> None:
    check_run_reports_waves(EXAMPLE, "age_of_gods", "attacker", 3, ["attacker.hvy_foot"])


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        ("[[attacker.waves.units]]\nmen = { knigth = 3 }\n", "attacker.waves[0].units[0].men"),
        (
            "[[attacker.waves.units]]\nmen = { knight = 0 }\n",
            "attacker.waves[0]: a wave with no men",
        ),
        (
            "[attacker.waves.allies]\nround = 0\n[[attacker.waves.allies.units]]\n"
            "men = { knight = 1 }\n[[attacker.waves.units]]\nmen = { knight = 2 }\n",
            "attacker.waves[0].allies.round",
        ),
    ],
)
def test_bad_waves_get_one_line_naming_the_key(tmp_path: Path, added: str, expected: str) -> None:
    line = _bad(
        tmp_path,
        'ruleset = "age_of_gods"\n[[attacker.units]]\nmen = { knight = 5 }\n'
        "[[attacker.waves]]\n" + added + "[[defender.units]]\nmen = { pikeman = 9 }\n",
    )
    assert expected in line, line


def test_a_stop_rule_on_a_type_gone_holds_from_the_next_fights_start() -> None:
    """A side that won as its last peasants fled, with ``gone = "peasant"``: the side
    left cannot name a type it no longer fields, so its rule is written as the same
    rule holding from the start (withdraw after the first round), and the next fight
    reads it."""
    text = KEEP.replace("break_point = 20\n", 'break_point = 20\nretreat = { gone = "peasant" }\n')
    prepared = prepare(scenario_of(text))
    first = prepared.openers[0]
    rows = dict(first.run(3, 0, 50))
    origins = first.arrays.origins
    units = first.battle.units_of(1)
    for g, (s, u, j) in enumerate(origins):
        if s == 1 and j >= 0 and units[u][0].men[j].type == "peasant":
            rows[f"{LEFT_PREFIX}{g}"] = np.zeros(50, np.int64)
    first.arrays.kept_out[1][0][:] = [0] * len(first.arrays.kept_out[1][0])
    rows["winner"] = np.ones(50, np.int64)
    _, tables = first.survivors(rows, "defender", prepared.waves.data["defender"])
    assert tables and all(t is not None and t["retreat"] == {"after": 1} for t in tables)
    assert all(_men(t, "peasant") == 0 for t in tables if t is not None)
    fight = prepared.waves.fight(2, 0, tables[0])  # type: ignore[arg-type]
    assert fight.stop_rules[1].after == 1
