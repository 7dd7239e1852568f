"""A study's cluster that fails under it: the same one-line answer as a run's.

Runs and studies send their battles to Dask through one object
(:class:`simulator.running.distributed.Cluster`). Before it, a study on a cluster whose
scheduler died raised whatever Dask raised (a ``FuturesCancelledError`` traceback, the
finished work lost) where a run ended with the chunks that finished and one line. Here a
real scheduler and worker on 127.0.0.1 are started for each test and the scheduler is
killed at the study's first progress: inside a command (a stop request, as
``runs_battles`` holds one) the study ends with its answer so far, marked partial, and
the failure is the one line the command prints after it; called from Python, where a
study's answer cannot say why it is short, it raises :class:`ClusterFailed` with that
line. Either way within seconds (the scheduler's silence is noticed within
``ASK_SECONDS``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests import ROOT

pytest.importorskip("distributed")

import simulator
from simulator.running.distributed import Cluster, ClusterFailed, connect
from simulator.running.interrupt import stop_on_interrupt
from simulator.studies.compare import compare
from simulator.studies.sweep import sweep
from tests.processes import started

#: The most a study may take once its scheduler is killed (ASK_SECONDS is 5).
ENDS_WITHIN = 60.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Doomed(NamedTuple):
    """A cluster connected to, its scheduler's process (the test kills it) and address."""

    cluster: Cluster
    scheduler: subprocess.Popen[bytes]
    address: str


@pytest.fixture
def doomed_cluster() -> Iterator[Doomed]:
    """A scheduler and one worker (processes of their own, on 127.0.0.1), connected to;
    the test kills the scheduler."""
    port = _free_port()
    dask = Path(sys.executable).parent / "dask"
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        **quiet,
    )
    worker = subprocess.Popen(
        [str(dask), "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-dashboard"],
        cwd=ROOT,
        **quiet,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # the scheduler takes a second or two to listen
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.2)
        address = f"tcp://127.0.0.1:{port}"
        with connect(address) as client:
            client.wait_for_workers(1, timeout=60)
            yield Doomed(Cluster(client), scheduler, address)
    finally:
        for process in (scheduler, worker):
            process.kill()
            process.wait()


def killing_at_first_progress(scheduler: subprocess.Popen[bytes]) -> Callable[..., None]:
    def progress(done: int, total: int, *detail: object) -> None:
        if done and scheduler.poll() is None:
            scheduler.kill()
            scheduler.wait()
            killed.append(time.monotonic())

    killed: list[float] = []
    progress.killed = killed  # type: ignore[attr-defined]
    return progress


ARMIES = ("noble, 12 soldier, 4 archer@1", "noble, 14 pikeman")


def _compare(executor: Cluster, progress: Callable[..., None]) -> Any:
    """A comparison: chunks of a group of scenarios (Cluster.summaries)."""
    a = simulator.inline_scenario("olympia", *ARMIES)
    b = simulator.inline_scenario("olympia", ARMIES[0], "noble, 15 pikeman")
    return compare(a, b, 10**9, 3, executor=executor, progress=progress)


def _sweep(executor: Cluster, progress: Callable[..., None]) -> Any:
    """A sweep of 96 points: three tasks of 32 scenarios' battles each (Cluster.each)."""
    scenario = simulator.inline_scenario("olympia", *ARMIES)
    vary = ["defender.pikeman=5..100"]
    return sweep(scenario, vary, 20_000, 3, executor=executor, progress=progress)


STUDIES = {"compare": _compare, "sweep": _sweep}


# Slow tier (docs/testing.md): 13.9 s for its 4 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("where", ["in a command", "in Python"])
@pytest.mark.parametrize("study", STUDIES)
def test_a_study_whose_scheduler_dies_ends_in_one_line(
    study: str, where: str, doomed_cluster: Doomed
) -> None:
    """In a command: the answer so far, partial, and the line the command prints after
    it (the exit status 1, as a run's). In Python: ClusterFailed, the same line."""
    executor, scheduler, _ = doomed_cluster
    progress = killing_at_first_progress(scheduler)
    if where == "in a command":
        with stop_on_interrupt() as stop:  # as every command that runs battles holds one
            answer = STUDIES[study](executor, progress)
        assert answer.partial and stop.reason == "the Dask cluster failed"
        line = stop.failure
    else:
        with pytest.raises(ClusterFailed) as failed:
            STUDIES[study](executor, progress)
        line = str(failed.value)
    (killed,) = progress.killed  # type: ignore[attr-defined]
    assert time.monotonic() - killed < ENDS_WITHIN
    assert line is not None and line == executor.failure
    assert "\n" not in line and "Dask" in line


def _study_tasks(cluster: Cluster) -> int:
    """Tasks of battle-odds (keys battle-odds-...) whose answers the command took (the
    scheduler released or forgot them once the command dropped their futures)."""

    def count(dask_scheduler: Any) -> int:
        return sum(
            prefix.state_counts.get("released", 0) + prefix.state_counts.get("forgotten", 0)
            for name, prefix in dask_scheduler.task_prefixes.items()
            if name.startswith("battle-odds")
        )

    return int(cluster.client.run_on_scheduler(count))


# Slow tier (docs/testing.md): 5.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_command_whose_scheduler_dies_mid_study_prints_the_answer_so_far_and_one_line(
    doomed_cluster: Doomed,
) -> None:
    """``compare --scheduler`` (a real process) whose scheduler is killed once the
    study's tasks run: its JSON answer so far, partial; one error line; exit status 1."""
    a, b = (
        str(ROOT / "scenarios/olympia" / name)
        for name in ("castle_siege.toml", "knights_vs_pikemen.toml")
    )
    process = started(
        ["compare", a, b, "-n", "1000000000", "--json", "--scheduler", doomed_cluster.address],
        new_session=True,
    )
    try:
        deadline = time.monotonic() + 180  # imports and a cold kernel on a loaded machine
        while _study_tasks(doomed_cluster.cluster) < 4 and process.poll() is None:
            assert time.monotonic() < deadline, "the study's tasks never ran"
            time.sleep(0.2)
        doomed_cluster.scheduler.kill()
        out, err = process.communicate(timeout=ENDS_WITHIN)
    finally:
        process.kill()
    assert process.returncode == 1, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Dask" in errors[0] and "Traceback" not in err, err
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < 1_000_000_000
