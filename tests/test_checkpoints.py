"""Checkpoints cannot lie: forged or damaged files are refused in one line, exit 2, and
left as they were; a checkpoint of part of a run resumes into the run's exact numbers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.running.checkpoint import Checkpoint, checksum, gaps
from simulator.version import __version__
from tests import ROOT

KNIGHTS = str(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
BATTLES = 20_000
runner = CliRunner()


def run(checkpoint: Path) -> Any:
    return runner.invoke(
        app,
        ["run", KNIGHTS, "-n", str(BATTLES), "-s", "3", "--json", "--checkpoint", str(checkpoint)],
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The content of the checkpoint of a finished run."""
    path = tmp_path_factory.mktemp("c") / "run.ckpt"
    result = run(path)
    assert result.exit_code == 0, result.output
    return dict(json.loads(path.read_text()))


def resealed(data: dict[str, Any]) -> dict[str, Any]:
    """A forger's file: content changed and its checksum recomputed."""
    content = {k: data[k] for k in ("identity", "done", "tally")}
    return {**data, "checksum": checksum(content)}


def cut_short(d: dict[str, Any]) -> None:
    d["done"] = [[0, BATTLES // 2]]


def sure_win(d: dict[str, Any]) -> None:
    d["tally"]["wins"] = [BATTLES, 0, 0]


def twice(d: dict[str, Any]) -> None:
    d["done"] = [[0, BATTLES // 2], [0, BATTLES // 2]]


def outside(d: dict[str, Any]) -> None:
    d["done"] = [[0, BATTLES + 5]]


def not_pairs(d: dict[str, Any]) -> None:
    d["done"] = [0, 8]


def fewer_steps(d: dict[str, Any]) -> None:
    d["tally"]["steps_by_outcome"][0]["counts"][0] += 1


def withdrew(d: dict[str, Any]) -> None:
    # One attacker win made a withdrawal, every count consistent, in a scenario where
    # no side has a stop rule.
    wins, steps = d["tally"]["wins"], d["tally"]["steps_by_outcome"]
    d["tally"]["wins"] = [wins[0] - 1, wins[1], wins[2], 1, 0]
    steps[0]["counts"][-1] -= 1
    if steps[0]["counts"][-1] == 0:
        steps[0]["values"].pop()
        steps[0]["counts"].pop()
    steps += [{"values": [3], "counts": [1]}, {"values": [], "counts": []}]


def column_count(d: dict[str, Any]) -> None:
    name = next(iter(d["tally"]["columns"]))
    d["tally"]["columns"][name]["counts"][0] += 7


FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "done cut short": (cut_short, "battles, but the done chunks hold 10,000"),
    "P = 1.0": (sure_win, "steps of attacker: counts"),
    "duplicate chunks": (twice, "counted twice"),
    "chunk outside the run": (outside, "outside the run's 0..19999"),
    "done not pairs": (not_pairs, "expected a list of [first, count] pairs"),
    "steps not the wins": (fewer_steps, "steps of attacker"),
    "a column's count": (column_count, "expected 20,000"),
    "a withdrawal without a stop rule": (withdrew, "counted as attacker withdrew"),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_checkpoint_is_refused_and_left_alone(
    tmp_path: Path, finished: dict[str, Any], forgery: str
) -> None:
    change, says = FORGERIES[forgery]
    data = json.loads(json.dumps(finished))
    change(data)
    path = tmp_path / "run.ckpt"
    path.write_text(json.dumps(resealed(data)))
    before = path.read_bytes()
    result = run(path)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and str(path) in lines[0], result.stderr
    assert "delete it or choose another --checkpoint file" in lines[0]
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not a battle-odds checkpoint (not JSON)"),
        ('{"format": "battle-odds checkpoint 2", "done": [0]}', "is not this version's"),
        ("[1, 2]", "not a battle-odds checkpoint"),
    ],
)
def test_a_damaged_checkpoint_is_refused(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "run.ckpt"
    path.write_text(text)
    result = run(path)
    assert result.exit_code == 2 and says in result.stderr, result.stderr
    assert path.read_text() == text


def test_an_edit_without_a_new_checksum_is_refused(
    tmp_path: Path, finished: dict[str, Any]
) -> None:
    data = json.loads(json.dumps(finished))
    data["tally"]["wins"][0] += 1
    path = tmp_path / "run.ckpt"
    path.write_text(json.dumps(data))
    result = run(path)
    assert result.exit_code == 2 and "checksum does not match" in result.stderr


def test_a_checkpoint_as_written_before_stop_rules_resumes(
    tmp_path: Path, finished: dict[str, Any]
) -> None:
    """A run without stop rules writes the three outcomes alone, as every checkpoint
    written before stop rules holds them; such a file resumes (all done: the answer)."""
    assert len(finished["tally"]["wins"]) == 3
    assert len(finished["tally"]["steps_by_outcome"]) == 3
    path = tmp_path / "run.ckpt"
    path.write_text(json.dumps(finished))
    resumed = run(path)
    assert resumed.exit_code == 0, resumed.output
    answer = json.loads(resumed.stdout)
    assert answer["battles"] == BATTLES and "resumed from" in " ".join(answer["notes"])
    assert set(answer["win"]) == {"attacker", "defender", "draw"}
    assert sum(finished["tally"]["wins"]) == BATTLES
    assert answer["win"]["attacker"]["p"] == finished["tally"]["wins"][0] / BATTLES


def test_a_checkpoint_of_part_of_a_run_resumes_exactly(tmp_path: Path) -> None:
    """Battles 1,000..2,499 done (as a run interrupted after resuming once would leave
    them): the resumed run fights the rest and equals the whole run, bit for bit."""
    scenario = simulator.load_scenario(KNIGHTS)
    whole = simulator.simulate(scenario, 6_000, 9, keep_battles=False)
    identity = {
        "scenario_hash": scenario.hash,
        "ruleset": scenario.ruleset,
        "seed": 9,
        "first": 0,
        "battles": 6_000,
        "version": __version__,
    }
    part = simulator.simulate(scenario, 1_500, 9, first=1_000, keep_battles=False)
    path = tmp_path / "run.ckpt"
    Checkpoint(path, identity, [(1_000, 1_500)], part.tally).save()
    resumed = simulator.simulate(scenario, 6_000, 9, checkpoint=path)
    assert json.dumps(resumed.tally.to_dict()) == json.dumps(whole.tally.to_dict())
    assert json.loads(path.read_text())["done"] == [[0, 6_000]]


def test_gaps() -> None:
    assert gaps([], 10, 5) == [(10, 5)]
    assert gaps([(12, 1)], 10, 5) == [(10, 2), (13, 2)]
    assert gaps([(10, 2), (12, 3)], 10, 5) == []


@pytest.mark.parametrize(
    "path", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "scenarios").glob("*/*.toml"))
)
def test_every_value_a_bundled_scenario_gives_is_inside_its_declared_bounds(path: str) -> None:
    """The bounds a checkpoint is held to (each ruleset's declaration) hold for real
    battles: a bound too tight would refuse an honest checkpoint. Every column has at
    least a bound below but for confrontation's resolve, which can fall below 0."""
    from simulator import rulesets
    from simulator.results.stats import Histogram, Tally
    from simulator.running.runner import outcome_ranges

    scenario = simulator.load_scenario(ROOT / path)
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    ranges = outcome_ranges(prepared, scenario.seed, 0)
    tally = Tally.of(prepared.run(scenario.seed, 0, 2_000))
    assert set(ranges) == {"steps", "winner", *tally.columns}
    winners = Histogram.of(np.repeat(np.arange(len(tally.wins)), tally.wins))
    histograms = {"steps": tally.steps, "winner": winners, **tally.columns}
    for name, (low, high) in ranges.items():
        values = histograms[name].values
        assert low is not None or name.startswith("resolve_x2."), name
        if len(values):
            assert low is None or values[0] >= low, (name, values[0], low)
            assert high is None or values[-1] <= high, (name, values[-1], high)
