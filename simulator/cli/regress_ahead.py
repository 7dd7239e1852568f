"""``battle-odds regress`` on an empty Numba cache: its first verdict early, the kernels
of the scenarios after it compiled in a second process meanwhile.

A check of every bundled scenario compiles the kernels of every ruleset (about two
minutes of one core) before it could say anything. Instead the scenarios run in the order
that compiles least before each verdict (:func:`order`: those on the kernels quickest to
compile first), each verdict is printed as it is known, and a second process compiles the
kernel paths of the scenarios that come last (``battle-odds warm``'s paths, one at a
time, the last needed first), so that both cores compile and the two meet in the middle.
Before a scenario runs, this process waits for the path the second process is compiling
now, if the scenario needs it (the second compile of it would end no sooner), and tells
the second process to leave out a path this one is about to compile itself.

The second process starts only where it can help: two cores or more, a ruleset with
nothing in Numba's cache (a warm run starts none: its battles have both cores), battles
run here (no ``--scheduler``), ``BATTLE_ODDS_COMPILE_ASIDE`` not 0. It ends as soon as
this process ends, for any reason: it reads its standard input, a pipe from this
process, and when the pipe closes it ends its worker (the ``battle-odds run`` that
compiles the path) and itself. What it compiled is in the cache: the rows are the same
whoever compiled a kernel.

Run as ``python -m simulator.cli.regress_ahead PATH...``, it is that second process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..running.compiling import KERNEL_MODULES, nothing_cached

if TYPE_CHECKING:
    from ..scenario.scenario import Scenario
    from .warm import Job

#: The setting that keeps all compiling in the process that runs the battles
#: (kernels/_aside.py's): 0 starts no second process here either.
ASIDE_SETTING = "BATTLE_ODDS_COMPILE_ASIDE"
#: What the second process prints as it is done with a path: ``ready NAME``,
#: ``failed NAME`` (this process compiles it when it needs it) or ``left NAME`` (told to).
DONE_WORDS = ("ready", "failed", "left")
#: Seconds between looks at Ctrl-C while a scenario waits for the second process.
LOOK_EVERY = 0.1


def kernel_paths(scenario: Scenario, known: Mapping[str, Job]) -> tuple[str, ...]:
    """The ``warm`` kernel paths (of ``known``, by name) a run of ``scenario`` compiles;
    none for a ruleset ``warm`` does not know (its run compiles what it needs)."""
    from ..scenario.scenario import prepare, unknowns_of

    ruleset = scenario.ruleset
    prepared = prepare(scenario)
    if ruleset == "olympia":
        kernel = prepared.likely_kernel()
        if unknowns_of(scenario):
            wanted = ["olympia chain with ranges" if kernel == "chain" else "olympia with ranges"]
        else:
            wanted = [f"olympia {kernel}"]
            if prepared.has_stop_rules or prepared.from_step:
                wanted.append(f"olympia {kernel}, the battle as it unfolds")
    elif unknowns_of(scenario):
        wanted = [f"{ruleset} with ranges"]
    else:
        # warm's name of a ruleset's main path (simulator/cli/warm.py's jobs()).
        wanted = [KERNEL_MODULES.get(f"kernels.{ruleset}", (ruleset,))[0]]
        if prepared.has_stop_rules or prepared.from_step:
            wanted.append(f"{ruleset}, the battle as it unfolds")
    return tuple(name for name in wanted if name in known)


def order(paths: Mapping[str, tuple[str, ...]], cost: Callable[[str], float]) -> list[str]:
    """The scenarios (``paths``: each one's kernel paths) in the order that compiles least
    before each verdict: next, always, the scenario whose paths not compiled yet cost
    least (``cost``: a path's compile seconds), by name among equals; so the scenarios of
    one kernel run one after the other once it is compiled."""
    left = dict(paths)
    compiled: set[str] = set()
    found: list[str] = []
    while left:
        key = min(left, key=lambda k: (sum(cost(p) for p in set(left[k]) - compiled), k))
        compiled.update(left.pop(key))
        found.append(key)
    return found


def compiled_elsewhere(keys: list[str], paths: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The paths for the second process: those of the scenarios ``keys`` (in the order
    they run) after the first's, the last needed first."""
    first = set(paths[keys[0]]) if keys else set()
    needed: list[str] = []
    for key in keys:
        needed += [p for p in paths[key] if p not in first and p not in needed]
    return needed[::-1]


def second_process_helps(rulesets: set[str]) -> bool:
    """Whether a second process may compile: two cores or more, not turned off, and a
    ruleset of the run with nothing in Numba's cache."""
    from kernels._aside import cores

    if os.environ.get(ASIDE_SETTING, "1") == "0" or cores() < 2:
        return False
    return any(_nothing_cached(name) for name in rulesets)


def _nothing_cached(ruleset: str) -> bool:
    try:
        return nothing_cached(ruleset)
    except Exception:  # Numba's locators changed: as if cached (no second process)
        return False


class CompileAhead:
    """The second process compiling ``names`` (warm's kernel paths) in that order."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.done: set[str] = set()
        self.left_out: set[str] = set()
        self.ended = False
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "simulator.cli.regress_ahead", *names],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            # Not the terminal's Ctrl-C: this process ends it (stop, or its pipe closing).
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            said, _, name = line.strip().partition(" ")
            if said in DONE_WORDS:
                with self._changed:
                    self.done.add(name)
                    self._changed.notify_all()
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def now(self) -> str | None:
        """The path the second process compiles now (None: done with every one)."""
        if self.ended:
            return None
        return next((n for n in self.names if n not in self.done | self.left_out), None)

    def need(self, paths: tuple[str, ...], stopped: Callable[[], bool]) -> None:
        """Before a run that compiles ``paths``: wait for the one the second process
        compiles now (until ``stopped()``: Ctrl-C); tell it to leave out those it has
        not begun (this process compiles them, as it needs them)."""
        for name in paths:
            with self._changed:
                if name not in self.names or name in self.done:
                    continue
                if name == self.now():
                    while not (name in self.done or self.ended or stopped()):
                        self._changed.wait(LOOK_EVERY)
                    continue
                self.left_out.add(name)
            with contextlib.suppress(OSError, ValueError):
                assert self.process.stdin is not None
                self.process.stdin.write(f"leave {name}\n")
                self.process.stdin.flush()

    def stop(self) -> None:
        """End the second process and its worker now (its pipe closed: it ends them)."""
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._reader.join(timeout=2)


class Schedule:
    """A check's order of scenarios and its second process (:func:`check`'s ``order``,
    and ``run``'s wrapper): ``run`` runs a scenario's battles; ``second``: whether a
    second process may compile (battles run here)."""

    def __init__(self, run: Callable[..., Any], second: bool) -> None:
        self._run = run
        self.second = second
        self.ahead: CompileAhead | None = None
        self.paths: dict[int, tuple[str, ...]] = {}  # by the scenario's id

    def order(self, scenarios: dict[str, Scenario]) -> list[str]:
        """The scenarios' keys in the order to run them; the second process started for
        the paths of those that run last."""
        from .. import rulesets
        from .warm import jobs

        # Which rulesets are cold, before any is prepared (preparing one may compile a
        # small function of another's kernels: then that is no longer "nothing cached").
        cold = {name for name in {s.ruleset for s in scenarios.values()} if _nothing_cached(name)}
        known = {job.name: job for job in jobs(list(rulesets.available()))}
        paths = {key: kernel_paths(s, known) for key, s in scenarios.items()}
        self.paths = {id(scenarios[key]): found for key, found in paths.items()}
        keys = order(paths, lambda name: known[name].estimate())
        elsewhere = [
            name
            for name in compiled_elsewhere(keys, paths)
            if known[name].ruleset in cold
        ]
        if elsewhere and self.second and second_process_helps(cold):
            self.ahead = CompileAhead(elsewhere)
        return keys

    def run(self, scenario: Scenario, *args: Any, **kwargs: Any) -> Any:
        """Run ``scenario`` once its kernel paths are ready or compile here."""
        from ..running.interrupt import stop_requested

        if self.ahead is not None:
            self.ahead.need(self.paths.get(id(scenario), ()), stop_requested)
        return self._run(scenario, *args, **kwargs)

    def stop(self) -> None:
        if self.ahead is not None:
            self.ahead.stop()


def _second_process(names: list[str]) -> int:
    """The second process: compile each path in turn (a ``battle-odds run`` worker, as
    ``warm`` runs it), say each as it is done; end, its worker with it, as soon as the
    standard input closes; leave out the paths it is told to (``leave NAME``)."""
    from .. import rulesets
    from .warm import Running, _end, _start, jobs

    known = {job.name: job for job in jobs(list(rulesets.available()))}
    todo = [known[name] for name in names if name in known]
    folder = tempfile.mkdtemp(prefix="battle-odds-regress-")
    left_out: set[str] = set()
    lock = threading.Lock()
    running: list[Running] = []
    closing = False

    def watch() -> None:
        nonlocal closing
        with contextlib.suppress(OSError, ValueError):
            for line in sys.stdin:
                said, _, name = line.strip().partition(" ")
                if said == "leave":
                    with lock:
                        left_out.add(name)
        with lock:
            closing = True
            for each in running:
                _end(each.process)
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    starters: dict[str, Path] = {}
    for job in todo:
        with lock:
            if closing:
                break
            if job.name in left_out:
                print(f"left {job.name}", flush=True)
                continue
            if job.ruleset not in starters:
                starters[job.ruleset] = Path(folder) / f"{job.ruleset}.toml"
                starters[job.ruleset].write_text(rulesets.get(job.ruleset).starter(), "utf-8")
            running[:] = [_start(job, starters[job.ruleset])]
        running[0].process.communicate()
        said = "ready" if running[0].process.returncode == 0 else "failed"
        print(f"{said} {job.name}", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> Any:
    # Out at once once done: no interpreter shutdown beside the watching thread.
    os._exit(_second_process(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
