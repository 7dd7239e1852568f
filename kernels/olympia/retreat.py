"""The best retreat rule for one side of a small Olympia battle, by backward induction.

The chain is the exact solver's (kernels/olympia/exact.py): positions after a change,
misses skipped, every change lowering the position's mixed-radix index. At a position
that leaves the battle undecided the side either withdraws, keeping what it has lost so
far, or fights on to the next change. Its value of a position is then

    decided:  W x [it won] - price of its men lost
    withdraw: - price of its men lost
    fight:    the expectation of the value of the next change's position

and the best rule takes the larger (fighting on a tie, so the rule withdraws only where
that gains). Successors have lower indices, so one sweep upwards values every position.
The other side keeps its own stop rule (men left only: the caller refuses ``after``);
where that holds the other side withdraws, whoever looks first, with the same value as
the side withdrawing itself. No side withdraws before the first strike: at the opening
the first strike is fought, and a miss brings the battle back to the opening, where the
side may then withdraw with nothing lost.

The index range of each pass is the caller's, so a large chain is solved in slices with
Python in between (Ctrl-C is seen between slices).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..stops import ATTACKER_WITHDREW
from . import layout
from .exact import ONCE, PLAYS, position, position_scratch, withdrawal

#: A position's decision: not reached, the battle decided there (won, lost, drawn), the
#: other side withdraws there, or the side's choice.
UNREACHED, DECIDED, THEY_WITHDRAW, FIGHT, WITHDRAW = -1, 0, 1, 2, 3
#: The chances of the best rule (:func:`push_mass`'s ``chances``): won, lost, drawn, the
#: side withdrew, the other side withdrew, then the expected price of its men lost.
C_WON, C_LOST, C_DRAWN, C_WITHDREW, C_THEY_WITHDREW, C_PRICE_LOST, N_CHANCES = range(7)
#: :func:`mark_reached`'s refusals: a position that can never end, the opening broken
#: before the first strike, the other side's rule holding at the opening.
OK, STUCK, BROKEN_OPENING, THEIR_RULE_AT_OPENING = 0, 1, 2, 3


@jit
def _price_lost(groups, cnt, price):
    lost = 0.0
    for g in range(groups.shape[0]):
        if price[g] != 0.0:
            lost += (groups[g, layout.G_COUNT] - cnt[g]) * price[g]
    return lost


@jit
def _their_rule_holds(index, groups, sides, their_stops, space, scratch, rule_men):
    """The other side's rule (``their_stops``: the side's own row empty) holds at
    ``index`` and no side is broken there."""
    return (
        withdrawal(index, groups, sides, their_stops, space, 0, scratch, rule_men)
        >= ATTACKER_WITHDREW
    )


@jit
def mark_reached(groups, survive, sides, order, space, start, hi, lo, their_stops, reached):
    """Mark in ``reached`` every position reachable from the reached positions with
    indices in ``[lo, hi)``, sweeping downwards (the opening marked by the caller): a
    superset of what any rule reaches. Returns OK or a refusal code."""
    scratch = position_scratch(groups.shape[0])
    succ, n_ev = scratch[7], scratch[9]
    rule_men = np.zeros((2, 2), np.int64)
    for index in range(hi - 1, lo - 1, -1):
        if not reached[index]:
            continue
        theirs = _their_rule_holds(index, groups, sides, their_stops, space, scratch, rule_men)
        status = position(index, start, groups, survive, sides, order, space, scratch)
        if index == start:
            if status == ONCE:
                return BROKEN_OPENING
            if status == PLAYS and theirs:
                return THEIR_RULE_AT_OPENING
        elif theirs:
            continue
        if status != PLAYS:
            continue
        if scratch[10][0] + scratch[10][1] <= 0.0:
            return STUCK
        for s in range(2):
            for k in range(n_ev[s]):
                reached[succ[s, k]] = True
    return OK


@jit
def _continuation(index, scratch, value):
    """The expected value of the next change's position and the chance a strike makes
    a change (``position`` just read ``index`` into ``scratch``)."""
    per_side, succ, prob, n_ev, q = scratch[6], scratch[7], scratch[8], scratch[9], scratch[10]
    ws = per_side[5]
    total = ws[0] + ws[1]
    p_change = (ws[0] * q[0] + ws[1] * q[1]) / total
    expected = 0.0
    for s in range(2):
        for k in range(n_ev[s]):
            expected += ws[s] / total * prob[s, k] * value[succ[s, k]]
    return expected / p_change, p_change


@jit
def best_values(
    groups, survive, sides, order, space, start, lo, hi, their_stops, side, price, win_value,
    reached, value, decision,
):  # fmt: skip
    """The value and decision of every reached position with index in ``[lo, hi)``,
    sweeping upwards (every lower index already valued)."""
    scratch = position_scratch(groups.shape[0])
    cnt = scratch[0]
    rule_men = np.zeros((2, 2), np.int64)
    for index in range(lo, hi):
        if not reached[index]:
            continue
        theirs = index != start and _their_rule_holds(
            index, groups, sides, their_stops, space, scratch, rule_men
        )
        status = position(index, start, groups, survive, sides, order, space, scratch)
        lost = _price_lost(groups, cnt, price)
        if status <= layout.DRAW:
            value[index] = (win_value if status == side else 0.0) - lost
            decision[index] = DECIDED
            continue
        if theirs:
            value[index] = -lost
            decision[index] = THEY_WITHDRAW
            continue
        fight, p_change = _continuation(index, scratch, value)
        if index == start:
            # The first strike is fought; after a miss the side may withdraw, nothing lost.
            withdraw = fight < -lost
            again = -lost if withdraw else fight
            value[index] = p_change * fight + (1.0 - p_change) * again
        else:
            withdraw = fight < -lost
            value[index] = -lost if withdraw else fight
        decision[index] = WITHDRAW if withdraw else FIGHT


@jit
def push_mass(
    groups, survive, sides, order, space, start, hi, lo, side, price, decision, mass, chances,
):  # fmt: skip
    """Push the battle's chance through the reached positions with indices in
    ``[lo, hi)``, downwards, following ``decision``; add where it ends to ``chances``
    (``mass[start]`` set to 1 by the caller)."""
    scratch = position_scratch(groups.shape[0])
    cnt = scratch[0]
    for index in range(hi - 1, lo - 1, -1):
        here = mass[index]
        if here == 0.0:
            continue
        status = position(index, start, groups, survive, sides, order, space, scratch)
        lost = _price_lost(groups, cnt, price)
        choice = decision[index]
        if choice == DECIDED:
            code = C_DRAWN if status == layout.DRAW else (C_WON if status == side else C_LOST)
            chances[code] += here
            chances[C_PRICE_LOST] += here * lost
            continue
        if choice == THEY_WITHDRAW or (choice == WITHDRAW and index != start):
            chances[C_THEY_WITHDREW if choice == THEY_WITHDRAW else C_WITHDREW] += here
            chances[C_PRICE_LOST] += here * lost
            continue
        p_change = _chance_of_change(scratch)
        going = here
        if index == start and choice == WITHDRAW:
            # A miss of the first strike withdraws; its changes fight on.
            chances[C_WITHDREW] += here * (1.0 - p_change)
            going = here * p_change
        _push_on(scratch, mass, going, p_change)


@jit(inline=True)
def _chance_of_change(scratch):
    """The chance a strike changes the position ``position`` just read."""
    ws, q = scratch[6][5], scratch[10]
    return (ws[0] * q[0] + ws[1] * q[1]) / (ws[0] + ws[1])


@jit(inline=True)
def _push_on(scratch, mass, going, p_change):
    """``going`` of the chance at the position ``position`` just read, on to its
    changes (a miss comes back to it: each change's share of all changes)."""
    ws, succ, prob, n_ev = scratch[6][5], scratch[7], scratch[8], scratch[9]
    total = ws[0] + ws[1]
    for s in range(2):
        for k in range(n_ev[s]):
            mass[succ[s, k]] += going * ws[s] / total * prob[s, k] / p_change


@jit
def respond(
    groups, survive, sides, order, space, start, lo, hi, side, price, win_value, reached,
    own_out, their_out, value, decision,
):  # fmt: skip
    """Both sides choosing: the side's value of every reached position with index in
    ``[lo, hi)``, sweeping upwards, when the other side withdraws after a strike that
    leaves the battle at a position where ``their_out`` is set (at the opening: after a
    first strike that missed). ``own_out`` empty: the side's best response, its choice
    (FIGHT or WITHDRAW) in ``decision`` at every undecided position, even where the
    other withdraws first (what it does there should the other fight on); else the
    value of the side's own rule ``own_out``. Withdrawing is worth the price of the
    men lost so far, whoever withdraws, so who looks first changes no value."""
    scratch = position_scratch(groups.shape[0])
    cnt = scratch[0]
    fixed = own_out.shape[0] > 0
    for index in range(lo, hi):
        if not reached[index]:
            continue
        status = position(index, start, groups, survive, sides, order, space, scratch)
        lost = _price_lost(groups, cnt, price)
        if status <= layout.DRAW:
            value[index] = (win_value if status == side else 0.0) - lost
            decision[index] = DECIDED
            continue
        fight, p_change = _continuation(index, scratch, value)
        theirs = their_out[index] != 0
        # A best response fights on a tie: where the other withdraws it lets it.
        withdraw = own_out[index] != 0 if fixed else (fight < -lost and not theirs)
        out = withdraw or theirs
        if index == start:
            # The first strike is fought; after a miss either side may withdraw.
            again = -lost if out else fight
            value[index] = p_change * fight + (1.0 - p_change) * again
        else:
            value[index] = -lost if out else fight
        decision[index] = WITHDRAW if withdraw else FIGHT


#: :func:`push_both`'s chances: the attacker won, the defender won, drawn, the attacker
#: withdrew, the defender withdrew, then each side's expected price of its men lost.
B_ATTACKER_WON, B_DEFENDER_WON, B_DRAWN, B_ATTACKER_OUT, B_DEFENDER_OUT = range(5)
B_PRICE_LOST, N_BOTH = 5, 7


@jit
def push_both(groups, survive, sides, order, space, start, hi, lo, prices, outs, mass, chances):
    """Both sides' rules (``outs[s]``: side s withdraws there, the attacker looked at
    first): push the battle's chance through the positions with indices in ``[lo,
    hi)``, downwards, adding where it ends to ``chances`` (``B_*``; ``mass[start]`` set
    to 1 by the caller, ``prices`` each side's price a group)."""
    scratch = position_scratch(groups.shape[0])
    cnt = scratch[0]
    for index in range(hi - 1, lo - 1, -1):
        here = mass[index]
        if here == 0.0:
            continue
        status = position(index, start, groups, survive, sides, order, space, scratch)
        out = -1
        if outs[0, index] != 0:
            out = 0
        elif outs[1, index] != 0:
            out = 1
        ends = status <= layout.DRAW or (out >= 0 and index != start)
        p_change = 1.0 if ends else _chance_of_change(scratch)
        ending = here if ends else (here * (1.0 - p_change) if out >= 0 else 0.0)
        if ending > 0.0:
            if status <= layout.DRAW:
                code = B_DRAWN
                if status == layout.ATTACKER:
                    code = B_ATTACKER_WON
                elif status == layout.DEFENDER:
                    code = B_DEFENDER_WON
            else:
                code = B_ATTACKER_OUT if out == 0 else B_DEFENDER_OUT
            chances[code] += ending
            for s in range(2):
                chances[B_PRICE_LOST + s] += ending * _price_lost(groups, cnt, prices[s])
        if ends:
            continue
        # At the opening a miss comes back to it: its changes carry what does not end.
        _push_on(scratch, mass, here - ending if out >= 0 else here, p_change)
