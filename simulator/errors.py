"""Errors a user can act on.

Every problem with input becomes a :class:`BattleOddsError` whose text is one line:
where (file and line, or the key or option), what was wrong, what was expected and,
for a misspelt name, the nearest valid one. The command line prints it and exits 2.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class BattleOddsError(Exception):
    """Bad input: the message is for the user, not a traceback."""


def nearest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name closest to ``name``, if any is close enough to be a typo."""
    matches = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    valid = sorted(valid)
    guess = nearest(name, valid)
    if guess is not None:
        return f" (did you mean '{guess}'?)"
    return f" (valid: {', '.join(valid)})" if len(valid) <= 12 else ""


@dataclass(frozen=True)
class Source:
    """Where scenario data came from, to point errors at a file line or an option."""

    label: str
    text: str = ""
    path: Path | None = None

    def line_of(self, key: str, value: object = None) -> int | None:
        """Best-effort line of ``key`` (the last part of a dotted path) in the text.

        TOML parsers do not keep positions, so we look for ``key =`` or a table
        header naming it, preferring a line that also mentions ``value``.
        """
        if not self.text:
            return None
        leaf = key.split(".")[-1].split("[")[0]
        if not leaf:
            return None
        needle = re.compile(
            rf"""(^|[\s{{,\[."'])["']?{re.escape(leaf)}["']?\s*(=|\]|$)""", re.MULTILINE
        )
        lines = self.text.splitlines()
        hits = [i for i, line in enumerate(lines, 1) if needle.search(line.split("#")[0])]
        if value is not None:
            token = str(value)
            for i in hits:
                if token in lines[i - 1]:
                    return i
            for i, line in enumerate(lines, 1):
                if re.search(rf"\b{re.escape(token)}\b", line.split("#")[0]):
                    return i
        return hits[0] if hits else None

    def error(self, key: str, message: str, value: object = None) -> BattleOddsError:
        """An error at ``key`` (a dotted path like ``attacker.units[1].men``)."""
        line = self.line_of(key, value) if self.path is not None else None
        where = f"{self.label}:{line}" if line else self.label
        return BattleOddsError(f"{where}: {key}: {message}")
