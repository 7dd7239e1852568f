"""The test session's start (the kernels compiled first, in parallel, on an empty cache)
and the fixtures test modules share.

Every process of the session (pytest's own, and each ``battle-odds`` a test starts) loads
the kernels from the tree's Numba cache, which a fresh clone lacks: each kernel then
compiles in the first test that needs it, one after another on one core. Where several
kernels are missing, ``battle-odds warm`` compiles them first, as many at once as the
machine has cores (about half the time on two); a cache already filled costs nothing.
README's first tier warms the kernel paths its tests use, every path but
tests/tiers.py's ``SLOW_TIER_PATHS``; a session that runs slow tests warms those too.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import simulator
from tests import ROOT
from tests.tiers import SLOW_TIER_PATHS

#: The kernel modules whose cache index (``kernels/PACKAGE/__pycache__/MODULE.FUNCTION-*.nbi``,
#: olympia's in its package's folder) says the module's kernel was compiled in this tree.
KERNELS = (
    "olympia/chain",
    "olympia/skip",
    "olympia/strike",
    "olympia/exact",
    "age_of_gods",
    "blocks",
    "confrontation",
    "skirmish",
)


def missing_kernels(folder: Path) -> list[str]:
    """The modules of :data:`KERNELS` without a cached function under ``folder`` (the
    kernels' folder)."""
    missing = []
    for name in KERNELS:
        package, _, module = name.rpartition("/")
        if not any((folder / package / "__pycache__").glob(f"{module}.*.nbi")):
            missing.append(name)
    return missing


def selects_slow_tests(config: pytest.Config) -> bool:
    """Whether the session's ``-m`` expression lets slow tests run (a slow test may also
    be a terminal one): README's ``pytest`` (``-m "not slow"``) does not, ``pytest -m
    slow`` and ``.ci/run``'s later sessions do."""
    from _pytest.mark.expression import Expression

    expression = config.option.markexpr
    if not expression:
        return True
    compiled = Expression.compile(expression)
    return any(
        compiled.evaluate(functools.partial(_marked, marks))
        for marks in ({"slow"}, {"slow", "terminal"})
    )


def _marked(marks: set[str], name: str, **_: Any) -> bool:
    return name in marks


def warm_arguments(config: pytest.Config, folder: Path) -> list[str] | None:
    """``battle-odds warm``'s arguments for this session, or None where its kernels are
    cached already. A first-tier session compiles every kernel path but
    :data:`~tests.tiers.SLOW_TIER_PATHS`, where several modules lack kernels (a fresh
    clone); a session that runs slow tests compiles every path where those paths' own
    functions are missing too (after a fresh clone's first tier)."""
    missing = len(missing_kernels(folder)) >= 2
    if not selects_slow_tests(config):
        if not missing:
            return None
        from simulator import rulesets
        from simulator.cli.warm import jobs

        names = [job.name for job in jobs(list(rulesets.available()))]
        return [arg for name in names if name not in SLOW_TIER_PATHS for arg in ("--path", name)]
    lacking = [
        path
        for path, function in SLOW_TIER_PATHS.items()
        if not any(
            (folder / Path(function).parent / "__pycache__").glob(f"{Path(function).name}-*.nbi")
        )
    ]
    return [] if missing or lacking else None


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its controller warmed the cache before starting it
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return  # a cache elsewhere, or none: the session's own choice
    arguments = warm_arguments(session.config, ROOT / "kernels")
    if arguments is None:
        return
    subprocess.run([sys.executable, "-m", "simulator", "warm", *arguments], cwd=ROOT, check=False)


#: The modules whose tests read what a command prints in a terminal (its lines, their
#: width, the paths in them) or start a browser under the session's temporary folder:
#: marked ``terminal``, and .ci/run runs them again at 60 and 200 columns under a long
#: TMPDIR (README's run is the 80 columns a script sees), so that no test passes only at
#: the width or the temporary folder of the machine it was written on.
TERMINAL_MODULES = frozenset(
    {
        "test_age_of_gods",
        "test_bad_inputs",
        "test_calibrate",
        "test_cli_options",
        "test_compare",
        "test_faults",
        "test_human_output",
        "test_interrupt",
        "test_olympia_exact_stops",
        "test_olympia_runs",
        "test_output_paths",
        "test_plugins",
        "test_progress_eta",
        "test_retreat",
        "test_serve_browser",
        "test_skirmish",
        "test_skirmish_unfolding",
        "test_stop_rules",
        "test_terminal_output",
        "test_unfolding",
        "test_unknowns",
        "test_waves",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__.rpartition(".")[2] in TERMINAL_MODULES:
            item.add_marker(pytest.mark.terminal)


@pytest.fixture(scope="session")
def knights_vs_pikemen() -> simulator.Scenario:
    """The yardstick scenario of the studies' and the library's tests (olympia's knights
    against pikemen: small, fast, every study can ask it), loaded once a session."""
    return simulator.load_scenario(ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml")


#: A first-tier test's budget in seconds (its set-up, call and tear-down, the kernels
#: cached): README's ``pytest`` holds fast unit and command tests, and a test over this
#: belongs in the slow tier (``@pytest.mark.slow``) or should be made cheaper. Loose on
#: purpose, three times the second the first tier's tests take on a quiet machine, so
#: that a loaded one does not cry wolf; a warning, never a failure, as a time is the
#: machine's as much as the test's.
FIRST_TIER_BUDGET = 3.0
_first_tier_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords and report.outcome != "skipped":
        _first_tier_seconds[report.nodeid] = (
            _first_tier_seconds.get(report.nodeid, 0.0) + report.duration
        )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    over = sorted(
        ((seconds, nodeid) for nodeid, seconds in _first_tier_seconds.items()
         if seconds > FIRST_TIER_BUDGET),
        reverse=True,
    )  # fmt: skip
    if not over or hasattr(config, "workerinput"):
        return
    terminalreporter.section("first-tier tests over their budget")
    terminalreporter.write_line(
        f"{len(over)} test(s) not marked slow took more than {FIRST_TIER_BUDGET:g} s "
        "(a loaded machine, or a kernel compiled in the test, can explain one; "
        "otherwise mark it @pytest.mark.slow or make it cheaper, docs/testing.md):"
    )
    for seconds, nodeid in over[:20]:
        terminalreporter.write_line(f"  {seconds:6.1f} s  {nodeid}")
