"""How many battles each kernel call runs: sized by the measured time per battle.

A kernel call cannot be interrupted: Ctrl-C is answered when the call in progress
returns. A fixed count of battles per call would block for 0.1 ms or for a minute
depending on the scenario (131,072 large battles of 0.3 ms each take 40 s), so calls are
sized by time instead: the first runs ``FIRST_CHUNK`` battles, and each next one as many
as the time per battle measured so far fits into ``CALL_SECONDS`` (more on a crowded
machine, where waking the kernel's threads is slow), growing at most fourfold a call and
never past the chunk size asked for. Battle ``i`` of seed ``s`` is
the same battle whatever the chunking, so the sizes change no result, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

import numpy as np

from .interrupt import check_stop

T = TypeVar("T")

#: The first call's battles: it also pays for loading (or compiling) the kernel, so it
#: is one battle, answered within a second even when a battle takes one.
FIRST_CHUNK = 1
#: A call's battles grow at most this many times from one call to the next.
GROWTH = 4
#: What a kernel call should take (seconds): Ctrl-C waits at most about this long.
CALL_SECONDS = 0.25
#: ... unless a call's fixed cost (waking the kernel's threads: a millisecond on an idle
#: machine, a fifth of a second on a crowded one) is a large share of that: calls then
#: take four times their fixed cost, at most this long, so that three quarters of a
#: call still run battles.
LONGEST_CALL_SECONDS = 1.0


class CallTimes:
    """``t = a + b * n``: the fixed cost ``a`` of a call and the cost ``b`` of each of its
    ``n`` battles, fitted by least squares over the calls timed so far.

    The fit is kept as running means and co-moments (Welford's updates), so that adding
    a call and fitting are constant time: a study's progress fits after every report,
    and refitting over every call so far made its thousands of reports quadratic."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float]] = []
        #: Battles and seconds of all calls; the largest call; whether all are one size.
        self.battles = 0
        self.seconds = 0.0
        self.largest = 0
        self.one_size = True
        self._mean_n = self._mean_t = 0.0
        #: Sums of squared deviations of n and of t, and of their products.
        self._spread_n = self._spread_t = self._co = 0.0

    def add(self, battles: int, seconds: float) -> None:
        if self.calls and battles != self.calls[0][0]:
            self.one_size = False
        self.calls.append((battles, seconds))
        self.battles += battles
        self.seconds += seconds
        self.largest = max(self.largest, battles)
        k = len(self.calls)
        d_n, d_t = battles - self._mean_n, seconds - self._mean_t
        self._mean_n += d_n / k
        self._mean_t += d_t / k
        self._spread_n += d_n * (battles - self._mean_n)
        self._spread_t += d_t * (seconds - self._mean_t)
        self._co += d_n * (seconds - self._mean_t)

    def fit(self) -> tuple[float, float, float] | None:
        """``(a, b, standard error of b)``, or None while the calls cannot tell battles
        from fixed costs (fewer than three, all of one size, or no positive slope)."""
        k = len(self.calls)
        if k < 3 or self.one_size:
            return None
        spread = self._spread_n
        if spread <= 0:
            return None
        b = self._co / spread
        if b <= 0:
            return None
        a = max(self._mean_t - b * self._mean_n, 0.0)
        # Sum of squared residuals about the line with that (clamped) a: the least
        # squares residual plus k times the offset the clamp put in.
        offset = self._mean_t - a - b * self._mean_n
        residual = max(self._spread_t - 2 * b * self._co + b * b * spread + k * offset**2, 0.0)
        return a, b, (residual / (k - 2) / spread) ** 0.5

    def call_seconds(self) -> float:
        """What a call should take: CALL_SECONDS, or four times a large fixed cost."""
        fitted = self.fit()
        fixed = fitted[0] if fitted else 0.0
        return min(LONGEST_CALL_SECONDS, max(CALL_SECONDS, GROWTH * fixed))


class ChunkSizes:
    """Battles for the next kernel call, from the time of the calls before it."""

    def __init__(self, cap: int, first: int = FIRST_CHUNK, seconds: float | None = None) -> None:
        if cap < 1:
            raise ValueError(f"chunk size {cap}: expected at least 1")
        self.cap = cap
        #: What a call should take at least (None: CALL_SECONDS), for a prepared scenario
        #: whose call makes many kernel calls (``Prepared.call_seconds``).
        self.seconds = min(seconds or CALL_SECONDS, LONGEST_CALL_SECONDS)
        self.size = min(first, cap)
        self.times = CallTimes()
        self.calls = 0

    def next(self, left: int) -> int:
        """Battles of the next call when ``left`` battles are still to run."""
        return max(1, min(self.size, left))

    def timed(self, count: int, seconds: float) -> None:
        """A call of ``count`` battles took ``seconds``: size the next call.

        At most GROWTH times this one, and at most ``count * T / seconds``, which keeps
        the next call within its fixed cost of ``T``, the time a call should take, however
        that splits into fixed cost and battles. ``T`` comes from the fitted fixed cost;
        the first call, which loads the kernel, is not fitted; until three are, ``T`` is
        LONGEST_CALL_SECONDS."""
        self.calls += 1
        if self.calls > 1:
            self.times.add(count, seconds)
        fitted = self.times.fit()
        # Until calls of several sizes are timed, a fixed cost cannot be told from
        # battles: grow while calls stay within the longest a call may take.
        target = (
            LONGEST_CALL_SECONDS if fitted is None else max(self.seconds, self.times.call_seconds())
        )
        size = float(min(self.cap, GROWTH * count))
        if seconds > 0:
            # Proportional, not from the fitted cost per battle: where calls are mostly
            # fixed cost (threads descheduled on a crowded machine) that cost is noise,
            # and calls that stay short keep growing until battles are what they time.
            size = min(size, count * target / seconds)
        self.size = int(max(1, size))


def chunk_ranges(ranges: list[tuple[int, int]], sizes: ChunkSizes) -> Iterator[tuple[int, int]]:
    """``(first, count)`` of each chunk of ``ranges`` (``(first, count)`` each), in order,
    each as large as ``sizes`` says when it is asked for (after the calls timed so far)."""
    for start, battles in ranges:
        at = start
        while at < start + battles:
            count = sizes.next(start + battles - at)
            yield at, count
            at += count


def sized_chunks(
    ranges: list[tuple[int, int]],
    sizes: ChunkSizes,
    run: Callable[[int, int], T],
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[tuple[int, int, T]]:
    """``run(first, count)`` over ``ranges`` of battles (``(first, count)`` each), in
    order, in calls sized by ``sizes``; yields ``(first, count, what run returned)``."""
    for at, count in chunk_ranges(ranges, sizes):
        began = clock()
        answer = run(at, count)
        sizes.timed(count, clock() - began)
        yield at, count, answer


def winners(
    run: Callable[[int, int], Mapping[str, np.ndarray]],
    first: int,
    count: int,
    sizes: ChunkSizes,
) -> np.ndarray:
    """The ``winner`` column of battles ``first .. first + count`` from a prepared
    kernel's ``run(first, count)``, in calls sized by ``sizes``, for the studies that call
    kernels themselves (``best``, ``prices``). Before each call it raises
    :class:`~simulator.running.interrupt.Interrupted` once Ctrl-C asked the work to
    stop, so a block of battles of any size is left within about a second."""
    parts = []
    for _, _, winner in sized_chunks([(first, count)], sizes, _stoppable(run)):
        parts.append(winner)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _stoppable(
    run: Callable[[int, int], Mapping[str, np.ndarray]],
) -> Callable[[int, int], np.ndarray]:
    def call(first: int, count: int) -> np.ndarray:
        check_stop()
        return run(first, count)["winner"]

    return call
