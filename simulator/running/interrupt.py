"""Ctrl-C: one contract for every command that runs battles.

The first Ctrl-C asks the work to stop: every loop that runs battles (the runner's
kernel calls, a comparison's pairs of calls, a study's points, probes or scenarios)
checks :func:`stop_requested` after each kernel call, and a kernel call takes at most
about a quarter of a second (:mod:`simulator.chunking`), so the kernels stop within a
second. The command then prints, and writes where asked (``-o``, ``--keep-battles``,
``--json``), the answer so far marked partial, and exits with status 130. A second
Ctrl-C exits at once, with status 130 and no answer. So does Ctrl-C while a kernel
compiles (on a cold cache, its first call: seconds to a minute that cannot stop
halfway): at most one kernel call's battles have run by then, and none at all when the
first call compiles.

A command adopts it in three steps (see docs/scale.md): run its work inside
:func:`stop_on_interrupt`; in its loops, stop when :func:`stop_requested` and mark its
answer ``partial``; print that mark in its text, JSON (``"partial": true``) and figures.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from ..startup import EXIT_INTERRUPTED, say
from .compiling import compiling_now

#: What a partial answer says of itself, in text and on a figure.
PARTIAL = "partial: interrupted by Ctrl-C"


#: Called before Ctrl-C ends the process at once: a live progress display takes itself
#: off the terminal and shows the cursor again, as it does when a command ends.
taken_off_at_exit: list[Callable[[], None]] = []

#: Called, after those, when Ctrl-C ends the process at once while a kernel compiles: a
#: command that has answered part of its work by then prints that part, marked partial
#: (regress: the scenarios checked before the compile began).
answered_at_exit: list[Callable[[], None]] = []


class StopRequest:
    """Set by the first Ctrl-C: the work ends after the kernel call in progress, with a
    partial answer. A second Ctrl-C exits at once."""

    def __init__(self) -> None:
        self.requested = False
        #: Set when a failure, not Ctrl-C, stopped the work (a Dask cluster lost): the
        #: answer so far is printed all the same, then this line, and the exit status is 1.
        self.failure: str | None = None
        #: What stopped the work, in a few words, for the mark of its partial answer.
        self.reason = "interrupted by Ctrl-C"
        #: Failures that did not stop the work (an output file not written): printed
        #: after the answer, one line each, and the exit status is 1.
        self.problems: list[str] = []


_active: StopRequest | None = None


def stop_requested() -> bool:
    """True once Ctrl-C was pressed inside :func:`stop_on_interrupt`."""
    return _active is not None and _active.requested


@contextmanager
def stop_on_interrupt(enabled: bool = True, ending: bool = False) -> Iterator[StopRequest]:
    """Turn Ctrl-C into a stop request while the block runs (in the main thread; a
    block inside another shares its request, so a study's runs stop with the study).
    ``ending``: the process ends after the block (a command), so once Ctrl-C was pressed
    the handler stays: a second Ctrl-C while the answer is printed or the interpreter
    shuts down still exits at once, not with a traceback from an exit hook."""
    global _active
    if _active is not None:
        yield _active
        return
    stop = StopRequest()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        if stop.requested:
            _exit_at_once("battle-odds: interrupted again: stopped at once")
        if compiling_now():
            _exit_at_once(
                "battle-odds: interrupted while compiling the kernels: stopped at once",
                answered=True,
            )
        stop.requested = True

    signal.signal(signal.SIGINT, handler)
    _active = stop
    try:
        yield stop
    finally:
        _active = None
        if not (ending and stop.requested):
            signal.signal(signal.SIGINT, previous)


def _exit_at_once(line: str, answered: bool = False) -> None:
    """End the process now with status 130, saying ``line``; ``answered``: first print
    what the command answered so far (:data:`answered_at_exit`)."""
    for take_off in list(taken_off_at_exit):
        with suppress(Exception):  # the process ends either way, and says why below
            take_off()
    for answer in list(answered_at_exit) if answered else ():
        with suppress(Exception):  # as above: the line below still says what happened
            answer()
    say(line)
    os._exit(EXIT_INTERRUPTED)


def stop_with_failure(message: str, reason: str = "stopped by a failure") -> None:
    """Stop the work as Ctrl-C would (the answer so far, marked partial), because of a
    failure the command reports after its answer in one line (``message``); ``reason``:
    what stopped it in a few words, for the partial answer's mark (``the Dask cluster
    failed``). Outside :func:`stop_on_interrupt` there is nothing to stop: the caller
    ends its own loop."""
    if _active is not None and not _active.requested:
        _active.requested = True
        _active.failure = message
        _active.reason = reason


def stop_reason() -> str:
    """What stopped the work, for a partial answer's mark: ``interrupted by Ctrl-C``, or
    the failure that stopped it (the line after the answer says more)."""
    return _active.reason if _active is not None else "interrupted by Ctrl-C"


def fail_after_the_answer(message: str) -> bool:
    """Note a failure that leaves the answer standing (a file that could not be written),
    for the command to print after its answer; False when no command collects it
    (outside :func:`stop_on_interrupt`: the caller raises instead)."""
    if _active is None:
        return False
    _active.problems.append(message)
    return True


class Interrupted(Exception):
    """Raised by :func:`check_stop` to leave a search (a bisection, a doubling) at once;
    the study catches it and returns what it has, marked partial."""


def check_stop() -> None:
    """Raise :class:`Interrupted` once Ctrl-C was pressed."""
    if stop_requested():
        raise Interrupted
