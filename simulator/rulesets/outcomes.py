"""A run's outcome columns by name, over the kernel's rows they are read from.

A kernel writes each battle's outcome as one row of an int64 matrix; a ruleset names the
columns of that row (:attr:`Prepared.columns`). :class:`Outcomes` is what
:meth:`Prepared.run` returns: that matrix, each name's place in its rows, and the columns
computed from them (blocks' ``turn``), readable as a mapping of name to column. The
statistics read the matrix by place (``results.stats.Tally.of``): one pass over the
rows counts every column, and nothing is copied. :class:`Recorded` is the same for
:meth:`Prepared.run_through`, whose kernel records a row of each battle after each asked
step.

Any mapping of name to column is an answer of ``run`` too (a plugin ruleset's dict, the
waves' and ranges' columns, which are filled battle by battle): the statistics then count
each column alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np


def _kernel_rows(matrix: np.ndarray, dims: int) -> None:
    """Refuse a matrix the statistics' kernel cannot read in place."""
    if matrix.ndim != dims or matrix.dtype != np.int64 or not matrix.flags.c_contiguous:
        raise ValueError(
            f"outcome rows: expected a C-contiguous int64 array of {dims} dimensions,"
            f" got {matrix.dtype} of shape {matrix.shape}"
        )


class _NamedColumns(Mapping[str, np.ndarray]):
    """Columns by name, each view made once (``_views``, set by the subclass)."""

    _views: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self._views[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._views)

    def __len__(self) -> int:
        return len(self._views)


@dataclass(frozen=True, eq=False)
class Outcomes(_NamedColumns):
    """Battles' outcome columns: ``matrix[i, places[name]]`` is battle i's ``name``.

    ``matrix`` is the kernel's rows, one a battle (C-contiguous int64, as the kernel
    wrote them); ``places`` each named column's index in a row (the ruleset's
    :attr:`~simulator.rulesets.base.Prepared.columns`, and any it adds); ``derived`` the
    columns computed from the rows, one value a battle. As a mapping it gives every
    column by name, the placed ones first in their order, each a view of ``matrix``
    (made once, here): a write to one writes the row.
    """

    matrix: np.ndarray
    places: Mapping[str, int]
    derived: Mapping[str, np.ndarray] = field(default_factory=dict)
    _views: dict[str, np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _kernel_rows(self.matrix, 2)
        views = {name: self.matrix[:, at] for name, at in self.places.items()}
        for name, values in self.derived.items():
            if name in views:
                raise ValueError(f"outcome column {name!r} is both placed and derived")
            views[name] = values
        object.__setattr__(self, "_views", views)

    def __reduce__(self) -> tuple[type[Outcomes], tuple[object, ...]]:
        # Pickled as what it is made of, so that its columns are views again after.
        return (Outcomes, (self.matrix, dict(self.places), dict(self.derived)))


@dataclass(frozen=True, eq=False)
class Recorded(_NamedColumns):
    """Battles' rows after each of some steps (:meth:`Prepared.run_through`):
    ``table[i, k, places[name]]`` is battle i's ``name`` after the k-th step asked.

    ``table`` is the kernel's record (C-contiguous int64, battles by steps by row);
    ``places`` each column's index in a row. As a mapping it gives each column as
    ``run_through`` promises, shape ``(steps, battles)``: a view of ``table``.
    """

    table: np.ndarray
    places: Mapping[str, int]
    _views: dict[str, np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _kernel_rows(self.table, 3)
        views = {name: self.table[:, :, at].T for name, at in self.places.items()}
        object.__setattr__(self, "_views", views)

    def __reduce__(self) -> tuple[type[Recorded], tuple[object, ...]]:
        return (Recorded, (self.table, dict(self.places)))
