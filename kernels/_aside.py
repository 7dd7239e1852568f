"""A kernel's battle compiled in a second process while this one compiles the rest.

A cold run of olympia's skip kernel compiled about 36 CPU seconds on one core: the
battle (the block function that calls it, the battle and its helpers, about two thirds)
and the parallel loop with the opening every battle starts from (the other third). The
loop calls the battle by its address (:func:`kernels._jit.address_of`), so neither needs
the other compiled: on a machine of two cores or more, :func:`start` has a second Python
process compile the battle into Numba's cache while this one compiles the loop, then
this one loads the battle from the cache (:meth:`Aside.wait`). What the second process
compiles is what this one would have: the same function, signature and cache, so the
rows are the same; if it fails, this process compiles the battle itself.

A battle that calls its helpers directly splits by its helpers instead: blocks' battle
(kernels/blocks.py's ``battle_by_address``) has the second process compile its field
round, phase end and small helpers while this one compiles its others (``needed_by``:
only when the battle is not cached), then compiles the battle, which loads those from
the cache and links their LLVM bitcode (which Numba's cache keeps) as it would have.
Helpers both halves call are compiled here while the second process starts (``first``:
it imports Numba and the kernels meanwhile, then waits for a line on its pipe), and it
then loads them, so neither compiles a copy of its own.

A cold command starts the second process as soon as it knows its ruleset
(:func:`prestart`, with the notice that it compiles): it imports Numba and sets up its
compiler while this one builds and prepares the command's scenarios, then waits on its
pipe for the function to compile (the line :func:`start` writes), so the compile aside
starts at once where it would have waited for those imports (about a CPU second).

The second process ends when its compile is done, or as soon as this one ends for any
reason (Ctrl-C, which ends a compiling command at once, included): it watches its
standard input, a pipe from this process, and exits when the pipe closes. A half-done
compile writes nothing to the cache. ``BATTLE_ODDS_COMPILE_ASIDE=0`` turns it off (one
process compiles everything, as before); it is off by itself on one core and where the
function is already compiled or cached.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: Set to 0 to compile everything in the process that runs the battles.
ASIDE_SETTING = "BATTLE_ODDS_COMPILE_ASIDE"

#: What a process waiting for a compile aside compiles meanwhile (on the core it would
#: leave idle): kernels that any run calls after its battles (kernels/tally.py's).
meanwhile: list[Callable[[], None]] = []
#: Studies running whose battles count no outcomes (:func:`counting_nothing`).
_counting_nothing = 0

#: The compiles running aside, by function and signature: threads that run battles at
#: once (a study's cells) wait for the one compile, not start one each.
_running: dict[tuple[int, tuple[Any, ...]], Aside] = {}
_lock = threading.Lock()
#: A second process started ahead of its compile (:func:`prestart`), not yet given one,
#: with the environment it was started in (a compile there uses that one's cache).
_spare: tuple[subprocess.Popen[bytes], dict[str, str]] | None = None


@contextlib.contextmanager
def counting_nothing() -> Iterator[None]:
    """Within it, a wait compiles nothing of :data:`meanwhile`: the study running counts
    no outcomes (``best``'s races count wins only). A cold ``best`` compiled the tally
    (2.4 to 3 CPU s) as it waited for its battle and never called it: on two idle cores
    not the longer process's time (the second process ended after it), but a core's
    time taken from whatever else runs. Where another study runs at the same time
    (``serve``), a run that tallies compiles it after its battles instead."""
    global _counting_nothing
    with _lock:
        _counting_nothing += 1
    try:
        yield
    finally:
        with _lock:
            _counting_nothing -= 1


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cached(dispatcher: Any, arg_types: tuple[Any, ...]) -> bool:
    """Whether ``dispatcher`` has ``arg_types`` compiled in this process, or may have them
    in Numba's cache (its index file for the function is there: a kernel of one
    signature, or one Numba then loads or compiles as it would have)."""
    if arg_types in dispatcher.overloads:
        return True
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index is None or os.path.exists(index)


class Aside:
    """A compile running in a second process (:func:`start`)."""

    def __init__(self, process: subprocess.Popen[bytes], dispatcher: Any, arg_types: Any):
        self.process = process
        self.dispatcher = dispatcher
        self.arg_types = arg_types

    def wait(self, compile_meanwhile: bool = True) -> bool:
        """Wait for the second process to end (told as a compile of its function, so a
        run's compile clock and its Ctrl-C see one); True if it compiled. Before it
        waits, this process compiles :data:`meanwhile` unless ``compile_meanwhile`` is
        False (a run that may never call them: a price search counts no outcomes) or a
        study that counts none runs (:func:`counting_nothing`)."""
        from numba.core import event

        data = {"dispatcher": self.dispatcher, "args": self.arg_types, "return_type": None}
        try:
            wanted = compile_meanwhile and not _counting_nothing
            for compile_now in list(meanwhile) if wanted else ():
                compile_now()
            if self.process.poll() is not None:
                return self.process.returncode == 0  # done: nothing to wait for
            with event.trigger_event("numba:compile", data=data):
                return self.process.wait() == 0
        finally:
            self.stop()

    def stop(self) -> None:
        """End the second process (done already, or no longer wanted)."""
        with _lock:
            for key in [k for k, running in _running.items() if running is self]:
                del _running[key]
        _end(self.process)


def _wanted() -> bool:
    """Whether compiles may run aside here: two cores or more, not turned off."""
    return os.environ.get(ASIDE_SETTING, "1") != "0" and cores() >= 2


def _spawn(module: str | None = None) -> subprocess.Popen[bytes] | None:
    """A second process, waiting on its pipe for the function to compile (None: it
    could not start); ``module``, where known, it imports meanwhile."""
    # The kernels this process runs, wherever it found them, first on the path.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "kernels._aside", *([module] if module else [])],
            env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Not the terminal's Ctrl-C: this process decides when it ends.
            start_new_session=True,
        )
    except OSError:
        return None


def prestart() -> None:
    """Start the second process now, ahead of the compile :func:`start` gives it: a cold
    command that will compile a battle aside calls it once it knows its ruleset, so that
    the process's imports and compiler set-up overlap the command's own preparing. It
    ends with this process if no compile comes. Nothing where compiles do not run aside."""
    global _spare
    if not _wanted():
        return
    with _lock:
        if _spare is None or not _usable(*_spare):
            _drop()
            process = _spawn()
            _spare = None if process is None else (process, dict(os.environ))


def drop_spare() -> None:
    """End the process :func:`prestart` started if no compile took it (a command that
    ended without one, in a process that goes on)."""
    with _lock:
        _drop()


def _drop() -> None:
    """:func:`drop_spare`, the lock held."""
    global _spare
    if _spare is not None:
        spare, _spare = _spare[0], None
        _end(spare)


def _usable(process: subprocess.Popen[bytes], environment: dict[str, str]) -> bool:
    """Whether a process started ahead still waits, in this process's environment."""
    return process.poll() is None and environment == os.environ


def _end(process: subprocess.Popen[bytes]) -> None:
    """``process`` ended (killed if it runs) and its pipe closed."""
    if process.poll() is None:
        process.kill()
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            process.wait(timeout=5)
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()


def _process(module: str) -> subprocess.Popen[bytes] | None:
    """The process started ahead (:func:`prestart`) if it still waits in this
    environment, else a new one that imports ``module`` while it waits."""
    global _spare
    if _spare is not None and _usable(*_spare):
        spare, _spare = _spare[0], None
        return spare
    _drop()
    return _spawn(module)


def start(
    dispatcher: Any,
    arg_types: tuple[Any, ...],
    module: str,
    function: str,
    *args: int,
    needed_by: tuple[Any, tuple[Any, ...]] | None = None,
    first: Callable[[], None] | None = None,
) -> Aside | None:
    """Start compiling ``dispatcher`` for ``arg_types`` in a second process, which runs
    ``module.function(*args)`` (that compiles it, into Numba's cache), or the one
    another thread started; None, and nothing started, when it is compiled or cached
    already, on one core, or where ``BATTLE_ODDS_COMPILE_ASIDE=0``. The caller compiles
    its own part, then calls :meth:`Aside.wait` before it compiles or loads
    ``dispatcher``. ``needed_by``: the function and types whose compile needs
    ``dispatcher`` (a helper it calls); nothing starts when that is cached either.
    ``first`` is called once the second process is started (only if it starts), which
    imports meanwhile and waits for it before it compiles: it compiles here the helpers
    both processes' functions call, which the second then loads from the cache. Each
    compiled once, in one process, a caller that links both processes' code has one
    copy of each, as where one process compiles everything."""
    if not _wanted():
        return None
    with _lock:
        key = (id(dispatcher), arg_types)
        if key in _running:
            return _running[key]
        if _cached(dispatcher, arg_types) or (needed_by is not None and _cached(*needed_by)):
            return None
        process = _process(module)
        if process is None:
            return None
        aside = Aside(process, dispatcher, arg_types)
        try:
            # While the second process starts (its imports, about a second), this one
            # compiles what both call; then it may go on: the line on its pipe says
            # what it compiles.
            if first is not None:
                first()
            line = " ".join((module, function, *map(str, args))) + "\n"
            process.stdin.write(line.encode())  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
        except BaseException as error:
            aside.stop()
            if isinstance(error, OSError):  # it ended already: compile it all here
                return None
            raise
        _running[key] = aside
        return aside


class BattleByAddress:
    """A ruleset's battle function as its kernels call it: by its address
    (:func:`kernels._jit.address_of`), compiled or loaded on first use. Called with the
    kernel that will call it (``None``: the ruleset's plain kernel) and the arguments that
    kernel takes after the battle (``given``; None: the plain kernel's in a plain run,
    another kernel's not known), it returns the battle's address.

    On a cold cache a second process (:func:`start`) compiles the battle, with every
    helper it calls but ``helpers_here``, while this one compiles those helpers and the
    kernel, for the types of ``given`` (or the plain kernel's, ``plain_types``), and the
    tally meanwhile (:data:`meanwhile`); then this one loads the battle from the cache.
    A kernel module keeps one at module level, so the second process finds it as
    ``module.name``."""

    def __init__(
        self,
        module: str,
        name: str,
        battle: Any,
        battle_types: Callable[[], tuple[Any, ...]],
        returns: Any,
        plain: Any,
        plain_types: Callable[[], tuple[Any, ...]],
        helpers_here: Callable[[], tuple[tuple[Any, tuple[Any, ...]], ...]] = tuple,
    ) -> None:
        self.module, self.name = module, name
        self.battle, self.battle_types, self.returns = battle, battle_types, returns
        self.plain, self.plain_types, self.helpers_here = plain, plain_types, helpers_here
        #: The kernels this process has been given the battle for.
        self.ready: set[Any] = set()
        self._address: Any = None

    def __call__(self, kernel: Any = None, given: tuple[Any, ...] | None = None) -> Any:
        kernel = self.plain if kernel is None else kernel
        if kernel not in self.ready:
            aside = start(self.battle, self.battle_types(), self.module, f"{self.name}.address")
            if aside is not None:
                try:
                    for helper, arg_types in self.helpers_here():
                        helper.compile(arg_types)
                    if given is not None or kernel is self.plain:
                        kernel.compile(self.kernel_types(given))
                finally:
                    aside.wait()
            self.ready.add(kernel)
        return self.address()

    def address(self) -> Any:
        """The battle by its address, compiled or loaded (what the second process calls
        to compile it)."""
        if self._address is None:
            from ._jit import address_of

            self._address = address_of(self.battle, self.battle_types())
        return self._address

    def kernel_types(self, given: tuple[Any, ...] | None) -> tuple[Any, ...]:
        """A kernel's arguments' types: the battle's, then ``given``'s (None: the plain
        kernel's, :attr:`plain_types`)."""
        from numba import typeof, types

        battle = types.FunctionType(self.returns(*self.battle_types()))
        if given is None:
            return (battle, *self.plain_types())
        return (battle, *(typeof(a) for a in given))


def _main(argv: list[str]) -> int:
    """The second process: set up Numba's compiler (and import the kernel module
    ``argv`` names, if any), then compile by calling ``module.function(*args)`` as the
    first line on its pipe says; exit at once when the process that started it ends (its
    pipe on our standard input closes)."""
    import importlib

    go = threading.Event()
    told: list[str] = []

    def watch() -> None:
        read = b""
        with contextlib.suppress(OSError):
            while chunk := os.read(0, 4096):
                read += chunk
                if not told and b"\n" in read:
                    told.append(read.split(b"\n", 1)[0].decode())
                    go.set()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    # What the first compile of a process sets up (its typing and target contexts, half
    # a CPU second), done while the line is not there yet.
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()
    for module in argv:
        importlib.import_module(module)
    go.wait()  # the helpers both processes call are in the cache now
    module, function, *args = told[0].split()
    compile_now: Any = importlib.import_module(module)
    for name in function.split("."):  # a function, or a method of a module's object
        compile_now = getattr(compile_now, name)
    compile_now(*map(int, args))
    return 0


if __name__ == "__main__":
    # Out at once, the compile in the cache: no interpreter shutdown beside the watcher.
    os._exit(_main(sys.argv[1:]))
