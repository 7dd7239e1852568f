"""Scale: exact merges, the Dask path, lost workers, Ctrl-C, checkpoints, bounded memory."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import simulator
import simulator.rulesets
from simulator.cli import app
from simulator.results.stats import Tally
from simulator.running.distributed import Cluster, connect
from tests import ROOT
from tests.processes import started

FIRST_OF_EACH = sorted(
    min((ROOT / "scenarios" / r).glob("*.toml")) for r in simulator.rulesets.builtin_names()
)
runner = CliRunner()


def same_tally(a: Tally, b: Tally) -> bool:
    return json.dumps(a.to_dict()) == json.dumps(b.to_dict())


@pytest.mark.parametrize("path", FIRST_OF_EACH, ids=[p.parent.name for p in FIRST_OF_EACH])
def test_chunked_statistics_equal_unchunked_bit_for_bit(path: Path) -> None:
    scenario = simulator.load_scenario(path)
    whole = simulator.simulate(scenario, 3_000, seed=5, keep_battles=False)
    chunked = simulator.simulate(scenario, 3_000, seed=5, chunk=217, keep_battles=False)
    assert same_tally(whole.tally, chunked.tally)
    assert whole.summary().equals(chunked.summary())
    # Merging in any order gives the same statistics.
    parts = [
        simulator.simulate(scenario, 1_000, seed=5, first=f, keep_battles=False).tally
        for f in (2_000, 0, 1_000)
    ]
    merged = parts[0].merge(parts[1]).merge(parts[2])
    assert same_tally(merged, whole.tally)


def test_scenario_hash_keeps_the_meaningful_order_of_men() -> None:
    a = simulator.inline_scenario("olympia", "noble, 3 soldier, 2 knight", "noble, 4 pikeman")
    b = simulator.inline_scenario("olympia", "noble, 2 knight, 3 soldier", "noble, 4 pikeman")
    assert a.hash != b.hash


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    with connect("local:2") as client:
        assert all(
            addr.startswith("tcp://127.0.0.1") for addr in client.scheduler_info()["workers"]
        )
        yield client


# Slow tier (docs/testing.md): 1.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_dask_path_equals_local_path(dask_client: object) -> None:
    for path in (
        ROOT / "scenarios/olympia/castle_siege.toml",
        ROOT / "scenarios/blocks/storm.toml",
    ):
        scenario = simulator.load_scenario(path)
        local = simulator.simulate(scenario, 6_000, seed=8, keep_battles=False)
        remote = simulator.simulate(
            scenario, 6_000, seed=8, chunk=700, executor=Cluster(dask_client)
        )
        assert same_tally(local.tally, remote.tally)


# Slow tier: 30,000 castle sieges run twice, locally and on a Dask cluster (3.8 s quiet
# on a fresh clone); test_the_same_run_twice_on_one_cluster and
# test_a_sweep_on_dask_equals_the_local_sweep keep the cluster's first-tier checks.
@pytest.mark.slow
def test_dask_chunks_sized_by_time_give_the_local_numbers(dask_client: object) -> None:
    """The workers' chunks start at one battle and grow with the time the workers
    measure (their sizes differ from run to run); battle i of seed s is the same battle
    whatever the sizes, so the numbers are the local run's, exactly."""
    scenario = simulator.load_scenario(ROOT / "scenarios/olympia/castle_siege.toml")
    executor = Cluster(dask_client)
    chunks: list[tuple[int, int]] = []

    def recorded(*args: Any) -> Iterator[tuple[int, int, Tally]]:
        for first, count, tally in executor(*args):
            chunks.append((first, count))
            yield first, count, tally

    local = simulator.simulate(scenario, 30_000, seed=12, keep_battles=False)
    remote = simulator.simulate(scenario, 30_000, seed=12, executor=recorded)
    assert same_tally(local.tally, remote.tally)
    # Handed on in battle order, one battle first, then growing.
    assert [first for first, _ in chunks] == list(
        itertools.accumulate([0] + [count for _, count in chunks[:-1]])
    )
    assert chunks[0] == (0, 1) and len({count for _, count in chunks}) > 3


def test_the_same_run_twice_on_one_cluster(dask_client: object) -> None:
    """Two runs of one scenario and seed share their first chunks (one battle, ...);
    the first run's clean-up must not cancel the second's."""
    scenario = simulator.load_scenario(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
    runs = [
        simulator.simulate(scenario, 3_000, seed=1, chunk=1_000, executor=Cluster(dask_client))
        for _ in range(3)
    ]
    assert all(same_tally(runs[0].tally, run.tally) for run in runs[1:])


# Slow tier (docs/testing.md): 2.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_lost_worker_changes_nothing(dask_client: object) -> None:
    scenario = simulator.load_scenario(ROOT / "scenarios/olympia/castle_siege.toml").with_changes(
        {"battle.kernel": "strike"}
    )
    local = simulator.simulate(scenario, 40_000, seed=3, keep_battles=False)
    pids = dask_client.run(os.getpid)  # type: ignore[attr-defined]
    victim = sorted(pids.values())[0]
    killed = []

    def kill_once(done: int, total: int) -> None:
        if done and not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    remote = simulator.simulate(
        scenario, 40_000, seed=3, chunk=1_000, progress=kill_once, executor=Cluster(dask_client)
    )
    assert killed and same_tally(local.tally, remote.tally)


def battle_odds(*args: str) -> subprocess.Popen[str]:
    return started(list(args))


# Slow tier (docs/testing.md): 8.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_prints_a_partial_result_and_a_checkpoint_resumes(tmp_path: Path) -> None:
    scenario = tmp_path / "long.toml"
    scenario.write_text(
        (ROOT / "scenarios/olympia/castle_siege.toml")
        .read_text()
        .replace("[battle]\n", '[battle]\nkernel = "strike"\n')
    )
    checkpoint = tmp_path / "run.checkpoint"
    args = [
        "run",
        str(scenario),
        "--battles",
        "200000",
        "--seed",
        "4",
        "--json",
        "--checkpoint",
        str(checkpoint),
        "--chunk",
        "5000",
    ]
    process = battle_odds(*args)
    deadline = time.time() + 240
    while not checkpoint.exists() and time.time() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=240)
    assert process.returncode == 130, err
    partial = json.loads(out)
    assert partial["partial"] is True and 0 < partial["battles"] < 200_000
    assert "interrupted" in err and "Traceback" not in err

    resumed = battle_odds(*args)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    finished = json.loads(out)
    assert finished["partial"] is False and finished["battles"] == 200_000
    whole = simulator.simulate(
        simulator.load_scenario(scenario), 200_000, seed=4, keep_battles=False
    )
    assert finished["win"] == json.loads(json.dumps(whole.to_dict()))["win"]


def peak_rss_mib(battles: int) -> float:
    """Peak memory of a run in a fresh process (small battles: it is memory we measure)."""
    code = (
        "import resource, simulator\n"
        "s = simulator.inline_scenario('olympia', 'noble, 2 soldier', 'noble, 2 soldier')\n"
        f"simulator.simulate(s, {battles}, seed=1, keep_battles=False)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


# Slow tier (docs/testing.md): 3.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_memory_does_not_grow_with_the_battle_count() -> None:
    small = peak_rss_mib(500_000)
    large = peak_rss_mib(8_000_000)
    assert large < 1024
    assert large < small * 1.1 + 20, (small, large)


def test_keep_battles_writes_rows_and_refuses_too_many(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    result = runner.invoke(
        app,
        [
            "run",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "-n",
            "1500",
            "--keep-battles",
            str(rows),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = rows.read_text().splitlines()
    assert len(lines) == 1501 and lines[0].startswith("battle,seed,scenario,winner,steps")
    too_many = runner.invoke(
        app,
        [
            "run",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "-n",
            "5000000",
            "--keep-battles",
            str(tmp_path / "big.csv"),
        ],
    )
    assert too_many.exit_code == 2 and "--keep-battles" in too_many.stderr
    assert not (tmp_path / "big.csv").exists()


def test_a_checkpoint_of_another_run_is_refused(tmp_path: Path) -> None:
    checkpoint = tmp_path / "c.json"
    first = runner.invoke(
        app,
        [
            "run",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "-n",
            "2000",
            "--checkpoint",
            str(checkpoint),
        ],
    )
    assert first.exit_code == 0 and checkpoint.exists()
    other = runner.invoke(
        app,
        [
            "run",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "-n",
            "3000",
            "--checkpoint",
            str(checkpoint),
        ],
    )
    assert other.exit_code == 2 and "checkpoint of a different run (battles differ)" in other.stderr
    checkpoint.write_text("{not json")
    broken = runner.invoke(
        app,
        [
            "run",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "-n",
            "2000",
            "--checkpoint",
            str(checkpoint),
        ],
    )
    assert broken.exit_code == 2 and "not a battle-odds checkpoint" in broken.stderr


def test_bad_scheduler_is_a_clear_error() -> None:
    result = runner.invoke(
        app,
        ["run", "scenarios/olympia/knights_vs_pikemen.toml", "-n", "10", "--scheduler", "udp://x"],
    )
    assert result.exit_code == 2 and "expected tcp://HOST:PORT or local:N" in result.stderr


def test_a_sweep_on_dask_equals_the_local_sweep(dask_client: object) -> None:
    from simulator.studies.sweep import sweep

    scenario = simulator.load_scenario(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
    local = sweep(scenario, ["attacker.knight=4..12:4"], 3_000, 2)
    remote = sweep(scenario, ["attacker.knight=4..12:4"], 3_000, 2, executor=Cluster(dask_client))
    assert [
        same_tally(a.tally, b.tally) for a, b in zip(local.results, remote.results, strict=True)
    ] == [True, True, True]


# Slow tier (docs/testing.md): 2.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_run_with_a_local_cluster_from_the_command_line() -> None:
    args = ["run", "scenarios/blocks/field_battle.toml", "-n", "4000", "--json"]
    local = runner.invoke(app, args)
    remote = runner.invoke(app, [*args, "--scheduler", "local:2"])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert json.loads(local.stdout)["win"] == json.loads(remote.stdout)["win"]
