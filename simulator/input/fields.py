"""What a scenario key may hold: one declaration per key, read by everything else.

Each ruleset declares its scenario format as a tree of :class:`Field` (a value),
:class:`Table` (named keys, optionally any other key as well, like ``units.<type>``),
:class:`ListOf` (``[[stacks]]``) and :class:`OneOf` (alternative forms, like men given
as a table or as a list). From that one declaration:

* the validator takes its allowed keys (``Node.only(table)``) and reads each value
  with its type, range and default (``Node.read(field)``);
* ``markdown_table`` renders the key table of the ruleset's docs page;
* ``json_schema`` renders the JSON Schema an editor checks scenario files against.

Ranges are chosen so that no kernel arithmetic can overflow or lose meaning: a value
outside them is an error naming the file, line, key, value and allowed range.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from importlib import resources
from typing import Any, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

#: Kinds of value and how the docs call them.
KINDS = {
    "int": "whole number",
    "number": "number",
    "bool": "true/false",
    "text": "string",
    "choice": "one of",
    "names": "list of names",
    "point": "pair of whole numbers",
}


@dataclass(frozen=True)
class Field:
    """One value: its key, kind, range (inclusive), default and a one-line meaning."""

    name: str
    kind: str
    doc: str
    lo: float | None = None
    hi: float | None = None
    default: Any = None
    #: For ``choice`` and ``names``: the valid names.
    choices: tuple[str, ...] = ()
    #: For ``number``: the value must be a whole multiple of this (as written in decimal).
    step: float | None = None
    required: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown field kind {self.kind!r}")
        if self.kind in ("int", "number", "point") and (self.lo is None or self.hi is None):
            raise ValueError(f"numeric field {self.name!r} needs a range (lo and hi)")

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "number", "point")


@dataclass(frozen=True)
class Table:
    """A table of named keys; ``other`` (if given) is what any other key may hold."""

    name: str
    doc: str
    fields: tuple[Entry, ...] = ()
    other: Entry | None = None
    required: bool = False

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in self.fields)

    def __getitem__(self, name: str) -> Any:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


@dataclass(frozen=True)
class ListOf:
    """A list (``[[name]]`` tables or an inline array) whose elements are ``item``."""

    name: str
    doc: str
    item: Entry
    min_items: int = 0
    max_items: int | None = None
    required: bool = False


@dataclass(frozen=True)
class OneOf:
    """A key that may be written in any of several forms (each named ``name``)."""

    name: str
    doc: str
    forms: tuple[Entry, ...] = field(default_factory=tuple)
    required: bool = False


Entry = Union[Field, Table, ListOf, OneOf]  # noqa: UP007 - a runtime alias, used before 3.10


def side_list(side: str, key: str, item: Table) -> Table:
    """A side (``attacker``, ``defender``) that is one required, non-empty list."""
    doc = f"the {side}'s {key}"
    return Table(side, doc, (ListOf(key, doc, item, 1, required=True),), required=True)


def decimal_of(value: float) -> Decimal:
    """The decimal a designer wrote for ``value``: TOML's ``0.1`` is the float nearest
    0.1, whose shortest repr is ``0.1`` again."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@functools.lru_cache(maxsize=1 << 12)  # pure; a scenario with ranges asks it per combination
def is_multiple(value: float, step: float) -> bool:
    try:
        return decimal_of(value) % decimal_of(step) == 0
    except InvalidOperation:
        return False


def range_text(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"{_grouped(lo)}..{_grouped(hi)}"
    if lo is None and hi is None:
        return "a finite number"
    return f">= {_grouped(lo)}" if lo is not None else f"<= {_grouped(hi)}"


def _grouped(value: Any) -> str:
    """A bound as a reader writes it: ``1,000,000`` reads better than ``1000000`` (and
    than TOML's ``1_000_000``, which is a programmer's spelling)."""
    return f"{value:,}" if isinstance(value, int) and abs(value) >= 10_000 else str(value)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


# -- documentation ---------------------------------------------------------------------


def rows(entry: Entry, prefix: str = "") -> Iterator[tuple[str, Field]]:
    """Every value of the tree as (dotted path, field); lists add ``[]``, other keys
    ``<name>``, alternative forms each their own rows."""
    if isinstance(entry, Field):
        yield prefix, entry
    elif isinstance(entry, Table):
        for f in entry.fields:
            yield from rows(f, _join(prefix, f.name))
        if entry.other is not None:
            yield from rows(entry.other, _join(prefix, entry.other.name))
    elif isinstance(entry, ListOf):
        yield from rows(entry.item, prefix + "[]")
    else:
        seen: set[tuple[str, str]] = set()
        for form in entry.forms:
            for path, f in rows(form, prefix):
                if (path, f.kind) not in seen:
                    seen.add((path, f.kind))
                    yield path, f


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def markdown_table(top: Table) -> str:
    """The key table of a ruleset's docs page: every key, its type, range and default."""
    lines = [
        "| key | type | allowed | default | meaning |",
        "|---|---|---|---|---|",
    ]
    listed = list(rows(top))
    for path, f in listed:
        side, _, rest = path.partition(".")
        if side == "defender" and ("attacker." + rest, f) in listed:
            continue  # written once, as attacker/defender.<rest>
        if side == "attacker" and ("defender." + rest, f) in listed:
            path = "attacker/defender." + rest
        if f.numeric:
            allowed = range_text(f.lo, f.hi)
            if f.step is not None:
                allowed += f", a multiple of {_show(f.step)}"
        elif f.choices:
            allowed = ", ".join(f.choices)
        else:
            allowed = ""
        if f.required:
            default = "required"
        elif f.default is None:
            default = ""
        else:
            default = f"`{_show(f.default)}`"
        lines.append(f"| `{path}` | {KINDS[f.kind]} | {allowed} | {default} | {f.doc} |")
    return "\n".join(lines) + "\n"


# -- JSON Schema -----------------------------------------------------------------------


def json_schema(top: Table, title: str) -> dict[str, Any]:
    """A JSON Schema of scenario files described by ``top``."""
    # Draft 7, with only keywords that mean the same in draft 4 (what older taplo
    # versions, the TOML language server, implement) and in later drafts.
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "title": title}
    schema.update(_schema(top))
    return schema


def _schema(entry: Entry) -> dict[str, Any]:
    if isinstance(entry, Field):
        return _field_schema(entry)
    if isinstance(entry, Table):
        out: dict[str, Any] = {
            "type": "object",
            "description": entry.doc,
            "properties": {f.name: _schema(f) for f in entry.fields},
            "additionalProperties": _schema(entry.other) if entry.other is not None else False,
        }
        required = [f.name for f in entry.fields if f.required]
        if required:
            out["required"] = required
        return out
    if isinstance(entry, ListOf):
        out = {"type": "array", "description": entry.doc, "items": _schema(entry.item)}
        if entry.min_items:
            out["minItems"] = entry.min_items
        if entry.max_items is not None:
            out["maxItems"] = entry.max_items
        return out
    return {"description": entry.doc, "anyOf": [_schema(f) for f in entry.forms]}


#: What a scenario writes for a value it does not know (docs/unknowns.md; read by
#: simulator.scenario.unknowns): a range of whole numbers ("20..30"), or values with
#: weights or chances ("3:1, 5:2", "rain:30%").
RANGE_PATTERN = r"\s*([+-]?\d+)\s*\.\.\s*([+-]?\d+)\s*"
_ENTRY_PATTERN = r"[^:,\s][^:,]*?\s*:\s*[+-]?\d+(?:\.\d+)?\s*%?"
WEIGHTED_PATTERN = rf"\s*{_ENTRY_PATTERN}\s*(?:,\s*{_ENTRY_PATTERN}\s*)*"
#: The JSON Schema forms of an unknown value, beside a field's own (docs/unknowns.md).
UNKNOWN_FORMS: list[dict[str, Any]] = [
    {"type": "string", "pattern": f"^(?:{RANGE_PATTERN}|{WEIGHTED_PATTERN})$"},
    {
        "type": "object",
        "required": ["values"],
        "properties": {
            "values": {"type": "array", "minItems": 1},
            "weights": {"type": "array", "items": {"type": "number", "minimum": 0}},
        },
        "additionalProperties": False,
    },
]


def _field_schema(f: Field) -> dict[str, Any]:
    known = _known_field_schema(f)
    if f.kind in ("int", "number", "choice", "bool"):
        # A value the scenario does not know: a range or a distribution of its values.
        described = {"description": known.pop("description")}
        if "default" in known:
            described["default"] = known.pop("default")
        return {**described, "anyOf": [known, *UNKNOWN_FORMS]}
    if f.kind == "names":
        items = known["anyOf"][0]["items"]
        known["anyOf"][0]["items"] = {"anyOf": [items, UNKNOWN_FORMS[0]]}
    return known


def _known_field_schema(f: Field) -> dict[str, Any]:
    out: dict[str, Any] = {"description": f.doc}
    if f.kind in ("int", "number"):
        out["type"] = "integer" if f.kind == "int" else "number"
        out["minimum"], out["maximum"] = f.lo, f.hi
        if f.step is not None and _binary(f.step):
            out["multipleOf"] = f.step
    elif f.kind == "bool":
        out["type"] = "boolean"
    elif f.kind == "text":
        out["type"] = "string"
    elif f.kind == "choice":
        out["enum"] = list(f.choices)
    elif f.kind == "names":
        # A list of names, or one string of comma-separated names.
        out["anyOf"] = [
            {"type": "array", "items": {"enum": list(f.choices)}},
            {"type": "string"},
        ]
    else:  # point
        coordinate = {"type": "integer", "minimum": f.lo, "maximum": f.hi}
        out.update(type="array", items=coordinate, minItems=2, maxItems=2)
    if f.default is not None:
        out["default"] = list(f.default) if isinstance(f.default, tuple) else f.default
    return out


def _binary(step: float) -> bool:
    """Whether ``multipleOf`` can be checked exactly in binary floating point (0.5 can,
    0.01 cannot: 0.07 / 0.01 is not a whole number in floats)."""
    denominator = Fraction(repr(step)).denominator
    return denominator & (denominator - 1) == 0


def package_toml(package: str, name: str = "units.toml") -> dict[str, Any]:
    """A TOML file shipped inside ``package`` (a ruleset's unit table)."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return tomllib.loads(text)
