"""Olympia's arrays, column by column: the group table, the side table, the outcome row
and the plans and marks of a battle as it unfolds (docs/olympia.md). Every olympia kernel
and Age of Gods' (whose army is olympia's group table with a few more columns) read their
columns here, as ``layout.G_SIDE``; nothing here runs a battle.
"""

from __future__ import annotations

from .._jit import jit

# Columns of the group table.
G_SIDE, G_UNIT, G_ROW, G_COUNT, G_KIND, G_FRONT, G_REAR, G_DEF, G_VALUE = range(9)
G_PROTECTED, G_COLUMN, G_HEALTH, G_NONCOMBATANT, G_LEADER = range(9, 14)
N_GROUP_FIELDS = 14
MAN, NOBLE, ENGINE = 0, 1, 2

# Columns of the side table.
S_START, S_BREAK, S_HAS_STRUCTURE, S_STRUCTURE_DEF, S_STRUCTURE_DMG, S_LEADER_UNIT = range(6)
#: The attacker's row holds the cut: the step (Age of Gods: round) after which a battle
#: still undecided stops, its row the state then (0: none). Only Age of Gods' kernel reads
#: it; olympia's kernels record the steps asked (``asked``, ``rec``) instead.
S_CUT = 6
N_SIDE_FIELDS = 7

# Strike orders.
RANDOM, ALTERNATING = 0, 1
ATTACKER, DEFENDER, DRAW = 0, 1, 2
# ``O_WINNER`` is ``FIGHTING`` (kernels/stops.py) in a row recorded while the battle was
# still undecided, ATTACKER_WITHDREW or DEFENDER_WITHDREW where a stop rule ended it.

# Columns of the outcome row: winner, steps, then per-side extras (attacker, defender),
# then one casualty column per (side, fighter type) as the group table's G_COLUMN says.
O_WINNER, O_STEPS = 0, 1
EXTRAS = (
    "nobles_wounded",
    "nobles_killed",
    "nobles_captured",
    "leader_wounded",
    "leader_killed",
    "leader_captured",
    "structure_defense",
    "structure_damage",
    "structure_collapsed",
    "engines_lost",
)
(
    X_WOUNDED,
    X_KILLED,
    X_CAPTURED,
    X_LEADER_WOUNDED,
    X_LEADER_KILLED,
    X_LEADER_CAPTURED,
    X_STRUCTURE_DEF,
    X_STRUCTURE_DMG,
    X_COLLAPSED,
    X_ENGINES_LOST,
) = range(10)
O_EXTRAS = 2
O_CASUALTIES = O_EXTRAS + 2 * len(EXTRAS)
COLLAPSE_DAMAGE = 100
UNCHANGED, ONE_LESS, REFRESH = 0, 1, 2
#: Rows of the per-side scratch: value, alive, structure defense and damage, structure
#: standing, striker and target totals, alternating budget, and two for refresh().
N_PER_SIDE = 10
#: Battles per parallel work item: scratch arrays are allocated once per block.
BLOCK = 64

# The battle as it unfolds (docs/unfolding.md). Kernels take both sides' stop rules
# (kernels/stops.py's rows, ``after`` counted from the strikes this call fights: the
# caller takes a battle in progress's strikes off) and the steps whose rows to record
# (``asked``, ascending; none in a plain run) with a row for each (``rec``).
#: A call's plan (``plan``): the first ``after`` of either side (NO_HORIZON: none), and
#: whether either side has a rule (the men are counted at every change only then).
U_AFTER, U_RULES = 0, 1
N_PLAN = 2
#: A battle's marks: the next strike at which something is due (a step to record, an
#: ``after``), and how many asked steps are recorded.
M_HORIZON, M_NEXT = 0, 1
N_MARKS = 2
#: No step due: past any battle's strikes.
NO_HORIZON = 1 << 62


@jit(inline=True)
def extra(side, which):
    """Outcome column of extra ``which`` for ``side``."""
    return O_EXTRAS + 2 * which + side


__all__ = [
    "ALTERNATING",
    "ATTACKER",
    "BLOCK",
    "COLLAPSE_DAMAGE",
    "DEFENDER",
    "DRAW",
    "ENGINE",
    "EXTRAS",
    "G_COLUMN",
    "G_COUNT",
    "G_DEF",
    "G_FRONT",
    "G_HEALTH",
    "G_KIND",
    "G_LEADER",
    "G_NONCOMBATANT",
    "G_PROTECTED",
    "G_REAR",
    "G_ROW",
    "G_SIDE",
    "G_UNIT",
    "G_VALUE",
    "MAN",
    "M_HORIZON",
    "M_NEXT",
    "NOBLE",
    "NO_HORIZON",
    "N_GROUP_FIELDS",
    "N_MARKS",
    "N_PER_SIDE",
    "N_PLAN",
    "N_SIDE_FIELDS",
    "ONE_LESS",
    "O_CASUALTIES",
    "O_EXTRAS",
    "O_STEPS",
    "O_WINNER",
    "RANDOM",
    "REFRESH",
    "S_BREAK",
    "S_CUT",
    "S_HAS_STRUCTURE",
    "S_LEADER_UNIT",
    "S_START",
    "S_STRUCTURE_DEF",
    "S_STRUCTURE_DMG",
    "UNCHANGED",
    "U_AFTER",
    "U_RULES",
    "X_CAPTURED",
    "X_COLLAPSED",
    "X_ENGINES_LOST",
    "X_KILLED",
    "X_LEADER_CAPTURED",
    "X_LEADER_KILLED",
    "X_LEADER_WOUNDED",
    "X_STRUCTURE_DEF",
    "X_STRUCTURE_DMG",
    "X_WOUNDED",
    "extra",
]
