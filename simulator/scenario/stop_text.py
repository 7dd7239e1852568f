"""A side's stop rule written on one line (``odds``/``run --attacker-retreat``): the
clauses of ``[attacker.retreat]`` in words, separated by commas::

    at most 5, after 3          at_most = 5, after = 3
    at most 30%                 at_most = "30%"
    gone knight                 gone = "knight"
    outnumbered 2               outnumbered = 2.0

A clause may also be written as the key is, ``at_most=5``. The text becomes the table a
scenario file holds, and the ruleset's validator checks its values as a file's
(rulesets/stop_rules.py), its errors naming the option.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import BattleOddsError, did_you_mean

#: Each clause's key, by the words that begin it.
CLAUSES = {"at most": "at_most", "after": "after", "gone": "gone", "outnumbered": "outnumbered"}
_CLAUSE = re.compile(
    r"^(?P<key>at[ _]+most|after|gone|outnumbered)(?:\s*=\s*|\s+)(?P<value>\S.*)$", re.I
)
_WHOLE = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)$")
EXPECTED = "expected 'at most N', 'at most P%', 'after N', 'gone TYPE' or 'outnumbered X'"


def _value(key: str, text: str) -> Any:
    """A clause's value as a scenario file writes it: a number where the key takes one
    (the validator says what is wrong with any other), the type named as text."""
    if key == "gone":
        return text
    if _WHOLE.match(text):
        return int(text)
    if key == "outnumbered" and _NUMBER.match(text):
        return float(text)
    return text  # "30%", or a mistake the validator names


def parse_retreat(text: str, option: str) -> dict[str, Any]:
    """The ``retreat`` table of ``text`` (``"at most 5, after 3"``), or one line naming
    ``option`` and the clause at fault."""
    table: dict[str, Any] = {}
    clauses = [c.strip() for c in text.split(",")]
    if not any(clauses):
        raise BattleOddsError(f"{option}: an empty stop rule: {EXPECTED}")
    for clause in clauses:
        match = _CLAUSE.match(clause)
        if match is None:
            first = clause.split(" ")[0].lower() if clause else ""
            hint = did_you_mean(first, [w.split()[0] for w in CLAUSES], list_valid=False)
            raise BattleOddsError(f"{option}: '{clause}': {EXPECTED}{hint}")
        key = CLAUSES[" ".join(re.split(r"[ _]+", match["key"].lower()))]
        if key in table:
            raise BattleOddsError(f"{option}: '{clause}': {key.replace('_', ' ')} given twice")
        table[key] = _value(key, match["value"].strip())
    return table


def retreat_words(table: dict[str, Any]) -> str:
    """The one-line text of a ``retreat`` table (what :func:`parse_retreat` reads)."""
    return ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in table.items())
