"""A retreat rule in words: for each count of the other side's men, the counts of the
side's own men at which it withdraws (``battle-odds retreat``, exact or simulated)."""

from __future__ import annotations


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
