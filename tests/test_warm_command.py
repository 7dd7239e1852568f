"""``battle-odds warm`` (every kernel compiled once, in worker processes) and the exact
solver's compile notice and time kept apart (issue 50)."""

from __future__ import annotations

import importlib
import json
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
from typer.testing import CliRunner

import simulator
from kernels.olympia import exact as olympia_exact
from simulator import rulesets
from simulator.cli import app, warm
from simulator.rulesets import ExactResult
from simulator.running import compiling
from simulator.studies.exact import exact
from tests import ROOT
from tests.conftest import KERNELS, warm_arguments
from tests.processes import started
from tests.test_unknowns_stacked import stacked_runs
from tests.tiers import SLOW_TIER_PATHS, slow_for


def test_warm_has_a_job_for_every_kernel_path_longest_first() -> None:
    names = list(rulesets.available())
    todo = warm.jobs(names)
    assert {job.ruleset for job in todo} == set(names)
    olympia = {job.name for job in todo if job.ruleset == "olympia"}
    assert olympia == {
        "olympia chain",
        "olympia chain with ranges",
        "olympia chain, the battle as it unfolds",
        "olympia skip",
        "olympia skip, the battle as it unfolds",
        "olympia skip, large armies",
        "olympia strike",
        "olympia exact solver",
        "olympia with ranges",
    }
    estimates = [job.estimate() for job in todo]
    assert estimates == sorted(estimates, reverse=True)


def test_two_paths_of_one_kernel_module_never_compile_side_by_side(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each path's process stands for a few polls; at no time do two of one family run
    (the skip kernel's three paths and olympia's ranges, each ruleset's plain and stacked
    kernels), while paths of two families do run side by side."""
    running: list[str] = []
    seen_together: list[tuple[str, ...]] = []

    class Finishing:
        def __init__(self, family: str) -> None:
            self.family, self.polls, self.returncode, self.pid = family, 3, 0, -1

        def poll(self) -> int | None:
            self.polls -= 1
            if self.polls > 0:
                return None
            if self.family in running:
                running.remove(self.family)
            return 0

        def communicate(self) -> tuple[str, str]:
            return '{"compile_seconds": 1.0}', ""

    def start(job: warm.Job, starter: Path) -> warm.Running:
        running.append(job.family)
        seen_together.append(tuple(sorted(running)))
        return warm.Running(job, Finishing(job.family), time.perf_counter())  # type: ignore[arg-type]

    monkeypatch.setattr(warm, "_start", start)
    monkeypatch.setattr(warm.time, "sleep", lambda seconds: None)
    done = CliRunner().invoke(app, ["warm", "--jobs", "2"])
    assert done.exit_code == 0, done.output
    families = [job.family for job in warm.jobs(list(rulesets.available()))]
    assert len(seen_together) == len(families)
    assert all(len(set(at_once)) == len(at_once) for at_once in seen_together), seen_together
    assert any(len(at_once) == 2 for at_once in seen_together)
    skip = {"olympia skip", "olympia skip, the battle as it unfolds", "olympia with ranges"}
    assert {job.family for job in warm.jobs(["olympia"]) if job.name in skip} == {
        "kernels.olympia.skip"
    }


def test_warm_compiles_only_the_paths_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--path`` (the session's warm for the first tier, tests/conftest.py): the paths
    named and no other; a name of no path is one line, with the nearest, and status 2."""
    started: list[str] = []

    class Done:
        returncode, pid = 0, -1

        def poll(self) -> int:
            return 0

        def communicate(self) -> tuple[str, str]:
            return '{"compile_seconds": 0.0}', ""

    def start(job: warm.Job, starter: Path) -> warm.Running:
        started.append(job.name)
        return warm.Running(job, Done(), time.perf_counter())  # type: ignore[arg-type]

    monkeypatch.setattr(warm, "_start", start)
    monkeypatch.setattr(warm.time, "sleep", lambda seconds: None)
    done = CliRunner().invoke(app, ["warm", "--path", "olympia chain", "--path", "blocks"])
    assert done.exit_code == 0, done.output
    assert sorted(started) == ["blocks", "olympia chain"]
    assert "2 kernel paths" in done.stderr
    wrong = CliRunner().invoke(app, ["warm", "--path", "olympia chian"])
    assert wrong.exit_code == 2
    assert wrong.stderr.strip().splitlines() == [
        "error: --path 'olympia chian': no such kernel path (did you mean 'olympia chain'?)"
    ]
    assert len(started) == 2


def test_the_first_tier_warms_every_path_but_the_slow_tiers(tmp_path: Path) -> None:
    """tests/tiers.py names warm's paths and the function each alone compiles; the first
    tier's session warms every other path on an empty cache, a session with slow tests
    every path there and, after the first tier, the slow tier's paths it lacks."""
    names = [job.name for job in warm.jobs(list(rulesets.available()))]
    assert set(SLOW_TIER_PATHS) < set(names)
    for function in SLOW_TIER_PATHS.values():
        module, _, name = function.rpartition(".")
        assert hasattr(importlib.import_module(f"kernels.{module.replace('/', '.')}"), name)

    def session(marks: str) -> Any:
        return SimpleNamespace(option=SimpleNamespace(markexpr=marks))

    first_tier = warm_arguments(session("not slow"), tmp_path)
    assert first_tier is not None
    assert first_tier[1::2] == [name for name in names if name not in SLOW_TIER_PATHS]
    assert set(first_tier[::2]) == {"--path"}
    for marks in ("slow", "terminal and slow", "", "slow or not slow"):
        assert warm_arguments(session(marks), tmp_path) == [], marks
    assert warm_arguments(session("terminal and not slow"), tmp_path) == first_tier
    # A cache that holds every kernel module's functions: the first tier warms nothing,
    # and a session with slow tests warms the four's paths each until it holds its own.
    for name in KERNELS:
        package, _, module = name.rpartition("/")
        (tmp_path / package / "__pycache__").mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__pycache__" / f"{module}.kernel-1.py311.nbi").touch()
    assert warm_arguments(session("not slow"), tmp_path) is None
    slow = warm_arguments(session("slow"), tmp_path)
    assert slow is not None and slow[1::2] == list(SLOW_TIER_PATHS), slow
    assert set(slow[::2]) == {"--path"}
    for path, function in SLOW_TIER_PATHS.items():
        assert path in (warm_arguments(session("slow"), tmp_path) or [])
        folder, _, name = function.rpartition("/")
        (tmp_path / folder / "__pycache__" / f"{name}-7.py311.nbi").touch()
        assert path not in (warm_arguments(session("slow"), tmp_path) or [])
    assert warm_arguments(session("slow"), tmp_path) is None
    assert warm_arguments(session("not slow"), tmp_path) is None


@pytest.mark.parametrize(
    "job",
    # Each path the first tier compiles; the others are the slow tier's (tests/tiers.py).
    slow_for(
        [job for job in warm.OLYMPIA if "--exact" not in job.args],
        [job for job in warm.OLYMPIA if job.name in SLOW_TIER_PATHS],
    ),
    ids=lambda job: job.name,
)
def test_each_olympia_job_runs_the_kernel_it_is_named_for(job: warm.Job, tmp_path: Path) -> None:
    """The chain job once ran the starter scenario, whose tower makes a skip battle: warm
    said "olympia chain" and left the chain kernel uncompiled."""
    starter = tmp_path / "olympia.toml"
    starter.write_text(rulesets.get("olympia").starter(), encoding="utf-8")
    args = [a.replace("{starter}", str(starter)) for a in job.args if a not in ("-n", "400", "20")]
    done = CliRunner().invoke(app, [*args, "-n", "10"])
    assert done.exit_code == 0, done.output
    named = job.module.rpartition(".")[2]
    # The shared tables' walk is the chain kernel's (its battles those of each
    # combination's own chain table: tests/test_olympia_shared_chain.py).
    assert json.loads(done.stdout)["kernel"] == named.removeprefix("shared_")


# Slow tier: it runs every stacked kernel, two of which only the slow tier compiles
# (tests/tiers.py).
@pytest.mark.slow
def test_every_stacked_kernel_has_a_job_that_runs_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stacked kernels (a scenario with ranges, kernels/*_stacked.py and
    kernels/olympia/stacked.py) compiled on a user's first ranged question: warm had no
    job for them. Each job's battles run on its ruleset's stacked kernel."""
    names = list(rulesets.available())
    modules = {job.module for job in warm.jobs(names)}
    kernels = ROOT / "kernels"
    stacked = {f"kernels.{p.stem}" for p in kernels.glob("*_stacked.py")}
    stacked |= {f"kernels.{p.parent.name}.stacked" for p in kernels.glob("*/stacked.py")}
    assert "kernels.olympia.stacked" in stacked and stacked <= modules
    ran = stacked_runs(monkeypatch)
    for job in warm.RANGES.values():
        starter = tmp_path / f"{job.ruleset}.toml"
        starter.write_text(rulesets.get(job.ruleset).starter(), encoding="utf-8")
        assert job.args[-len(warm.FEW) :] == warm.FEW
        args = [a.replace("{starter}", str(starter)) for a in job.args[: -len(warm.FEW)]]
        done = CliRunner().invoke(app, [*args, "-n", "20", "--json"])
        assert done.exit_code == 0, (job.name, done.output)
        assert json.loads(done.stdout)["unknowns"], job.name
        assert ran and set(ran) == {job.ruleset}, (job.name, ran)
        ran.clear()


# Slow tier (docs/testing.md): 2.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_stops_warm_and_its_workers_at_once(tmp_path: Path) -> None:
    """On an empty cache the workers compile for tens of seconds; Ctrl-C ends them (a
    compile cannot be stopped between its steps) and warm says what is ready, exit 130."""
    # Every ruleset installed, a plugin too (the risk example the plugin tests install).
    names = list(rulesets.available())
    paths = len(warm.jobs(names))
    process = started(["warm", "--jobs", "2"], {"NUMBA_CACHE_DIR": str(tmp_path / "cold")})
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith(
        f"battle-odds warm: {paths} kernel paths of {len(names)} rulesets, 2 at a time"
    ), first
    deadline = time.monotonic() + 60
    workers: list[psutil.Process] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        workers = psutil.Process(process.pid).children()
        time.sleep(0.05)
    assert len(workers) == 2
    time.sleep(1.0)  # into their compiles
    process.send_signal(signal.SIGINT)
    pressed = time.perf_counter()
    _, err = process.communicate(timeout=30)
    assert time.perf_counter() - pressed < 5
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith(f"interrupted: 0 of {paths} kernel paths ready")
    assert "Traceback" not in err
    _, alive = psutil.wait_procs(workers, timeout=5)
    assert alive == [], alive


def test_exact_says_it_compiles_and_keeps_the_compiling_apart(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first ``exact`` compiles the solver: one notice on stderr naming it, and the
    answer's seconds are the solving's (README's 13.61 s was 0.70 s of solving)."""
    scenario = simulator.load_scenario(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
    olympia = rulesets.get("olympia")
    solved = olympia.exact(scenario)
    clock = compiling.compile_clock()

    def compiling_first(scenario: object, max_states: int | None = None) -> ExactResult:
        began = time.perf_counter()
        clock.started(olympia_exact.solve_chain.py_func)
        time.sleep(0.2)
        clock.ended()
        return ExactResult(
            scenario=solved.scenario,
            win=solved.win,
            expected_steps=solved.expected_steps,
            casualties=solved.casualties,
            extras=solved.extras,
            states=solved.states,
            seconds=time.perf_counter() - began + 0.05,
        )

    monkeypatch.setattr(type(olympia), "exact", lambda self, s, m=None: compiling_first(s, m))
    answer = exact(scenario)
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "battle-odds: compiling the olympia exact solver kernel, first run only, about "
        f"{compiling.KERNEL_MODULES['kernels.olympia.exact'][1]:.0f} s (later runs load it "
        "from Numba's cache)"
    ]
    assert 0.2 <= answer.compile_seconds < 1.0
    assert 0.0 < answer.seconds < 0.2
    assert answer.to_dict()["compile_seconds"] == round(answer.compile_seconds, 3)


def test_the_python_api_says_it_compiles_unless_a_command_already_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """simulator.simulate in a notebook compiled its kernel for a minute without a word:
    the Python API now says it on stderr, once; inside a command (whose progress bar says
    it) nothing is said twice."""
    clock = compiling.compile_clock()
    function = olympia_exact.solve_chain.py_func
    with compiling.said_on_stderr():
        clock.started(function)
        clock.ended()
    assert capsys.readouterr().err.splitlines() == [compiling.compile_notice(function)]
    said: list[str] = []
    with compiling.announce_compiles(said.append), compiling.said_on_stderr():
        clock.started(function)
        clock.ended()
    assert said == [compiling.compile_notice(function)]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("compiled", "seconds", "words"),
    [
        (31.4, 40.0, "compiled in 31 s"),
        # A path whose answer counts no compile (its solver or recorder compiled) but
        # whose worker took 48 s did not load from the cache: it says only how long.
        (0.0, 48.2, "ready in 48 s"),
        (0.0, 1.2, "already compiled, loaded in 1.2 s"),
    ],
)
def test_warm_says_a_path_was_already_compiled_only_when_it_loaded_quickly(
    compiled: float, seconds: float, words: str
) -> None:
    assert warm.readiness(compiled, seconds) == words
