"""An Andersen-Broadie upper bound on the best retreat rule's value (docs/retreat.md).

On each of a few fresh battles (the outer battles), at every decision step ``k`` it is
still fought at, the value of following the fitted rule from the next step on,
``C_k``, is estimated by a nested simulation: battles started from the state there (the
armies as they stand, ``[battle] from_step`` the step) and played under the rule. The
rule's value process is ``L_k`` (withdrawing's worth ``Z_k`` where the rule withdraws
at k, else ``C_k``; the battle's own end once decided), and ``M`` adds up
``L_{k+1} - C_k`` step by step: a martingale (``C_k`` is the expectation of what comes
next). No rule that looks at these steps is worth more than the mean over outer battles
of ``max(max_k (Z_k - M_k), end - M_end)``; nested noise only raises it. The closer the
fitted rule is to the best, the closer the bound to its value.

Offered where a state is a scenario: olympia battles of men alone (no nobles, engines or
structure), every side at break point 0, each type in one unit per side, written as
``men = { type = N }``, and the other side without a stop rule (a percentage or a break
point counts from the scenario's start, which a battle started from a state would move).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ...rulesets.base import FIGHTING
from ...scenario.scenario import Scenario, from_data, prepare
from .retreat_simulated import (
    TO_THE_END,
    WON,
    Paths,
    SimulatedRule,
    first_withdrawal,
    fresh_seed,
    record,
)
from .sides import SIDES

#: Outer battles and battles of each nested simulation by default.
DUAL_BATTLES = 200
INNER_BATTLES = 200


def dual_refusal(scenario: Scenario, side: int) -> str | None:
    """Why the bound is not offered for ``scenario`` (None: it is)."""
    if scenario.ruleset != "olympia":
        return f"not offered for {scenario.ruleset}: only olympia battles start from a state"
    battle = scenario.model
    data = scenario.data
    for s, name in enumerate(SIDES):
        table = data.get(name, {})
        model = battle.sides[s]
        if table.get("break_point", None) != 0:
            return f"the {name}'s break point is not 0 (it counts from the battle's start)"
        if model.structure is not None or model.engines:
            return f"the {name} has a structure or engines"
        seen: set[str] = set()
        for unit in table.get("units", []):
            men = unit.get("men")
            if not isinstance(men, dict) or set(unit) - {"men"}:
                return f"the {name}'s units are not men = {{ type = N }} alone"
            if seen & set(men):
                return f"a type of the {name}'s is in two units"
            seen |= set(men)
        if any(m.type not in seen for u in model.units for m in u.men):
            return f"the {name} has nobles"
    if not battle.retreat[1 - side].never:
        return f"the {SIDES[1 - side]} has a stop rule (it counts from the battle's start)"
    return None


def dual_bound(
    scenario: Scenario,
    side: int,
    rule: SimulatedRule,
    win: float,
    seed: int,
    battles: int = DUAL_BATTLES,
    inner: int = INNER_BATTLES,
    stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """Each outer battle's ``max(max_k (Z_k - M_k), end - M_end)``: their mean bounds
    every rule's value from above (the side's own rule left out of ``scenario``).
    Once ``stop()`` (Ctrl-C, looked at before each nested simulation), the outer
    battles done so far."""
    f = rule.features
    base = copy.deepcopy(dict(scenario.data))
    base.setdefault("battle", {})["kernel"] = "strike"  # no chain table a state
    prepared = prepare(scenario)
    outer = record(prepared, seed, 0, battles, rule.dates, f)
    end = win * (outer.final["winner"] == WON[side]) - f.price_lost(f.men(outer.final, f.own))
    inner_seed = fresh_seed(seed)
    continuation: dict[tuple[int, tuple[int, ...]], float] = {}
    dates = rule.dates

    def worth_going_on(k: int, own: np.ndarray, enemy: np.ndarray) -> float | None:
        """C_k: the rule's value from step k + 1 on, from the state (own, enemy); None
        once ``stop()``."""
        key = (k, (*own.tolist(), *enemy.tolist()))
        if key not in continuation:
            if stop is not None and stop():
                return None
            # The same nested battles (numbers) from every state: the estimates' noise
            # moves together from step to step, and the martingale's steps cancel
            # most of it (drawn apart, the noise's largest excursion over a battle's
            # steps raised the bound by about 1 on the knights at the ford).
            continuation[key] = _nested(
                base, scenario, side, rule, k, own, enemy, win, inner_seed, 0, inner
            )
        return continuation[key]

    upper = np.empty(battles)
    withdraws = [rule.withdraws(k, outer.own[k], outer.enemy[k]) for k in range(len(dates))]
    for j in range(battles):
        martingale = 0.0
        best = -np.inf
        going = None  # C of the last step fought at
        for k in range(len(dates)):
            if not outer.fighting[k, j]:
                break
            now = -float(f.price_lost(outer.own[k, j]))
            c = worth_going_on(k, outer.own[k, j], outer.enemy[k, j])
            if c is None:  # Ctrl-C
                return upper[:j]
            value = now if withdraws[k][j] else c
            if going is not None:
                martingale += value - going
            best = max(best, now - martingale)
            going = c
        if going is not None:
            martingale += float(end[j]) - going
        upper[j] = max(best, float(end[j]) - martingale)
    return upper


def _nested(
    base: dict[str, Any],
    scenario: Scenario,
    side: int,
    rule: SimulatedRule,
    k: int,
    own: np.ndarray,
    enemy: np.ndarray,
    win: float,
    seed: int,
    first: int,
    count: int,
) -> float:
    """The mean value of ``count`` battles started from the state after step
    ``rule.dates[k]`` (the side's men ``own``, the other's ``enemy``), the rule played
    from the next step on."""
    f = rule.features
    data = copy.deepcopy(base)
    data["battle"]["from_step"] = int(rule.dates[k])
    left = dict(zip([*f.own, *f.enemy], [*own.tolist(), *enemy.tolist()], strict=True))
    for name in SIDES:
        for unit in data[name]["units"]:
            unit["men"] = {t: int(left[f"{name}.{t}"]) for t in unit["men"]}
    state = from_data(data, scenario.source)
    prepared = prepare(state)
    later = SimulatedRule(rule.dates[k + 1 :], rule.coefficients[k + 1 :], f)
    # A type with no man left has no casualty column: its men left stay 0.
    kinds = [*f.own, *f.enemy]
    counted = [n for n in kinds if left[n] > 0]
    got = prepared.record_columns(
        seed, first, count, [*later.dates, TO_THE_END],
        ["winner", *(f"casualties.{n}" for n in counted)],
    )  # fmt: skip
    men = np.zeros((*got.shape[:2], len(kinds)), np.int64)
    for i, n in enumerate(counted):
        men[:, :, kinds.index(n)] = left[n] - got[:, :, 1 + i]
    own, enemy = men[:, :, : len(f.own)], men[:, :, len(f.own) :]
    paths = Paths(got[:-1, :, 0] == FIGHTING, own[:-1], enemy[:-1], {})
    values = win * (got[-1, :, 0] == WON[side]) - f.price_lost(own[-1])
    at = first_withdrawal(later, paths)
    out = np.flatnonzero(at >= 0)
    values[out] = -f.price_lost(paths.own[at[out], out])
    return float(values.mean())
