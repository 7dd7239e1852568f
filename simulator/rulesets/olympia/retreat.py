"""The best retreat rule of one side of a small Olympia battle (docs/retreat.md).

:func:`best_rule` sizes the exact solver's chain (exact.py), refuses what it cannot
take, and runs kernels/olympia/retreat.py's three sweeps (which positions are reached,
their values upwards, the battle's chance downwards) in slices of the index range, so
Ctrl-C is seen between slices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels.olympia import exact as kx
from kernels.olympia import layout as k
from kernels.olympia import retreat as kr
from kernels.stops import NO_STOP, STOP_AFTER

from ...errors import BattleOddsError
from .exact import MAX_STATES, chain_size
from .model import Battle
from .prepare import compile_battle, encode_stops
from .space import layout

#: Positions swept per kernel call: a fraction of a second on the largest chains.
SLICE = 100_000
SIDES = ("attacker", "defender")
#: The name of a side's nobles still fighting among :attr:`BestRule.men`'s keys.
NOBLES = "nobles"
DECISIONS = {
    kr.DECIDED: "decided",
    kr.THEY_WITHDRAW: "they withdraw",
    kr.FIGHT: "fight",
    kr.WITHDRAW: "withdraw",
}


@dataclass(frozen=True)
class BestRule:
    """The best rule's positions (the reached ones, by chain index), each with its
    value and decision code (kernels/olympia/retreat.py), the men left there per
    casualty column (``attacker.knight``) and its nobles still fighting
    (``attacker.nobles``), and the battle's chances under the rule."""

    value: float
    indices: np.ndarray
    values: np.ndarray
    decisions: np.ndarray
    men: dict[str, np.ndarray]
    won: float
    lost: float
    drawn: float
    withdrew: float
    they_withdrew: float
    price_lost: float
    states: int


def prices_of(battle: Battle, side: int) -> dict[str, float]:
    """The price of each fighter type the side lists (fielded or written with 0 men):
    its ``cost``."""
    listed = dict.fromkeys(m.type for u in battle.sides[side].units for m in u.men)
    return {name: float(battle.fighters[name].cost) for name in listed}


def army_cost(battle: Battle, side: int) -> float:
    """What the side's fighters cost (nobles and engines unpriced)."""
    prices = prices_of(battle, side)
    return sum(prices[m.type] * m.count for u in battle.sides[side].units for m in u.men)


def best_rule(scenario: Any, side: int, win_value: float, max_states: int = MAX_STATES) -> BestRule:
    """The best retreat rule of ``side`` (0 attacker, 1 defender) against the other
    side's own stop rule, valuing a win at ``win_value`` and each man lost at his
    type's cost."""
    battle: Battle = scenario.model
    label = scenario.source.label
    other = 1 - side
    if battle.strike_order != "random":
        raise BattleOddsError(
            f"{label}: the best retreat rule is solved for olympia's random strike order "
            f"only, not '{battle.strike_order}'"
        )
    if battle.retreat[other].after is not None:
        raise BattleOddsError(
            f"{label}: the {SIDES[other]}'s stop rule has an after: the best rule is solved "
            "against a rule on the men left only (at most, gone, outnumbered)"
        )
    states = chain_size(battle).states
    if states > max_states:
        raise BattleOddsError(
            f"{label}: too large for an exact best rule: {states:,} states, over the "
            f"limit of {max_states:,}; the exact best rule answers small olympia battles only"
        )
    arrays = compile_battle(battle)
    space = layout(arrays)
    digits = (space.radix, space.stride, space.sradix, space.sstride)
    their_stops = encode_stops(battle, arrays)
    their_stops[side] = NO_STOP
    their_stops[:, STOP_AFTER] = 0
    price = _group_prices(battle, arrays, side)
    groups, survive, sides, order = arrays.groups, arrays.survive, arrays.sides, arrays.order
    n = space.states
    start = int(kx.opening(groups, space.stride, space.sradix, space.sstride))

    reached = np.zeros(n, np.bool_)
    reached[start] = True
    for hi in range(n, 0, -SLICE):
        code = kr.mark_reached(
            groups, survive, sides, order, digits, start, hi, max(0, hi - SLICE),
            their_stops, reached,
        )  # fmt: skip
        if code != kr.OK:
            raise BattleOddsError(f"{label}: {_REFUSALS[code].format(other=SIDES[other])}")
    value = np.zeros(n)
    decision = np.full(n, kr.UNREACHED, np.int8)
    for lo in range(0, n, SLICE):
        kr.best_values(
            groups, survive, sides, order, digits, start, lo, min(n, lo + SLICE),
            their_stops, k.ATTACKER if side == 0 else k.DEFENDER, price, float(win_value),
            reached, value, decision,
        )  # fmt: skip
    mass = np.zeros(n)
    mass[start] = 1.0
    chances = np.zeros(kr.N_CHANCES)
    for hi in range(n, 0, -SLICE):
        kr.push_mass(
            groups, survive, sides, order, digits, start, hi, max(0, hi - SLICE),
            k.ATTACKER if side == 0 else k.DEFENDER, price, decision, mass, chances,
        )  # fmt: skip

    indices = np.flatnonzero(decision != kr.UNREACHED)
    men = _men_at(arrays, space, indices)
    return BestRule(
        value=float(value[start]),
        indices=indices,
        values=value[indices],
        decisions=decision[indices],
        men=men,
        won=float(chances[kr.C_WON]),
        lost=float(chances[kr.C_LOST]),
        drawn=float(chances[kr.C_DRAWN]),
        withdrew=float(chances[kr.C_WITHDREW]),
        they_withdrew=float(chances[kr.C_THEY_WITHDREW]),
        price_lost=float(chances[kr.C_PRICE_LOST]),
        states=states,
    )


_REFUSALS = {
    kr.STUCK: "a reachable position can never end (strikers that cannot hit anything): "
    "no best rule",
    kr.BROKEN_OPENING: "a side is broken before the first strike: one strike decides the "
    "battle, there is no rule to find",
    kr.THEIR_RULE_AT_OPENING: "the {other}'s stop rule holds from the start (it withdraws "
    "after the first strike): there is no rule to find",
}


def _group_prices(battle: Battle, arrays: Any, side: int) -> np.ndarray:
    """Each group's price per man lost: its type's cost for the side's fighters, 0 for
    the rest (nobles, engines, the other side)."""
    prices = prices_of(battle, side)
    groups = arrays.groups
    price = np.zeros(len(groups))
    for g in range(len(groups)):
        if groups[g, k.G_KIND] == k.MAN and groups[g, k.G_SIDE] == side:
            name = arrays.casualty_names[int(groups[g, k.G_COLUMN]) - k.O_CASUALTIES]
            price[g] = prices[name.rsplit(".", 1)[1]]
    return price


#: Both sides choosing exactly: the most rounds (an attacker's turn and a defender's)
#: before the alternation stops unsettled (as the simulated method's).
MOST_ROUNDS = 5
#: A new rule is kept where it gains more than this (a fraction of the win values and
#: prices at stake): two rules of the same value differ by rounding alone.
GAIN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class BothRules:
    """Both sides' rules reached by alternate exact best responses: each side's
    withdrawals (``outs[s]``: a flag a chain position), its value under the two rules
    and fighting to the end against the other's rule, the battle's chances under them,
    each turn (``side``, ``gain`` over the side's rule before, ``kept``), whether they
    settled, and the positions the two rules reach (``reached``: chance above 0) with
    the men left there (as :attr:`BestRule.men`)."""

    outs: tuple[np.ndarray, np.ndarray]
    values: tuple[float, float]
    never: tuple[float, float]
    chances: dict[str, float]
    price_lost: tuple[float, float]
    rounds: list[dict[str, Any]]
    settled: bool
    indices: np.ndarray
    decisions: tuple[np.ndarray, np.ndarray]
    men: dict[str, np.ndarray]
    states: int


class _Chain:
    """A battle's chain sized and checked once, swept by :func:`both_rules`."""

    def __init__(self, scenario: Any, max_states: int) -> None:
        battle: Battle = scenario.model
        label = scenario.source.label
        if battle.strike_order != "random":
            raise BattleOddsError(
                f"{label}: the best retreat rule is solved for olympia's random strike "
                f"order only, not '{battle.strike_order}'"
            )
        self.states = chain_size(battle).states
        if self.states > max_states:
            raise BattleOddsError(
                f"{label}: too large for an exact best rule: {self.states:,} states, over "
                f"the limit of {max_states:,}; the exact best rule answers small olympia "
                "battles only"
            )
        self.battle = battle
        self.arrays = arrays = compile_battle(battle)
        self.space = space = layout(arrays)
        self.digits = (space.radix, space.stride, space.sradix, space.sstride)
        self.start = int(kx.opening(arrays.groups, space.stride, space.sradix, space.sstride))
        self.prices = np.stack([_group_prices(battle, arrays, s) for s in range(2)])
        a = arrays
        n = space.states
        self.reached = np.zeros(n, np.bool_)
        self.reached[self.start] = True
        no_rules = np.array([NO_STOP, NO_STOP], np.int64)
        for hi in range(n, 0, -SLICE):
            code = kr.mark_reached(
                a.groups, a.survive, a.sides, a.order, self.digits, self.start, hi,
                max(0, hi - SLICE), no_rules, self.reached,
            )  # fmt: skip
            if code != kr.OK:
                raise BattleOddsError(f"{label}: {_REFUSALS[code].format(other='other side')}")

    def respond(
        self, side: int, win: float, own: np.ndarray | None, theirs: np.ndarray
    ) -> tuple[float, np.ndarray]:
        """The side's value (and its choices) against the other's withdrawals
        ``theirs``: its best response (``own`` None), else its rule ``own``'s."""
        a, n = self.arrays, self.space.states
        value = np.zeros(n)
        decision = np.full(n, kr.UNREACHED, np.int8)
        fixed = np.zeros(0, np.int8) if own is None else own
        for lo in range(0, n, SLICE):
            kr.respond(
                a.groups, a.survive, a.sides, a.order, self.digits, self.start, lo,
                min(n, lo + SLICE), k.ATTACKER if side == 0 else k.DEFENDER, self.prices[side],
                float(win), self.reached, fixed, theirs, value, decision,
            )  # fmt: skip
        return float(value[self.start]), decision

    def push(self, outs: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The chance of reaching each position under both rules, and where it ends."""
        a, n = self.arrays, self.space.states
        mass = np.zeros(n)
        mass[self.start] = 1.0
        chances = np.zeros(kr.N_BOTH)
        both = np.stack(outs)
        for hi in range(n, 0, -SLICE):
            kr.push_both(
                a.groups, a.survive, a.sides, a.order, self.digits, self.start, hi,
                max(0, hi - SLICE), self.prices, both, mass, chances,
            )  # fmt: skip
        return mass, chances

    def men(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """The men left at ``indices`` per casualty column and each side's nobles."""
        return _men_at(self.arrays, self.space, indices)


def both_rules(
    scenario: Any,
    wins: tuple[float, float],
    max_states: int = MAX_STATES,
) -> BothRules:
    """Both sides choosing, exactly: alternate best responses (each a backward
    induction against the other's withdrawals), starting from both fighting to the
    end (the file's rules left out), until a round changes no side's value (settled)
    or MOST_ROUNDS rounds."""
    chain = _Chain(scenario, max_states)
    n = chain.space.states
    outs = [np.zeros(n, np.int8), np.zeros(n, np.int8)]
    rounds: list[dict[str, Any]] = []
    quiet = 0
    settled = False
    scale = max(1.0, *wins, float(np.abs(chain.prices).sum()))
    for turn in range(2 * MOST_ROUNDS):
        s = turn % 2
        before, _ = chain.respond(s, wins[s], outs[s], outs[1 - s])
        after, decision = chain.respond(s, wins[s], None, outs[1 - s])
        gain = after - before
        kept = gain > GAIN_TOLERANCE * scale
        if kept:
            outs[s] = (decision == kr.WITHDRAW).astype(np.int8)
        rounds.append({"side": SIDES[s], "gain": gain, "kept": kept})
        quiet = 0 if kept else quiet + 1
        if quiet == 2:
            settled = True
            break
    values, never = [], []
    for s in range(2):
        values.append(chain.respond(s, wins[s], outs[s], outs[1 - s])[0])
        never.append(chain.respond(s, wins[s], np.zeros(n, np.int8), outs[1 - s])[0])
    mass, chances = chain.push((outs[0], outs[1]))
    indices = np.flatnonzero(mass > 0.0)
    decisions = []
    for s in range(2):
        _, choice = chain.respond(s, wins[s], outs[s], outs[1 - s])
        d = choice[indices]
        if s == 1:  # the attacker looks first: where it withdraws the defender has no say
            d = np.where((d != kr.DECIDED) & (outs[0][indices] != 0), kr.THEY_WITHDRAW, d)
        decisions.append(d)
    return BothRules(
        outs=(outs[0], outs[1]),
        values=(values[0], values[1]),
        never=(never[0], never[1]),
        chances={
            "attacker_wins": float(chances[kr.B_ATTACKER_WON]),
            "defender_wins": float(chances[kr.B_DEFENDER_WON]),
            "draw": float(chances[kr.B_DRAWN]),
            "attacker_withdrew": float(chances[kr.B_ATTACKER_OUT]),
            "defender_withdrew": float(chances[kr.B_DEFENDER_OUT]),
        },
        price_lost=(float(chances[kr.B_PRICE_LOST]), float(chances[kr.B_PRICE_LOST + 1])),
        rounds=rounds,
        settled=settled,
        indices=indices,
        decisions=(decisions[0], decisions[1]),
        men=chain.men(indices),
        states=chain.states,
    )


def _men_at(arrays: Any, space: Any, indices: np.ndarray) -> dict[str, np.ndarray]:
    """The men left at chain ``indices`` per casualty column (``attacker.knight``) and
    each side's nobles still fighting (``attacker.nobles``)."""
    groups = arrays.groups
    men: dict[str, np.ndarray] = {}
    for g in range(len(groups)):
        count = (indices // space.stride[g]) % space.radix[g]
        if groups[g, k.G_KIND] == k.MAN:
            name = arrays.casualty_names[int(groups[g, k.G_COLUMN]) - k.O_CASUALTIES]
            key = name.removeprefix("casualties.")
        elif groups[g, k.G_KIND] == k.NOBLE:
            key = f"{SIDES[int(groups[g, k.G_SIDE])]}.{NOBLES}"
        else:
            continue
        men[key] = men.get(key, np.zeros(len(indices), np.int64)) + count
    return men
