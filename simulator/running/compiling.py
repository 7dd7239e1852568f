"""Numba compiling a kernel: said when it starts, timed apart from the battles.

A kernel is compiled the first time it runs after install (its machine code then goes to
Numba's cache): tens of seconds in which no battle runs. :func:`compile_clock` listens to
Numba's compile events (``numba.core.event``, kind ``numba:compile``), which fire only
when a function is compiled, not when it is loaded from the cache, so a warm run hears
none. The runner subtracts the time they took from a run's ``seconds`` and reports it as
``compile_seconds``; :func:`announce_compiles` says on stderr, as the first compile
starts, what is being compiled and for about how long.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: Kernel module -> (its name in words, seconds a cold run compiles for once its first
#: function starts compiling): CPU seconds of compiling in ``python benchmarks/compile.py``
#: (AMD EPYC, 2 cores; a busy machine takes longer), rounded up. A module not listed (a
#: ruleset installed from elsewhere) is named without an estimate.
KERNEL_MODULES: dict[str, tuple[str, float]] = {
    "kernels.olympia.chain": ("olympia chain", 19.0),
    "kernels.olympia.skip": ("olympia skip", 31.0),
    "kernels.olympia.exact": ("olympia exact solver", 9.0),
    "kernels.age_of_gods": ("age_of_gods", 15.0),
    "kernels.blocks": ("blocks", 21.0),
    "kernels.confrontation": ("confrontation", 8.0),
    "kernels.skirmish": ("skirmish", 8.0),
    "kernels.tally": ("statistics", 2.0),
}


class CompileClock:
    """Seconds this process has spent compiling (outermost compiles, wall time), the
    functions compiled, and hooks called as a compile starts (with its function) and as
    any ends."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.functions = 0
        self.on_start: list[Callable[[Any], None]] = []
        self.on_end: list[Callable[[], None]] = []
        #: Threads in a compile now (each counted once, however deep its compile).
        self.compiling = 0
        self._depth = threading.local()
        self._lock = threading.Lock()

    def started(self, function: Any) -> None:
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        if depth == 0:
            self._depth.began = time.perf_counter()
            with self._lock:
                self.compiling += 1
            for hook in list(self.on_start):
                hook(function)

    def ended(self) -> None:
        if getattr(self._depth, "n", 0) == 0:
            return  # a compile that started before the clock listened
        self._depth.n -= 1
        with self._lock:
            self.functions += 1
            if self._depth.n == 0:
                self.seconds += time.perf_counter() - self._depth.began
                self.compiling -= 1
        for hook in list(self.on_end):
            hook()


_clock: CompileClock | None = None


def compile_clock() -> CompileClock:
    """The process's :class:`CompileClock`, listening from the first call on."""
    global _clock
    if _clock is None:
        from numba.core import event

        clock = CompileClock()

        class Listener(event.Listener):
            def on_start(self, ev: Any) -> None:
                clock.started(ev.data["dispatcher"].py_func)

            def on_end(self, ev: Any) -> None:
                clock.ended()

        event.register("numba:compile", Listener())
        _clock = clock
    return _clock


def compiling_now() -> bool:
    """Whether a kernel is being compiled in this process now (on any thread)."""
    return _clock is not None and _clock.compiling > 0


def kernel_words(function: Any) -> tuple[str, float | None]:
    """What a compile of ``function`` is, in words, and about how many seconds the run's
    compiling takes (None: not measured, e.g. a ruleset installed from elsewhere)."""
    module = getattr(function, "__module__", "") or ""
    if module in KERNEL_MODULES:
        return KERNEL_MODULES[module]
    package, _, rest = module.partition(".")
    # kernels.blocks -> "blocks"; kernels.olympia.strike -> "olympia strike";
    # risk_ruleset.kernel -> "risk_ruleset"
    named = rest.replace(".", " ")
    return (named if package == "kernels" and rest else package or "ruleset's"), None


def compile_notice(function: Any) -> str:
    """The line said as a run starts compiling ``function``."""
    name, seconds = kernel_words(function)
    about = f", about {seconds:.0f} s" if seconds is not None else ""
    return (
        f"battle-odds: compiling the {name} kernel, first run only{about} "
        "(later runs load it from Numba's cache)"
    )


@contextmanager
def announce_compiles(
    say: Callable[[str], None], moved: Callable[[int], None] | None = None
) -> Iterator[CompileClock]:
    """While the block runs: ``say`` the notice once, as the first compile starts, and
    call ``moved`` with the number of functions compiled so far as each compile ends."""
    clock = compile_clock()
    told = False
    first = clock.functions

    def start(function: Any) -> None:
        nonlocal told
        if not told:
            told = True
            say(compile_notice(function))

    def end() -> None:
        if moved is not None:
            moved(clock.functions - first)

    clock.on_start.append(start)
    clock.on_end.append(end)
    try:
        yield clock
    finally:
        clock.on_start.remove(start)
        clock.on_end.remove(end)


@contextmanager
def said_on_stderr() -> Iterator[None]:
    """For the Python API (a notebook, a script): the compile notice on stderr as a
    compile starts in the block, unless something already says it (a command's progress
    bar, a study's plain lines)."""
    if compile_clock().on_start:
        yield
        return
    with announce_compiles(_stderr_line):
        yield


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
