"""The two sides a study asks about (``--side``): the one whose odds it reports."""

from __future__ import annotations

from ...errors import BattleOddsError

SIDES = ("attacker", "defender")


def check_side(side: str) -> str:
    if side not in SIDES:
        raise BattleOddsError(f"--side {side}: expected attacker or defender")
    return side
