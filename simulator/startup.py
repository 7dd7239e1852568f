"""The command line's first and last defence: Ctrl-C before a command's work has begun,
and failures no layer expected.

A command's work answers Ctrl-C through :mod:`simulator.running.interrupt` (a stop
request, the answer so far, exit status 130). Before that (the first second of every
command, while Python imports NumPy, Numba and the rulesets) and in commands that run no
battles, Ctrl-C ends the process at once with one line and status 130: Python's own
answer is a ``KeyboardInterrupt`` traceback of 30 lines. An exception no layer expected
(a bug, or the system failing under us) prints one line and the path of a file that
holds its traceback for a bug report: never a traceback on the terminal.

Only the command line gets this (:func:`is_the_command_line`): a notebook or a test that
imports the package keeps Python's own Ctrl-C and tracebacks. Everything here uses the
standard library alone, so that it runs before any heavy import.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from types import TracebackType
from typing import Any

#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130
#: The exit status of a failure that is not bad input (bad input exits 2).
EXIT_FAILED = 1
#: The program's name at the head of its own one-line messages.
PROGRAM = "battle-odds"
#: Control characters, which a message shows escaped (a terminal would obey them).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def is_the_command_line() -> bool:
    """True in a ``battle-odds`` or ``python -m simulator`` process, not in a program or
    notebook that imports the package."""
    if sys.argv and os.path.basename(sys.argv[0]) in (PROGRAM, f"{PROGRAM}.exe"):
        return True
    original = list(getattr(sys, "orig_argv", ()))
    pairs = itertools.pairwise(original)
    return any(a == "-m" and b == "simulator" for a, b in pairs) or "-msimulator" in original


def say(message: str) -> None:
    """One line on stderr, written to the descriptor itself: it works when ``sys.stderr``
    is broken or its encoding (``PYTHONIOENCODING=ascii``) cannot hold the text."""
    line = _CONTROL.sub(lambda m: repr(m.group())[1:-1], " ".join(message.split())) + "\n"
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    try:
        data = line.encode(encoding, "backslashreplace")
    except LookupError:
        data = line.encode("ascii", "backslashreplace")
    with suppress(OSError):  # no stderr left to say it on
        os.write(2, data)


def _exit_at_once(signum: int, frame: Any) -> None:
    say(f"{PROGRAM}: interrupted")
    os._exit(EXIT_INTERRUPTED)


def answer_ctrl_c_at_once() -> None:
    """Ctrl-C ends the process at once (one line, status 130) until a command's work
    takes Ctrl-C over (:func:`simulator.running.interrupt.stop_on_interrupt`), and
    again after it. Installed first thing, before the package's heavy imports."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_at_once)


def save_traceback(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> str:
    """The traceback in a new file for a bug report: its path, or why there is none."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(kind, exc, tb))
    header = f"{PROGRAM} {' '.join(sys.argv[1:])}\npython {sys.version.split()[0]}\n\n"
    name = f"{PROGRAM}-traceback-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    path = os.path.join(tempfile.gettempdir(), name)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(header + text)
    except OSError as error:
        return f"no traceback saved: {error.strerror or error}"
    return f"traceback saved in {path}"


def report_failure(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> int:
    """One line for an exception that reached the top, and the exit status it gives."""
    if issubclass(kind, KeyboardInterrupt):
        say(f"{PROGRAM}: interrupted")
        return EXIT_INTERRUPTED
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno != errno.EINVAL:
        # The system refused something (a disk full, a pipe closed): not a bug.
        where = f" ({exc.filename})" if exc.filename else ""
        say(f"{PROGRAM}: error: {exc.strerror or exc}{where}")
        return EXIT_FAILED
    summary = f"{kind.__name__}: {exc}" if str(exc) else kind.__name__
    if len(summary) > 200:
        summary = summary[:199] + "…"
    say(f"{PROGRAM}: internal error ({summary}); {save_traceback(kind, exc, tb)}: please report it")
    return EXIT_FAILED


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    os._exit(report_failure(kind, exc, tb))


def _thread_excepthook(args: Any) -> None:
    if args.exc_type is SystemExit:
        return
    report_failure(args.exc_type, args.exc_value, args.exc_traceback)


def install_last_resort() -> None:
    """Uncaught exceptions, in any thread, print one line (and save their traceback)."""
    sys.excepthook = _excepthook
    threading.excepthook = _thread_excepthook


def prepare_command_line() -> None:
    """What a command-line process does first: Ctrl-C answered at once and the last
    resort for failures, both before any heavy import (a no-op elsewhere); then the
    environment checked and made safe (:func:`check_environment`)."""
    if is_the_command_line():
        answer_ctrl_c_at_once()
        install_last_resort()
        check_environment()


def check_environment() -> None:
    """What the environment can break before a command runs, each one line: a thread
    count Numba refuses at import (``NUMBA_NUM_THREADS=0``), and an output encoding
    that cannot hold a scenario's name (``PYTHONIOENCODING=ascii``): such characters
    are written as escapes (``\\xe9``) rather than failing the command."""
    threads = os.environ.get("NUMBA_NUM_THREADS")
    if threads is not None and not (threads.strip().isdigit() and int(threads) > 0):
        say(
            f"error: NUMBA_NUM_THREADS={threads!r}: expected a whole number of threads, at "
            "least 1 (or leave it unset: all cores)"
        )
        sys.exit(2)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with suppress(Exception):  # a stream that cannot be reconfigured stays as it is
                reconfigure(errors="backslashreplace")


def run_command(command: Callable[[], Any]) -> None:
    """Run the command line's ``command`` (it exits through ``SystemExit``); whatever
    escapes it is one line, and an answer that cannot reach standard output (a full
    disk, a closed pipe) is one line and status 1, not an error at interpreter exit."""
    answer_ctrl_c_at_once()
    install_last_resort()
    status: Any = 0
    said = False
    try:
        command()
    except SystemExit as stop:
        status = stop.code
    except BaseException as exc:  # the last resort: no traceback on the terminal
        if isinstance(exc, OSError) and _from_stdout(exc):
            _stdout_lost(exc)  # the answer could not be printed: say that, not a bug
            status = EXIT_FAILED
        else:
            status = report_failure(type(exc), exc, exc.__traceback__)
        said = True
    try:
        sys.stdout.flush()
    except OSError as exc:
        _stdout_lost(exc, said)
        status = status or EXIT_FAILED
    _end_process(status)


def _end_process(status: Any) -> None:
    """End the process without the interpreter's teardown: freeing Numba's and the
    kernels' module state took 0.35-0.58 s of every ``battle-odds`` process after its
    answer was printed. What must happen at exit still does: the ``atexit`` functions run
    (logging's flush, Dask's clean-up) and the standard streams are flushed; the files
    the commands write are closed by the commands themselves."""
    import atexit

    if status is not None and not isinstance(status, int):
        sys.stderr.write(f"{status}\n")  # what sys.exit("message") prints
        status = EXIT_FAILED
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe (``battle-odds ... | head``): nothing left to tell.
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(status or 0)


#: What a write to standard output fails with when it leads to a full disk or a closed
#: pipe; the files the program writes name themselves in their errors.
_OUTPUT_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE)


def _from_stdout(exc: OSError) -> bool:
    """Whether ``exc`` is standard output refusing the answer: an error of writing that
    names no file (an output file that fails is reported with its name)."""
    return exc.filename is None and exc.errno in _OUTPUT_ERRORS


def _stdout_lost(exc: OSError, said: bool = False) -> None:
    """Standard output cannot be written: say so (a closed pipe, as ``| head`` leaves
    it, needs no words), and point the descriptor at /dev/null so that Python's own
    flush at exit does not fail again with a message of its own."""
    if exc.errno != errno.EPIPE and not said:
        say(f"{PROGRAM}: error: cannot write the answer to standard output ({exc.strerror})")
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass
