"""Battles of many prepared scenarios of one ruleset in one kernel call.

A scenario with ranges (docs/unknowns.md, "Speed") fights each battle on the prepared
scenario of the combination of inputs it drew. Run one kernel call per combination, a
chunk made hundreds of small calls, each with its fixed cost (Numba's dispatch, the
thread pool) and each too small to share among threads. A ruleset whose prepared
scenario is :class:`StackedRuns` instead hands its kernel every combination's tables
side by side (:class:`Stack`) with each battle's combination, seed and number, so a
chunk is one call on every thread, whatever the combinations. Each battle is the one a
call of its own combination would fight: the same battle function on the same tables,
from the stream of its own (seed, number).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .outcomes import Outcomes


@dataclass(frozen=True)
class Stack:
    """The kernel tables of several prepared scenarios (its members, in slot order),
    each table's members' copies flattened one after another: member ``s``'s table
    ``t`` is ``flats[t][at[s, t] : at[s + 1, t]]``, of shape ``(dims[s, 2t], dims[s,
    2t + 1])`` (kernels/stacked.py); ``sizes[s]`` are the member's
    :meth:`StackedRuns.stack_sizes` (its row's width first)."""

    flats: tuple[np.ndarray, ...]
    at: np.ndarray
    dims: np.ndarray
    sizes: np.ndarray
    #: The widest member's row.
    width: int


def stack(members: Sequence[StackedRuns], onto: Stack | None = None) -> Stack:
    """The tables of ``members`` side by side (each member's slot its place here), after
    those of ``onto`` when given (its members keep their slots; only the new members'
    tables are read)."""
    tables = [m.stack_tables() for m in members]
    count = len(tables[0])
    at = np.zeros((len(members) + 1, count), np.int64)
    dims = np.ones((len(members), 2 * count), np.int64)
    flats = []
    for t in range(count):
        parts = [np.ascontiguousarray(own[t]) for own in tables]
        at[1:, t] = np.cumsum([p.size for p in parts])
        for s, part in enumerate(parts):
            dims[s, 2 * t : 2 * t + part.ndim] = part.shape
        if onto is not None:
            parts.insert(0, onto.flats[t])
            at[:, t] += onto.at[-1, t]
        flats.append(np.concatenate([p.ravel() for p in parts]))
    sizes = np.array([m.stack_sizes() for m in members], np.int64)
    if onto is not None:
        at = np.concatenate([onto.at[:-1], at])
        dims = np.concatenate([onto.dims, dims])
        sizes = np.concatenate([onto.sizes, sizes])
    return Stack(tuple(flats), at, dims, sizes, int(sizes[:, 0].max()))


def warm_stacked(prepared: StackedRuns) -> None:
    """Load (or compile, the first time) the stacked kernel ``prepared``'s ruleset runs a
    scenario with ranges on: one battle of it, stacked alone (the page warms it, so that
    its first question with ranges does not wait on a compile)."""
    tables = stack([prepared])
    rows = np.zeros((1, tables.width + 1), np.int64)
    one = np.zeros(1, np.int64)
    prepared.run_stacked(tables, one, np.ones(1, np.uint64), one, rows)


def warm_shared(prepared: StackedRuns) -> bool:
    """Load (or compile) the kernel that runs what combinations of a scenario with ranges
    share (olympia's chain table: :meth:`StackedRuns.sharing`), on one battle of
    ``prepared`` as the only combination (a copy of it: ``prepared`` runs as before);
    False where ``prepared`` shares nothing."""
    member = copy.copy(prepared)
    sharing = prepared.sharing([prepared])
    if sharing is None or not sharing(member):
        return False
    tables = stack([member])
    rows = np.zeros((1, tables.width + 1), np.int64)
    one = np.zeros(1, np.int64)
    member.run_stacked(tables, one, np.ones(1, np.uint64), one, rows)
    return True


class StackedRuns:
    """A prepared scenario whose kernel also runs the battles of many of its ruleset's
    scenarios in one call (mixed into the ruleset's ``Prepared``). Its outcome columns
    are its :attr:`columns` of the kernel's rows and its :meth:`derived_columns`."""

    columns: Mapping[str, int]

    def stacks(self) -> bool:
        """Whether its battles run on its ruleset's stacked kernel; if not (a kernel the
        stacked one does not run), a scenario with ranges runs them by a call of its own."""
        return True

    def sharing(self, checked: Sequence[StackedRuns]) -> Callable[[StackedRuns], bool] | None:
        """How combinations of a scenario with ranges share what their kernel would build
        for each (olympia's chain table), made from ``checked`` (the combinations checked
        before any battle, prepared, of its ruleset): a function that sets a combination,
        freshly prepared, to run on what it shares and says whether it does (then its
        kernel is chosen), or None where nothing is shared. Whether a combination joins
        must depend on it and ``checked`` alone, so its battles run on the same kernel in
        every chunk."""
        return None

    def stacked_table_bytes(self) -> int:
        """The bytes of the tables a stacked call builds for it (skirmish's expected
        damage): its own run's (``Prepared.table_bytes``) unless said otherwise."""
        return int(self.table_bytes())  # type: ignore[attr-defined]

    def stack_key(self) -> tuple[Any, ...]:
        """What scenarios must share to be stacked in one call (their kernel's code)."""
        return (type(self),)

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        """The tables its kernel takes for it, in the kernel's order."""
        raise NotImplementedError

    def stack_sizes(self) -> tuple[int, ...]:
        """Its kernel row's width, then what else the stacked kernel sizes its scratch
        arrays by."""
        raise NotImplementedError

    def columns_of(self, rows: np.ndarray) -> Outcomes:
        """The outcome columns of its kernel's ``rows`` (what :meth:`run` returns)."""
        return Outcomes(rows, self.columns, self.derived_columns(rows))

    def derived_columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The outcome columns computed from its kernel's ``rows`` (none here)."""
        return {}

    def derived_key(self) -> tuple[Any, ...]:
        """What scenarios must share for one :meth:`derived_columns` to serve the rows
        of them all (it reads only columns at the same place in each)."""
        return (type(self),)

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        """Its ruleset's stacked kernel (kernels/*_stacked.py) and the battle function
        (by address) that kernel calls for it. ``given``: the arguments the kernel will
        take after the battle (as :meth:`run_stacked` calls it), for a ruleset whose battle's
        compile compiles the kernel for them meanwhile (kernels/_aside.py); None where not
        known."""
        raise NotImplementedError

    def run_stacked(
        self,
        tables: Stack,
        slots: np.ndarray,
        seeds: np.ndarray,
        numbers: np.ndarray,
        out: np.ndarray,
    ) -> None:
        """Into ``out[i, :width of its member]``, battle ``numbers[i]`` of seed
        ``seeds[i]`` of member ``slots[i]`` of ``tables`` (``out`` zeros at first, as
        wide as the widest member's row), every battle on every thread in one call. Any
        member may run the stack: members of one stack key share the kernel."""
        at = (tables.at, tables.dims, tables.sizes)
        given = (*tables.flats, *at, slots, seeds, numbers, out, *self.stacked_shared())
        kernel, battle = self.stacked_kernel(given)
        kernel(battle, *given)

    def stacked_shared(self) -> tuple[Any, ...]:
        """What its stacked kernel takes after the battles' rows: the tables its members
        share, one copy for them all (olympia's chain table), none unless said."""
        return ()
