"""Stop rules: when a side withdraws from a battle still undecided (docs/unfolding.md).

Every ruleset's kernel checks both sides' rules at the end of every step of a battle
the step left undecided, after its own end of battle (a win, a break, blocks' own
retreat policies): a battle decided by a step is decided, never withdrawn from. The
attacker's rule is looked at first, so when both hold after the same step the attacker
withdraws and the defender holds the field (the documented answer). A side withdraws
with its survivors; what withdrawing costs (men lost in flight, nobles captured) is the
ruleset's, done by its kernel after :func:`withdrawing_side` names the side.

A rule is a row of ``N_STOP`` int64 values per side (``stops[side]``), made by
``simulator.rulesets.stop_rules.StopRule.encode``; a row of :data:`NO_STOP` values
never holds. Kernels take the two rows as data, so a battle with rules and one without
share one compiled signature.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

# Columns of a side's stop rule row.
#: withdraw when its men left (nobles not counted) are at most this many (-1: no rule).
STOP_AT_MOST = 0
#: withdraw after this many steps (0: no rule).
STOP_AFTER = 1
#: withdraw when the enemy's men are at least this many thousandths of its own (0: no
#: rule): ``outnumbered = 2.0`` is 2000.
STOP_OUTNUMBERED = 2
#: withdraw when its men of this kind are all gone: the ruleset's own index of the type
#: (a kind, a unit type, a block type), the one its kernel counts men by (-1: no rule).
STOP_GONE = 3
N_STOP = 4

#: The value of each column that says "no rule" (:func:`no_stops`).
NO_STOP = (-1, 0, 0, -1)

#: ``winner`` codes beyond a ruleset's 0 attacker, 1 defender, 2 draw: a side withdrew
#: (an outcome of its own, never the other side's win), and a battle
#: ``run_until`` stopped while still undecided (not an outcome: it is still going on).
ATTACKER_WITHDREW = 3
DEFENDER_WITHDREW = 4
FIGHTING = 5
#: ``withdrawing_side``'s answer when neither side withdraws.
NEITHER = -1


def no_stops() -> np.ndarray:
    """The ``(2, N_STOP)`` rows of a battle where neither side ever withdraws."""
    return np.array([NO_STOP, NO_STOP], np.int64)


@jit(inline=True)
def stop_holds(rule, men, enemy_men, gone_left, step):
    """Whether the stop ``rule`` (one side's row) holds for a side with ``men`` men left
    against ``enemy_men``, after ``step`` steps, with ``gone_left`` men of the rule's
    ``STOP_GONE`` type left (any value when the rule names none)."""
    if rule[STOP_AT_MOST] >= 0 and men <= rule[STOP_AT_MOST]:
        return True
    if rule[STOP_AFTER] > 0 and step >= rule[STOP_AFTER]:
        return True
    if rule[STOP_OUTNUMBERED] > 0 and enemy_men * 1000 >= rule[STOP_OUTNUMBERED] * men:
        return True
    return rule[STOP_GONE] >= 0 and gone_left <= 0


@jit(inline=True)
def withdrawing_side(stops, men_a, men_d, gone_left_a, gone_left_d, step):
    """The side that withdraws after ``step`` (0 attacker, 1 defender) or
    :data:`NEITHER`: the attacker's rule first. ``men_*`` are each side's men left
    (nobles not counted), ``gone_left_*`` its men of its rule's ``STOP_GONE`` type."""
    if stop_holds(stops[0], men_a, men_d, gone_left_a, step):
        return 0
    if stop_holds(stops[1], men_d, men_a, gone_left_d, step):
        return 1
    return NEITHER


@jit(inline=True)
def any_stop(stops):
    """Whether either side has a rule (a kernel skips the counting when neither has)."""
    for side in range(2):
        row = stops[side]
        if row[STOP_AT_MOST] >= 0 or row[STOP_AFTER] > 0:
            return True
        if row[STOP_OUTNUMBERED] > 0 or row[STOP_GONE] >= 0:
            return True
    return False
