"""When should a side stop? ``battle-odds retreat`` and :func:`best_retreat`.

The best retreat rule of one side, exactly, for the small olympia battles the exact
solver reaches (docs/retreat.md): at every position the side either withdraws or fights
on, whichever is worth more, a battle being worth ``W x [won]`` less the price of the
side's own men lost (each its type's ``cost``). The other side fights by its own stop
rule from the scenario (or to the end). Beside the best rule's value: the value of
"never retreat" and of the side's own rule in the scenario, both solved exactly.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets.olympia.retreat import DECISIONS, NOBLES, BestRule, army_cost, best_rule, prices_of
from ..rulesets.stop_rules import NEVER
from ..scenario.scenario import Scenario, unknowns_of
from .machinery.sides import SIDES, check_side

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class RetreatResult:
    """The best retreat rule of ``side``, its value and what it is worth over
    "never retreat" (``never``) and over the side's own rule (``own``, None without one).
    Every figure is exact."""

    scenario: Scenario
    side: str
    win_value: float
    win_value_said: str
    prices: dict[str, float]
    rule: BestRule
    never: float
    own: float | None
    own_words: str | None
    seconds: float

    @property
    def value(self) -> float:
        return self.rule.value

    @property
    def frame(self) -> pd.DataFrame:
        """One row per position the battle can reach: the men left per side and type
        (``attacker.knight`` ...), the decision there (``fight``, ``withdraw``; ``decided``
        where the battle is over, ``they withdraw`` where the other side's rule holds)
        and the position's value to the side."""
        import pandas as pd

        rows: dict[str, Any] = {name: men for name, men in self.rule.men.items()}
        rows["decision"] = [DECISIONS[int(d)] for d in self.rule.decisions]
        rows["value"] = self.rule.values
        return pd.DataFrame(rows)

    def men_left(self) -> tuple[list[int], list[int], list[tuple[int, int]]]:
        """Each position's fighters left of the side and of the other, and both sides'
        nobles still fighting (the side's first)."""
        n = len(self.rule.indices)
        own, enemy = [0] * n, [0] * n
        nobles = [[0] * n, [0] * n]
        for name, men in self.rule.men.items():
            mine = name.startswith(f"{self.side}.")
            if name.endswith(f".{NOBLES}"):
                into = nobles[0 if mine else 1]
            else:
                into = own if mine else enemy
            for i, count in enumerate(men.tolist()):
                into[i] += count
        return own, enemy, list(zip(nobles[0], nobles[1], strict=True))

    def words(self) -> str:
        """The rule in words where it is a threshold on the men left (for each number of
        the other side's men, withdraw at K men or fewer; per standing of the nobles
        where they matter), else a pointer to the map."""
        own, enemy, nobles = self.men_left()
        by_nobles: dict[tuple[int, int], dict[tuple[int, int], set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        for o, e, n, d in zip(own, enemy, nobles, self.rule.decisions.tolist(), strict=True):
            if DECISIONS[d] in ("fight", "withdraw"):
                by_nobles[n][(o, e)].add(DECISIONS[d])
        if all(c == {"fight"} for group in by_nobles.values() for c in group.values()):
            return "never withdraw"
        said = []
        for (mine, theirs), choices in sorted(by_nobles.items(), reverse=True):
            rule = _threshold_words(choices)
            if rule is None:
                return "no simple shape on the men left (see the map: --json or -o)"
            if len(by_nobles) > 1:
                rule = f"with {mine} of your nobles and {theirs} of theirs fighting: {rule}"
            said.append(rule)
        return "; ".join(said)

    def to_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "scenario": self.scenario.source.label,
            "side": self.side,
            "method": "exact",
            "win_value": self.win_value,
            "prices": self.prices,
            "value": rule.value,
            "never": self.never,
            "own": self.own,
            "own_rule": self.own_words,
            "gain_over_never": rule.value - self.never,
            "gain_over_own": None if self.own is None else rule.value - self.own,
            "win": rule.won,
            "lost": rule.lost,
            "draw": rule.drawn,
            "withdrew": rule.withdrew,
            "they_withdrew": rule.they_withdrew,
            "expected_price_lost": rule.price_lost,
            "rule": self.words(),
            "states": rule.states,
            "seconds": self.seconds,
            "positions": self.frame.to_dict(orient="records"),
        }


def _threshold_words(choices: dict[tuple[int, int], set[str]]) -> str | None:
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


def check_win_value(win_value: float | None) -> float | None:
    if win_value is not None and not (math.isfinite(win_value) and win_value >= 0):
        raise BattleOddsError(f"--win-value {win_value}: expected a number 0 or more")
    return win_value


def best_retreat(
    scenario: Scenario, side: str = "attacker", win_value: float | None = None
) -> RetreatResult:
    """The exact best retreat rule of ``side`` in a small olympia battle, its value, and
    the values of "never retreat" and of the side's own rule in the scenario.

    ``win_value`` (default: what the other side's army costs) is what a win is worth;
    each of the side's own men lost costs his type's ``cost``. Raises
    :class:`BattleOddsError` for what it cannot answer (another ruleset, a scenario
    with ranges, a battle too large for the exact solver)."""
    check_side(side)
    check_win_value(win_value)
    label = scenario.source.label
    if scenario.ruleset != "olympia":
        raise BattleOddsError(
            f"{label}: the best retreat rule is solved exactly for olympia battles only, "
            f"not '{scenario.ruleset}'; for this ruleset `battle-odds run` with "
            "[attacker.retreat] values a rule you give"
        )
    if unknowns_of(scenario):
        raise BattleOddsError(
            f"{label}: no best retreat rule for a scenario with ranges; give each input one value"
        )
    s = SIDES.index(side)
    battle = scenario.model
    said = "given"
    if win_value is None:
        win_value, said = army_cost(battle, 1 - s), f"the {SIDES[1 - s]}'s cost"
    started = time.perf_counter()
    rule = best_rule(scenario, s, win_value)
    seconds = time.perf_counter() - started
    prices = prices_of(battle, s)
    ruleset = rulesets.get("olympia")

    def value_of(retreat: Any) -> float:
        rules = list(battle.retreat)
        rules[s] = retreat
        solved = ruleset.exact(
            replace(scenario, model=replace(battle, retreat=(rules[0], rules[1])))
        )
        casualties = solved.casualties
        lost = sum(p * casualties.get(f"casualties.{side}.{t}", 0.0) for t, p in prices.items())
        return float(win_value) * solved.win[side] - lost

    own_rule = battle.retreat[s]
    return RetreatResult(
        scenario=scenario,
        side=side,
        win_value=float(win_value),
        win_value_said=said,
        prices=prices,
        rule=rule,
        never=value_of(NEVER),
        own=None if own_rule.never else value_of(own_rule),
        own_words=None if own_rule.never else own_rule.words("strikes"),
        seconds=seconds,
    )
