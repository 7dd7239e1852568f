"""The two sides a study asks about (``side``): the one whose odds it reports."""

from __future__ import annotations

from ...errors import ParameterError

SIDES = ("attacker", "defender")


def check_side(side: str) -> str:
    if side not in SIDES:
        raise ParameterError("side", side, "expected attacker or defender")
    return side
