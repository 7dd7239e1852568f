"""regress says each scenario's verdict as it is checked, in the order that compiles least
first, with the report of any order the same; its second process (the kernels of the
scenarios after the first compiled meanwhile) ends with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import simulator
from simulator.cli import regress_ahead as ahead
from simulator.studies import regress
from tests.test_regress import KNIGHTS, folder, invoke, raise_knight_attack  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent


def _check(folder: Path, **options: object) -> regress.Report:  # noqa: F811
    path = folder / "balance.toml"
    return regress.check([folder / "scenarios"], regress.read_baseline(path), path, **options)  # type: ignore[arg-type]


def test_each_verdict_is_told_as_its_scenario_is_checked(folder: Path) -> None:  # noqa: F811
    """Told before the next scenario runs (not all at the end), in the order asked."""
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    events: list[str] = []

    def run(scenario: simulator.Scenario, *args: object, **kwargs: object) -> simulator.Result:
        events.append(f"run {scenario.name}")
        return simulator.simulate(scenario, *args, **kwargs)  # type: ignore[arg-type]

    report = _check(
        folder,
        run=run,
        order=lambda scenarios: sorted(scenarios, reverse=True),
        told=lambda verdict: events.append(f"told {verdict.scenario} {verdict.status}"),
    )
    assert events == [
        "run knights",
        "told scenarios/knights.toml ok",
        "run archers",
        "told scenarios/archers.toml ok",
    ]
    assert report.passed


def test_ctrl_c_while_a_scenario_waits_for_its_kernel_stops_before_its_run(
    folder: Path,  # noqa: F811
) -> None:
    """Ctrl-C in ``ready`` (regress waiting for the second process): no run of that
    scenario (it would compile its kernel), the ones checked kept, the report partial."""
    from simulator.running.interrupt import stop_on_interrupt

    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    runs: list[str] = []

    def run(scenario: simulator.Scenario, *args: object, **kwargs: object) -> simulator.Result:
        runs.append(scenario.name)
        return simulator.simulate(scenario, *args, **kwargs)  # type: ignore[arg-type]

    with stop_on_interrupt() as stop:

        def ready(key: str) -> None:
            if key == "scenarios/knights.toml":
                stop.requested = True

        report = _check(folder, run=run, ready=ready)
    assert runs == ["archers"]
    assert report.partial and report.statuses == {"scenarios/archers.toml": "ok"}


def test_the_report_is_the_same_in_any_order(
    folder: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A moved number's Holm threshold, the JSON and the JUnit report do not depend on
    the order the scenarios ran in; the moved scenario's early verdict is the final one."""
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    raise_knight_attack(monkeypatch, 1.2)
    told: dict[str, str] = {}
    by_name = _check(folder)
    reversed_ = _check(
        folder,
        order=lambda scenarios: sorted(scenarios, reverse=True),
        told=lambda verdict: told.__setitem__(verdict.scenario, verdict.status),
    )
    assert by_name.statuses["scenarios/knights.toml"] == "moved"
    assert reversed_.to_dict() == by_name.to_dict()
    assert reversed_.junit() == by_name.junit()
    assert [(c.scenario, c.number, c.threshold) for c in reversed_.comparisons] == [
        (c.scenario, c.number, c.threshold) for c in by_name.comparisons
    ]
    assert told == by_name.statuses


@pytest.mark.parametrize(
    "p, tolerance, change, expected",
    [
        (0.001 / 10, None, 0.1, "moved"),  # at the smallest threshold: Holm rejects it
        (0.0002, None, 0.1, "undecided"),  # between level / 10 and level
        (0.001, None, 0.1, "undecided"),  # at the level: the last threshold may be it
        (0.0011, None, 0.1, "ok"),  # above every threshold
        (1e-9, 0.2, 0.1, "ok"),  # beyond noise, within its tolerance
    ],
)
def test_an_early_verdict_is_the_one_holm_gives_or_undecided(
    p: float, tolerance: float | None, change: float, expected: str
) -> None:
    comparison = regress.Comparison("s", "win.attacker", 0.5, 0.5 + change, p, tolerance=tolerance)
    assert regress._verdict_now([comparison], 0.001, 10) == expected


def test_the_command_prints_each_verdict_before_the_table_and_json_stays_whole(
    folder: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    raise_knight_attack(monkeypatch, 1.2)
    shown = invoke(folder)
    assert shown.exit_code == 1, shown.output  # type: ignore[attr-defined]
    lines = shown.stdout.splitlines()  # type: ignore[attr-defined]
    table = next(i for i, line in enumerate(lines) if line.startswith("Balance regression"))
    early = [line for line in lines[:table] if line.startswith("scenarios/")]
    assert [line.split(":")[0] for line in early] == [
        "scenarios/archers.toml",
        "scenarios/knights.toml",
    ]
    assert early[0].startswith("scenarios/archers.toml: ok (")
    assert early[1].startswith("scenarios/knights.toml: moved (") and "p=" in early[1]
    as_json = invoke(folder, "--json")
    assert as_json.exit_code == 1  # type: ignore[attr-defined]
    answer = json.loads(as_json.stdout)  # type: ignore[attr-defined]
    library = _check(folder).to_dict()
    assert answer == library
    # The early verdicts go to stderr with --json: standard output is the JSON alone.
    assert "scenarios/knights.toml: moved (" in as_json.stderr  # type: ignore[attr-defined]


def test_order_compiles_least_before_each_verdict() -> None:
    paths = {
        "a/castle.toml": ("olympia skip",),
        "b/field.toml": ("blocks",),
        "c/attack.toml": ("confrontation",),
        "c/bombard.toml": ("confrontation",),
        "d/plain.toml": ("olympia chain",),
        "d/retreat.toml": ("olympia chain", "olympia chain, the battle as it unfolds"),
    }
    cost = {
        "olympia skip": 31.0,
        "blocks": 21.0,
        "confrontation": 8.0,
        "olympia chain": 19.0,
        "olympia chain, the battle as it unfolds": 5.0,
    }
    keys = ahead.order(paths, cost.__getitem__)
    assert keys == [
        "c/attack.toml",
        "c/bombard.toml",
        "d/plain.toml",
        "d/retreat.toml",
        "b/field.toml",
        "a/castle.toml",
    ]
    # The second process: every path after the first scenario's, the last needed first.
    assert ahead.compiled_elsewhere(keys, paths) == [
        "olympia skip",
        "blocks",
        "olympia chain, the battle as it unfolds",
        "olympia chain",
    ]


def test_the_bundled_scenarios_kernel_paths_are_warms() -> None:
    from simulator import rulesets
    from simulator.cli.warm import jobs

    known = {job.name for job in jobs(list(rulesets.available()))}
    found = {
        path.relative_to(ROOT / "scenarios").as_posix(): ahead.kernel_paths(
            simulator.load_scenario(path)
        )
        for path in (ROOT / "scenarios").glob("*/*.toml")
    }
    assert {p for paths in found.values() for p in paths} <= known
    assert found["olympia/castle_siege.toml"] == ("olympia skip",)
    assert found["olympia/knights_vs_pikemen.toml"] == ("olympia chain",)
    assert found["confrontation/attack.toml"] == ("confrontation",)
    assert found["blocks/storm.toml"] == ("blocks",)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # ended, not yet waited for by its parent


def _wait(condition: object, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_the_second_process_and_its_worker_end_when_its_pipe_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when regress ends in any way (Ctrl-C while compiling exits at once): nothing
    but the pipe tells the second process, which ends warm and warm's worker mid-compile."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # the worker compiles
    compiling = ahead.CompileAhead(["confrontation"])
    pid = compiling.process.pid
    try:
        assert _wait(lambda: _children(pid) and _children(_children(pid)[0]), 30), "no worker"
        warm = _children(pid)[0]
        worker = _children(warm)[0]
        assert compiling.now() == "confrontation"
        assert compiling.process.stdin is not None
        compiling.process.stdin.close()
        assert compiling.process.wait(timeout=10) == 1
        assert _wait(lambda: _gone(warm) and _gone(worker), 5), "warm or its worker outlived it"
    finally:
        compiling.stop()
    assert compiling.ended and compiling.now() is None


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_on_an_empty_cache_leaves_no_process_behind(tmp_path: Path) -> None:
    """A cold regress of two rulesets: the first compiles here, the second's kernel in
    the second process; Ctrl-C while they compile exits 130, and neither the second
    process nor its worker is left."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for name in ("confrontation/attack.toml", "skirmish/cavalry_charge.toml"):
        (scenarios / Path(name).name).write_text((ROOT / "scenarios" / name).read_text())
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    baseline = tmp_path / "balance.toml"
    command = [sys.executable, "-m", "simulator", "regress", str(scenarios)]
    # A baseline written on the warm cache (the tree's), then checked on an empty one.
    subprocess.run(
        [*command, "--baseline", str(baseline), "--update"], check=True, capture_output=True
    )
    process = subprocess.Popen(
        [*command, "--baseline", str(baseline)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert _wait(lambda: _children(process.pid), 30), "no second process started"
        second = _children(process.pid)[0]
        assert _wait(lambda: _children(second), 30), "the second process started no warm"
        warm = _children(second)[0]
        assert _wait(lambda: _children(warm), 30), "warm started no worker"
        worker = _children(warm)[0]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 130
        assert _wait(lambda: all(map(_gone, (second, warm, worker))), 10)
    finally:
        process.kill()
        process.communicate()


def test_the_report_so_far_is_the_report_of_a_check_stopped_there(
    folder: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Ctrl-C while a kernel compiles prints (report_so_far, from the verdicts told
    so far) is the report check() returns when Ctrl-C stops it at the same point, moved
    numbers and Holm's thresholds over the scenarios checked included."""
    from simulator.running.interrupt import stop_on_interrupt

    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    raise_knight_attack(monkeypatch, 1.2)
    level = regress.read_baseline(folder / "balance.toml").level
    for first in ("scenarios/knights.toml", "scenarios/archers.toml"):
        told: list[regress.Verdict] = []
        with stop_on_interrupt() as stop:

            def ready(key: str, first: str = first) -> None:
                stop.requested = key != first

            stopped = _check(
                folder,
                order=lambda scenarios, first=first: sorted(scenarios, key=lambda k: k != first),
                ready=ready,
                told=told.append,
            )
        so_far = regress.report_so_far(level, told)
        assert so_far.to_dict() == stopped.to_dict() and so_far.junit() == stopped.junit()
        assert list(so_far.statuses) == [first] and so_far.partial
    assert so_far.statuses == {"scenarios/archers.toml": "ok"}
    nothing = regress.report_so_far(level, [])  # stopped while the first one compiled
    assert nothing.statuses == {} and nothing.partial and not nothing.comparisons


_CTRL_C_WHILE_COMPILING = """
import os, signal, sys, time
import simulator.running.interrupt as interrupt
import simulator.running.runner as runner

real, runs = runner.simulate, []

def simulate(scenario, *args, **kwargs):
    runs.append(scenario.name)
    if len(runs) == int(os.environ["CTRL_C_AT"]):  # its kernel compiling: Ctrl-C
        interrupt.compiling_now = lambda: True
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(10)  # the handler ends the process first
    return real(scenario, *args, **kwargs)

runner.simulate = simulate
from simulator.cli import main
sys.argv = ["battle-odds", "regress", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("form", ["table", pytest.param("json", marks=pytest.mark.slow), "first"])
def test_ctrl_c_while_a_later_kernel_compiles_prints_the_scenarios_checked(
    folder: Path,  # noqa: F811
    form: str,
) -> None:
    """Ctrl-C while a kernel compiles ends the process at once (a compile cannot stop
    halfway), but a check has answered its first scenarios by then: their report, table
    or JSON, marked partial, and the JUnit file, before the line that says it stopped;
    status 130. While the first scenario's compiles, nothing is answered yet: no report,
    no file, as any command stopped while compiling."""
    assert invoke(folder, "--update").exit_code == 0  # type: ignore[attr-defined]
    junit = folder / "report.xml"
    extra = ["--json"] if form == "json" else []
    regress_args = ["--baseline", str(folder / "balance.toml"), "--junit", str(junit), *extra]
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_COMPILING, str(folder / "scenarios"), *regress_args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "COLUMNS": "100", "CTRL_C_AT": "1" if form == "first" else "2"},
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.rstrip().endswith("interrupted while compiling the kernels: stopped at once")
    if form == "first":
        assert done.stdout == "" and not junit.exists()
        return
    if form == "json":
        answer = json.loads(done.stdout)
        assert answer["partial"] is True
        assert answer["scenarios"] == {"scenarios/archers.toml": "ok"}
    else:
        assert "PARTIAL: interrupted by Ctrl-C" in done.stdout
        assert "archers" in done.stdout and "knights" not in done.stdout.split("PARTIAL")[-1]
    assert 'name="scenarios/archers.toml"' in junit.read_text()
    assert "scenarios/knights.toml" not in junit.read_text()
