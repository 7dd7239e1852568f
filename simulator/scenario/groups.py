"""Battles that run on the kernels of several prepared scenarios, one a battle, with the
randomness contract kept (docs/unknowns.md, docs/unfolding.md "Waves").

A run whose battles each pick one of several scenarios (the combination of inputs a
battle drew, the army a wave meets) groups them: battles come in blocks of ``block``, and
the battle that is the r-th of its block to pick group g is battle ``block_index * block
+ r`` of group g's scenario, on the group's own seed. That is a pure function of the
seed and the battle index (given which group each battle of the block picks), so the
numbers do not depend on chunking, threads or machine; within a chunk the battles of
one group in one block are consecutive battles of its scenario, run by one kernel call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ..errors import BattleOddsError
from ..rulesets.base import Prepared


def grouped_calls(
    first: int,
    groups: np.ndarray,
    earlier: Callable[[int, int], np.ndarray],
    block: int,
) -> Iterator[tuple[int, int, np.ndarray]]:
    """The kernel calls that run battles ``first .. first + len(groups) - 1``, battle
    ``first + j`` of group ``groups[j]``: for each block and each group present in it,
    ``(group, index, positions)``: the group, the index in its scenario's numbering of
    the first of its battles here, and their positions in ``groups`` (in battle order).
    ``earlier(start, count)`` gives the groups of battles ``start .. start + count - 1``,
    asked only for the battles of the chunk's first block before ``first``."""
    count = len(groups)
    start = first
    while start < first + count:
        number = start // block
        before = number * block
        end = min(first + count, before + block)
        here = slice(start - first, end - first)
        segment = groups[here]
        order = np.argsort(segment, kind="stable")
        present, starts, counts = np.unique(segment[order], return_index=True, return_counts=True)
        prior = _prior(present, earlier, before, start)
        for g, s, n, r in zip(present, starts, counts, prior, strict=True):
            yield int(g), before + int(r), order[s : s + n] + (start - first)
        start = end


def _prior(
    present: np.ndarray, earlier: Callable[[int, int], np.ndarray], before: int, start: int
) -> np.ndarray:
    """How many battles of each group of ``present`` (ascending) the block that starts
    at battle ``before`` held before battle ``start``."""
    if start == before:
        return np.zeros(len(present), np.int64)
    seen, seen_counts = np.unique(earlier(before, start - before), return_counts=True)
    at = np.minimum(np.searchsorted(seen, present), len(seen) - 1)
    return np.where(seen[at] == present, seen_counts[at], 0)


def grouped_numbers(
    first: int,
    groups: np.ndarray,
    earlier: Callable[[int, int], np.ndarray],
    block: int,
) -> np.ndarray:
    """Each battle's number in its group's scenario, as :func:`grouped_calls` numbers
    them (the r-th battle of its block to pick group g is battle ``block_index * block
    + r`` of g's), for battles ``first .. first + len(groups) - 1``, in arrays: a chunk of
    hundreds of groups numbered without a Python step a group."""
    count = len(groups)
    numbers = np.empty(count, np.int64)
    start = first
    while start < first + count:
        before = start // block * block
        end = min(first + count, before + block)
        segment = groups[start - first : end - first]
        # Groups counted in 16 bits sort by radix (NumPy's stable sort of int16), a
        # tenth of sorting them as int64; the order is the same.
        small = len(segment) > 0 and segment.min() >= 0 and segment.max() < (1 << 15)
        order = np.argsort(segment.astype(np.int16) if small else segment, kind="stable")
        ordered = segment[order]
        new = np.ones(len(ordered), bool)
        new[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(new)
        group = np.cumsum(new) - 1
        prior = _prior(ordered[starts], earlier, before, start)
        rank = np.arange(len(ordered)) - starts[group] + prior[group]
        numbers[order + (start - first)] = before + rank
        start = end
    return numbers


class GroupedPrepared(Prepared):
    """A scenario whose battles run on the kernels of the scenarios it groups (unknowns'
    combinations, waves' fights): its kernel is named after the first's, and it takes no
    other (each group's is chosen by the group)."""

    #: What the scenario has, for the refusal of another kernel: "unknowns", "waves".
    grouped_by = ""

    def kernel_choices(self, battles: int | None = None) -> tuple[str, ...]:
        return (self.kernel,)

    def use_kernel(self, name: str) -> None:
        if name != self.kernel:
            raise BattleOddsError(
                f"a scenario with {self.grouped_by} runs its own kernels, not {name!r}"
            )
