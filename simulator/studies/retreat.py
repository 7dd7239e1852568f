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
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError, ParameterError, did_you_mean, literal
from ..rulesets.olympia.retreat import (
    DECISIONS,
    NOBLES,
    BestRule,
    BothRules,
    army_cost,
    best_rule,
    both_rules,
    prices_of,
)
from ..rulesets.stop_rules import NEVER
from ..running.plan import Progress, StudyPlan
from ..scenario.scenario import Scenario, prepare, unknowns_of
from .machinery.planned import takes_plan
from .machinery.retreat_both import BothSidesResult
from .machinery.retreat_dual import INNER_BATTLES, dual_bound, dual_refusal
from .machinery.retreat_simulated import (
    Estimate,
    SimulatedAnswer,
    SimulatedRetreatResult,
    Simulation,
    cell_rows,
    without_rule,
)
from .machinery.retreat_words import stop_now_or_go_on, threshold_words
from .machinery.sides import SIDES

#: ``--method``: backward induction over olympia's exact chain, or Longstaff-Schwartz.
METHODS = ("exact", "simulated")
#: ``side``: both sides choosing their rules (:mod:`.machinery.retreat_both`).
BOTH = "both"
#: The most training or fresh battles of the simulated method.
MAX_SIMULATED = 10_000_000
#: The most outer battles of the Andersen-Broadie bound (each a nested simulation a step).
MAX_DUAL = 100_000

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
    #: The step the battle has reached (``[battle] from_step``; 0: not begun).
    from_step: int = 0

    method = "exact"

    @property
    def value(self) -> float:
        return self.rule.value

    def stop_now(self) -> dict[str, Any] | None:
        """For a battle in progress: stopping now (0) against going on (exact)."""
        return stop_now_or_go_on(self.from_step, "olympia", self.rule.value, None, None)

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

    def cells(self) -> np.ndarray:
        """Positions where the rule fights on (``[..., 0]``) and withdraws (``[..., 1]``),
        by the side's fighters left and the other's: the retreat map, shaped as the
        simulated rule's (:meth:`SimulatedRetreatResult.cells`)."""
        own, enemy, _ = self.men_left()
        counts = np.zeros((max(own, default=0) + 1, max(enemy, default=0) + 1, 2), np.int64)
        for o, e, d in zip(own, enemy, self.rule.decisions.tolist(), strict=True):
            if DECISIONS[d] in ("fight", "withdraw"):
                counts[o, e, int(DECISIONS[d] == "withdraw")] += 1
        return counts

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
            rule = threshold_words(choices)
            if rule is None:
                return "no simple shape on the men left (see the map: --json or -o)"
            if len(by_nobles) > 1:
                rule = f"with {mine} of your nobles and {theirs} of theirs fighting: {rule}"
            said.append(rule)
        return "; ".join(said)

    def figures(self) -> dict[str, Any]:
        """The values (the best rule's, never retreating's, the side's own rule's), the
        best rule's gains over them, and the chances under it."""
        rule = self.rule
        return {
            "value": rule.value,
            "never": self.never,
            "own": self.own,
            "gain_over_never": rule.value - self.never,
            "gain_over_own": None if self.own is None else rule.value - self.own,
            "win": rule.won,
            "lost": rule.lost,
            "draw": rule.drawn,
            "withdrew": rule.withdrew,
            "they_withdrew": rule.they_withdrew,
        }

    def to_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "scenario": self.scenario.source.label,
            "side": self.side,
            "method": "exact",
            "win_value": self.win_value,
            "prices": self.prices,
            **self.figures(),
            "own_rule": self.own_words,
            "expected_price_lost": rule.price_lost,
            "rule": self.words(),
            "states": rule.states,
            "seconds": self.seconds,
            "stop_now_or_go_on": self.stop_now(),
            "positions": self.frame.to_dict(orient="records"),
        }


@dataclass(frozen=True)
class ExactBothResult:
    """Both sides' retreat rules reached by alternate exact best responses (``rules``),
    with each side's win value and prices. Every figure is exact."""

    scenario: Scenario
    win_values: tuple[float, float]
    win_value_said: str
    prices: tuple[dict[str, float], dict[str, float]]
    rules: BothRules
    seconds: float

    method = "exact"
    side = BOTH
    partial = False

    def view(self, s: int) -> RetreatResult:
        """Side ``s``'s rule as a one-side answer (its words, map and positions): its
        decisions at the positions the two rules reach."""
        r = self.rules
        o = r.chances
        won, lost = (o["attacker_wins"], o["defender_wins"])[:: 1 if s == 0 else -1]
        withdrew, they = (o["attacker_withdrew"], o["defender_withdrew"])[:: 1 if s == 0 else -1]
        rule = BestRule(
            value=r.values[s], indices=r.indices, values=np.full(len(r.indices), np.nan),
            decisions=r.decisions[s], men=r.men, won=won, lost=lost, drawn=o["draw"],
            withdrew=withdrew, they_withdrew=they, price_lost=r.price_lost[s], states=r.states,
        )  # fmt: skip
        return RetreatResult(
            scenario=self.scenario, side=SIDES[s], win_value=self.win_values[s],
            win_value_said=self.win_value_said, prices=self.prices[s], rule=rule,
            never=r.never[s], own=None, own_words=None, seconds=self.seconds,
        )  # fmt: skip

    def words(self, s: int) -> str:
        """Side ``s``'s rule in words, on the positions the two rules reach."""
        return self.view(s).words()

    def to_dict(self) -> dict[str, Any]:
        r = self.rules
        sides = {}
        for s, name in enumerate(SIDES):
            sides[name] = {
                "win_value": self.win_values[s],
                "prices": self.prices[s],
                "value": r.values[s],
                "never": r.never[s],
                "gain_over_never": r.values[s] - r.never[s],
                "rule": self.words(s),
                "cells": cell_rows(self.view(s).cells()),
            }
        return {
            "scenario": self.scenario.source.label,
            "side": BOTH,
            "method": "exact",
            **sides,
            **r.chances,
            "settled": r.settled,
            "rounds": [{"side": t["side"], "gain": t["gain"], "kept": t["kept"]} for t in r.rounds],
            "states": r.states,
            "seconds": self.seconds,
            "partial": False,
        }


def check_win_value(win_value: float | None) -> float | None:
    if win_value is not None and not (math.isfinite(win_value) and win_value >= 0):
        raise ParameterError("win_value", win_value, "expected a number 0 or more")
    return win_value


def check_given_win_value(win_value: float | None) -> None:
    """A win value given by ``--win-value`` (or the page's field): a number more than 0
    (the Python API also takes 0)."""
    check_win_value(win_value)
    if win_value is not None and win_value <= 0:
        raise BattleOddsError(f"--win-value {win_value:g}: expected a number more than 0")


def check_retreat_options(side: str, win_value: float | None, method: str | None) -> None:
    """What ``battle-odds retreat`` and the page's retreat panel refuse alike: a side
    other than attacker, defender or both, a win value not a finite number, an unknown
    method."""
    if side not in (*SIDES, BOTH):
        raise ParameterError(
            "side", side, "expected attacker, defender or both" + did_you_mean(side, (*SIDES, BOTH))
        )
    check_win_value(win_value)
    if method not in (None, *METHODS):
        raise ParameterError(
            "method",
            method,
            f"expected one of {', '.join(METHODS)}" + did_you_mean(method, METHODS),
        )


@takes_plan
def best_retreat(
    scenario: Scenario,
    side: str = "attacker",
    win_value: float | None = None,
    *,
    method: str | None = None,
    paths: int | None = None,
    battles: int | None = None,
    seed: int | None = None,
    threads: int | None = None,
    costs: Mapping[str, float] | str | Path | None = None,
    progress: Progress | None = None,
    max_states: int | None = None,
    stop: Callable[[], bool] | None = None,
    lock: AbstractContextManager[object] | None = None,
    dual_battles: int | None = None,
    plan: StudyPlan | None = None,
) -> RetreatResult | SimulatedRetreatResult | BothSidesResult | ExactBothResult:
    """The best retreat rule of ``side``, its value, and the values of "never retreat"
    and of the side's own rule in the scenario; ``side="both"``: both sides choosing
    by alternate best responses, exact (:class:`ExactBothResult`, where the exact
    solver reaches and no simulation option is given) or simulated
    (:mod:`.machinery.retreat_both`).

    ``win_value`` (default: what the other side's army costs) is what a win is worth;
    each of the side's own men lost costs his type's ``cost``. ``method``: ``exact``
    (small olympia battles, every figure exact), ``simulated`` (any ruleset:
    Longstaff-Schwartz on ``paths`` training battles, valued on ``battles`` fresh
    ones with 95% intervals; ``costs``: prices of types the scenario does not price)
    or None: exact where the exact solver reaches, else simulated. ``max_states``: the
    largest chain solved exactly (default: the exact solver's limit); ``stop()``
    (default: Ctrl-C) ends the simulated method's work with the rule so far; each
    kernel call holds ``lock`` (the page's questions take turns). ``plan``: ``battles``,
    ``seed`` and ``threads`` as every study takes them (a :class:`StudyPlan`). Raises
    :class:`BattleOddsError` for what it cannot answer (a scenario with ranges, a
    method the battle cannot take)."""
    check_retreat_options(side, win_value, method)
    if unknowns_of(scenario):
        raise BattleOddsError(
            f"{scenario.source.label}: no best retreat rule for a scenario with ranges; "
            "give each input one value"
        )
    simulated = {"paths": paths, "battles": battles, "seed": seed, "threads": threads}
    if dual_battles is not None:
        if side == BOTH:
            raise ParameterError(
                "dual_battles", dual_battles, "the bound is for one side's rule ({side=}attacker)"
            )
        simulated["dual_battles"] = dual_battles
    if side == BOTH:
        if (
            method is None
            and scenario.ruleset == "olympia"
            and not any(v is not None for v in (*simulated.values(), costs))
        ):
            try:
                with lock or nullcontext():
                    return _exact_both(scenario, win_value, max_states)
            except BattleOddsError:
                pass  # beyond the exact solver: simulated
        if method != "exact":
            return _simulated(scenario, side, win_value, costs, progress, stop, lock, **simulated)
    if method == "exact":
        given = [k for k, v in {**simulated, "costs": costs}.items() if v is not None]
        if given:
            raise ParameterError(
                given[0],
                None,
                "only the simulated method takes it ({method=}simulated); "
                "the exact method prices by the scenario's cost",
            )
        try:
            with lock or nullcontext():
                if side == BOTH:
                    return _exact_both(scenario, win_value, max_states)
                return _exact(scenario, side, win_value, max_states)
        except BattleOddsError as exc:
            raise ParameterError(
                "method", "exact", f"{literal(str(exc))}; {{method=}}simulated takes it"
            ) from None
    if method is None and scenario.ruleset == "olympia" and costs is None:
        try:
            with lock or nullcontext():
                return _exact(scenario, side, win_value, max_states)
        except BattleOddsError:
            pass  # beyond the exact solver: simulated
    return _simulated(scenario, side, win_value, costs, progress, stop, lock, **simulated)


def _simulated(
    scenario: Scenario,
    side: str,
    win_value: float | None,
    costs: Mapping[str, float] | str | Path | None,
    progress: Callable[[int, int], None] | None,
    stop: Callable[[], bool] | None,
    lock: AbstractContextManager[object] | None,
    paths: int | None,
    battles: int | None,
    seed: int | None,
    threads: int | None,
    dual_battles: int | None = None,
) -> SimulatedRetreatResult | BothSidesResult:
    """One side's simulated rule, or both sides' (``side`` both: alternate best
    responses, :mod:`.machinery.retreat_both`)."""
    from .machinery.retreat_both import both_sides_retreat
    from .machinery.retreat_simulated import DEFAULT_FRESH, DEFAULT_PATHS, simulated_retreat

    for option, count in (("paths", paths), ("battles", battles)):
        if count is not None and not 2 <= count <= MAX_SIMULATED:
            raise ParameterError(option, count, f"expected 2..{MAX_SIMULATED:,}")
    if dual_battles is not None and not 2 <= dual_battles <= MAX_DUAL:
        raise ParameterError("dual_battles", dual_battles, f"expected 2..{MAX_DUAL:,}")
    how = Simulation(
        paths=DEFAULT_PATHS if paths is None else paths,
        fresh=DEFAULT_FRESH if battles is None else battles,
        seed=seed,
        threads=threads,
        costs=costs,
        progress=progress,
        stop=stop,
        lock=lock,
    )
    if side == BOTH:
        both, prices_both, wins = both_sides_retreat(scenario, win_value, how)
        return BothSidesResult(
            scenario=scenario,
            win_values=wins,
            win_value_said="given" if win_value is not None else "the other side's cost",
            prices=prices_both,
            answer=both,
        )
    s = SIDES.index(side)
    if dual_battles is not None:
        refusal = dual_refusal(without_rule(scenario, side), s)
        if refusal is not None:
            raise ParameterError(
                "dual_battles", dual_battles, f"no Andersen-Broadie bound here: {refusal}"
            )
    answer, prices, win = simulated_retreat(scenario, s, win_value, how)
    if dual_battles is not None and not answer.partial:
        answer = _with_dual(answer, scenario, s, win, dual_battles, how)
    prepared = prepare(scenario)
    own_rule = prepared.stop_rules[s]
    return SimulatedRetreatResult(
        scenario=scenario,
        side=side,
        win_value=win,
        win_value_said="given" if win_value is not None else f"the {SIDES[1 - s]}'s cost",
        prices={k.split(".", 1)[1]: v for k, v in prices.items()},
        answer=answer,
        own_words=None
        if own_rule.never
        else own_rule.words(rulesets.get(scenario.ruleset).step_unit),
        from_step=prepared.from_step,
    )


def _with_dual(
    answer: SimulatedAnswer,
    scenario: Scenario,
    s: int,
    win: float,
    battles: int,
    how: Simulation,
) -> SimulatedAnswer:
    """``answer`` with its Andersen-Broadie bound on ``battles`` of its fresh battles
    (:mod:`.machinery.retreat_dual`), its nested battles counted on from the rule's
    battles in ``how.progress``; Ctrl-C: on the outer battles done, partial."""
    from ..running.interrupt import stop_requested
    from ..running.runner import thread_count

    started = time.perf_counter()
    progress = None
    if how.progress is not None:
        told, before = how.progress, answer.paths + answer.fresh  # where the bar stands

        def progress(done: int, total: int) -> None:
            told(before + done, before + total)

    with thread_count(how.threads):
        upper = dual_bound(
            without_rule(scenario, SIDES[s]), s, answer.rule, win, answer.fresh_seed,
            battles, stop=how.stop or stop_requested, progress=progress,
        )  # fmt: skip
    return replace(
        answer,
        dual=Estimate.of(upper) if len(upper) > 1 else None,
        dual_battles=len(upper),
        inner_battles=INNER_BATTLES,
        partial=len(upper) < battles,
        seconds=answer.seconds + time.perf_counter() - started,
    )


def _exact_both(
    scenario: Scenario,
    win_value: float | None,
    max_states: int | None,
) -> ExactBothResult:
    """Both sides choosing, exactly (rulesets/olympia/retreat.py's :func:`both_rules`):
    each side's win value ``win_value`` or what the other side's army costs."""
    label = scenario.source.label
    if scenario.ruleset != "olympia":
        raise BattleOddsError(
            f"{label}: the best retreat rules are solved exactly for olympia battles only, "
            f"not '{scenario.ruleset}'"
        )
    battle = scenario.model
    wins = tuple(
        float(win_value) if win_value is not None else army_cost(battle, 1 - s) for s in range(2)
    )
    started = time.perf_counter()
    rules = both_rules(
        scenario, (wins[0], wins[1]), **({} if max_states is None else {"max_states": max_states})
    )
    return ExactBothResult(
        scenario=scenario,
        win_values=(wins[0], wins[1]),
        win_value_said="given" if win_value is not None else "the other side's cost",
        prices=(prices_of(battle, 0), prices_of(battle, 1)),
        rules=rules,
        seconds=time.perf_counter() - started,
    )


def _exact(
    scenario: Scenario, side: str, win_value: float | None, max_states: int | None = None
) -> RetreatResult:
    label = scenario.source.label
    if scenario.ruleset != "olympia":
        raise BattleOddsError(
            f"{label}: the best retreat rule is solved exactly for olympia battles only, "
            f"not '{scenario.ruleset}'"
        )
    s = SIDES.index(side)
    battle = scenario.model
    said = "given"
    if win_value is None:
        win_value, said = army_cost(battle, 1 - s), f"the {SIDES[1 - s]}'s cost"
    started = time.perf_counter()
    rule = best_rule(
        scenario, s, win_value, **({} if max_states is None else {"max_states": max_states})
    )
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
        from_step=prepare(scenario).from_step,
    )
