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

import glob
import importlib.util
import os
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
    "kernels.olympia.shared_chain": ("olympia chain with ranges", 10.0),
    "kernels.age_of_gods": ("age_of_gods", 15.0),
    "kernels.blocks": ("blocks", 19.0),
    "kernels.confrontation": ("confrontation", 8.0),
    "kernels.skirmish": ("skirmish", 8.0),
    "kernels.tally": ("statistics", 2.0),
}


#: Kernel module -> seconds its cold compile takes where its battle compiles in a second
#: process (kernels/_aside.py: two cores or more, ``BATTLE_ODDS_COMPILE_ASIDE`` not 0):
#: the longer of the two processes' CPU seconds (``python benchmarks/compile_aside.py``,
#: AMD EPYC: the skip kernel's second process 16-18; the chain kernel's 13-16 at a load
#: of 2; age_of_gods' on an Intel Xeon, 2026-12-07, 10-12 at a load of 9-14; blocks' there,
#: 14-15 for the run's process at a load of 3-4), rounded up.
ASIDE_SECONDS: dict[str, float] = {
    "kernels.olympia.skip": 20.0,
    "kernels.olympia.chain": 13.0,
    "kernels.age_of_gods": 13.0,
    "kernels.blocks": 15.0,
}


def _compiles_aside() -> bool:
    """Whether a cold run compiles its battle in a second process (kernels/_aside.py's
    rule, read here without importing the kernels)."""
    if os.environ.get("BATTLE_ODDS_COMPILE_ASIDE", "1") == "0":
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except AttributeError:  # not on Linux
        return (os.cpu_count() or 1) >= 2


def prestart_aside(ruleset: str) -> None:
    """A cold command of ``ruleset`` whose battle compiles in a second process (a module
    of ASIDE_SECONDS) starts that process now (kernels/_aside.py's ``prestart``): its
    imports and compiler set-up then overlap the command's preparing, not its compile."""
    if _compiles_aside() and any(m.split(".")[1] == ruleset for m in ASIDE_SECONDS):
        from kernels._aside import prestart

        prestart()


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


def compile_mark() -> tuple[float, int, bool]:
    """What tells whether a compile ran between two looks: the process's compile seconds
    and count so far, and whether one is running now (all nothing before any compile;
    Numba not imported for it)."""
    if _clock is None:
        return (0.0, 0, False)
    return (_clock.seconds, _clock.functions, _clock.compiling > 0)


def compiling_now() -> bool:
    """Whether a kernel is being compiled in this process now (on any thread), or is
    about to be: its notice said before the first compile (:func:`say_before_compiling`),
    none compiled yet. Ctrl-C then ends the process at once: no battle has run, and the
    compile would not stop for it."""
    if _clock is not None and _clock.compiling > 0:
        return True
    return _said_before and (_clock is None or _clock.functions == 0)


def kernel_words(function: Any, ruleset: str | None = None) -> tuple[str, float | None]:
    """What a compile of ``function`` is, in words, and about how many seconds the run's
    compiling takes (None: not measured, e.g. a ruleset installed from elsewhere).
    ``ruleset``: the ruleset whose battles the compile is for, where the caller knows it:
    a helper of another ruleset's kernels that its kernel calls (age_of_gods' battle
    calls olympia's, kernels/olympia/) is then named as its kernel."""
    return _module_words(getattr(function, "__module__", "") or "", ruleset)


def _module_words(module: str, ruleset: str | None = None) -> tuple[str, float | None]:
    """:func:`kernel_words` of a function of ``module``."""
    owner = module.split(".")[1] if module.startswith("kernels.") else None
    theirs = [m for m in KERNEL_MODULES if m.split(".")[1] == ruleset]
    if owner in _RULESETS and owner != ruleset and len(theirs) == 1:
        module = theirs[0]
    if module in ASIDE_SECONDS and _compiles_aside():
        return KERNEL_MODULES[module][0], ASIDE_SECONDS[module]
    if module in KERNEL_MODULES:
        return KERNEL_MODULES[module]
    package, _, rest = module.partition(".")
    # kernels.blocks -> "blocks"; kernels.olympia.strike -> "olympia strike";
    # risk_ruleset.kernel -> "risk_ruleset"
    named = rest.replace(".", " ")
    return (named if package == "kernels" and rest else package or "ruleset's"), None


#: The rulesets whose kernels KERNEL_MODULES lists (the statistics' belong to none).
_RULESETS = {m.split(".")[1] for m in KERNEL_MODULES} - {"tally"}


def compile_notice(function: Any, ruleset: str | None = None) -> str:
    """The line said as a run (of ``ruleset``'s battles, where known) starts compiling
    ``function``."""
    name, seconds = kernel_words(function, ruleset)
    about = f", about {seconds:.0f} s" if seconds is not None else ""
    return (
        f"battle-odds: compiling the {name} kernel, first run only{about} "
        "(later runs load it from Numba's cache)"
    )


#: Whether the notice was said before the first compile (:func:`say_before_compiling`),
#: and whether it named the kernel with its estimate: then the first compile's own notice
#: is not said again; a ruleset of several kernels (olympia) has that one said too.
_said_before = False
_said_in_full = False
#: The ruleset of the command's battles (:func:`say_before_compiling` told of it), None
#: where it told of none or of several; every ruleset it told of.
_run_ruleset: str | None = None
_rulesets_seen: set[str] = set()


def _cache_folder(source: str) -> str | None:
    """The folder where Numba keeps the cache of the kernels of the file ``source`` (its
    own choice of place: ``NUMBA_CACHE_DIR``, the file's ``__pycache__``, the user's
    cache), or None where Numba would find none."""
    from numba.core.caching import FunctionCache

    def probe() -> None:
        """A function of no file: the locators read only the file's path."""

    locators: list[Any] = FunctionCache._impl_class._locator_classes
    for locator_class in locators:
        locator = locator_class.from_function(probe, source)
        if locator is not None:
            return str(locator.get_cache_path())
    return None


def kernel_files(ruleset: str) -> list[str]:
    """The bundled kernel files of ``ruleset`` (kernels/<ruleset>.py,
    kernels/<ruleset>_stacked.py, kernels/<ruleset>/*.py); none for a ruleset installed
    from elsewhere. Found by path, not imported: importing a kernel module costs a query
    that does not call it."""
    spec = importlib.util.find_spec("kernels")  # a top-level package: not imported
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for folder in spec.submodule_search_locations:
        found += [os.path.join(folder, f"{ruleset}{end}.py") for end in ("", "_stacked")]
        found += glob.glob(os.path.join(glob.escape(os.path.join(folder, ruleset)), "*.py"))
    return [f for f in found if os.path.isfile(f)]


def nothing_cached(ruleset: str) -> bool:
    """True when no kernel of ``ruleset`` has anything in Numba's cache (a first run after
    install, or an emptied cache): whatever battle of it runs compiles its kernel. False
    when something is cached, or the ruleset's kernels are not bundled (then the notice
    comes with the first compile itself). A folder read once (a few milliseconds of a
    warm query)."""
    stems: dict[str, set[str]] = {}  # the kernel files of each source folder
    for source in kernel_files(ruleset):
        folder, name = os.path.split(source)
        stems.setdefault(folder, set()).add(os.path.splitext(name)[0])
    if not stems:
        return False
    for folder, names in stems.items():
        # Numba keeps one cache folder for the files of one source folder.
        cache = _cache_folder(os.path.join(folder, f"{min(names)}.py"))
        if cache is None:
            return False
        try:
            cached = os.listdir(cache)
        except OSError:
            return False
        if any(n.endswith(".nbi") and n.split(".", 1)[0] in names for n in cached):
            return False
    return True


def before_compiling_words(ruleset: str, kernel: str | None = None) -> tuple[str, bool]:
    """The notice said before any compile starts, and whether it is in full (its first
    compile then says nothing more): ``ruleset``'s one kernel with its estimate, or its
    kernels (olympia has several; which one a battle runs on is known later) with the
    estimate of the longest; a ruleset of no measured kernel, without. ``kernel``: the
    last part of the kernel module the command runs, where it knows (``exact``: only
    the exact solver's), so that the notice names that one with its own estimate."""
    modules = [m for m in KERNEL_MODULES if m.split(".")[1] == ruleset]
    if kernel is not None:
        modules = [m for m in modules if m.rsplit(".", 1)[1] == kernel] or modules
    if len(modules) == 1:
        name, seconds = _module_words(modules[0])
        assert seconds is not None
        words = f"the {name} kernel, first run only, about {seconds:.0f} s (later runs load it"
    elif modules:
        longest = max(_module_words(m)[1] or 0.0 for m in modules)
        words = f"the {ruleset} kernels, first run only, up to about {longest:.0f} s"
        words += " (later runs load them"
    else:
        words = f"the {ruleset} kernels, first run only (later runs load them"
    return f"battle-odds: compiling {words} from Numba's cache)", bool(modules)


def say_before_compiling(
    ruleset: str, say: Callable[[str], None], kernel: str | None = None
) -> bool:
    """Say the compile notice now, before the command prepares its battles (a study
    builds every variation first: seconds on a first run), when ``ruleset`` has nothing in
    Numba's cache; said once a process. True if said. ``kernel``: as for
    :func:`before_compiling_words`."""
    global _said_before, _said_in_full, _run_ruleset
    # The command's one ruleset (None for several: regress), for its compiles' notice.
    _rulesets_seen.add(ruleset)
    _run_ruleset = ruleset if len(_rulesets_seen) == 1 else None
    if _said_before or compiling_now() or compile_clock().functions:
        return False  # said, or a compile already said its own
    try:
        cold = nothing_cached(ruleset)
    except Exception:  # Numba's locators changed: the first compile says it
        return False
    if cold:
        words, _said_in_full = before_compiling_words(ruleset, kernel)
        _said_before = True
        say(words)
    return cold


def said_in_full() -> None:
    """A command said a compile notice of its own before any compile (regress's, of all
    its rulesets): its first compile says none, as after :func:`say_before_compiling`."""
    global _said_before, _said_in_full
    _said_before = _said_in_full = True


def forget_said_before() -> None:
    """The command is over (a test runs several in one process): its next says again."""
    global _said_before, _said_in_full, _run_ruleset
    _said_before = _said_in_full = False
    _run_ruleset = None
    _rulesets_seen.clear()


@contextmanager
def announce_compiles(
    say: Callable[[str], None],
    moved: Callable[[int], None] | None = None,
    ruleset: str | None = None,
) -> Iterator[CompileClock]:
    """While the block runs: ``say`` the notice once, as the first compile starts (of
    ``ruleset``'s battles, where known: :func:`kernel_words`), and call ``moved`` with
    the number of functions compiled so far as each compile ends."""
    clock = compile_clock()
    told = False
    first = clock.functions

    def start(function: Any) -> None:
        global _said_in_full
        nonlocal told
        if not told:
            told = True
            if _said_in_full:
                _said_in_full = False  # this compile is the one said before it started
            else:
                say(compile_notice(function, ruleset or _run_ruleset))

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
def said_on_stderr(ruleset: str | None = None) -> Iterator[None]:
    """For the Python API (a notebook, a script): the compile notice on stderr as a
    compile of ``ruleset``'s battles starts in the block, unless something already says
    it (a command's progress bar, a study's plain lines)."""
    if compile_clock().on_start:
        yield
        return
    with announce_compiles(_stderr_line, ruleset=ruleset):
        yield


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
