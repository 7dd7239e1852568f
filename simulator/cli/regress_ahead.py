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
this process ends, for any reason (Ctrl-C while a kernel compiles here exits at once):
it reads its standard input, a pipe from this process, and when the pipe closes it gives
the ``battle-odds warm --path NAME`` compiling now a Ctrl-C (warm then ends its worker,
the ``battle-odds run`` that compiles) and ends. What it compiled is in the cache: the
rows are the same whoever compiled a kernel.

Run as ``python -m simulator.cli.regress_ahead PATH...``, it is that second process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..running.compiling import KERNEL_MODULES, nothing_cached

if TYPE_CHECKING:
    from ..scenario.scenario import Scenario

#: The setting that keeps all compiling in the process that runs the battles
#: (kernels/_aside.py's): 0 starts no second process here either.
ASIDE_SETTING = "BATTLE_ODDS_COMPILE_ASIDE"
#: What the second process prints as it is done with a path: ``ready NAME``,
#: ``failed NAME`` (this process compiles it when it needs it) or ``left NAME`` (told to).
DONE_WORDS = ("ready", "failed", "left")
#: Seconds between looks at Ctrl-C while a scenario waits for the second process.
LOOK_EVERY = 0.1


def kernel_paths(scenario: Scenario) -> tuple[str, ...]:
    """The ``warm`` kernel paths (simulator/cli/warm.py's names) a run of ``scenario``
    compiles: its ruleset's main path, or the one of its kernel (olympia's), of its
    ranges, of its battle as it unfolds."""
    from ..scenario.scenario import prepare, unknowns_of

    ruleset = scenario.ruleset
    prepared = prepare(scenario)
    unfolds = prepared.has_stop_rules or prepared.from_step
    if ruleset == "olympia":
        # The kernel it runs first, with no chain table built: its builder compiles.
        kernel = prepared.choices_before_building()[0][0]
        if unknowns_of(scenario):
            return ("olympia chain with ranges" if kernel == "chain" else "olympia with ranges",)
        plain = f"olympia {kernel}"
        return (plain, f"{plain}, the battle as it unfolds") if unfolds else (plain,)
    if unknowns_of(scenario):
        return (f"{ruleset} with ranges",)
    # warm's name of a ruleset's main path (its kernel module's, or the ruleset's).
    plain = KERNEL_MODULES.get(f"kernels.{ruleset}", (ruleset,))[0]
    return (
        (plain, f"{ruleset}, the battle as it unfolds")
        if unfolds and ruleset == "blocks"
        else (plain,)
    )


def estimate(path: str) -> float:
    """Seconds a kernel path compiles for (:data:`KERNEL_MODULES`; 10 where unlisted)."""
    return next((seconds for name, seconds in KERNEL_MODULES.values() if name == path), 10.0)


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
    return any(is_cold(name) for name in rulesets)


def is_cold(ruleset: str) -> bool:
    """Whether nothing of ``ruleset``'s kernels is in Numba's cache (any battle of it
    compiles)."""
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
            self.process.wait(timeout=WARM_ENDS_WITHIN + 1)
        except subprocess.TimeoutExpired:
            _kill_tree(self.process.pid)
            self.process.wait()
        self._reader.join(timeout=2)


class Schedule:
    """A check's order of scenarios and its second process (simulator.studies.regress's
    ``check``'s ``order`` and ``ready``); ``second``: whether a second process may compile
    (battles run here)."""

    def __init__(self, second: bool) -> None:
        self.second = second
        self.ahead: CompileAhead | None = None
        self.paths: dict[str, tuple[str, ...]] = {}  # by the scenario's key

    def order(self, scenarios: dict[str, Scenario]) -> list[str]:
        """The scenarios' keys in the order to run them; the second process started for
        the paths of those that run last."""
        # Which rulesets are cold, before any is prepared (preparing one may compile a
        # small function of another's kernels: then that is no longer "nothing cached").
        cold = {name for name in {s.ruleset for s in scenarios.values()} if is_cold(name)}
        if not cold:  # a warm check: by name, as ever, nothing prepared twice
            return list(scenarios)
        paths = self.paths = {key: kernel_paths(s) for key, s in scenarios.items()}
        keys = order(paths, estimate)
        of_cold = {p for key in keys if scenarios[key].ruleset in cold for p in paths[key]}
        elsewhere = [name for name in compiled_elsewhere(keys, paths) if name in of_cold]
        if elsewhere and self.second and second_process_helps(cold):
            self.ahead = CompileAhead(elsewhere)
        return keys

    def ready(self, key: str) -> None:
        """Before the scenario ``key`` runs: its kernel paths ready, or this process
        compiles them (:meth:`CompileAhead.need`; Ctrl-C ends the wait)."""
        from ..running.interrupt import stop_requested

        if self.ahead is not None:
            self.ahead.need(self.paths.get(key, ()), stop_requested)

    def stop(self) -> None:
        if self.ahead is not None:
            self.ahead.stop()


def _second_process(names: list[str]) -> int:
    """The second process: ``battle-odds warm --path NAME`` for each path in turn, each
    said as it is done; as soon as the standard input closes, warm told to stop (Ctrl-C:
    it ends its worker) and this process ended; the paths it is told to leave
    (``leave NAME``) left out."""
    left_out: set[str] = set()
    lock = threading.Lock()
    running: list[subprocess.Popen[bytes]] = []
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
            for warm in running:
                _end_warm(warm)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    for name in names:
        with lock:
            if closing:
                break
            if name in left_out:
                print(f"left {name}", flush=True)
                continue
            running[:] = [
                subprocess.Popen(
                    [sys.executable, "-m", "simulator", "warm", "--jobs", "1", "--path", name],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    # Its own group: Ctrl-C (from the watcher) reaches it and no other.
                    start_new_session=True,
                )
            ]
        code = running[0].wait()
        with lock:
            if closing:  # ended by the watcher, which ends this process
                break
        print(f"{'ready' if code == 0 else 'failed'} {name}", flush=True)
    with lock:
        return 1 if closing else 0


#: Seconds warm has to end its worker after Ctrl-C before both are killed.
WARM_ENDS_WITHIN = 3.0


def _end_warm(warm: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to ``warm``: it kills its worker (a compile cannot stop between steps) and
    exits; killed, with its worker, if it has not within :data:`WARM_ENDS_WITHIN`."""
    if warm.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(warm.pid, signal.SIGINT)
    try:
        warm.wait(timeout=WARM_ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        _kill_tree(warm.pid)
        warm.wait()


def _kill_tree(pid: int) -> None:
    """Kill ``pid``'s process group and those of the processes it started, and of theirs
    (each started in a session of its own)."""
    for each in [pid, *(c for child in _children(pid) for c in (child, *_children(child)))]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(each, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux; none known elsewhere)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def main(argv: list[str] | None = None) -> Any:
    # Out at once once done: no interpreter shutdown beside the watching thread.
    os._exit(_second_process(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
