"""How many battles each kernel call runs: sized by the measured time per battle.

A kernel call cannot be interrupted: Ctrl-C is answered when the call in progress
returns. A fixed count of battles per call would block for 0.1 ms or for a minute
depending on the scenario (131,072 large battles of 0.3 ms each take 40 s), so calls are
sized by time instead: the first runs ``FIRST_CHUNK`` battles, and each next one as many
as the time per battle measured so far fits into ``CALL_SECONDS``, growing at most
fourfold a call and never past the chunk size asked for. Battle ``i`` of seed ``s`` is
the same battle whatever the chunking, so the sizes change no result, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

#: The first call's battles: it also pays for loading (or compiling) the kernel, so it
#: is one battle, answered within a second even when a battle takes one.
FIRST_CHUNK = 1
#: A call's battles grow at most this many times from one call to the next.
GROWTH = 4
#: What a kernel call should take (seconds): Ctrl-C waits at most about this long, and
#: a call this long amortises its fixed cost (well under a millisecond) a thousandfold.
CALL_SECONDS = 0.25


class ChunkSizes:
    """Battles for the next kernel call, from the time of the calls before it."""

    def __init__(self, cap: int, seconds: float = CALL_SECONDS, first: int = FIRST_CHUNK) -> None:
        if cap < 1:
            raise ValueError(f"chunk size {cap}: expected at least 1")
        self.cap = cap
        self.seconds = seconds
        self.size = min(first, cap)

    def next(self, left: int) -> int:
        """Battles of the next call when ``left`` battles are still to run."""
        return max(1, min(self.size, left))

    def timed(self, count: int, seconds: float) -> None:
        """A call of ``count`` battles took ``seconds``: size the next call."""
        fits = self.seconds * count / seconds if seconds > 0 else float("inf")
        self.size = int(max(1, min(self.cap, GROWTH * count, fits)))


def sized_chunks(
    ranges: list[tuple[int, int]],
    sizes: ChunkSizes,
    run: Callable[[int, int], T],
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[tuple[int, int, T]]:
    """``run(first, count)`` over ``ranges`` of battles (``(first, count)`` each), in
    order, in calls sized by ``sizes``; yields ``(first, count, what run returned)``."""
    for start, battles in ranges:
        at = start
        while at < start + battles:
            count = sizes.next(start + battles - at)
            began = clock()
            answer = run(at, count)
            sizes.timed(count, clock() - began)
            yield at, count, answer
            at += count
