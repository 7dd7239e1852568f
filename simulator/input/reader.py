"""Strict, located reading of scenario data (TOML tables or inline-built dicts).

A :class:`Node` wraps one table with its dotted path, so every check can say which
key is wrong, on which line, what was expected and which valid name is nearest.
Unknown keys are errors, because a misspelt optional key silently ignored is the
worst kind of wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from ..errors import BattleOddsError, Source, did_you_mean
from .fields import Field, Table, is_multiple, range_text


class Node:
    """One value of scenario data and where it sits, read strictly.

    ``data`` is the value as the TOML file or the inline query gave it (a table, a list
    or a plain value), ``path`` its dotted key from the top (``attacker.blocks[0]``;
    ``""`` at the top) and ``source`` the file or query it came from, which turns a key
    into a line number for errors. Each reading method checks the value against what was
    expected and returns a plain Python value, or raises a
    :class:`~simulator.errors.BattleOddsError` naming the key, its line, the value and
    what was expected (for a misspelt name, the nearest valid one); a missing value
    becomes the default given to the call, never a guess.

    Invariants: a Node never changes its data, so reading has no side effects and may be
    repeated; ``child``, ``items`` and ``elements`` make new Nodes whose ``path`` extends
    this one's, so an error found anywhere below names the full key; ``data`` need be a
    table only when a key is read (``table`` raises "expected a table" otherwise).

    Merging: none. A Node is a read-only view of one piece of data; data from two places
    is combined before it is read (``Scenario.with_changes`` sets values at dotted paths
    in a copy of the data, then validates the whole again), never by combining Nodes.
    """

    def __init__(self, data: Any, path: str, source: Source) -> None:
        self.data = data
        self.path = path
        self.source = source

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, message: str, key: str | None = None, value: object = None) -> BattleOddsError:
        return self.source.error(
            self.key(key) if key else self.path or "(top level)", message, value
        )

    def table(self) -> Mapping[str, Any]:
        # A dict first: the ABC's check cost a tenth of validating a scenario's data,
        # which a scenario with ranges does for each combination of its inputs.
        if type(self.data) is not dict and not isinstance(self.data, Mapping):
            raise self.fail(f"expected a table, got {_kind(self.data)}")
        return self.data

    def only(self, allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for name in self.table():
            if name not in allowed:
                raise self.fail(f"unknown key '{name}'" + did_you_mean(name, allowed), name, name)

    def check(self, table: Table) -> None:
        """Only ``table``'s keys, and each value given checked against its field: for a
        table whose values may never be used (a unit type no unit has)."""
        self.only(table)
        for entry in table.fields:
            if isinstance(entry, Field) and self.has(entry.name):
                self.read(entry)

    def has(self, name: str) -> bool:
        return name in self.table()

    def child(self, name: str, default: Any = None) -> Node:
        return Node(self.table().get(name, default), self.key(name), self.source)

    def items(self) -> Iterator[tuple[str, Node]]:
        for name, value in self.table().items():
            yield name, Node(value, self.key(name), self.source)

    def elements(self) -> Iterator[Node]:
        if not isinstance(self.data, list):
            raise self.fail(f"expected a list, got {_kind(self.data)}")
        for i, value in enumerate(self.data):
            yield Node(value, f"{self.path}[{i}]", self.source)

    def integer(
        self, name: str, default: int | None = None, lo: int | None = None, hi: int | None = None
    ) -> int:
        value = self.table().get(name, default)
        if value is None:
            raise self.fail("is required: expected a whole number", name)
        if isinstance(value, bool) or not isinstance(value, int):
            within = f" in {_range(lo, hi)}" if lo is not None or hi is not None else ""
            raise self.fail(
                f"expected a whole number{within}, got {_kind(value)} {value!r}", name, value
            )
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(f"{value} is out of range: expected {_range(lo, hi)}", name, value)
        return value

    def number(
        self,
        name: str,
        default: float | None = None,
        lo: float | None = None,
        hi: float | None = None,
    ) -> float:
        value = self.table().get(name, default)
        if value is None:
            raise self.fail("is required: expected a number", name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            within = f" in {_range(lo, hi)}" if lo is not None or hi is not None else ""
            raise self.fail(f"expected a number{within}, got {_kind(value)} {value!r}", name, value)
        if not math.isfinite(value):
            # nan compares false with everything, so a range check alone lets it through.
            raise self.fail(
                f"{value} is not a finite number: expected {_range(lo, hi)}", name, value
            )
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise self.fail(f"{value} is out of range: expected {_range(lo, hi)}", name, value)
        return float(value)

    def read(self, field: Field, name: str | None = None) -> Any:
        """The value of ``field`` (at key ``name``, for a table's other keys), checked
        against its declaration: kind, range, step, choices; its default if absent."""
        name = name or field.name
        kind = field.kind
        if kind == "int":
            lo = None if field.lo is None else int(field.lo)
            hi = None if field.hi is None else int(field.hi)
            return self.integer(name, field.default, lo=lo, hi=hi)
        if kind == "number":
            value = self.number(name, field.default, lo=field.lo, hi=field.hi)
            if field.step is not None and not is_multiple(
                self.table().get(name, value), field.step
            ):
                raise self.fail(
                    f"{self.table().get(name)} is not a multiple of {field.step}: expected "
                    f"{_range(field.lo, field.hi)} in steps of {field.step}",
                    name,
                    self.table().get(name),
                )
            return value
        if kind == "bool":
            return self.boolean(name, bool(field.default))
        if kind == "text":
            return self.text(name, field.default)
        if kind == "choice":
            return self.choice(name, field.choices, field.default)
        if kind == "names":
            return self.choices(name, field.choices)
        return self.point(name, field)

    def point(self, name: str, field: Field) -> tuple[int, int]:
        """Two whole numbers ``[x, y]`` inside the field's range."""
        value = self.table().get(name)
        if value is None:
            raise self.fail(f"is required: expected {field.doc}", name)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            raise self.fail(f"expected {field.doc}, two whole numbers, got {value!r}", name)
        for v in value:
            if not field.lo <= v <= field.hi:
                raise self.fail(
                    f"{v} is out of range: expected coordinates {_range(field.lo, field.hi)}",
                    name,
                    v,
                )
        return value[0], value[1]

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.table().get(name, default)
        if not isinstance(value, bool):
            raise self.fail(f"expected true or false, got {value!r}", name, value)
        return value

    def text(self, name: str, default: str | None = None) -> str:
        value = self.table().get(name, default)
        if value is None:
            raise self.fail("is required: expected a string", name)
        if not isinstance(value, str):
            raise self.fail(f"expected a string, got {_kind(value)} {value!r}", name, value)
        return value

    def choice(self, name: str, choices: Iterable[str], default: str | None = None) -> str:
        choices = list(choices)
        value = self.text(name, default)
        if value not in choices:
            raise self.fail(
                f"'{value}' is not one of {', '.join(choices)}"
                + did_you_mean(value, choices, list_valid=False),
                name,
                value,
            )
        return value

    def choices(self, name: str, choices: Iterable[str]) -> tuple[str, ...]:
        """A list of names from ``choices`` (a single string is accepted as a list of one)."""
        choices = list(choices)
        value = self.table().get(name, [])
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list):
            raise self.fail(f"expected a list of names, got {_kind(value)}", name)
        for v in value:
            if v not in choices:
                raise self.fail(
                    f"'{v}' is not one of {', '.join(choices)}"
                    + did_you_mean(str(v), choices, list_valid=False),
                    name,
                    v,
                )
        return tuple(dict.fromkeys(value))


def _range(lo: float | None, hi: float | None) -> str:
    return range_text(lo, hi)


def _kind(value: Any) -> str:
    return {
        dict: "a table",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a whole number",
        float: "a number",
    }.get(type(value), type(value).__name__)


T = TypeVar("T")
#: What :func:`read_once` read, by (kind, data, context), while :func:`reusing` holds.
_READ: ContextVar[dict[tuple[str, int, int], tuple[Any, Any, Any]] | None] = ContextVar(
    "parts read", default=None
)
#: The most parts kept: past it they are read afresh.
MOST_READ = 1 << 14


@contextmanager
def reusing(parts: dict[tuple[str, int, int], tuple[Any, Any, Any]]) -> Iterator[None]:
    """Within the block, :func:`read_once` keeps what it reads in ``parts``: for the
    combinations of a scenario's unknowns, validated one after another, which share
    every table a combination does not change (simulator/scenario/unknowns.substituted
    copies only the tables on a changed path) and never change one in place."""
    token = _READ.set(parts)
    try:
        yield
    finally:
        _READ.reset(token)


def read_once(kind: str, data: Any, context: Any, read: Callable[[], T]) -> T:
    """``read()``, or, within :func:`reusing`, what it gave before for the same ``data``
    and ``context`` objects (by identity, not value: a table the combinations share).
    ``read`` must depend on nothing else, and give a value nobody changes."""
    parts = _READ.get()
    if parts is None:
        return read()
    key = (kind, id(data), id(context))
    known = parts.get(key)
    if known is not None and known[0] is data and known[1] is context:
        return known[2]
    value = read()
    if len(parts) >= MOST_READ:
        parts.clear()
    parts[key] = (data, context, value)
    return value
