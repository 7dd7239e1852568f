"""One chain table for the combinations of a scenario with ranges (docs/unknowns.md,
"Speed"; kernels/olympia/shared_chain.py walks it).

A position's changes and their chances depend on the counts it holds and on what the
groups are, not on the counts they started with nor on the sides' break points: those
only say where a battle starts and which positions end it. Combinations whose arrays
agree once those are left out (:func:`family_key`) share one table, built for the
largest count of each group and the loosest break of each side among the combinations
checked before any battle (the ends of each range: simulator/scenario/unknowns.py's
``Mixture.checked``) whose groups stand as its do (:func:`shape_key`), so it holds every
position any of them reaches while fighting. A combination joins it when its counts are
within the table's, its break points no looser than the table's, and its opening is a
row of the table where neither side is broken yet (a battle broken before its first
strike takes the chain kernel's single strike, which the shared walk does not); any
other runs as before. Whether a combination joins depends
on it and on the checked combinations alone, never on which battles or chunk drew it, so
each battle runs on the same kernel on any thread count and chunking.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kernels.olympia import layout as k

from .space import Layout

if TYPE_CHECKING:
    from .prepare import ChainTable, OlympiaArrays, OlympiaPrepared

#: The group table's columns a shared table leaves to each combination: its counts at the
#: start.
MEMBER_GROUP_COLUMNS = [k.G_COUNT]
#: The side table's: its starting value and its break point.
MEMBER_SIDE_COLUMNS = [k.S_START, k.S_BREAK]
#: The score of a side with nobody left: under every limit.
NOBODY = -(1 << 62)


def family_key(arrays: OlympiaArrays) -> tuple[object, ...]:
    """What combinations must share to walk one table: their arrays less the columns
    each keeps (:data:`MEMBER_GROUP_COLUMNS`, :data:`MEMBER_SIDE_COLUMNS`)."""
    return _family_key(arrays, arrays.groups.tolist(), arrays.sides.tolist())


def _family_key(
    arrays: OlympiaArrays, groups: list[list[int]], sides: list[list[int]]
) -> tuple[object, ...]:
    """:func:`family_key` of ``arrays``, whose tables are ``groups`` and ``sides`` as
    lists (a combination's are a few rows: plain numbers are quicker than copies)."""
    return (
        arrays.order,
        _zeroed(groups, MEMBER_GROUP_COLUMNS),
        _zeroed(sides, MEMBER_SIDE_COLUMNS),
        arrays.survive.tobytes(),
    )


def _zeroed(rows: list[list[int]], columns: list[int]) -> tuple[tuple[int, ...], ...]:
    """``rows`` with ``columns`` set to 0, as tuples."""
    kept = []
    for row in rows:
        row = list(row)
        for c in columns:
            row[c] = 0
        kept.append(tuple(row))
    return tuple(kept)


def _fighters(groups: np.ndarray, s: int) -> np.ndarray:
    """Which groups count in side ``s``'s value and men (all but engines)."""
    return (groups[:, k.G_SIDE] == s) & (groups[:, k.G_KIND] != k.ENGINE)


def limits(arrays: OlympiaArrays) -> list[int]:
    """Each side's limit: the score (100 times the value its groups hold) at or under
    which it is broken (strike.py's ``is_broken``, its value counted from its own
    start: ``start - (counts - held) x values``). In plain numbers: a table has a few
    rows, and it is worked out for every combination."""
    return _limits(arrays.groups.tolist(), arrays.sides.tolist())


def _limits(groups: list[list[int]], sides: list[list[int]]) -> list[int]:
    """:func:`limits` of the group and side tables as lists."""
    full = [0, 0]
    for row in groups:
        if row[k.G_KIND] != k.ENGINE:
            full[row[k.G_SIDE]] += row[k.G_COUNT] * row[k.G_VALUE]
    return [
        side[k.S_START] * side[k.S_BREAK] - 100 * (side[k.S_START] - held)
        for side, held in zip(sides, full, strict=True)
    ]


def _plain(prepared: OlympiaPrepared) -> bool:
    """Whether a combination may walk a shared table: ``auto`` its kernel (one that
    names the chain kernel builds its own table), random order, no stop rule, no
    group's state kept (the chain kernel's plain run)."""
    return (
        prepared.battle.kernel == "auto"
        and prepared.arrays.order == k.RANDOM
        and not prepared.has_rules
        and not prepared.keeps_left
    )


@dataclass(frozen=True, eq=False)
class SharedChain:
    """A table shared by a family of combinations (module docstring): ``verdict`` holds
    three entries a row, the table's ``ends`` and each side's score there (100 times the
    value it holds, its men's counts times their values; NOBODY where it has nobody
    left), which a member's limits are held against (kernels/olympia/shared_chain.py);
    ``going`` two a row, each side's score where the table goes on and NOBODY where it
    ends, so that a battle goes on while both are above its member's limits (two tests
    a change, not three); ``groups`` and ``sides`` are the family's (a member's, its
    counts and starting values put in for each battle)."""

    counts: np.ndarray  # the largest count of each group
    loosest: np.ndarray  # each side's lowest limit
    table: ChainTable
    verdict: np.ndarray
    going: np.ndarray
    groups: np.ndarray
    sides: np.ndarray

    @property
    def space(self) -> Layout:
        return self.table.space

    @functools.cached_property
    def rows(self) -> dict[int, int]:
        """Each position's row."""
        return {code: row for row, code in enumerate(self.table.code.tolist())}

    @functools.cached_property
    def _plain(self) -> tuple[list[int], list[int], list[int], int, list[int]]:
        space = self.space
        opening = int((space.sradix - 1) @ space.sstride)
        verdict = self.verdict.tolist()
        return self.counts.tolist(), self.loosest.tolist(), space.stride.tolist(), opening, verdict

    def record_of(
        self,
        prepared: OlympiaPrepared,
        groups: list[list[int]] | None = None,
        sides: list[list[int]] | None = None,
    ) -> np.ndarray | None:
        """The combination's record for the shared walk (shared_chain.M_START ..), or
        None when it cannot walk this table (in plain numbers, as :func:`limits`;
        ``groups`` and ``sides``: its tables as lists, when already made)."""
        most, loosest, stride, code, verdict = self._plain
        a = prepared.arrays
        groups = a.groups.tolist() if groups is None else groups
        sides = a.sides.tolist() if sides is None else sides
        counts = [row[k.G_COUNT] for row in groups]
        own = _limits(groups, sides)
        if any(c > m for c, m in zip(counts, most, strict=True)) or any(
            o < x for o, x in zip(own, loosest, strict=True)
        ):
            return None
        code += sum(c * s for c, s in zip(counts, stride, strict=True))
        row = self.rows.get(code)
        if row is None:
            return None
        if verdict[3 * row + 1] <= own[0] or verdict[3 * row + 2] <= own[1]:
            return None  # broken before its first strike
        started = [v for side in sides for v in (side[k.S_START], side[k.S_BREAK])]
        return np.array([row, *own, prepared.from_step, *started, *counts], np.int64)


def build(
    first: OlympiaArrays,
    bounds: tuple[np.ndarray, np.ndarray],
    build_chain: Callable[[OlympiaArrays], ChainTable | None],
) -> SharedChain | None:
    """The table of ``first``'s family for the largest counts and loosest limits of
    ``bounds`` (:func:`bounds_of`), or None where ``build_chain`` (prepare.py's) would
    not build it (over budget) or its opening is broken."""
    counts, loosest = bounds
    groups = first.groups.copy()
    groups[:, k.G_COUNT] = counts
    sides = first.sides.copy()
    # Broken where 100 x held <= loosest: a value of held - loosest // 100 (whole
    # numbers) and a break point of 0, under which a side is broken at a value of 0.
    for s in range(2):
        mine = _fighters(groups, s)
        sides[s, k.S_START] = int(counts[mine] @ groups[mine, k.G_VALUE]) - int(loosest[s]) // 100
        sides[s, k.S_BREAK] = 0
    widest = dataclasses.replace(first, groups=groups, sides=sides)
    table = build_chain(widest)
    if table is None or table.once >= 0:
        return None
    space = table.space
    held = table.code[:, None] // space.stride % space.radix
    verdict = np.empty((len(table.code), 3), np.int64)
    verdict[:, 0] = table.ends
    for s in range(2):
        mine = _fighters(groups, s)
        verdict[:, 1 + s] = np.where(
            held[:, mine].sum(axis=1) > 0, 100 * (held[:, mine] @ groups[mine, k.G_VALUE]), NOBODY
        )
    going = verdict[:, 1:].copy()
    going[table.ends >= 0] = NOBODY  # under every limit: the walk stops there
    return SharedChain(
        counts, loosest, table, verdict.ravel(), going.ravel(), groups, first.sides.copy()
    )


def shape_key(arrays: OlympiaArrays) -> tuple[object, ...]:
    """What combinations must share for their counts and limits to be compared: their
    groups' sides, units, rows and kinds (families that differ in ratings alone, as
    the weather makes them, share one)."""
    return _shape_key(arrays, arrays.groups.tolist())


def _shape_key(arrays: OlympiaArrays, groups: list[list[int]]) -> tuple[object, ...]:
    """:func:`shape_key` of ``arrays``, whose group table is ``groups`` as lists."""
    where = tuple((row[k.G_SIDE], row[k.G_UNIT], row[k.G_ROW], row[k.G_KIND]) for row in groups)
    return (arrays.order, where)


def bounds_of(members: Sequence[OlympiaArrays]) -> tuple[np.ndarray, np.ndarray]:
    """The largest count of each group and the loosest limit of each side of
    ``members`` (one shape key)."""
    counts = np.max([m.groups[:, k.G_COUNT] for m in members], axis=0)
    return counts, np.min([limits(m) for m in members], axis=0)


class Sharing:
    """Sets combinations of a scenario with ranges to walk their family's table
    (:meth:`__call__`), each family's table built when a combination of it first asks,
    for the largest counts and loosest limits of the checked combinations of its shape
    (:func:`shape_key`): a function of the family and the checked combinations alone,
    whichever of its combinations asks first."""

    def __init__(
        self,
        checked: Sequence[OlympiaPrepared],
        build_chain: Callable[[OlympiaArrays], ChainTable | None],
    ) -> None:
        self._build_chain = build_chain
        shapes: dict[tuple[object, ...], list[OlympiaArrays]] = {}
        for prepared in checked:
            if _plain(prepared):
                shapes.setdefault(shape_key(prepared.arrays), []).append(prepared.arrays)
        self._bounds = {shape: bounds_of(members) for shape, members in shapes.items()}
        self._chains: dict[tuple[object, ...], SharedChain | None] = {}
        self._lock = threading.Lock()

    def __call__(self, prepared: OlympiaPrepared) -> bool:
        """Whether ``prepared`` (a combination's own, not yet run) walks a shared table
        from now on; if not, it is left as it was."""
        if not _plain(prepared):
            return False
        a = prepared.arrays
        groups, sides = a.groups.tolist(), a.sides.tolist()
        bounds = self._bounds.get(_shape_key(a, groups))
        if bounds is None:
            return False
        key = _family_key(a, groups, sides)
        with self._lock:
            if key not in self._chains:
                self._chains[key] = build(a, bounds, self._build_chain)
            chain = self._chains[key]
        record = None if chain is None else chain.record_of(prepared, groups, sides)
        if chain is None or record is None:
            return False
        prepared.share_chain(chain, record)
        return True
