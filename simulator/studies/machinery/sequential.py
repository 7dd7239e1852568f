"""Sequential tests: a probe's battles doubling in looks until its interval decides which
side of a target it is on, the z that keeps every look of every probe right at once, and
the bisection over sorted values that places the probes (``sweep --target``, ``worth``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import TypeVar

from ...errors import ParameterError
from ...running.interrupt import check_stop

T = TypeVar("T")
V = TypeVar("V")


def bisection_probes(values: int) -> int:
    """The most probes :func:`smallest_reaching` makes over this many values."""
    return math.ceil(math.log2(max(values, 2))) + 2


def check_looks(first_battles: int, max_battles: int) -> None:
    """Battles of a sequential search's first look and its cap, as the options give them."""
    if first_battles < 1 or max_battles < first_battles:
        raise ParameterError(
            "battles",
            None,
            f"{{battles=}}{first_battles} / {{max_battles=}}{max_battles}: expected "
            "1 <= battles <= max battles",
            whole=True,
        )


def look_z(confidence: float, probes: int, first_battles: int, max_battles: int) -> float:
    """The z of each look of a sequential search: Bonferroni over every look (the battles
    doubling from ``first_battles`` to ``max_battles``) of every probe, so that the whole
    search places every probe on the right side at ``confidence``."""
    looks = math.floor(math.log2(max_battles / first_battles)) + 2
    alpha = (1 - confidence) / (probes * looks)
    return NormalDist().inv_cdf(1 - alpha / 2)


def run_until_sure(
    run: Callable[[int, int], T],
    merge: Callable[[T, T], T],
    battles: Callable[[T], int],
    decided: Callable[[T], bool],
    first_battles: int,
    max_battles: int,
) -> tuple[T, bool]:
    """``run(done, count)`` more battles (continuing the indices), doubling them from
    ``first_battles`` until ``decided`` or ``max_battles``; the result and whether it was
    decided."""
    result = run(0, first_battles)
    while True:
        check_stop()
        if decided(result):
            return result, True
        if battles(result) >= max_battles:
            return result, False
        done = battles(result)
        result = merge(result, run(done, min(max_battles, 2 * done) - done))


def smallest_reaching(values: Sequence[V], reaches: Callable[[V], bool]) -> V | None:
    """Bisection for the first of the sorted ``values`` that ``reaches`` (assumed
    monotone: once a value reaches, every larger one does); None if the last does not."""
    if not reaches(values[-1]):
        return None
    if len(values) == 1 or reaches(values[0]):
        return values[0]
    below, above = 0, len(values) - 1
    while above - below > 1:
        middle = (below + above) // 2
        if reaches(values[middle]):
            above = middle
        else:
            below = middle
    return values[above]
