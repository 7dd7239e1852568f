"""Progress of long runs, the same for every command that runs battles: a bar with what
it counts, the total and the time left on a terminal; in a pipe or a notebook, plain
lines on stderr once the run will take more than a minute (then every half minute).
Nothing for a short run in pipes, files or CI logs."""

from __future__ import annotations

import functools
import inspect
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar

from rich.console import Console

from .chunking import CallTimes
from .compiling import announce_compiles, compile_mark
from .plan import DEFAULT_CHUNK
from .plan import Progress as ProgressCallback

#: In a pipe, a run estimated to take longer than this (seconds) says so on stderr.
ETA_NOTICE_SECONDS = 60.0
#: A search (values tried, a race's battles) has no time left to show until enough of it is
#: done (the first value may take minutes): in a pipe it says this many seconds after its
#: start what it counts and where it is.
RUNNING_NOTICE_SECONDS = 2.0
#: The terminal bar says how long it has run when the time left is not known this long
#: after the start (seconds).
ESTIMATING_SECONDS = 10.0
#: The terminal bar's narrowest drawing and shortest label (columns): narrower, it goes.
MIN_BAR = 8
#: The time on the bar takes at least this many columns (``about 12 min left``).
TIME_WIDTH = 17
MIN_LABEL = 16
#: In a pipe, after the first notice, a line of progress at most this often (seconds).
PIPE_EVERY_SECONDS = 30.0
#: Pieces of work that fit no cost per call are timed this long (seconds), then their mean
#: rate is the estimate.
AVERAGE_AFTER_SECONDS = 5.0
#: The rate of battles is timed over at least this long (seconds) before it is trusted.
TIMED_SECONDS = 0.5


class Estimate:
    """Seconds left of a run, timed on its battles rather than on per-call costs.

    Each report after the first ends a piece of work of ``n`` battles that took ``t``
    seconds; ``t = a + b * n`` is fitted over the pieces (:class:`CallTimes`; the first
    piece, which also pays for loading or compiling the kernel, is left out). The calls
    still to come are sized to take ``T`` seconds (:mod:`simulator.chunking`): ``n =
    (T - a) / b`` battles, at most the chunk size, so each of their battles costs
    ``b + a / n``: the time left is that times the battles left. A rate timed on the
    small first calls alone (``t / n``) counts their fixed cost as battles, and said a
    quarter of an hour for a run of seconds. The estimate
    waits for ``min_span`` seconds of timed pieces and for ``b`` to be known within a
    quarter; pieces all of one size (the points of a sweep) give their mean time.

    A piece in which a kernel compiled (``compiled``, :func:`compile_mark`, changed or
    says a compile is running) is left out too: a run of several scenarios (regress)
    compiles another kernel at the start of a later one, and a cold check's bar said
    half an hour left for a minute and a half of work."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        min_span: float | None = None,
        compiled: Callable[[], tuple[float, int, bool]] = compile_mark,
    ) -> None:
        self.clock = clock
        self.min_span = TIMED_SECONDS if min_span is None else min_span
        self.compiled = compiled
        self.last: tuple[float, int] | None = None
        self.last_compiled = compiled()
        self.times = CallTimes()
        self.skipped_first = False

    def left(self, done: int, total: int) -> float | None:
        """Seconds left after ``done`` of ``total`` (None until there is a timing)."""
        now = self.clock()
        last, self.last = self.last, (now, done)
        before, self.last_compiled = self.last_compiled, self.compiled()
        compiled = self.last_compiled != before or self.last_compiled[2]
        if last is None:
            return None  # the call before any work (done may be > 0: a resumed run)
        if done > last[1]:
            if self.skipped_first and not compiled:
                self.times.add(done - last[1], now - last[0])
            self.skipped_first = True
        per_battle = self.per_battle()
        if per_battle is None or self.times.seconds < self.min_span:
            return None
        return max(total - done, 0) * per_battle

    def per_battle(self) -> float | None:
        """Seconds a battle of the calls still to come takes (None: not known yet)."""
        calls = self.times.calls
        # Three pieces at least: one call of one battle may be mostly fixed cost.
        if len(calls) >= 3 and self.times.one_size:
            return self.times.seconds / self.times.battles
        fitted = self.times.fit()
        if (
            fitted is None
            or fitted[2] > fitted[1] / 4
            or 4 * fitted[1] * self.times.largest < fitted[0]
        ):
            # b not known within a quarter, or battles under a fifth of the largest call
            # (a slope over calls that are all fixed cost is noise). Pieces that are not
            # calls (a study's scenarios side by side, reported every half second) may
            # never fit: after AVERAGE_AFTER_SECONDS of them, their mean rate.
            if self.times.seconds >= AVERAGE_AFTER_SECONDS:
                return self.times.seconds / max(self.times.battles, 1)
            return None
        a, b, _ = fitted
        # The calls to come: as many battles as fit in the time a call should take, at
        # most the chunk size (or the size the calls settled at, two alike in a row).
        size = min((self.times.call_seconds() - a) / b, DEFAULT_CHUNK)
        if len(calls) >= 2 and calls[-1][0] == calls[-2][0]:
            size = min(size, calls[-1][0])
        # At most twice as slow as the pieces so far, fixed costs and all (calls sized
        # to a quarter second may cost a battle more than the larger calls before them,
        # not many times more): a study's pieces reported side by side can fit a fixed
        # cost above a call's whole time (the size then comes out below one battle), and
        # said ten minutes for a run half done in forty seconds.
        mean = self.times.seconds / max(self.times.battles, 1)
        return min(b + a / max(size, 1.0), 2 * mean)


def format_seconds(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``, ``2.1 days``: an estimate's precision, no more."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@dataclass
class Count:
    """What a progress report says is done: ``done`` of ``total`` ``unit`` (``at_most``:
    the total is a bound the work may stop short of, e.g. the values a search may try;
    ``open_ended``: no total is known), ``detail`` what the work is at, in words."""

    unit: str = "battles"
    at_most: bool = False
    open_ended: bool = False
    done: int | None = None
    total: int = 0
    detail: str = ""

    def words(self, aligned: bool = False) -> str:
        """``1,234 of 3,000,000 battles``, ``2 of at most 7 values tried``, ``12 pairs of
        counts``; before the first report, what will be counted (``starting: counting battles``).
        ``aligned``: the count as wide as the total, for a bar that does not move."""
        if self.done is None:
            return f"starting: counting {self.unit}"
        if self.open_ended:
            return f"{self.done:,} {self.unit}"
        most = "at most " if self.at_most else ""
        total = f"{self.total:,}"
        done = f"{self.done:,}".rjust(len(total) if aligned else 0)
        return f"{done} of {most}{total} {self.unit}"


def bar_lines(label: str, count: Count, time: str, width: int) -> list[tuple[str, str]]:
    """The terminal bar of ``count`` in ``width`` columns, as lines of (text, bar) pairs:
    ``label``, a bar, the count and ``time`` (``about 2 min left``) on the first line,
    the detail wrapped below it. The count and the time are never cut (they wrap on
    spaces in a very narrow terminal): the label shrinks to MIN_LABEL for a bar, then the
    bar goes, then the label. The last
    column stays free (a terminal wraps a line that fills it)."""
    room = max(width - 1, 20)
    # Widths that do not move as the count grows (a label that came and went flickered).
    head = f"{count.words(aligned=True)}, {time:<{TIME_WIDTH}}"
    if len(label) + 1 + MIN_BAR + 1 + len(head) > room:  # no room to spare: the label first
        head = f"{count.words()}, {time:<{TIME_WIDTH}}"
    lines: list[tuple[str, str]] = []
    if len(head) > room:
        wrapped = textwrap.wrap(head, room, break_long_words=False, break_on_hyphens=False)
        lines = [(label[:room], "")] + [(line, "") for line in wrapped]
    else:
        free = room - len(head) - 1  # for the label and the bar, each with a space
        drawn = count.done is not None and not count.open_ended and count.total > 0
        # The label gives way to a bar of MIN_BAR down to MIN_LABEL columns, then the bar
        # goes (it says again what the count says), then the rest of the label.
        with_bar = free - 1 - MIN_BAR
        keeps_bar = drawn and with_bar >= min(len(label), MIN_LABEL)
        label = _shortened(label, with_bar if keeps_bar else free)
        bar_room = min(free - len(label) - (1 if label else 0), 40)
        bar = ""
        if bar_room >= MIN_BAR and drawn:
            assert count.done is not None
            filled = round(bar_room * min(count.done / count.total, 1.0))
            bar = "\u2501" * filled + "\u2500" * (bar_room - filled)
        first = " ".join(part for part in (label, bar, head) if part)
        lines = [(first, bar)]
    if count.detail:
        lines += [
            (line, "")
            for line in textwrap.wrap(
                count.detail,
                room,
                initial_indent="  ",
                subsequent_indent="  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        ]
    return lines


def _shortened(label: str, room: int) -> str:
    """``label`` cut to ``room`` columns at a word (or in the word, marked, if it is one)."""
    if len(label) <= room:
        return label
    if room < 4:
        return ""
    cut = label[: room - 1]
    if label[room - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]  # the last word whole or not at all
    return cut + "\u2026"


@contextmanager
def progress_bar(
    console: Console,
    label: str,
    unit: str = "battles",
    notice_after: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
    running_after: float = RUNNING_NOTICE_SECONDS,
    open_ended: bool = False,
    at_most: bool = False,
) -> Iterator[ProgressCallback]:
    """Yield a ``progress(done, total, detail="")`` callback for ``console``: ``done`` of
    ``total`` ``unit`` (battles, values tried, ...; ``at_most``: the total is the most the
    work may come to, a search's; ``open_ended``: no total is known, and ``total`` is
    ignored), ``detail`` what the work is at (``look 3 of 8: 412 armies left of 1,234``).

    On a terminal it draws a transient bar: what is counted, done of how many in all, the
    time left, and the detail on a line below (it disappears when the run ends and the
    tables are printed). Elsewhere (a pipe, a notebook, a CI log) it prints plain lines:
    one when the estimated time left exceeds ``notice_after`` seconds (default
    ETA_NOTICE_SECONDS), then one every PIPE_EVERY_SECONDS with what is done of how many
    and the time left; a search (work counted in another ``unit`` than battles, or to a
    total ``at_most``, or open-ended) also says ``running_after`` seconds after its start
    what it counts and where it is, since its time left may not be known for minutes.
    """
    estimate = Estimate(clock)
    count = Count(unit, at_most, open_ended)
    # The time it has run, said where no time left is known: on the wall clock (``clock``
    # times the estimate, and a test's ticks once per reading).
    started = time.perf_counter()

    def elapsed() -> str:
        return format_seconds(time.perf_counter() - started)

    def line(text: str) -> None:
        # A terminal gets the line wrapped between words at its width (the compile
        # notice is longer than 80 columns: the terminal cut it mid-word); a pipe or a
        # log keeps it on one line, for grep.
        console.print(text, highlight=False, markup=False, soft_wrap=not console.is_terminal)

    def time_words(left: float | None) -> str:
        if count.open_ended or (
            left is None and time.perf_counter() - started >= ESTIMATING_SECONDS
        ):
            # No total, or none timed yet: the time it has taken says it is alive.
            return f"{elapsed()} so far"
        return "time left: estimating" if left is None else left_words(left)

    def left_words(left: float) -> str:
        # A total that is a bound gives a time left that is one too.
        return f"{'up to' if at_most else 'about'} {format_seconds(left)} left"

    def record(done: int, total: int, detail: str) -> float | None:
        left = None if open_ended else estimate.left(done, total)
        count.done, count.total, count.detail = done, total, detail
        return left

    if not console.is_terminal:
        limit = ETA_NOTICE_SECONDS if notice_after is None else notice_after
        told: float | None = None
        running: threading.Timer | None = None

        def say(text: str) -> None:
            line(f"battle-odds: {label}: {text}")

        def where() -> str:
            if count.done is None:
                return f"counting {unit}, none done yet"
            return count.words() + (f" ({count.detail})" if count.detail else "")

        if unit != "battles" or open_ended or at_most:
            running = threading.Timer(
                running_after,
                lambda: say(
                    f"running: {where()}, {elapsed()} so far "
                    + (
                        "(no total is known in advance; "
                        if open_ended
                        else "(the time left is not known until more is done; "
                    )
                    + "Ctrl-C stops with the answer so far)"
                ),
            )
            running.daemon = True
            running.start()

        def notice(done: int, total: int, detail: str = "") -> None:
            nonlocal told
            left = record(done, total, detail)
            # The estimate read the clock: the same instant (a test's clock ticks per read).
            now = clock() if open_ended or estimate.last is None else estimate.last[0]
            if told is None:
                # A search's time left is a bound (its first may be far off): it said
                # that it runs, and its lines every half minute give the bound.
                if left is not None and left > limit and not at_most:
                    told = now
                    say(
                        f"about {format_seconds(left)} left for {total - done:,} more "
                        f"{unit} (Ctrl-C stops with the result so far)"
                    )
                elif open_ended or (running is not None and not running.is_alive()):
                    told = now  # the running notice was the first line
                return
            if now - told >= PIPE_EVERY_SECONDS:
                told = now
                time_left = f", {elapsed()} so far" if left is None else f", {left_words(left)}"
                say(where() + time_left)

        try:
            with announce_compiles(line):  # the notice names the program itself
                yield notice
        finally:
            if running is not None:
                running.cancel()
        return
    shown = {"time": time_words(None), "compiling": ""}

    def lines(width: int) -> list[tuple[str, str]]:
        # A first run compiles before its first battle: that is what it is at.
        said = replace(count, detail=shown["compiling"]) if shown["compiling"] else count
        return bar_lines(label, said, shown["time"], width)

    # rich's live display loads only where a bar is drawn (0.01 s of a query in a pipe).
    from .bar import Bar

    with Bar(lines, console=console, transient=True):

        def update(done: int, total: int, detail: str = "") -> None:
            shown["time"] = time_words(record(done, total, detail))
            if done > 0:
                shown["compiling"] = ""

        def compiled(functions: int) -> None:
            # A first run compiles for tens of seconds before any battle: the count moves.
            shown["compiling"] = f"compiling the kernel: {functions} functions done"

        with announce_compiles(line, compiled):
            yield update


@contextmanager
def or_plain_lines(
    progress: ProgressCallback | None,
    label: str,
    unit: str = "battles",
    open_ended: bool = False,
    at_most: bool = False,
) -> Iterator[ProgressCallback]:
    """``progress``, or when the caller gave none (the Python API: a notebook, a script)
    the plain lines of :func:`progress_bar` on stderr: nothing for a short study, the time
    left and then a line every half minute for a long one."""
    if progress is not None:
        yield progress
        return
    console = Console(stderr=True, force_terminal=False, force_jupyter=False)
    with progress_bar(console, label, unit, open_ended=open_ended, at_most=at_most) as plain:
        yield plain


P = ParamSpec("P")
R = TypeVar("R")


def called_as_it_is_written(progress: Callable[..., Any]) -> Callable[..., Any]:
    """``progress`` called with as many of ``(done, total, detail)`` as it takes: a
    search adds what it is at as a third argument (an empty one when it has none to
    say), and a ``lambda done, total: ...`` written for the other studies would fail on
    it with a TypeError mid-study."""
    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: called as it is
        return progress
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return progress
    positional = sum(
        p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in parameters
    )
    if positional >= 3:
        return lambda done, total, detail="": progress(done, total, detail)
    return lambda *reported: progress(*reported[:positional])


def plain_lines_by_default(
    label: str,
    unit: str | Callable[[dict[str, Any]], str] = "battles",
    at_most: bool = False,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A study of the Python API (``progress`` keyword-only) that, called without a
    ``progress``, reports to the plain lines of :func:`or_plain_lines` under ``label``:
    in a notebook or a script a long study says its time left, as on the command line.
    ``unit``: what it counts, or a function of the call's keywords that says it (a
    sweep counts battles, or points when run to a precision); ``at_most``: its total is
    a bound (a search), as for :func:`progress_bar`."""

    def wrap(study: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(study)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            given = kwargs.get("progress")
            if callable(given):
                kwargs["progress"] = called_as_it_is_written(given)
                return study(*args, **kwargs)
            if given is not None:
                return study(*args, **kwargs)
            counted = unit(kwargs) if callable(unit) else unit
            with or_plain_lines(None, label, counted, at_most=at_most) as lines:
                kwargs["progress"] = lines
                return study(*args, **kwargs)

        return run

    return wrap


def quiet(done: int, total: int, detail: str = "") -> None:
    """No progress: a study run inside another (the outer one reports)."""
