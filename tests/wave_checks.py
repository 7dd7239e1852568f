"""Checks of a ruleset's waves (docs/unfolding.md, "Waves") written once, for each
ruleset's tests of them (tests/test_waves_<ruleset>.py): each takes a scenario's text
and asserts, or returns what differed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import tomllib
from typer.testing import CliRunner

from simulator.cli import app
from simulator.errors import Source
from simulator.results.stats import Tally
from simulator.scenario.scenario import Scenario, from_data, prepare
from simulator.testing import simulate_rows, tally_differences
from tests.reference import waves as reference
from tests.test_human_output import raw_identifiers, too_wide

runner = CliRunner()

#: A side table as a ruleset's survivors wrote it, changed by a mutation check.
Table = dict[str, Any]


def without_waves(text: str) -> Scenario:
    """The scenario of ``text`` with no waves: its first wave's battle."""
    scenario = scenario_of(text)
    data = dict(scenario.data)
    for side in ("attacker", "defender"):
        if isinstance(data.get(side), Mapping):
            data[side] = {k: v for k, v in data[side].items() if k != "waves"}
    return from_data(data, scenario.source)


def check_first_wave(text: str, battles: int = 3_000, seed: int = 8) -> None:
    """Wave 1's columns are the battle without waves, battle by battle."""
    rows = simulate_rows(scenario_of(text), battles, seed)
    plain = simulate_rows(without_waves(text), battles, seed)
    assert np.array_equal(rows["wave.1.winner"], plain["winner"])
    assert np.array_equal(rows["wave.1.steps"], plain["steps"])
    casualties = [name for name in plain if name.startswith("casualties.")]
    assert len(casualties) >= 3
    for name in casualties:
        assert np.array_equal(rows[f"wave.1.{name}"], plain[name]), name


def reference_differences(
    scenario: Scenario, kernel: Mapping[str, np.ndarray], reference_battles: int
) -> list[str]:
    """What differs between the package's columns and the plain-Python chain of the
    ruleset's reference battles (tests/reference/waves.py) at a family-wise false-alarm
    rate of 0.001 (a ruleset without a turn limit has no such column)."""
    slow = reference.run(scenario.model, reference_battles, 11)
    if "turn_limit" not in kernel:
        slow.pop("turn_limit")
    ours, theirs = Tally.of(dict(kernel)), Tally.of(slow)
    if set(ours.columns) != set(theirs.columns):
        return [f"columns differ: {sorted(set(ours.columns) ^ set(theirs.columns))}"]
    return tally_differences(ours, theirs)


def check_reference_agreement(text: str, reference_battles: int) -> None:
    """Every column (the whole battle's and each wave's) of 20,000 battles agrees with
    the reference chain."""
    scenario = scenario_of(text)
    kernel = simulate_rows(scenario, 20_000, 5)
    assert reference_differences(scenario, kernel, reference_battles) == []


def scenario_of(text: str) -> Scenario:
    return from_data(tomllib.loads(text), Source("test", text))


def mutant_rows(scenario: Scenario, mutate: Callable[[Table], None]) -> dict[str, np.ndarray]:
    """20,000 battles (seed 5) of ``scenario`` with waves whose survivors' side tables
    each pass through ``mutate`` first (each table not None): a package with a wrong
    survivor, for a test that the comparison with the reference has teeth."""
    prepared = prepare(scenario)
    first = prepared.openers[0]
    honest = type(first).survivors

    def changed(self, rows, side, data):  # type: ignore[no-untyped-def]
        index, tables = honest(self, rows, side, data)
        for table in tables:
            if table is not None:
                mutate(table)
        return index, tables

    type(first).survivors = changed  # type: ignore[method-assign]
    try:
        return prepared.run(5, 0, 20_000)
    finally:
        type(first).survivors = honest  # type: ignore[method-assign]


def check_mutation_seen(text: str, reference_battles: int, mutate: Callable[[Table], None]) -> None:
    """The comparison has teeth: a package whose survivors' tables ``mutate`` changed
    differs from the reference."""
    scenario = scenario_of(text)
    kernel = mutant_rows(scenario, mutate)
    assert reference_differences(scenario, kernel, reference_battles) != []


def check_run_reports_waves(
    example: Path, ruleset: str, side: str, waves: int, own: Iterable[str]
) -> dict[str, Any]:
    """``battle-odds run`` of a bundled example with waves: the waves' table at any
    width, and in JSON each wave's answer, the waves' wins adding up to the whole
    battle's; ``own`` the casualty keys of the last wave's own side. Returns the JSON."""
    shown = runner.invoke(app, ["run", str(example), "-n", "3000", "--json"])
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.stdout)
    found = answer["waves"]
    assert [w["wave"] for w in found] == list(range(1, waves + 1))
    added = sum(w["win"][side]["p"] for w in found)
    assert added == float(np.clip(added, 0, 1))
    assert abs(added - answer["win"][side]["p"]) < 1e-12
    other = "defender" if side == "attacker" else "attacker"
    theirs = {key for key in answer["casualties"] if key.startswith(other + ".")}
    assert set(found[-1]["left"]) == {*own, *theirs}
    for columns in (60, 80, 200):
        text = runner.invoke(
            app, ["run", str(example), "-n", "1000"], env={"COLUMNS": str(columns)}
        )
        assert text.exit_code == 0
        assert too_wide(text.stdout, columns) == []
        assert raw_identifiers(text.stdout, ruleset) == []
        assert f"Waves: the {side}'s armies" in " ".join(text.stdout.split())
    return answer
