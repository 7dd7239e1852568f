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
    if getattr(result, "method", "exact") == "simulated":
        return simulated_lines(result, width)
    rule = result.rule
    side = result.side
    rows = [
        ("best rule", rule.value, None),
        ("never retreat", result.never, rule.value - result.never),
    ]
    if result.own is not None:
        rows.append(("your rule", result.own, rule.value - result.own))
    lines = textwrap.wrap(f"Best retreat rule for the {side}: {result.scenario.name}", width)
    lines += textwrap.wrap(f"{value_words(result)}; exact.", width)
    lines.append("")
    lines.append(f"{'':<15}{'value':>12}{'best gains':>13}")
    for name, value, gain in rows:
        gained = "" if gain is None else _number(gain)
        lines.append(f"{name:<15}{_number(value):>12}{gained:>13}".rstrip())
    if result.own_words is not None:
        lines += textwrap.wrap(f"(your rule: {result.own_words})", width)
    lines.append("")
    lines += textwrap.wrap(chances_words(result), width)
    lines += textwrap.wrap(f"The rule: {result.words()}.", width)
    lines += _stop_now(result, width)
    lines += textwrap.wrap(f"{rule.states:,} positions solved in {result.seconds:.2f} s.", width)
    return lines


def value_words(result: Any) -> str:
    """What the value counts: ``Value = W (given) if the attacker wins, less ...``."""
    said = f"{result.win_value:g} ({result.win_value_said})"
    prices = ", ".join(f"{name} {price:g}" for name, price in result.prices.items())
    return (
        f"Value = {said} if the {result.side} wins, less the price of each of its men lost "
        f"({prices})"
    )


def chances_words(result: Any) -> str:
    """``Under the best rule the attacker wins 82.25%, withdraws 13.64%, ...``."""
    if getattr(result, "method", "exact") == "simulated":
        o = result.answer.outcomes
        won, lost, drawn = o["win"], o["lose"], o["draw"]
        withdrew, they_withdrew = o["withdrew"], o["they_withdrew"]
    else:
        rule = result.rule
        won, lost, drawn = rule.won, rule.lost, rule.drawn
        withdrew, they_withdrew = rule.withdrew, rule.they_withdrew
    chances = [
        ("wins", won),
        ("loses", lost),
        ("draw", drawn),
        ("withdraws", withdrew),
        ("they withdraw", they_withdrew),
    ]
    said = ", ".join(
        f"{name} {p:.2%}" for name, p in chances if name in ("wins", "withdraws") or p > 0
    )
    return f"Under the best rule the {result.side} {said}."


def _stop_now(result: Any, width: int) -> list[str]:
    from ..studies.machinery.retreat_words import stop_now_words

    said = stop_now_words(result.stop_now())
    return [] if said is None else textwrap.wrap(said, width)


def _interval(e: Any) -> str:
    return f"{e.low:,.3f} to {e.high:,.3f}"


def simulated_lines(result: Any, width: int) -> list[str]:
    """The simulated rule's lines: each value and gain with its 95% interval."""
    width = max(40, width)
    a = result.answer
    side = result.side
    lines = textwrap.wrap(f"Best retreat rule for the {side}: {result.scenario.name}", width)
    lines += textwrap.wrap(
        f"{value_words(result)}; simulated: fitted on {a.paths:,} battles, valued on "
        f"{a.fresh:,} fresh ones (95% intervals).",
        width,
    )
    lines.append("")
    rows = [("best rule", a.value, None), ("never retreat", a.never, a.gain_over_never)]
    if a.own is not None:
        rows.append(("your rule", a.own, a.gain_over_own))
    for name, value, gain in rows:
        lines += textwrap.wrap(
            f"{name}: {value.value:,.3f} ({_interval(value)})", width, subsequent_indent="  "
        )
        if gain is not None:
            lines += textwrap.wrap(
                f"  best gains {gain.value:,.3f} ({_interval(gain)})",
                width,
                subsequent_indent="    ",
            )
    if result.own_words is not None:
        lines += textwrap.wrap(f"(your rule: {result.own_words})", width)
    if a.upper is not None:
        lines += textwrap.wrap(
            f"upper bound: {a.upper.value:,.3f} ({_interval(a.upper)}): withdrawing "
            "knowing each battle's future; no rule does better (a loose bound)",
            width,
            subsequent_indent="  ",
        )
    if a.dual is not None:
        lines += textwrap.wrap(
            f"Andersen-Broadie bound: {a.dual.value:,.3f} ({_interval(a.dual)}) on "
            f"{a.dual_battles:,} fresh battles, {a.inner_battles:,} nested after each of "
            "their strikes that changed the men left: no rule does better",
            width,
            subsequent_indent="  ",
        )
    lines.append("")
    lines += textwrap.wrap(chances_words(result), width)
    lines += textwrap.wrap(f"The rule: {result.words()}.", width)
    lines += _stop_now(result, width)
    dates = a.rule.dates
    every = dates[1] - dates[0] if len(dates) > 1 else 1
    looked = "after every step" if every == 1 else f"every {every} steps"
    lines += textwrap.wrap(
        f"The rule is looked at {looked} from step {dates[0] if dates else 1}; its value is "
        f"a lower bound on the best rule's. Seed {a.seed}; "
        f"{a.seconds:.1f} s.",
        width,
    )
    return lines


def both_sides_lines(result: Any, width: int) -> list[str]:
    """Both sides' rules reached by alternate best responses: whether they settled,
    each side's value and gain over never withdrawing (95% intervals), each rule in
    words, the rounds, and the battle's chances under the two rules."""
    width = max(40, width)
    if result.method == "exact":
        return exact_both_lines(result, width)
    a = result.answer
    lines = textwrap.wrap(f"Both sides choosing their retreat rules: {result.scenario.name}", width)
    lines += textwrap.wrap(
        "Each side's value = its win value if it wins, less the price of each of its men "
        f"lost; simulated: fitted on {a.battles[0]:,} battles, each new rule judged on "
        f"{a.battles[1]:,} others, valued on {a.battles[2]:,} fresh ones (95% intervals).",
        width,
    )
    lines.append("")
    if a.settled:
        said = (
            f"Settled after {len(a.rounds)} turns: neither side gains by changing its rule "
            "(beyond noise)."
        )
    elif result.partial:
        said = f"Stopped after {len(a.rounds)} turns, before the rules settled: the rules reached."
    else:
        said = (
            f"Did not settle in {len(a.rounds)} turns: a side still gained by changing its "
            "rule; the rules reached."
        )
    lines += textwrap.wrap(said, width)
    for s, side in enumerate(("attacker", "defender")):
        lines.append("")
        value, gain = a.values[s], a.gain_over_never[s]
        lines += _side_lines(
            f"{side} (win worth {result.win_values[s]:g}): {value.value:,.3f} "
            f"({_interval(value)}); gains {gain.value:,.3f} ({_interval(gain)}) over never "
            "withdrawing against the other's rule",
            f"The rule, on the battles the two rules reach: {result.words(s)}.",
            width,
        )
    lines.append("")
    turns = "; ".join(
        f"{r['side']} {r['gain'].value:+,.3f} ({_interval(r['gain'])}), "
        + ("kept" if r["kept"] else "not kept")
        for r in a.rounds
    )
    if turns:
        lines += textwrap.wrap(f"Turns (each new rule's gain over the old): {turns}.", width)
    o = a.outcomes
    lines += _outcome_lines(o, width)
    lines += textwrap.wrap(f"Seed {a.seeds[0]}; {a.seconds:.1f} s.", width)
    return lines


def exact_both_lines(result: Any, width: int) -> list[str]:
    """Both sides' rules by alternate exact best responses: whether they settled, each
    side's value and gain over never withdrawing against the other's rule (exact), the
    rules in words, the turns and the chances under the two rules."""
    r = result.rules
    lines = textwrap.wrap(f"Both sides choosing their retreat rules: {result.scenario.name}", width)
    lines += textwrap.wrap(
        "Each side's value = its win value if it wins, less the price of each of its men "
        "lost; exact (backward induction over the battle's positions, each side's best "
        "response to the other's rule in turn).",
        width,
    )
    lines.append("")
    if r.settled:
        said = (
            f"Settled after {len(r.rounds)} turns: neither side gains by changing its rule "
            "(each rule is the best response to the other's)."
        )
    else:
        said = (
            f"Did not settle in {len(r.rounds)} turns: a side still gained by changing its "
            "rule; the rules reached."
        )
    lines += textwrap.wrap(said, width)
    for s, side in enumerate(("attacker", "defender")):
        lines.append("")
        lines += _side_lines(
            f"{side} (win worth {result.win_values[s]:g}): {_number(r.values[s])}; gains "
            f"{_number(r.values[s] - r.never[s])} over never withdrawing against the "
            "other's rule",
            f"The rule, on the positions the two rules reach: {result.words(s)}.",
            width,
        )
    lines.append("")
    turns = "; ".join(
        f"{t['side']} {t['gain']:+,.4f}, " + ("kept" if t["kept"] else "not kept") for t in r.rounds
    )
    lines += textwrap.wrap(f"Turns (each new rule's gain over the old): {turns}.", width)
    o = r.chances
    lines += _outcome_lines(o, width)
    lines += textwrap.wrap(f"{r.states:,} positions solved in {result.seconds:.2f} s.", width)
    return lines


def _outcome_lines(o: dict[str, float], width: int) -> list[str]:
    """The battle's chances under both sides' rules."""
    return textwrap.wrap(
        f"Under these rules the attacker wins {o['attacker_wins']:.2%}, the defender wins "
        f"{o['defender_wins']:.2%}, draws {o['draw']:.2%}, the attacker withdraws "
        f"{o['attacker_withdrew']:.2%}, the defender withdraws {o['defender_withdrew']:.2%}.",
        width,
    )


def _side_lines(head: str, rule: str, width: int) -> list[str]:
    """A side's value (its later lines indented) and its rule in words (indented)."""
    lines = textwrap.wrap(head, width, subsequent_indent="  ")
    return lines + textwrap.wrap(rule, width, initial_indent="  ", subsequent_indent="  ")
