"""``--help`` that reads well at 80 columns.

Typer's rich help shows a type for every option (``<bool>`` on a flag, ``<int range>``)
and ranges as inequalities (``[0<=x<=9223372036854775807]``), and keeps a docstring's line
breaks, so a description can break mid-sentence. :func:`tidy` changes one command's
parameters and text in place before its help is drawn: no type column (it left the help a
few words a line at 80 columns), ranges in words after the help (``[1 to 100 billion]``,
``[0 or more]``), numeric defaults with thousands separators (``[default: 2,000]``) and
each paragraph of a description one line for the terminal to wrap.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

#: Above this a range's end is not a limit a reader needs to see as digits.
HUGE = 10**12
_NAMES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"))


def number_words(value: float) -> str:
    """0.5, 100, 10,000, 100 billion: a range's end as a reader says it."""
    if isinstance(value, float) and not value.is_integer():
        # Plain digits, as many as the number has: 0.000000001, never "0." or 1e-09.
        return f"{value:.15f}".rstrip("0")
    whole = int(value)
    for size, name in _NAMES:
        if whole >= size and whole % size == 0:
            return f"{whole // size:,} {name}"
    return f"{whole:,}"


def default_of(function: Callable[..., Any], parameter: str) -> Any:
    """The default of ``function``'s ``parameter``: where a command leaves an option unset
    (None) and the function decides, its help says this value, read from the function."""
    return inspect.signature(function).parameters[parameter].default


def default_words(value: float) -> str:
    """``(default 256,000)``: a default in a help text, in plain digits."""
    return f"(default {value:,})" if float(value).is_integer() else f"(default {value:g})"


def range_words(low: float | None, high: float | None) -> str | None:
    """A range in words: ``1 to 100 billion``, ``0 or more`` (an end past HUGE is none)."""
    if high is not None and (math.isinf(high) or high >= HUGE * 1000):
        high = None
    if low is None and high is None:
        return None
    if high is None:
        return f"{number_words(low)} or more"  # type: ignore[arg-type]
    if low is None:
        return f"at most {number_words(high)}"
    return f"{number_words(low)} to {number_words(high)}"


def paragraphs(text: str | None) -> str | None:
    """Each paragraph of ``text`` on one line (blank lines between paragraphs kept)."""
    if not text:
        return text
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))


#: Help texts made when help is drawn, each under the stand-in that marks its place.
_WHEN_DRAWN: dict[str, Callable[[], str]] = {}


def when_drawn(make: Callable[[], str]) -> str:
    """A stand-in for the help text ``make`` returns, made only when help is drawn: an
    option's help is built with every command run, and some texts cost a query time
    (the ruleset names read every installed distribution's metadata, 0.01 s)."""
    stand_in = f"<help-text-{len(_WHEN_DRAWN)}>"
    _WHEN_DRAWN[stand_in] = make
    return stand_in


def _filled_in(text: str | None) -> str | None:
    for stand_in, make in _WHEN_DRAWN.items():
        if text and stand_in in text:
            text = text.replace(stand_in, make())
    return text


def tidy(command: Any) -> Any:
    """The command with its help text and parameters made readable (idempotent)."""
    if getattr(command, "_tidy", False):
        return command
    command._tidy = True
    draw_help = command.format_help

    def format_help(ctx: Any, formatter: Any) -> None:
        for param in command.params:
            if hasattr(param, "help"):
                param.help = _filled_in(param.help)
        draw_help(ctx, formatter)

    command.format_help = format_help
    command.help = paragraphs(command.help)
    if getattr(command, "short_help", None):
        command.short_help = paragraphs(command.short_help)
    for param in command.params:
        tidy_parameter(param)
    # --help is made when help is asked for, not one of the params.
    make_help_option = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make_help_option(ctx)
        if option is not None:
            tidy_parameter(option)
        return option

    command.get_help_option = get_help_option
    return command


def tidy_parameter(param: Any) -> None:
    """No type column (the option's name and help say what it takes: it only narrowed the
    help to a few words a line); a range as words at the end of the help."""
    param.display_type_rich = lambda ctx: None
    param._get_number_range_help_str = lambda: None
    text = paragraphs(getattr(param, "help", None)) or ""
    words = range_words(getattr(param, "min", None), getattr(param, "max", None))
    if words:
        text = f"{text} [{words}]".strip()
    if hasattr(param, "help"):
        param.help = text or None
    default = getattr(param, "default", None)
    if (
        isinstance(default, int | float)
        and not isinstance(default, bool)
        and getattr(param, "show_default", None) is not False
        and not getattr(param, "is_flag", False)
    ):
        # [default: 256,000], not click's [default: 256000]; a seed is a name, not a
        # quantity: its digits as they are written in a scenario.
        shown = str(default) if param.name == "seed" else number_words(default)
        param._get_default_string = lambda *args, **kwargs: shown
