"""The best retreat rule as text (``battle-odds retreat``): the values of the best rule,
of never retreating and of the side's own rule, what the best rule gains over each, the
battle's chances under it and the rule in words, wrapped to the terminal's width."""

from __future__ import annotations

import textwrap
from typing import Any


def _number(x: float) -> str:
    return f"{x:,.4f}"


def retreat_lines(result: Any, width: int) -> list[str]:
    """The answer's lines, none wider than ``width`` (at least 40)."""
    width = max(40, width)
    rule = result.rule
    side = result.side
    said = f"{result.win_value:g} ({result.win_value_said})"
    prices = ", ".join(f"{name} {price:g}" for name, price in result.prices.items())
    rows = [
        ("best rule", rule.value, None),
        ("never retreat", result.never, rule.value - result.never),
    ]
    if result.own is not None:
        rows.append(("your rule", result.own, rule.value - result.own))
    lines = [f"Best retreat rule for the {side}: {result.scenario.name}"]
    lines += textwrap.wrap(
        f"Value = {said} if the {side} wins, less the price of each of its men lost "
        f"({prices}); exact.",
        width,
    )
    lines.append("")
    lines.append(f"{'':<15}{'value':>12}{'best gains':>13}")
    for name, value, gain in rows:
        gained = "" if gain is None else _number(gain)
        lines.append(f"{name:<15}{_number(value):>12}{gained:>13}".rstrip())
    if result.own_words is not None:
        lines += textwrap.wrap(f"(your rule: {result.own_words})", width)
    lines.append("")
    chances = [
        ("wins", rule.won),
        ("loses", rule.lost),
        ("draw", rule.drawn),
        ("withdraws", rule.withdrew),
        ("they withdraw", rule.they_withdrew),
    ]
    said_chances = ", ".join(
        f"{name} {p:.2%}" for name, p in chances if name in ("wins", "withdraws") or p > 0
    )
    lines += textwrap.wrap(f"Under the best rule the {side} {said_chances}.", width)
    lines += textwrap.wrap(f"The rule: {result.words()}.", width)
    lines += textwrap.wrap(f"{rule.states:,} positions solved in {result.seconds:.2f} s.", width)
    return lines
