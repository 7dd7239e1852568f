"""Waves (docs/unfolding.md, "Waves"): a side's next army fights what the battle before
it left, battle by battle, each wave on a stream of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError, Source
from simulator.results.stats import Tally
from simulator.rulesets.distinct import distinct_rows
from simulator.scenario.scenario import Scenario, from_data, prepare
from simulator.scenario.waves import NOT_FOUGHT, SIDE_WON, WAVE_BLOCK
from simulator.testing import reproducibility, simulate_rows, tally_differences
from tests.reference import waves as reference
from tests.test_human_output import raw_identifiers, too_wide
from tests.test_interrupt import MANY, ROOT, check_stopped, interrupt
from tests.wave_checks import mutant_rows, scenario_of

runner = CliRunner()

#: Three attacking waves against three militia, one turn a fight: the first wave mostly
#: draws (the turn limit), the second fights what it left and mostly wins, the third
#: comes in after the second's draws; some defenders are left at each step.
THREE_WAVES = """
ruleset = "confrontation"
name = "three waves against a militia"

[battle]
turns = 1

[units.raider]
arms = 5
resolve = 2
integrity = 5

[[attacker.stacks]]
at = [0, 0]
units = [{ type = "raider" }]

[[attacker.waves]]
[[attacker.waves.stacks]]
at = [0, 0]
units = [{ type = "trooper" }]

[[attacker.waves]]
[[attacker.waves.stacks]]
at = [0, 1]
units = [{ type = "militia" }]

[[defender.stacks]]
at = [1, 0]
units = [{ type = "militia" }, { type = "militia" }, { type = "militia" }]
"""

#: The defender brings the waves: a raider attacks a militia, which a trooper and then
#: two militia follow; two turns a fight.
DEFENDER_WAVES = """
ruleset = "confrontation"
name = "a defence in depth"

[battle]
turns = 2

[units.raider]
arms = 6
resolve = 2
integrity = 9

[[attacker.stacks]]
at = [0, 0]
units = [{ type = "raider" }]

[[defender.stacks]]
at = [1, 0]
units = [{ type = "militia" }]

[[defender.waves]]
[[defender.waves.stacks]]
at = [1, 0]
units = [{ type = "trooper" }]

[[defender.waves]]
[[defender.waves.stacks]]
at = [1, 0]
units = [{ type = "militia" }, { type = "militia" }]
"""


def without_waves(text: str) -> Scenario:
    data = tomllib.loads(text)
    for side in ("attacker", "defender"):
        data[side].pop("waves", None)
    return from_data(data, Source("test"))


# Slow tier (docs/testing.md): 6.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_waves_keep_the_randomness_contract() -> None:
    """One thread and all threads, chunks of 1,000 and 77, and the last third run alone
    (a chunk that starts inside a block counts its earlier battles again) give every
    wave's columns alike, battle by battle, over more than two blocks."""
    assert 2 * WAVE_BLOCK < 9_000
    assert reproducibility(scenario_of(THREE_WAVES), battles=9_000, seed=4) == []
    assert reproducibility(scenario_of(DEFENDER_WAVES), battles=1_500, seed=4) == []


def test_the_first_wave_is_the_battle_without_waves() -> None:
    rows = simulate_rows(scenario_of(THREE_WAVES), 3_000, 8)
    plain = simulate_rows(without_waves(THREE_WAVES), 3_000, 8)
    assert np.array_equal(rows["wave.1.winner"], plain["winner"])
    assert np.array_equal(rows["wave.1.steps"], plain["steps"])
    for side, kind in (("attacker", "raider"), ("defender", "militia")):
        lost = rows[f"wave.1.casualties.{side}.{kind}"]
        assert np.array_equal(lost, plain[f"casualties.{side}.{kind}"])


def test_a_wave_fights_on_a_stream_of_its_own() -> None:
    """Wave 3's army changed: waves 1 and 2 fight every battle exactly as before (each
    wave's numbers depend on the seed, the wave and the battle alone)."""
    stronger = THREE_WAVES.replace(
        'at = [0, 1]\nunits = [{ type = "militia" }]', 'at = [0, 1]\nunits = [{ type = "veteran" }]'
    )
    assert stronger != THREE_WAVES
    one = simulate_rows(scenario_of(THREE_WAVES), 4_000, 2)
    two = simulate_rows(scenario_of(stronger), 4_000, 2)
    for name in one:
        if name.startswith(("wave.1.", "wave.2.")):
            assert np.array_equal(one[name], two[name]), name
    assert "wave.3.casualties.attacker.veteran" in two  # the third wave did change


@pytest.mark.parametrize(
    ("text", "side"), [(THREE_WAVES, "attacker"), (DEFENDER_WAVES, "defender")]
)
def test_the_whole_battle_is_the_chain_of_its_waves(text: str, side: str) -> None:
    """A wave fights exactly when the one before it did not end in its side's win; the
    whole battle's winner is the last wave's, its steps and losses the waves' added."""
    rows = simulate_rows(scenario_of(text), 6_000, 3)
    count = 3
    fought = [rows[f"wave.{k}.winner"] != NOT_FOUGHT for k in range(1, count + 1)]
    assert fought[0].all()
    for k in range(1, count):
        came = fought[k - 1] & ~np.isin(rows[f"wave.{k}.winner"], SIDE_WON[side])
        assert np.array_equal(fought[k], came)
    assert fought[1].mean() > 0.05 and fought[2].mean() > 0.02  # the chain is exercised
    assert np.array_equal(rows["waves_fought"], np.sum(fought, axis=0))
    last = np.choose(rows["waves_fought"] - 1, [rows[f"wave.{k}.winner"] for k in (1, 2, 3)])
    assert np.array_equal(rows["winner"], last)
    steps = sum(np.where(f, rows[f"wave.{k}.steps"], 0) for k, f in enumerate(fought, 1))
    assert np.array_equal(rows["steps"], steps)
    for name in (n for n in rows if n.startswith("casualties.")):
        per_wave = [
            np.where(f, rows[f"wave.{k}.{name}"], 0)
            for k, f in enumerate(fought, 1)
            if f"wave.{k}.{name}" in rows
        ]
        assert np.array_equal(rows[name], sum(per_wave)), name


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "reference_battles"), [(THREE_WAVES, 2_000), (DEFENDER_WAVES, 1_500)]
)
def test_waves_agree_with_the_reference(text: str, reference_battles: int) -> None:
    """Every column (the whole battle's and each wave's) of 20,000 battles against the
    plain-Python chain of reference confrontation battles (tests/reference/waves.py),
    which rebuilds the side a battle left from its fighters, not from scenario tables:
    no difference at a family-wise false-alarm rate of 0.001."""
    scenario = scenario_of(text)
    kernel = Tally.of(simulate_rows(scenario, 20_000, 5))
    slow = Tally.of(reference.run(scenario.model, reference_battles, 11))
    assert set(kernel.columns) == set(slow.columns)
    assert tally_differences(kernel, slow) == []


def mutant_tally(scenario: Scenario, change: Callable[[dict[str, Any]], None]) -> Tally:
    """The Tally of :func:`tests.wave_checks.mutant_rows`: a package with a wrong survivor."""
    return Tally.of(mutant_rows(scenario, change))


@pytest.mark.slow
def test_the_reference_sees_a_wrong_survivor() -> None:
    """The comparison above has teeth: a package whose survivors came back at full
    integrity (the battle's damage forgotten) differs from the reference."""

    def healed(table: dict[str, Any]) -> None:
        for stack in table.get("stacks", []):
            for unit in stack["units"]:
                unit.pop("integrity")

    scenario = scenario_of(THREE_WAVES)
    kernel = mutant_tally(scenario, healed)
    slow = Tally.of(reference.run(scenario.model, 1_000, 11))
    assert tally_differences(kernel, slow) != []


# Slow tier (docs/testing.md): 2.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_run_reports_each_wave_and_the_whole_battle(tmp_path: Path) -> None:
    path = tmp_path / "waves.toml"
    path.write_text(THREE_WAVES)
    shown = runner.invoke(app, ["run", str(path), "-n", "4000", "--json"])
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.stdout)
    waves = answer["waves"]
    assert [w["wave"] for w in waves] == [1, 2, 3]
    assert waves[0]["fought"]["p"] == 1.0
    # The waves' wins add up to the whole battle's (a wave that wins is the last).
    added = sum(w["win"]["attacker"]["p"] for w in waves)
    assert added == pytest.approx(answer["win"]["attacker"]["p"], abs=1e-12)
    assert 0.1 < waves[0]["win"]["draw"]["p"] < 1  # a fight another wave follows
    assert set(waves[1]["casualties"]) == {"attacker.trooper", "defender.militia"}
    assert set(waves[1]["left"]) == {"attacker.trooper", "defender.militia"}
    assert not any(name.startswith("wave.") for name in answer["extras"])
    assert set(answer["casualties"]) == {
        "attacker.raider",
        "attacker.trooper",
        "attacker.militia",
        "defender.militia",
    }
    for columns in (60, 80, 200):
        text = runner.invoke(app, ["run", str(path), "-n", "2000"], env={"COLUMNS": str(columns)})
        assert text.exit_code == 0
        assert too_wide(text.stdout, columns) == []
        assert raw_identifiers(text.stdout, "confrontation") == []
        assert "Waves: the attacker's armies" in " ".join(text.stdout.split())


def test_compare_leaves_each_waves_columns_out(tmp_path: Path) -> None:
    """A wave's columns (-1 where it did not fight) are no means per battle: compare's
    table of means lists the whole battle's columns alone."""
    path = tmp_path / "waves.toml"
    path.write_text(THREE_WAVES)
    shown = runner.invoke(app, ["compare", str(path), str(path), "-n", "500", "--json"])
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.stdout)
    assert "waves_fought" in answer["extras"]
    assert not [k for k in (*answer["extras"], *answer["casualties"]) if k.startswith("wave.")]


def test_wave_rows_are_tidy() -> None:
    result = simulator.simulate(scenario_of(THREE_WAVES), 2_000, 6, keep_battles=True)
    frame = simulator.wave_rows(result)
    assert list(frame.columns[:6]) == ["battle", "seed", "scenario", "wave", "winner", "steps"]
    assert len(frame) == int(result.rows["waves_fought"].sum())
    assert (frame["seed"] == 6).all()
    second = frame[frame["wave"] == 2].set_index("battle")
    fought = np.flatnonzero(result.rows["wave.2.winner"] != NOT_FOUGHT)
    assert list(second.index) == fought.tolist()
    assert np.array_equal(second["winner"], result.rows["wave.2.winner"][fought])


def _bad(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = runner.invoke(app, ["run", str(path), "-n", "100"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 2  # one line (wrapped at most once)
    return " ".join(result.output.split())


#: The attacker's first army and the defender of the bad scenarios below.
FRONT = """ruleset = "confrontation"
[[attacker.stacks]]
at = [0, 0]
units = [{ type = "trooper" }]
[[defender.stacks]]
at = [1, 0]
units = [{ type = "militia" }]
"""
WAVE = '[[attacker.waves]]\nstacks = [{ at = [0, 0], units = [{ type = "veteran" }] }]\n'


@pytest.mark.parametrize(
    ("added", "expected"),
    [
        (
            WAVE
            + '[[defender.waves]]\nstacks = [{ at = [1, 0], units = [{ type = "militia" }] }]\n',
            ":11: defender.waves: both sides bring waves: give [[attacker.waves]] or "
            "[[defender.waves]], not both",
        ),
        (
            "[attacker]\nwaves = 3\n",
            "attacker.waves: expected a list of the attacker's next armies",
        ),
        (
            "[[attacker.waves]]\n",
            ":9: attacker.waves[0]: a wave with no men: expected the army, written as "
            "[attacker] is",
        ),
        (
            "[[attacker.waves]]\nstacks = []\n",
            ":10: attacker.waves[0].stacks: no stacks: expected at least one",
        ),
        (
            '[[attacker.waves]]\nstacks = [{ at = [0, 0], units = [{ type = "veteran" }] }]\n'
            "morale = 3\n",
            ":11: attacker.waves[0].morale: unknown key 'morale'",
        ),
        (
            '[[attacker.waves]]\nstacks = [{ at = [0, 0], units = [{ type = "vetran" }] }]\n',
            ":10: attacker.waves[0].stacks[0].units[0].type: unknown unit type 'vetran' (did you "
            "mean 'veteran'?)",
        ),
        (
            '[[attacker.waves]]\nstacks = [{ at = [0, 0], units = [{ type = "veteran" }] }]\n'
            '[battle]\nturns = "2..3"\n',
            "attacker.waves: waves and ranges (unknowns) in one scenario",
        ),
    ],
)
def test_bad_waves_get_one_line_naming_the_key(tmp_path: Path, added: str, expected: str) -> None:
    data = FRONT.replace("[[attacker.stacks]]", "[attacker]\n[[attacker.stacks]]", 1)
    if added.startswith("[attacker]"):
        data = FRONT.replace("[[attacker.stacks]]", added + "[[attacker.stacks]]", 1)
        added = ""
    line = _bad(tmp_path, data + added)
    assert expected in line


def test_a_ruleset_that_cannot_give_waves_says_what_it_lacks(tmp_path: Path) -> None:
    """A scripted confrontation (whose turns name stacks) refuses waves with its reason."""
    scripted = THREE_WAVES.replace("turns = 1\n", 'turns = 1\npolicy = "script"\n') + (
        '[[script]]\nactions = [{ by = "a1", ability = "attack", target = "d1" }]\n'
    )
    line = _bad(tmp_path, scripted)
    assert "a scripted battle's turns name stacks that an earlier wave may destroy" in line


def test_a_plugin_that_declares_no_waves_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prepared scenario that neither declares waves nor says what it lacks (a plugin
    written before waves): the refusal names the capability."""
    from simulator.rulesets.confrontation.prepare import ConfrontationPrepared

    monkeypatch.setattr(ConfrontationPrepared, "lacks", {})
    scripted = THREE_WAVES.replace("turns = 1\n", 'turns = 1\npolicy = "script"\n') + (
        '[[script]]\nactions = [{ by = "a1", ability = "attack", target = "d1" }]\n'
    )
    with pytest.raises(BattleOddsError) as refused:
        prepare(scenario_of(scripted))
    assert str(refused.value).endswith(
        "attacker.waves: the confrontation ruleset does not give waves (its prepared "
        "scenario does not declare them)"
    )


def test_commands_that_look_inside_one_battle_refuse_waves(tmp_path: Path) -> None:
    path = tmp_path / "waves.toml"
    path.write_text(THREE_WAVES)
    result = runner.invoke(app, ["run", str(path), "-n", "100", "--by-round"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "is answered by `battle-odds run` and simulator.simulate" in " ".join(
        result.output.split()
    )
    with pytest.raises(BattleOddsError, match="a scenario with waves"):
        simulator.unfold(scenario_of(THREE_WAVES), 100, after=1)


# Slow tier (docs/testing.md): 2.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_a_run_with_waves_gives_the_waves_so_far() -> None:
    example = str(ROOT / "examples/waves/raids_on_a_gate.toml")
    code, out, err, seconds = interrupt(["run", example, "-n", MANY, "--json"])
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < int(MANY)
    assert [w["wave"] for w in answer["waves"]] == [1, 2, 3]
    assert answer["waves"][0]["fought"]["p"] == 1.0


@pytest.mark.parametrize(
    ("rows", "columns", "high"), [(5_000, 6, 3), (1, 4, 5), (300, 1, 2), (4_000, 9, 50)]
)
def test_distinct_rows_are_numpys(rows: int, columns: int, high: int) -> None:
    """The hashed distinct rows of a side's states are np.unique(axis=0)'s, in its order."""
    table = np.random.default_rng(rows).integers(-2, high, (rows, columns))
    distinct, index = distinct_rows(table)
    expected, inverse = np.unique(table, axis=0, return_inverse=True)
    assert np.array_equal(distinct, expected)
    assert np.array_equal(index, inverse.reshape(-1))
    assert np.array_equal(distinct[index], table)


# Slow tier (docs/testing.md): 1.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_waves_benchmark_runs() -> None:
    """``benchmarks/waves_cost.py`` (docs/unfolding.md's figure) end to end, small."""
    done = subprocess.run(
        [sys.executable, "benchmarks/waves_cost.py", "--battles", "300", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "fights a battle: a fight in the chain costs" in done.stdout
