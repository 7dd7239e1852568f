"""Errors a user can act on.

Every problem with input becomes a :class:`BattleOddsError` whose text is one line:
where (file and line, or the key or option), what was wrong, what was expected and,
for a misspelt name, the nearest valid one. The command line prints it and exits 2.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .locate import find_line


class BattleOddsError(Exception):
    """Bad input: the message is for the user, not a traceback."""


#: Control characters (C0, DEL, C1): escape sequences that retitle a terminal, clear it
#: or move its cursor begin with one.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its control characters written as escapes (``\x1b``), so that a
    name read from a file reaches the terminal as the characters it holds, never as an
    escape sequence the terminal obeys."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def nearest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name closest to ``name``, if any is close enough to be a typo."""
    matches = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, valid: Iterable[str], list_valid: bool = True) -> str:
    """`` (did you mean 'x'?)`` for a near miss; otherwise the valid names if few."""
    valid = sorted(valid)
    guess = nearest(name, valid)
    if guess is not None:
        return f" (did you mean '{guess}'?)"
    return f" (valid: {', '.join(valid)})" if list_valid and len(valid) <= 12 else ""


@dataclass(frozen=True)
class Source:
    """Where scenario data came from, to point errors at a file line or an option."""

    label: str
    text: str = ""
    path: Path | None = None
    #: For data built from command-line options (``odds``): the option a dotted key came
    #: from, so that its errors name the option.
    option_of: Callable[[str], str | None] | None = None

    def line_of(self, key: str, value: object = None) -> int | None:
        """Best-effort line of a dotted key (``attacker.units[1].men.knigt``) in the text.

        TOML parsers keep no positions. :func:`simulator.locate.find_line` follows the
        whole path, list indices included; where it cannot (a key written in a form it
        does not follow), each part is looked for by name (as a ``[table]`` header or a
        ``key =``) after the line of the part before, without leaving that part's table.
        A missing key points at the deepest table that exists.
        """
        if not self.text:
            return None
        exact = find_line(self.text, key)
        if exact is not None:
            return exact
        lines = [line.split("#")[0] for line in self.text.splitlines()]
        parts = [p for p in re.split(r"[.\[\]]", key) if p and not p.isdigit()]
        found: int | None = None
        position = 0
        for depth, part in enumerate(parts):
            prefix = ".".join(parts[: depth + 1])
            assignment = re.compile(rf"""(^|[\s{{,])["']?{re.escape(part)}["']?\s*=""")
            for i in range(position, len(lines)):
                header = re.match(r"\s*\[\[?\s*([^\]]+?)\s*\]", lines[i])
                if header:
                    name = header.group(1).replace('"', "")
                    if name == prefix or name.startswith(prefix + "."):
                        found, position = i + 1, i + 1
                        break
                    if found is not None and depth and not name.startswith(".".join(parts[:depth])):
                        break  # left the enclosing table: the key is not there
                elif assignment.search(lines[i]):
                    found, position = i + 1, i
                    break
        if value is not None and found is not None:
            token = str(value)
            for i in range(found - 1, min(found + 3, len(lines))):
                if token in lines[i]:
                    return i + 1
        return found

    def error(self, key: str, message: str, value: object = None) -> BattleOddsError:
        """An error at ``key`` (a dotted path like ``attacker.units[1].men``)."""
        # A file's text, or text pasted into the page (no path): its line.
        line = self.line_of(key, value) if self.text else None
        where = f"{self.label}:{line}" if line else self.label
        option = self.option_of(key) if self.option_of is not None else None
        if option:
            # A one-line army has no keys the user wrote: say the place in its words.
            if key.rsplit(".", 1)[-1] in option.replace("-", "_"):
                return BattleOddsError(f"{option}: {message}")  # --set rules: the key itself
            return BattleOddsError(f"{option}: {key_words(key, option)}: {message}")
        return BattleOddsError(f"{where}: {key}: {message}")


#: A list of a one-line army's data by what one of its entries is to the user.
_ENTRY = {"men": "item", "units": "unit", "stacks": "stack", "blocks": "block"}
_INDEXED = re.compile(r"^(\w+)\[(\d+)\]$")


def key_words(key: str, option: str = "") -> str:
    """A data key of an option's value in words, counted from 1 as the user counts:
    ``attacker.units[0].men[0].count`` of ``--attacker`` is "unit 1, item 1, count";
    ``battle.terrain`` of ``--terrain`` is "terrain"."""
    parts = re.findall(r"[^.\[\]]+(?:\[\d+\])?", key.replace("].", "]."))
    said = []
    for number, part in enumerate(parts):
        if number == 0 and part in ("attacker", "defender", "battle", "policy"):
            continue  # the option names the side or the table
        if number == 1 and part == "retreat" and option.endswith("-retreat"):
            continue  # --attacker-retreat names the table too
        indexed = _INDEXED.match(part)
        if indexed:
            name, index = indexed.groups()
            said.append(f"{_ENTRY.get(name, name.rstrip('s'))} {int(index) + 1}")
        else:
            said.append(part.replace("_", " "))
    return ", ".join(said) or option


class ParameterError(BattleOddsError):
    """A bad value of a parameter, said in the caller's words: a Python caller reads the
    parameter's name (``confidence=1.5: expected a probability``), the command line its
    flag (``--confidence 1.5: ...``, :func:`simulator.cli.options.flag_of`). ``value``:
    the value as shown (None: the message names the parameter alone); other parameters
    the message names are written ``{name}`` in ``expected`` (``{name=}`` before a
    value: ``name=`` or ``--flag ``); ``whole``: ``expected`` is the whole message."""

    def __init__(self, parameter: str, value: object, expected: str, whole: bool = False) -> None:
        self.parameter, self.value, self.expected, self.whole = parameter, value, expected, whole
        super().__init__(self.words())

    def words(self, flag_of: Callable[[str], str] | None = None) -> str:
        """The message with every parameter named by ``flag_of`` (None: its Python name)."""
        names = _Names(flag_of)
        said = _PLACES.sub(lambda m: names[m[1]] if m[1] else m[0][0], self.expected)
        if self.whole:
            return said
        if self.value is None:
            return f"{names[self.parameter]}: {said}"
        return f"{names[self.parameter + '=']}{self.value}: {said}"

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt whole from its parts when pickled (a Dask worker's error).
        return (_rebuilt, (type(self), self.parameter, self.value, self.expected, self.whole))

    @classmethod
    def naming(cls, parameter: str, error: BattleOddsError) -> ParameterError:
        """``error`` of a helper that was told ``parameter`` as the place it speaks of
        (``ruleset: unknown ruleset 'x'``, ``checkpoint out: is a folder``), as an error
        naming the parameter."""
        text = literal(str(error))
        place, found, expected = text[len(parameter) :].partition(": ")
        if not text.startswith(parameter) or not found or place[:1] not in ("", " "):
            return cls(parameter, None, text, whole=True)
        return cls(parameter, place.strip() or None, expected)


def _rebuilt(
    kind: type[ParameterError], parameter: str, value: object, expected: str, whole: bool
) -> ParameterError:
    error = ParameterError.__new__(kind)
    ParameterError.__init__(error, parameter, value, expected, whole)
    return error


#: A parameter named in a message, ``{name}`` or ``{name=}``; ``{{`` and ``}}`` are
#: braces (text a user wrote, escaped with :func:`literal`); other braces stay as they are.
_PLACES = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*=?)\}")


def literal(text: str) -> str:
    """``text`` (a path, a name a user wrote) as it reads in a :class:`ParameterError`'s
    message, its braces never taken for a parameter's name."""
    return text.replace("{", "{{").replace("}", "}}")


class _Names(dict[str, str]):
    """``{name}`` in a message -> the parameter's name in the caller's words (``flag_of``:
    the command line's; None: Python's); ``{name=}``, before its value, -> ``name=`` or
    ``--flag ``."""

    def __init__(self, flag_of: Callable[[str], str] | None) -> None:
        super().__init__()
        self.flag_of = flag_of

    def __missing__(self, name: str) -> str:
        parameter = name.removesuffix("=")
        if self.flag_of is None:
            return name
        flag = self.flag_of(parameter)
        return f"{flag} " if name.endswith("=") else flag
