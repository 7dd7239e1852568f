"""Option values read without pydantic where the answer is plain.

typer (from 0.26) coerces every parameter's value through a pydantic ``TypeAdapter``,
built for every parameter of the command run, even those left out: importing pydantic
and building the adapters is about 0.13 s CPU of every command, a seventh of a whole
``odds`` query. Most values need nothing of it: text is text, ``100000`` is an integer
inside its range, an option left out is None. :func:`install` has typer read those
directly and hand everything else (a sign, an underscore, a value out of range, a
choice) to typer's own coercion, built when such a value first comes: the answers and
the error messages are typer's either way (tests/test_cli_options.py compares them).
Nothing happens with a typer that does not coerce this way.

A path (a scenario file, ``--output``) is read plainly when it passes its parameter's
checks, made by typer's own path check given ``Path(value)`` (what pydantic's path gives
for text, and already a path, which typer checks without pydantic). A path that fails
one goes to typer's own coercion, which says why in its words. Every command that
takes a scenario file imported pydantic for this alone (0.06 s of a warm ``run``, before
a cold run's compile notice too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
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
_PLAIN_TYPES: tuple[Any, ...] = (str, int, float, bool, list[str], Path, list[Path])


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
    if annotation is Path:
        return _plain_path(info, value)
    if annotation == list[Path]:
        if not isinstance(value, (list, tuple)):
            return _UNDECIDED
        paths = [_plain_path(info, v) for v in value]
        return _UNDECIDED if any(p is _UNDECIDED for p in paths) else paths
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


def _plain_path(info: Any, value: Any) -> Any:
    """``Path(value)`` where text ``value`` passes the checks for ``info``, made by typer's
    own ``coerce_cli_path`` given ``Path(value)`` (a path already, which it checks without
    pydantic), else :data:`_UNDECIDED`: a failing path is read again by typer's own
    coercion, whose message names the text as typed. Text only, not empty, no NUL:
    pydantic's rules for anything else are its own; so is a parameter of another path
    type."""
    if type(value) is not str or not value or "\0" in value:
        return _UNDECIDED
    if getattr(info, "path_type", None) is not None:
        return _UNDECIDED
    try:
        from typer._click.exceptions import BadParameter
        from typer._param_types import coerce_cli_path
    except ImportError:  # a typer that checks paths elsewhere: its own coercion answers
        return _UNDECIDED
    try:
        return coerce_cli_path(Path(value), info, path_type=Path)
    except BadParameter:
        return _UNDECIDED
