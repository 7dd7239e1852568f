"""A kernel's battle compiled in a second process on a cold cache (kernels/_aside.py):
started only where it pays, waited for as a compile (the run's compile clock and Ctrl-C
see one), and never left behind by the process that started it.

The second processes here run ``time.sleep`` (``python -m kernels._aside time sleep N``):
what matters is how they start and end, not what they compile. The cold runs of the
skip kernel that check the rows are in the slow tier.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from numba import typeof

import simulator
from kernels import _aside
from simulator import rulesets
from simulator.rulesets.stacked import warm_stacked
from simulator.running.compiling import compile_clock, compiling_now

ROOT = Path(__file__).resolve().parents[1]
CASTLE = "scenarios/olympia/castle_siege.toml"
KNIGHTS = "scenarios/olympia/knights_vs_pikemen.toml"
FIELD = "scenarios/blocks/field_battle.toml"
ARCHERS = "scenarios/age_of_gods/archers_in_rain.toml"
ATTACK = "scenarios/confrontation/attack.toml"
HEALER = "scenarios/skirmish/archers_and_healer.toml"
#: The rulesets whose battle a :class:`kernels._aside.BattleByAddress` compiles aside: a
#: bundled scenario of each, and its stacked kernel (kernels/RULESET_stacked.py).
BY_ADDRESS = {"age_of_gods": ARCHERS, "confrontation": ATTACK, "skirmish": HEALER}
STACKED = {"age_of_gods": "phased_stacked", "confrontation": "confrontation_stacked",
           "skirmish": "skirmish_stacked"}  # fmt: skip


def _dispatcher(index: Path, overloads: dict[Any, Any] | None = None) -> Any:
    """Enough of a Numba dispatcher for :func:`kernels._aside.start`: its compiled
    signatures and its cache's index file."""

    def sleeper() -> None:
        """The function its compile events name."""

    cache = SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index)))
    return SimpleNamespace(overloads=overloads or {}, _cache=cache, py_func=sleeper)


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_aside.ASIDE_SETTING, raising=False)
    monkeypatch.setattr(_aside, "cores", lambda: 2)


def test_started_only_where_nothing_is_compiled_or_cached(
    tmp_path: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    done: list[bool] = []
    monkeypatch.setattr(_aside, "meanwhile", [lambda: done.append(True)])
    cached = tmp_path / "cached.nbi"
    cached.write_bytes(b"")
    assert _aside.start(_dispatcher(cached), (), "time", "sleep", 0) is None
    compiled = _dispatcher(tmp_path / "none.nbi", {("int64",): object()})
    assert _aside.start(compiled, ("int64",), "time", "sleep", 0) is None
    monkeypatch.setattr(_aside, "cores", lambda: 1)
    assert _aside.start(_dispatcher(tmp_path / "none.nbi"), (), "time", "sleep", 0) is None
    monkeypatch.setattr(_aside, "cores", lambda: 2)
    monkeypatch.setenv(_aside.ASIDE_SETTING, "0")
    assert _aside.start(_dispatcher(tmp_path / "none.nbi"), (), "time", "sleep", 0) is None
    monkeypatch.delenv(_aside.ASIDE_SETTING)
    cold = _dispatcher(tmp_path / "none.nbi")
    aside = _aside.start(cold, (), "time", "sleep", 0)
    assert aside is not None
    # Another thread's battles of the same kernel wait for the same compile.
    assert _aside.start(cold, (), "time", "sleep", 0) is aside
    # It ran time.sleep(0) and exited 0; waited for with nothing compiled meanwhile (the
    # chain kernel's walk: a price search counts no outcomes, so compiles no tally).
    assert aside.wait(compile_meanwhile=False) is True
    assert done == []
    again = _aside.start(cold, (), "time", "sleep", 0)  # still nothing in the cache
    assert again is not None and again is not aside
    again.stop()
    # A helper of a function that is cached already (blocks' field_round, its battle
    # loaded): nothing to compile it for.
    needed = _aside.start(cold, (), "time", "sleep", 0, needed_by=(_dispatcher(cached), ()))
    assert needed is None
    needed = _aside.start(cold, (), "time", "sleep", 0, needed_by=(compiled, ("int64",)))
    assert needed is None


def test_waiting_is_a_compile_to_the_run(
    tmp_path: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait counts in the run's compile seconds, and Ctrl-C meanwhile ends the
    process at once (simulator/running/interrupt.py asks ``compiling_now``); before it
    waits, the process compiles what ``meanwhile`` names (the tally)."""
    done: list[bool] = []
    monkeypatch.setattr(_aside, "meanwhile", [lambda: done.append(True)])
    clock = compile_clock()
    seconds, functions = clock.seconds, clock.functions
    seen = []
    clock.on_start.append(lambda function: seen.append(compiling_now()))
    try:
        aside = _aside.start(_dispatcher(tmp_path / "none.nbi"), (), "time", "sleep", 1)
        assert aside is not None
        assert aside.wait() is True
    finally:
        clock.on_start.pop()
    assert done == [True]
    assert seen == [True]
    assert clock.functions == functions + 1
    assert clock.seconds - seconds >= 0.9
    assert not compiling_now()


def test_a_study_that_counts_nothing_compiles_nothing_meanwhile(
    tmp_path: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within ``counting_nothing`` (best's races) a wait compiles none of ``meanwhile``;
    after it, and outside it, waits compile them again."""
    done: list[bool] = []
    monkeypatch.setattr(_aside, "meanwhile", [lambda: done.append(True)])
    with _aside.counting_nothing():
        aside = _aside.start(_dispatcher(tmp_path / "none.nbi"), (), "time", "sleep", 0)
        assert aside is not None and aside.wait() is True
    assert done == []
    aside = _aside.start(_dispatcher(tmp_path / "none.nbi"), (), "time", "sleep", 0)
    assert aside is not None and aside.wait() is True
    assert done == [True]


def test_the_second_process_ends_when_the_first_does(tmp_path: Path) -> None:
    """A process that started a compile aside and ended (here killed, as Ctrl-C during a
    compile ends a command at once: ``os._exit``) leaves nothing running: the second
    process sees its pipe close and exits within a second."""
    starter = (
        "import sys, os\n"
        "from types import SimpleNamespace\n"
        "from kernels import _aside\n"
        "_aside.cores = lambda: 2\n"
        "cache = SimpleNamespace(_cache_file=SimpleNamespace(_index_path=sys.argv[1]))\n"
        "d = SimpleNamespace(overloads={}, _cache=cache, py_func=print)\n"
        "aside = _aside.start(d, (), 'time', 'sleep', 60)\n"
        "print(aside.process.pid, flush=True)\n"
        "sys.stdin.read()\n"
        "os._exit(0)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != _aside.ASIDE_SETTING}
    first = subprocess.Popen(
        [sys.executable, "-c", starter, str(tmp_path / "none.nbi")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert first.stdout is not None
    second = int(first.stdout.readline())
    assert _running(second)
    first.kill()
    first.wait()
    ended = time.monotonic() + 2
    while _running(second) and time.monotonic() < ended:
        time.sleep(0.02)
    assert not _running(second)


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _environment(cache: Path, aside: bool = True) -> dict[str, str]:
    """A run's environment on the Numba cache ``cache``, compiling aside or not."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(NUMBA_CACHE_DIR=str(cache), COLUMNS="200")
    env[_aside.ASIDE_SETTING] = "1" if aside else "0"
    return env


#: The child of :func:`_cold_run`: the command in this interpreter, and the functions
#: this process compiled (not those it loaded from the cache) said last on stderr.
COMPILED_HERE = """
import json, sys
import numba.core.event as event
compiled = []
class Heard(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
event.register("numba:compile", Heard())
sys.argv = ["battle-odds", *sys.argv[1:]]
from simulator.cli import app
try:
    app()
except SystemExit as stop:
    assert not stop.code, stop.code
print("COMPILED-HERE " + json.dumps(compiled), file=sys.stderr)
"""


def _cold_run(
    cache: Path, aside: bool, scenario: str = CASTLE
) -> tuple[dict[str, Any], str, list[str]]:
    """A run of 3,000 battles of ``scenario`` on the Numba cache ``cache``: its answer,
    its stderr and the functions its own process compiled (a wait for a compile aside
    counts as one of its function)."""
    done = subprocess.run(
        [sys.executable, "-c", COMPILED_HERE, "run", scenario, "-n", "3000", "--json"],
        capture_output=True, text=True, cwd=ROOT, env=_environment(cache, aside), check=True,
    )  # fmt: skip
    heard = [x for x in done.stderr.splitlines() if x.startswith("COMPILED-HERE ")]
    return json.loads(done.stdout), done.stderr, json.loads(heard[0].split(" ", 1)[1])


def _both_ways(tmp_path: Path, scenario: str) -> tuple[str, list[str], list[str]]:
    """``scenario`` run cold twice, its kernel's compile aside and in one process (each on
    a cache of its own under ``tmp_path``), asserting the two give the same answer: the
    aside run's stderr, the functions its process compiled, and those the one-process
    run compiled. Skipped on one core, where nothing compiles aside."""
    if _aside.cores() < 2:
        pytest.skip("the compile aside runs on two cores or more")
    aside, said, here = _cold_run(tmp_path / "aside", aside=True, scenario=scenario)
    alone, _, by_itself = _cold_run(tmp_path / "alone", aside=False, scenario=scenario)
    for answer in (aside, alone):
        answer.pop("seconds")
        answer.pop("compile_seconds")
    assert aside == alone
    return said, here, by_itself


# Slow tier (docs/testing.md): two cold compiles of the skip kernel, about 50 s quiet
@pytest.mark.slow
def test_a_cold_run_with_the_battle_compiled_aside_gives_the_same_rows(tmp_path: Path) -> None:
    """castle_siege on an empty cache, its battle compiled in a second process, gives
    the answer of a run that compiled everything itself, and says it compiles; the
    battle's block is then in the cache (the second process put it there)."""
    said, _, _ = _both_ways(tmp_path, CASTLE)
    assert "compiling the olympia" in said
    blocks = [p.name for p in (tmp_path / "aside").rglob("skip._plain_block-*.nbi")]
    assert blocks, sorted(p.name for p in (tmp_path / "aside").rglob("*.nbi"))


# Slow tier (docs/testing.md): two cold compiles of the chain kernel, about 40 s quiet
@pytest.mark.slow
def test_a_cold_chain_run_with_its_walk_compiled_aside_gives_the_same_rows(
    tmp_path: Path,
) -> None:
    """knights_vs_pikemen (the chain kernel) on an empty cache: its walk and the loop
    that calls it compiled in a second process while this one compiles the table's
    kernel, then loaded, not compiled again here; the rows of a run that compiled
    everything itself."""
    _, here, by_itself = _both_ways(tmp_path, KNIGHTS)
    assert {"chain_table", "_walk", "chain_battles"} <= set(by_itself)
    assert {"settle_row", "_walk_on"} <= set(by_itself)  # the walk's helpers
    # Here: the table's kernel and at most the wait for the walk (told as its compile;
    # none where the second process was done first), no more.
    assert "chain_table" in here and here.count("_walk") <= 1
    assert not {"chain_battles", "settle_row", "_walk_on"} & set(here)
    for name in ("chain._walk-", "chain.chain_battles-"):
        assert list((tmp_path / "aside").rglob(f"{name}*.nbi")), name


# Slow tier (docs/testing.md): two cold compiles of blocks' battle, about 60 s quiet
@pytest.mark.slow
def test_a_cold_blocks_run_with_helpers_compiled_aside_gives_the_same_rows(
    tmp_path: Path,
) -> None:
    """field_battle on an empty cache: the battle's field round and phase end (with
    what they call) compiled in a second process while this one compiles the battle's
    other helpers, then loaded from the cache, not compiled here; the answer of a run
    that compiled everything itself."""
    said, here, by_itself = _both_ways(tmp_path, FIELD)
    assert "compiling the blocks" in said
    aside_made = {"phases_end", "withdraw", "try_storm", "sally_wanted", "in_field"}
    assert {"one_battle", "field_round", "castle_round", *aside_made} <= set(by_itself)
    # Here: the battle and the helpers it calls on their own, not the second process's
    # (field_round is named here only by the wait for it, told as its compile); the
    # helpers both call (finish) before the second process compiles.
    assert {"one_battle", "_plain_battles", "castle_round", "finish", "present"} <= set(here)
    assert not aside_made & set(here)
    for name in ("blocks.field_round-", "blocks.phases_end-", "blocks.try_storm-"):
        assert list((tmp_path / "aside").rglob(f"{name}*.nbi")), name


@pytest.mark.parametrize("ruleset", sorted(BY_ADDRESS))
def test_a_battle_compiles_aside_while_its_kernel_compiles_here(
    monkeypatch: pytest.MonkeyPatch, ruleset: str
) -> None:
    """A first run of the ruleset's kernel on a cold cache starts the battle's compile
    in a second process (``kernels.RULESET.battle_by_address.address``: the same
    function, signature and cache), compiles the helpers it keeps and the kernel for
    the types a run's call has, then waits (the tally compiled meanwhile); later runs
    start nothing."""
    module = importlib.import_module(f"kernels.{ruleset}")
    by_address = module.battle_by_address
    started: list[tuple[Any, ...]] = []
    compiled: list[Any] = []
    waited: list[bool] = []

    class Waited:
        def wait(self, compile_meanwhile: bool = True) -> bool:
            waited.append(compile_meanwhile)
            return True

    def start(dispatcher: Any, arg_types: Any, module: str, function: str, *args: int) -> Any:
        started.append((dispatcher, arg_types, module, function, *args))
        return Waited()

    class Compiles:
        def compile(self, arg_types: Any) -> None:
            compiled.append(arg_types)

    helper, kernel = Compiles(), Compiles()
    helpers_here = by_address.helpers_here()
    monkeypatch.setattr(_aside, "start", start)
    monkeypatch.setattr(by_address, "ready", set())
    monkeypatch.setattr(by_address, "helpers_here", lambda: ((helper, ("helper's types",)),))
    given = (np.zeros(3, np.int64),)
    battle = by_address(kernel, given)
    assert battle is by_address.address()
    aside = (by_address.battle, by_address.battle_types(), f"kernels.{ruleset}")
    assert started == [(*aside, "battle_by_address.address")]
    assert compiled == [("helper's types",), by_address.kernel_types(given)]
    assert waited == [True]
    by_address(kernel, given)
    assert len(started) == 1
    # The plain run's kernel is compiled for the types of its call, the battle's included.
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(module, by_address.plain.py_func.__name__, lambda *a: calls.append(a))
    by_address.ready.add(by_address.plain)
    loaded = simulator.load_scenario(ROOT / BY_ADDRESS[ruleset])
    rulesets.get(loaded.ruleset).prepare(loaded.model).run_matrix(1, 0, 10)
    (call,) = calls
    assert tuple(typeof(a) for a in call) == by_address.kernel_types(None)
    # The helpers kept here are compiled for the types the battle calls them with: those
    # the session's warm compiled with the battle, so they load and compile nothing.
    clock = compile_clock()
    functions = clock.functions
    assert helpers_here or ruleset != "age_of_gods"
    for dispatcher, arg_types in helpers_here:
        dispatcher.compile(arg_types)
    assert clock.functions == functions


@pytest.mark.parametrize("ruleset", sorted(BY_ADDRESS))
def test_a_stacked_run_names_its_kernel_and_arguments_to_the_battle(
    monkeypatch: pytest.MonkeyPatch, ruleset: str
) -> None:
    """A stacked run (a scenario with ranges) hands the battle its stacked kernel and the
    arguments it will call it with, so that on a cold cache this process compiles that
    kernel, for those types, while the second compiles the battle."""
    named: list[tuple[Any, Any]] = []
    ran: list[tuple[Any, ...]] = []

    def kernel(*args: Any) -> None:
        ran.append(args)

    def battle_by_address(kernel: Any, given: Any = None) -> str:
        named.append((kernel, given))
        return "the battle"

    stacked = importlib.import_module(f"kernels.{ruleset}_stacked")
    monkeypatch.setattr(stacked, STACKED[ruleset], kernel)
    monkeypatch.setattr(importlib.import_module(f"kernels.{ruleset}"), "battle_by_address",
                        battle_by_address)  # fmt: skip
    loaded = simulator.load_scenario(ROOT / BY_ADDRESS[ruleset])
    warm_stacked(rulesets.get(loaded.ruleset).prepare(loaded.model))
    ((kernel_named, given),) = named
    ((battle, *arguments),) = ran
    assert kernel_named is kernel and battle == "the battle"
    assert given is not None and len(given) == len(arguments)
    assert all(a is b for a, b in zip(given, arguments, strict=True))


# Slow tier (docs/testing.md): two cold compiles of age_of_gods' kernel, about 30 s quiet
@pytest.mark.slow
def test_a_cold_age_of_gods_run_with_its_battle_compiled_aside_gives_the_same_rows(
    tmp_path: Path,
) -> None:
    """archers_in_rain on an empty cache: its battle and most of its helpers compiled in a
    second process while this one compiles the rest, the kernel and the tally, then
    loaded, not compiled again here; the rows of a run that compiled everything itself;
    olympia's layout helper compiled by neither (its columns are read in Python)."""
    said, here, by_itself = _both_ways(tmp_path, ARCHERS)
    assert "compiling the age_of_gods kernel" in said
    battle = {"_phased_battle", "survey", "ranged_or_melee", "apply_losses", "special_attacks"}
    assert battle | {"phased_battles", "slot_histograms"} <= set(by_itself)
    # Here: the helpers kept here, the kernel, the tally, each once, and at most the wait
    # for the battle (told as its compile; none where the second process was done first).
    kept = {"special_attacks", "phased_battles", "slot_histograms"}
    assert not (battle - kept - {"_phased_battle"}) & set(here)
    assert all(here.count(name) == 1 for name in kept), here
    assert here.count("_phased_battle") <= 1, here
    assert "extra" not in here and "extra" not in by_itself
    for name in battle:  # each compiled once, for one signature, by either process
        assert len(list((tmp_path / "aside").rglob(f"age_of_gods.{name}-*.nbc"))) == 1, name


# Slow tier (docs/testing.md): two cold compiles of the ruleset's kernel, about 30 s quiet
@pytest.mark.slow
@pytest.mark.parametrize("ruleset", ["confrontation", "skirmish"])
def test_a_cold_run_with_its_battle_compiled_aside_gives_the_same_rows(
    tmp_path: Path, ruleset: str
) -> None:
    """The ruleset's scenario on an empty cache: its battle compiled in a second process
    while this one compiles the kernel (once, for the types of the run's call) and the
    tally, then loaded, not compiled again here; the rows of a run that compiled
    everything itself."""
    said, here, by_itself = _both_ways(tmp_path, BY_ADDRESS[ruleset])
    assert f"compiling the {ruleset} kernel" in said
    kernel = f"{ruleset}_battles"
    assert {"one_battle", kernel, "slot_histograms"} <= set(by_itself)
    # Here: the kernel and the tally, each once, and at most the wait for the battle (told
    # as its compile; none where the second process was done first); none of the
    # battle's helpers (record, the withdrawal rule's).
    assert all(here.count(name) == 1 for name in (kernel, "slot_histograms")), here
    assert here.count("one_battle") <= 1, here
    helpers = {"record", "withdrawer", "_record", "_withdrawer"} & set(by_itself)
    assert helpers and not helpers & set(here)
    assert list((tmp_path / "aside").rglob(f"{ruleset}.one_battle-*.nbi"))


# Slow tier (docs/testing.md): about 2 s each, the compile stopped once it runs aside
@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "ruleset"),
    [
        (CASTLE, "olympia"),
        (KNIGHTS, "olympia"),
        (FIELD, "blocks"),
        *((scenario, ruleset) for ruleset, scenario in sorted(BY_ADDRESS.items())),
    ],
    ids=["skip", "chain", "blocks", *sorted(BY_ADDRESS)],
)
def test_ctrl_c_while_the_battle_compiles_aside_leaves_nothing_running(
    tmp_path: Path, scenario: str, ruleset: str
) -> None:
    """Ctrl-C during a cold run ends it at once (status 130) and its second process
    with it: no process of the cold cache's is left compiling."""
    if _aside.cores() < 2:
        pytest.skip("the compile aside runs on two cores or more")
    cache = tmp_path / "cold"
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", "run", scenario, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=_environment(cache),
    )  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:
        if f"compiling the {ruleset}" in line:  # said before the first compile
            break
    started = time.monotonic() + 20  # the second process starts with the first compile
    while not _processes_of(cache) and time.monotonic() < started:
        time.sleep(0.05)
    time.sleep(0.3)
    asides = _processes_of(cache)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130 and out == ""
    assert "stopped at once" in err
    assert asides, "no second process compiled the battle"
    ended = time.monotonic() + 2
    while _processes_of(cache) and time.monotonic() < ended:
        time.sleep(0.05)
    assert not _processes_of(cache)


def _processes_of(cache: Path) -> list[int]:
    """The running ``kernels._aside`` processes whose Numba cache is ``cache``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not _running(int(entry.name)):
            continue
        try:
            line = (entry / "cmdline").read_bytes()
            environment = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"kernels._aside" in line and f"NUMBA_CACHE_DIR={cache}".encode() in environment:
            found.append(int(entry.name))
    return found


def test_the_notice_says_the_skip_kernels_time_with_its_battle_compiled_aside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compile notice's estimate is the second process's where the battle compiles
    aside (the run waits for that), the one-process figure where it does not."""
    from kernels.olympia import skip
    from simulator.running import compiling

    alone = compiling.KERNEL_MODULES["kernels.olympia.skip"][1]
    aside = compiling.ASIDE_SECONDS["kernels.olympia.skip"]
    assert aside < alone
    monkeypatch.delenv(_aside.ASIDE_SETTING, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert f"about {aside:.0f} s" in compiling.compile_notice(skip._skip_blocks.py_func)
    monkeypatch.setenv(_aside.ASIDE_SETTING, "0")
    assert f"about {alone:.0f} s" in compiling.compile_notice(skip._skip_blocks.py_func)
    monkeypatch.delenv(_aside.ASIDE_SETTING)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert f"about {alone:.0f} s" in compiling.compile_notice(skip._skip_blocks.py_func)
