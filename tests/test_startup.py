"""A command-line query loads what it needs and no more, and a first run says that it
compiles: start-up is part of what an ``odds`` query costs (docs/benchmarks.md times the
whole process). The tests read the list of imported modules (``python -X importtime``)
and count lines, never a clock."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernels._warm import SHORTCUTS
from tests import ROOT
from tests.processes import needs_numba_shortcuts

#: Too heavy for a process that does not need them (each 0.1-0.3 s of start-up).
HEAVY = {"numba", "pandas", "scipy", "matplotlib"}
ODDS = ["odds", "--attacker", "noble, 5 soldier", "--defender", "noble, 3 soldier"]


def imported_by(args: list[str], env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The top-level packages ``python -m simulator ARGS`` imported, and its output."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "simulator", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    )
    names = {
        line.split("|")[2].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }
    return names, done.stdout


#: Runs ``battle-odds ARGS`` in this interpreter and, at exit (``battle-odds`` ends its
#: process without the interpreter's teardown, but runs the atexit functions), prints the
#: packages loaded. (``-X importtime`` also lists imports that failed: kernels/__init__.py
#: makes Numba's look for SciPy fail.)
AT_EXIT = """
import atexit, json, runpy, sys
atexit.register(lambda: print("loaded:", *sorted({m.split(".")[0] for m in sys.modules}),
                              file=sys.stderr))
sys.argv = ["battle-odds", *json.loads(sys.argv[1])]
runpy.run_module("simulator", run_name="__main__")
"""


def query_in_process(script: str, args: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    """``script`` (one of those above) run with ``battle-odds ARGS``, checked and captured."""
    return subprocess.run(
        [sys.executable, "-c", script, json.dumps(args), *extra],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )


def test_an_odds_query_imports_no_pandas_scipy_or_pydantic() -> None:
    """pandas was a fifth of the start-up (0.2 s of 1.1 s) and builds nothing an
    ``odds`` answer needs; scipy.linalg came in through Numba's BLAS probe (0.2 s);
    pydantic through typer's coercion of every option (0.13 s, simulator/cli/coercion.py)."""
    args = [*ODDS, "--battles", "10", "--seed", "3", "--set", "terrain=land", "--json"]
    done = query_in_process(AT_EXIT, args)
    assert '"win"' in done.stdout  # the query ran and answered
    line = next(x for x in done.stderr.splitlines() if x.startswith("loaded:"))
    loaded = set(line.split()[1:])
    assert {"simulator", "numba", "numpy", "kernels"} <= loaded  # the probe sees real imports
    # Numba's own way of loading cached kernels (the shortcuts off) probes BLAS itself.
    scipy = {"scipy"} if SHORTCUTS else set()
    assert not loaded & {"pandas", "matplotlib", "pydantic", *scipy}


#: Runs an ``odds`` query in this interpreter and prints, at exit, whether Numba's lowering
#: registries were loaded (``numba.np.npyimpl`` is one of the modules only they import);
#: with an argument ``numba``, kernels load from the cache Numba's own way (which loads them).
REGISTRIES = """
import atexit, json, runpy, sys
if sys.argv[2:] == ["numba"]:
    import numpy as np
    import kernels._warm as warm
    from numba.core import environment
    from numba.core.caching import FunctionCache
    from numba.core.typing.typeof import typeof_impl
    warm.LoadingCache.load_overload = FunctionCache.load_overload
    environment._rebuild_env = warm._numba_rebuild_env
    typeof_impl.register(np.ndarray)(warm._numba_typeof_ndarray)
atexit.register(lambda: print("registries:", "numba.np.npyimpl" in sys.modules, file=sys.stderr))
sys.argv = ["battle-odds", *json.loads(sys.argv[1])]
runpy.run_module("simulator", run_name="__main__")
"""


# Slow tier (docs/testing.md): 3.2 s, quiet, the kernels cached
@pytest.mark.slow
@needs_numba_shortcuts
def test_a_warm_query_loads_its_kernels_without_the_compilers_set_up() -> None:
    """Numba's cache refreshes its target context before loading machine code, importing
    every lowering registry (0.1-0.15 s CPU of a 0.9 s query); kernels/_warm.py loads
    without it (and without the modules of Numba's array functions or numpy.ma), and
    the answer is the same battles' as when loaded Numba's way."""
    args = [*ODDS, "--battles", "2000", "--json"]

    def query(*how: str) -> tuple[bool, dict[str, object]]:
        done = query_in_process(REGISTRIES, args, *how)
        line = next(x for x in done.stderr.splitlines() if x.startswith("registries:"))
        answer = json.loads(done.stdout)
        answer.pop("seconds")
        return line.split()[1] == "True", answer

    query()  # compiles the kernels if the cache is cold (a compile loads the registries)
    loaded, answer = query()
    loaded_by_numba, answer_by_numba = query("numba")
    assert loaded_by_numba  # the probe sees the registries when Numba loads them
    assert not loaded
    assert answer == answer_by_numba


#: Modules a warm ``odds --json`` query has no use for: Numba's array functions (their
#: environments are rebuilt without them), numpy.ma (Numba's check for a masked array),
#: and rich's tables and live display (nothing is drawn in a pipe).
NOT_FOR_A_QUERY = (
    "numba.np.arrayobj",
    "numba.np.arraymath",
    "numpy.ma",
    "rich.table",
    "rich.progress",
    "rich.live",
)
MODULES_AT_EXIT = """
import atexit, json, runpy, sys
atexit.register(lambda: print("modules:", *sorted(sys.modules), file=sys.stderr))
sys.argv = ["battle-odds", *json.loads(sys.argv[1])]
runpy.run_module("simulator", run_name="__main__")
"""


@needs_numba_shortcuts
def test_a_warm_query_imports_nothing_only_compiling_or_drawing_needs() -> None:
    args = [*ODDS, "--battles", "2000", "--json"]

    def modules() -> set[str]:
        done = query_in_process(MODULES_AT_EXIT, args)
        assert '"win"' in done.stdout
        line = next(x for x in done.stderr.splitlines() if x.startswith("modules:"))
        return set(line.split()[1:])

    modules()  # compiles the kernels if the cache is cold
    loaded = modules()
    assert {"numba.core.environment", "rich.console"} <= loaded  # the probe sees imports
    assert not loaded & set(NOT_FOR_A_QUERY)


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_import_nothing_heavy(args: list[str]) -> None:
    """``--version`` and ``--help`` (and no arguments: the help) answer from typer and
    the table of commands, without the commands' modules."""
    loaded, out = imported_by(args)
    assert "battle-odds" in out or "Usage:" in out
    assert "typer" in loaded  # the probe sees real imports
    assert not loaded & HEAVY


# Slow tier (docs/testing.md): 1.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_table_of_commands_is_the_app() -> None:
    """COMMANDS (what ``--help`` lists, in its order, without importing) names every
    registered command, with the module that defines it and its docstring's first paragraph."""
    from typer.main import get_command_name

    from simulator.cli import COMMANDS, app
    from simulator.cli.app import OneLineErrors
    from simulator.cli.help import paragraphs

    for module in {module for module, _ in COMMANDS.values()}:
        OneLineErrors().load(module)
    registered = {
        info.name or get_command_name(info.callback.__name__): info  # type: ignore[union-attr]
        for info in app.registered_commands
    }
    assert sorted(registered) == sorted(COMMANDS)
    for name, (module, help_line) in COMMANDS.items():
        callback = registered[name].callback
        assert callback.__module__ == f"simulator.cli.{module}"  # type: ignore[union-attr]
        assert (paragraphs(inspect.getdoc(callback)) or "").split("\n\n")[0] == help_line


def test_a_mistyped_command_gets_a_suggestion() -> None:
    """Commands not imported yet are still suggested (typer suggests from those loaded)."""
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "rn"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2
    assert "Did you mean 'run'?" in done.stderr


# Slow tier (docs/testing.md): 24.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_first_run_says_it_compiles_and_times_it_apart(tmp_path: Path) -> None:
    """On an empty Numba cache: one line on stderr naming the kernel being compiled, and
    the compile time reported apart from the battles'; the second run, cached, neither.
    (Confrontation: the bundled kernel that compiles fastest.)"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    args = [
        sys.executable,
        "-m",
        "simulator",
        "run",
        "scenarios/confrontation/attack.toml",
        "--battles",
        "1000",
        "--json",
    ]
    answers = []
    for _ in range(2):
        done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr
        said = [line for line in done.stderr.splitlines() if "compiling" in line]
        answers.append((said, json.loads(done.stdout)))
    (said, cold), (said_warm, warm) = answers
    assert len(said) == 1
    assert said[0].startswith("battle-odds: compiling the confrontation kernel, first run only")
    assert cold["compile_seconds"] > 0
    assert said_warm == []
    assert warm["compile_seconds"] == 0
    assert cold["win"] == warm["win"]  # the same battles either way


def test_the_compile_notice_is_said_once_and_nested_compiles_timed_once() -> None:
    """A compile inside another (a kernel's helpers) adds no second notice and no second
    count of its seconds; a kernel from elsewhere is named without an estimate."""
    from kernels import confrontation
    from simulator.running import compiling

    clock = compiling.CompileClock()
    said: list[str] = []
    moved: list[int] = []
    clock.on_start.append(lambda function: said.append(compiling.compile_notice(function)))
    clock.on_end.append(lambda: moved.append(clock.functions))
    clock.started(confrontation.confrontation_battles.py_func)
    clock.started(confrontation.finish.py_func)
    clock.ended()
    clock.ended()
    assert said == [
        "battle-odds: compiling the confrontation kernel, first run only, about 8 s "
        "(later runs load it from Numba's cache)"
    ]
    assert moved == [1, 2]
    assert 0 < clock.seconds < 60
    clock.ended()  # an end without a start (the clock began listening mid-compile)
    assert clock.functions == 2

    def elsewhere() -> None:
        """A ruleset's kernel installed from another package."""

    elsewhere.__module__ = "risk_ruleset.kernel"
    assert compiling.compile_notice(elsewhere) == (
        "battle-odds: compiling the risk_ruleset kernel, first run only "
        "(later runs load it from Numba's cache)"
    )
