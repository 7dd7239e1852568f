"""Option values read without pydantic where the answer is plain.

typer (from 0.26) coerces every parameter's value through a pydantic ``TypeAdapter``,
built for every parameter of the command run, even those left out: importing pydantic
and building the adapters is about 0.13 s CPU of every command, a seventh of a whole
``odds`` query. Most values need nothing of it: text is text, ``100000`` is an integer
inside its range, an option left out is None. :func:`install` has typer read those
directly and hand everything else (a sign, an underscore, a value out of range, a path,
a choice) to typer's own coercion, built when such a value first comes: the answers and
the error messages are typer's either way (tests/test_cli_options.py compares them).
Nothing happens with a typer that does not coerce this way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: A value read as an integer without pydantic: plain ASCII digits, a sign or underscore
#: left to pydantic (whose rules for them differ from ``int()``'s). Up to 18 digits fits
#: every range an option has.
_PLAIN_INTEGER = re.compile(r"[0-9]{1,18}")
#: What a plain reading could not decide: typer's own coercion answers.
_UNDECIDED = object()


def install() -> None:
    """Make typer build :class:`PlainFirst` coercions (once; a no-op on a typer without
    pydantic coercion)."""
    try:
        import typer.core as core
        from typer._coercion import RuntimeParam
    except ImportError:
        return
    typers_own: Any = getattr(core, "build_runtime_param", None)
    if typers_own is None or getattr(typers_own, "plain_first", False):
        return

    @dataclass(frozen=True)
    class PlainFirst(RuntimeParam):
        """A parameter's coercion that reads plain values itself and builds typer's own
        (pydantic's) for the others, on first need."""

        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            read = plain_value(self.annotation, self.parameter_info, value)
            if read is not _UNDECIDED:
                return read
            own = self.__dict__.get("_own")
            if own is None:
                own = typers_own(self.descriptor)
                object.__setattr__(self, "_own", own)
            return own._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: Any) -> Any:
        info = descriptor.parameter_info
        if (
            descriptor.annotation in _PLAIN_TYPES
            and descriptor.file_annotation is None
            and getattr(info, "parser", None) is None
        ):
            return PlainFirst(
                parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor
            )
        return typers_own(descriptor)

    build.plain_first = True  # type: ignore[attr-defined]
    core.build_runtime_param = build


#: The annotations read plainly (others go to typer's own coercion at once).
_PLAIN_TYPES: tuple[Any, ...] = (str, int, float, bool, list[str])


def plain_value(annotation: Any, info: Any, value: Any) -> Any:
    """``value`` coerced to ``annotation`` where that is plain, else :data:`_UNDECIDED`.
    (None never comes here: typer answers it before coercing.)"""
    if annotation is str:
        return value if type(value) is str else _UNDECIDED
    if annotation is bool:
        return value if type(value) is bool else _UNDECIDED
    if annotation == list[str]:
        if isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
            return list(value)
        return _UNDECIDED
    if annotation is int and not getattr(info, "clamp", False):
        if type(value) is str and _PLAIN_INTEGER.fullmatch(value):
            number = int(value)
        elif type(value) is int:
            number = value
        else:
            return _UNDECIDED
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        if (low is not None and number < low) or (high is not None and number > high):
            return _UNDECIDED  # typer's message says the range
        return number
    return _UNDECIDED  # a float's text, or anything else: typer's own rules
