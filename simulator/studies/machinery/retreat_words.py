"""A retreat rule in words (for each count of the other side's men, the counts of the
side's own men at which it withdraws) and, for a battle in progress, stop now or go on
(``battle-odds retreat``, exact or simulated)."""

from __future__ import annotations

from typing import Any


def threshold_words(choices: dict[tuple[int, int], set[str]]) -> str | None:
    """``withdraw with 1 to 3 left while they have 5 to 8`` from the decisions at
    (own men, their men), or None when one count of men has both decisions."""
    if any(len(c) > 1 for c in choices.values()):
        return None
    withdraw_at: dict[int, str | None] = {}
    for e in sorted({e for _, e in choices}):
        withdraw = sorted(o for (o, e2), c in choices.items() if e2 == e and "withdraw" in c)
        withdraw_at[e] = _counts(withdraw) if withdraw else None
    parts = []
    for low, high, counts in _runs(withdraw_at):
        if counts is not None:
            they = f"{low}" if low == high else f"{low} to {high}"
            parts.append(f"{counts} left while they have {they}")
    return "withdraw with " + "; or ".join(parts) if parts else "never withdraw"


def _counts(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0 to 2 or 5``."""
    spans: list[list[int]] = []
    for v in values:
        if spans and spans[-1][1] == v - 1:
            spans[-1][1] = v
        else:
            spans.append([v, v])
    return " or ".join(f"{a}" if a == b else f"{a} to {b}" for a, b in spans)


def _runs(at: dict[int, str | None]) -> list[tuple[int, int, str | None]]:
    """Consecutive enemy counts with the same withdrawals, as (low, high, what)."""
    runs: list[tuple[int, int, str | None]] = []
    for e, k in sorted(at.items()):
        if runs and runs[-1][2] == k and runs[-1][1] == e - 1:
            runs[-1] = (runs[-1][0], e, k)
        else:
            runs.append((e, e, k))
    return runs


def stop_now_or_go_on(
    from_step: int, ruleset: str, go_on: float, low: float | None, high: float | None
) -> dict[str, Any] | None:
    """For a battle in progress (``from_step`` > 0): withdrawing now, before the next
    step, is worth 0 (the armies are written as they stand, so what they lost before
    is spent either way, and withdrawing takes nothing more where the ruleset's text
    says a withdrawal simply ends the battle), against going on under the best rule
    (its value, with its 95% interval where estimated). ``choice``: the larger, or
    ``too close to call`` where the interval holds 0. None for a battle not begun (no
    side withdraws before the first step) or in blocks (a withdrawal there may cost
    the field blocks without a road: not valued before a phase is fought)."""
    if from_step <= 0 or ruleset == "blocks":
        return None
    if low is not None and high is not None and low <= 0.0 <= high:
        choice = "too close to call"
    else:
        choice = "go on" if go_on > 0.0 else "stop now"
    return {
        "step": from_step,
        "stop_now": 0.0,
        "go_on": {"value": go_on, "low": low, "high": high},
        "choice": choice,
    }


def stop_now_words(said: dict[str, Any] | None) -> str | None:
    """The answer to "stop now or go on?" in a sentence."""
    if said is None:
        return None
    go = said["go_on"]
    interval = "" if go["low"] is None else f" ({go['low']:,.3f} to {go['high']:,.3f})"
    return (
        f"Stop now or go on (after step {said['step']}): stopping now is worth 0 (the "
        f"battle ends as it stands); going on under the best rule {go['value']:,.3f}"
        f"{interval}: {said['choice']}."
    )
