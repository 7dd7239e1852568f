"""Olympia's waves (docs/unfolding.md, "Waves"; docs/olympia.md): each next army fights
the other side as the battle before left it (men per unit and row, wounded nobles'
health, the structure's defense and damage, the engines standing)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from simulator.cli import app
from simulator.results.stats import Tally
from simulator.rulesets.olympia.model import SIDES
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.rulesets.olympia.waves import LEFT_PREFIX
from simulator.scenario.scenario import prepare
from simulator.testing import reproducibility, simulate_rows, tally_differences
from tests import ROOT
from tests.reference import waves as reference
from tests.test_waves import mutant_tally, scenario_of, without_waves
from tests.test_waves import test_the_whole_battle_is_the_chain_of_its_waves as whole_chain

runner = CliRunner()
#: The bundled example: swordsmen, then knights, then soldiers against two nobles with
#: soldiers in a battered tower and archers behind them (two units of soldiers in one
#: row: one kind for the skip kernel, whose last deaths are shared out at the end).
TOWER = (ROOT / "examples/waves/tower_in_three_assaults.toml").read_text()
#: The defender brings the waves: knights attack pikemen, whom swordsmen and then a
#: noble with soldiers and crossbowmen behind follow.
DEFENDER_WAVES = """
ruleset = "olympia"
name = "a defence in depth"

[[attacker.units]]
men = { knight = 5 }

[[defender.units]]
men = { pikeman = 4 }

[[defender.waves]]
[[defender.waves.units]]
men = { swordsman = 4 }

[[defender.waves]]
[[defender.waves.units]]
men = [{ type = "soldier", count = 6 }, { type = "crossbowman", count = 3, behind = 1 }]
"""
KERNELS = ("chain", "skip", "strike")


def with_kernel(text: str, kernel: str) -> str:
    return text.replace(
        "\n[[attacker.units]]", f'\n[battle]\nkernel = "{kernel}"\n\n[[attacker.units]]', 1
    )


# Slow tier (docs/testing.md): 4.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_waves_keep_the_randomness_contract() -> None:
    assert reproducibility(scenario_of(TOWER), battles=1_500, seed=4) == []
    assert reproducibility(scenario_of(DEFENDER_WAVES), battles=1_500, seed=4) == []


# Slow tier (docs/testing.md): 5.1 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS)
def test_the_first_wave_is_the_battle_without_waves(kernel: str) -> None:
    text = with_kernel(TOWER, kernel)
    rows = simulate_rows(scenario_of(text), 3_000, 8)
    plain = simulate_rows(without_waves(text), 3_000, 8)
    assert np.array_equal(rows["wave.1.winner"], plain["winner"])
    assert np.array_equal(rows["wave.1.steps"], plain["steps"])
    for side, kind in (("attacker", "swordsman"), ("defender", "soldier"), ("defender", "archer")):
        lost = rows[f"wave.1.casualties.{side}.{kind}"]
        assert np.array_equal(lost, plain[f"casualties.{side}.{kind}"])


@pytest.mark.parametrize(("text", "side"), [(TOWER, "attacker"), (DEFENDER_WAVES, "defender")])
def test_the_whole_battle_is_the_chain_of_its_waves(text: str, side: str) -> None:
    whole_chain(text, side)


#: Over 300 men a side: the skip kernel's deaths in batches run.
LARGE = """
ruleset = "olympia"
[[attacker.units]]
men = { soldier = 200 }
[[attacker.units]]
men = { soldier = 150, knight = 20 }
[[defender.units]]
men = { soldier = 180, archer = 30 }
[[defender.units]]
men = { soldier = 170 }
"""


@pytest.mark.parametrize(
    ("text", "kernel"),
    # LARGE on skip runs its kernel for deaths in batches, which only the slow tier
    # compiles (tests/tiers.py).
    [
        *((TOWER, kernel) for kernel in KERNELS),
        pytest.param(LARGE, "skip", marks=pytest.mark.slow),
        (LARGE, "strike"),
    ],
)
def test_each_groups_state_at_the_end_adds_up_to_the_battles_row(text: str, kernel: str) -> None:
    """A run that keeps the groups' state gives the battles a plain run gives, and
    each side's men left of each type, its engines and its nobles' wounds agree with
    its row (casualties, engines lost, nobles wounded and killed), battle by battle."""
    model = without_waves(with_kernel(text, kernel)).model
    plain = OlympiaPrepared(model)
    kept = plain.for_waves()
    battles = 400 if text is LARGE and kernel == "strike" else 3_000
    rows = kept.run(7, 0, battles)
    for name, column in plain.run(7, 0, battles).items():
        assert np.array_equal(rows[name], column), name
    groups = kept.arrays.groups
    assert kept.memory_bytes(1_000) - plain.memory_bytes(1_000) == 8 * len(groups) * 1_000
    for s, side in enumerate(SIDES):
        for t in {m.type for u in model.sides[s].units for m in u.men}:
            brought = sum(m.count for u in model.sides[s].units for m in u.men if m.type == t)
            mine = [
                g
                for g, (gs, u, j) in enumerate(kept.arrays.origins)
                if gs == s and u >= 0 and j >= 0 and model.sides[s].units[u].men[j].type == t
            ]
            left = sum(rows[f"{LEFT_PREFIX}{g}"] for g in mine)
            assert np.array_equal(left, brought - rows[f"casualties.{side}.{t}"]), (side, t)
            assert all((rows[f"{LEFT_PREFIX}{g}"] >= 0).all() for g in mine)
        nobles = [g for g, (gs, _, j) in enumerate(kept.arrays.origins) if gs == s and j < 0]
        health = np.stack([rows[f"{LEFT_PREFIX}{g}"] for g in nobles if groups[g, 4] == 1])
        written = np.array([[u.noble.health] for u in model.sides[s].units])
        assert np.array_equal((health <= 0).sum(axis=0), rows[f"nobles_killed.{side}"])
        hit = (health > 0) & (health < written)
        assert np.array_equal(hit.sum(axis=0), rows[f"nobles_wounded.{side}"])


#: The defender's second noble has one pikeman: once he is down, the noble may be hit.
WOUNDS = """
ruleset = "olympia"
[[attacker.units]]
men = { knight = 3 }
[[attacker.waves]]
[[attacker.waves.units]]
men = { knight = 3 }
[defender]
break_point = 0
[[defender.units]]
men = { pikeman = 6 }
[[defender.units]]
men = { pikeman = 1 }
"""


def test_a_wounded_noble_comes_back_with_the_health_he_was_left() -> None:
    """The side the next wave meets has a wounded noble back with his health left,
    never a dead one; a side that lost left the field."""
    prepared = prepare(scenario_of(WOUNDS))
    first = prepared.openers[0]
    rows = first.run(3, 0, 4_000)
    index, tables = first.survivors(rows, "defender", prepared.waves.data["defender"])
    second = [t["units"][1] for t in tables if t is not None and len(t["units"]) == 2]
    healths = [unit["noble"]["health"] for unit in second]
    assert any(0 < h < 100 for h in healths) and all(h > 0 for h in healths)
    assert any(unit["men"] == [] for unit in second)
    gone = np.array([tables[i] is None for i in index])
    assert np.array_equal(gone, rows["winner"] == 0)  # a side that lost left the field
    killed = rows["nobles_killed.defender"] > 0
    alone = np.array([tables[i] is not None and len(tables[i]["units"]) == 1 for i in index])
    assert np.array_equal(killed & ~gone, alone & ~gone)


@functools.cache
def _reference_tally(text: str, battles: int) -> Tally:
    """The reference chain's tally (olympia has no turn limit: its column left out)."""
    rows = reference.run(scenario_of(text).model, battles, 11)
    return Tally.of({name: column for name, column in rows.items() if name != "turn_limit"})


@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(("text", "reference_battles"), [(TOWER, 1_500), (DEFENDER_WAVES, 1_500)])
def test_waves_agree_with_the_reference(text: str, reference_battles: int, kernel: str) -> None:
    """Every column (the whole battle's and each wave's) of 20,000 battles on each
    kernel against the plain-Python chain of reference olympia battles, which rebuilds
    the side a battle left from its own men (tests/reference/wave_fights_olympia.py):
    no difference at a family-wise false-alarm rate of 0.001."""
    kernel_tally = Tally.of(simulate_rows(scenario_of(with_kernel(text, kernel)), 20_000, 5))
    slow = _reference_tally(text, reference_battles)
    assert set(kernel_tally.columns) == set(slow.columns)
    assert tally_differences(kernel_tally, slow) == []


@pytest.mark.slow
def test_the_reference_sees_a_wrong_survivor() -> None:
    """The comparison above has teeth: a package whose survivors all stood in the front
    row (the archers' place behind the soldiers forgotten) differs from the reference."""

    def to_the_front(table: dict[str, Any]) -> None:
        for unit in table["units"]:
            unit["behind"] = 0
            for men in unit["men"]:
                men["behind"] = 0

    kernel = mutant_tally(scenario_of(TOWER), to_the_front)
    assert tally_differences(kernel, _reference_tally(TOWER, 1_500)) != []


# Slow tier (docs/testing.md): 2.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_example_runs_with_its_waves_table() -> None:
    example = str(ROOT / "examples/waves/tower_in_three_assaults.toml")
    shown = runner.invoke(app, ["run", example, "-n", "2000"], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert "Waves: the attacker's armies" in " ".join(shown.stdout.split())


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        (
            "[[attacker.waves.units]]\nmen = { knigth = 3 }\n",
            "attacker.waves[0].units[0].men.knigth",
        ),
        (
            "[[attacker.waves.units]]\nmen = { knight = 0 }\n",
            "attacker.waves[0]: a wave with no men",
        ),
        (
            "break_point = 120\n[[attacker.waves.units]]\nmen = { knight = 2 }\n",
            "attacker.waves[0].break_point",
        ),
    ],
)
def test_bad_waves_get_one_line_naming_the_key(tmp_path: Path, added: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'ruleset = "olympia"\n[[attacker.units]]\nmen = { knight = 5 }\n'
        "[[attacker.waves]]\n" + added + "[[defender.units]]\nmen = { pikeman = 9 }\n"
    )
    result = runner.invoke(app, ["run", str(path), "-n", "100"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    line = " ".join(result.output.split())
    assert expected in line, line
