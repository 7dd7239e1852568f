"""An Andersen-Broadie upper bound on the best retreat rule's value (docs/retreat.md).

Where the side may withdraw: after the battle's first strike and after every strike
that changes the men left. A miss changes nothing, and a battle of men alone with
random strikes is the same battle whatever its step (no turn limit, the other side
without a rule), so the best of all rules, one looking after every strike, never does
better than the best rule looking only there: what is bounded is every rule.

The martingale comes from the fitted rule looked at there (with the coefficients of
the latest decision step, fighting on after the last one): on each of a few fresh
battles (the outer battles), at each such step ``k``, the value of fighting on and
following that rule, ``C_k``, is estimated by a nested simulation of battles started
from the state there (the armies as they stand: a scenario of its men). The rule's
value process is ``L_k`` (withdrawing's worth ``Z_k`` where the rule withdraws at k,
else ``C_k``; the battle's end once decided), and ``M`` adds up ``L_{k+1} - C_k`` step
by step. Each outer battle's nested simulations draw battles of their own (battles
``j * inner ..`` of another stream for outer battle j), the same ones at each of its
steps: given the outer battle their noise has mean zero, so ``M`` stays a martingale
and ``max(max_k (Z_k - M_k), end - M_end)`` has a mean at least every rule's value
(the noise only raises it); the outer battles' terms are independent, so their 95%
interval is the bound's. The closer the fitted rule is to the best, the closer the
bound to its value.

Offered where a state is a scenario: olympia battles of men alone (no nobles, engines,
structure or waves), strikes in random order, every side at break point 0, each type in
one unit per side, written as ``men = { type = N }``, and the other side without a stop
rule (a percentage or a break point counts from the scenario's start, which a battle
started from a state would move).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from ...rulesets.base import FIGHTING, Prepared
from ...running.runner import thread_count
from ...scenario.scenario import Scenario, from_data, prepare
from .retreat_simulated import TO_THE_END, WON, Features, SimulatedRule, fresh_seed, record
from .sides import SIDES

#: Outer battles and battles of each nested simulation by default.
DUAL_BATTLES = 200
INNER_BATTLES = 200
#: Outer battles recorded at once (after every strike to their end).
OUTER_BLOCK = 200
#: Prepared states kept (the last asked).
STATES_KEPT = 4096


def dual_refusal(scenario: Scenario, side: int) -> str | None:
    """Why the bound is not offered for ``scenario`` (None: it is)."""
    if scenario.ruleset != "olympia":
        return f"not offered for {scenario.ruleset}: only olympia battles start from a state"
    battle = scenario.model
    data = scenario.data
    if not hasattr(battle, "strike_order"):
        return "a side has waves (a state is one battle's armies)"
    if battle.strike_order != "random":
        return f"the strikes' order is {battle.strike_order} (its turns are no men left)"
    for s, name in enumerate(SIDES):
        table = data.get(name, {})
        model = battle.sides[s]
        if "waves" in table:
            return f"the {name} has waves (a state is one battle's armies)"
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
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Each outer battle's ``max(max_k (Z_k - M_k), end - M_end)`` (battles ``0 ..
    battles - 1`` of ``seed``): their mean bounds every rule's value from above (the
    side's own rule left out of ``scenario``). Once ``stop()`` (Ctrl-C, looked at
    before each nested simulation), the outer battles done so far. ``progress(done,
    total)`` after each outer battle, in nested battles run of all there will be (the
    total extrapolated from the outer battles recorded so far)."""
    f = rule.features
    prepared = prepare(scenario)
    start = prepared.from_step
    looked = _Looked(rule)
    states = _States(scenario, f)
    inner_seed = fresh_seed(seed)
    upper = np.empty(battles)
    looked_at = 0  # steps looked at on the outer battles recorded
    done = 0
    # One thread: a call of a few hundred battles is too small to share, and on a busy
    # machine each call waited for a second thread the system had given to another
    # program (the ford's 1,000 outer battles, the whole command: on two threads 105 s
    # at load 4.5 to 6.5, 29 s of CPU; on one 82 s at load 6.5 to 8.2, 27 s of CPU).
    with thread_count(1):
        for first in range(0, battles, OUTER_BLOCK):
            n = min(OUTER_BLOCK, battles - first)
            longest = int(prepared.run_until(seed, first, n, TO_THE_END)["steps"].max())
            steps = np.arange(start + 1, max(longest, start + 1) + 1)
            outer = record(prepared, seed, first, n, steps.tolist(), f)
            won = outer.final["winner"] == WON[side]
            end = win * won - f.price_lost(f.men(outer.final, f.own))
            at = _changes(outer.fighting, outer.own, outer.enemy)
            k, may = looked.open(steps)
            ask = at & may[:, np.newaxis]
            withdraws = np.zeros(at.shape, bool)
            withdraws[ask] = looked.withdraws(
                np.broadcast_to(k[:, np.newaxis], at.shape)[ask], outer.own[ask], outer.enemy[ask]
            )
            now = -f.price_lost(outer.own)
            looked_at += int(at.sum())
            total = inner * round(looked_at * battles / (first + n))
            for j in range(n):
                battle = first + j
                martingale = 0.0
                best = -np.inf
                going = None  # C of the last step looked at
                for t in np.flatnonzero(at[:, j]).tolist():
                    if stop is not None and stop():
                        return upper[:battle]
                    c = _nested(
                        states.get(outer.own[t, j], outer.enemy[t, j]), f, looked, side, win,
                        int(steps[t]), inner_seed, battle * inner, inner,
                    )  # fmt: skip
                    value = float(now[t, j]) if withdraws[t, j] else c
                    if going is not None:
                        martingale += value - going
                    best = max(best, float(now[t, j]) - martingale)
                    going = c
                if going is not None:
                    martingale += float(end[j]) - going
                upper[battle] = max(best, float(end[j]) - martingale)
                done += inner * int(at[:, j].sum())
                if progress is not None:
                    progress(done, total)
    return upper


class _Looked:
    """The fitted rule as the martingale follows it, at any step: after the first strike
    and after every strike that changes the men left, withdraw where the test of the
    latest decision step at or before it says so (a step without coefficients fights on
    there); after the last decision step, fight on."""

    def __init__(self, rule: SimulatedRule) -> None:
        self.features = rule.features
        self.dates = np.asarray(rule.dates, np.int64)
        columns = max((len(b) for b in rule.coefficients if b is not None), default=1)
        self.beta = np.zeros((max(1, len(rule.dates)), columns))
        self.has = np.zeros(max(1, len(rule.dates)), bool)
        for k, beta in enumerate(rule.coefficients):
            if beta is not None:
                self.beta[k], self.has[k] = beta, True
        #: The last step at which the rule may withdraw (None: it never does).
        self.last: int | None = None
        if self.has.any():
            after = int(np.flatnonzero(self.has)[-1]) + 1
            self.last = int(self.dates[after] - 1 if after < len(self.dates) else self.dates[-1])

    def open(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``steps``: the index of its latest decision step, and whether
        the rule may withdraw after it."""
        k = np.searchsorted(self.dates, steps, side="right") - 1
        may = k >= 0
        k[~may] = 0
        may &= self.has[k] & (steps <= (-1 if self.last is None else self.last))
        return k, may

    def withdraws(self, k: np.ndarray, own: np.ndarray, enemy: np.ndarray) -> np.ndarray:
        """Whether the rule withdraws at each row: its decision step's index ``k``, the
        men left of each type ``own`` and ``enemy`` (rows by types)."""
        f = self.features
        fit = np.einsum("rc,cr->r", self.beta[k], f.basis(own, enemy), optimize=False)
        return -f.price_lost(own) > fit


def state_scenario(scenario: Scenario, names: list[str], left: tuple[int, ...]) -> Scenario:
    """``scenario`` (a battle :func:`dual_refusal` offers the bound for) begun anew from
    a state: each type's men left (``left``, in the order of ``names``: ``attacker.knight``
    ...), on the strike kernel (no chain table a state), its steps counted from 0
    (nothing in such a battle depends on the step: no turn limit, no stop rule)."""
    data = copy.deepcopy(dict(scenario.data))
    battle = data.setdefault("battle", {})
    battle["kernel"] = "strike"
    battle.pop("from_step", None)
    men = dict(zip(names, left, strict=True))
    for name in SIDES:
        for unit in data[name]["units"]:
            unit["men"] = {t: int(men[f"{name}.{t}"]) for t in unit["men"]}
    return from_data(data, scenario.source)


class _States:
    """Each state's battle (:func:`state_scenario`) prepared once while kept (the
    STATES_KEPT last asked: preparing one costs about as much as a nested simulation)."""

    def __init__(self, scenario: Scenario, f: Features) -> None:
        self.scenario = scenario
        self.names = [*f.own, *f.enemy]
        self.kept: OrderedDict[tuple[int, ...], tuple[Prepared, np.ndarray]] = OrderedDict()

    def get(self, own: np.ndarray, enemy: np.ndarray) -> tuple[Prepared, np.ndarray]:
        """The state's prepared battle and its men left (own types, then the other's)."""
        men = np.concatenate([own, enemy]).astype(np.int64)
        key = tuple(men.tolist())
        if key in self.kept:
            self.kept.move_to_end(key)
            return self.kept[key]
        self.kept[key] = (prepare(state_scenario(self.scenario, self.names, key)), men)
        if len(self.kept) > STATES_KEPT:
            self.kept.popitem(last=False)
        return self.kept[key]


def _changes(fighting: np.ndarray, own: np.ndarray, enemy: np.ndarray) -> np.ndarray:
    """Where the side may withdraw on battles recorded after every strike from their
    first (steps by battles): after the first strike and after every strike that
    changed the men left, the battle still fighting."""
    changed = np.empty(fighting.shape, bool)
    if len(fighting):
        men = np.concatenate([own, enemy], axis=2)
        changed[0] = True
        changed[1:] = (men[1:] != men[:-1]).any(axis=2)
    return changed & fighting


def _nested(
    state: tuple[Prepared, np.ndarray],
    f: Features,
    looked: _Looked,
    side: int,
    win: float,
    step: int,
    seed: int,
    first: int,
    count: int,
) -> float:
    """``C``: the mean value of battles ``first .. first + count - 1`` of ``seed``
    started from ``state`` after strike ``step``, fighting on there and then following
    ``looked``'s rule."""
    prepared, left = state
    mine = len(f.own)
    later = np.arange(step + 1, max(step, looked.last or step) + 1)
    got = prepared.run_through(seed, first, count, [*(later - step).tolist(), TO_THE_END])
    # A type with no man left has no casualty column: nobody of it is lost.
    winner = got["winner"].T  # battles by steps and the end
    lost = np.zeros((*winner.shape, len(left)), np.int64)
    for i, name in enumerate([*f.own, *f.enemy]):
        if left[i]:
            lost[:, :, i] = got[f"casualties.{name}"].T
    men = left - lost
    values = win * (winner[:, -1] == WON[side]) - f.price_lost(men[:, -1, :mine])
    if len(later):
        total = lost[:, :-1].sum(axis=2)  # men are only lost: a change is a loss
        changed = np.empty(total.shape, bool)
        changed[:, 0] = total[:, 0] > 0
        changed[:, 1:] = total[:, 1:] != total[:, :-1]
        k, may = looked.open(later)
        ask = changed & (winner[:, :-1] == FIGHTING) & may
        if ask.any():
            rows = men[:, :-1][ask]
            out = np.zeros(ask.shape, bool)
            ks = np.broadcast_to(k, ask.shape)[ask]
            out[ask] = looked.withdraws(ks, rows[:, :mine], rows[:, mine:])
            gone = np.flatnonzero(out.any(axis=1))
            if len(gone):
                at = out[gone].argmax(axis=1)
                values[gone] = -f.price_lost(men[gone, at, :mine])
    return float(values.mean())
