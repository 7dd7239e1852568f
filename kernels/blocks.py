"""Blocks battles and sieges, one die at a time (docs/blocks.md, "The rules as simulated").

The battle is a table of blocks (attacker's first, then the defender's, each in the
order the scenario lists them) and a vector of parameters and policies; the kernel
fills one row of integers per battle. Nothing here knows about TOML, names or objects.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import prange, types

from . import _aside
from ._jit import INT_TABLE, INTS, STATE, address_of, compile_for, jit
from .rng import below, seed_battle
from .rows import copy_row
from .stops import (
    ATTACKER_WITHDREW,
    FIGHTING,
    NEITHER,
    STOP_GONE,
    any_stop,
    withdrawing_side,
)

# Columns of the block table.
B_SIDE, B_STEPS, B_INITIATIVE, B_FIRE, B_KNIGHTS, B_HARRY, B_PLACE, B_ARRIVES = range(8)
N_BLOCK_FIELDS = 8

# Where a block is. The first three are also the scenario's starting places (B_PLACE).
# np.int64, not int: count_at and steps_at, inlined by LLVM, take places as arguments, and
# each literal place would compile another copy of them.
RESERVE, FIELD, CASTLE, STORM, SALLY, GONE, AWAY, TRYING = (np.int64(p) for p in range(8))

# Entries of the parameter vector.
(
    P_CASTLE_LIMIT,
    P_ATTRITION,
    P_SIEGE,
    P_TURNS,
    P_WITHDRAW,
    P_STORM,
    P_SALLY,
    P_CHARGE,
    P_RETREAT,
    P_TIE_BREAK,
    P_LOST_FIELD,
    P_RELIEF,
    P_FIRST_SALLY,
    P_QUIET_SIEGE,
    P_CASTLE_MARKS,
    P_CHARGE_SIXES,
    P_RETREAT_ROUND,
    P_HARRY,
    P_CASTLE_WITHDRAW,
    P_STORM_WITHDRAW,
    P_RETREAT_ROAD,
    P_HARRY_FIRE,
    P_CUT,
    P_FROM_STEP,
    P_ROLE,
) = range(25)
N_PARAMS = 25
# ``O_WINNER`` is ``FIGHTING`` (kernels/stops.py) for a battle still undecided when
# phase ``params[P_CUT]`` (0: none) ends: its row is the state after that phase.
# ``params[P_FROM_STEP]``: the phases already fought (a battle in progress); the
# phase counter starts there (turn, round, reserves' arrival and the turn limit follow).
# ``params[P_ROLE]``: the side in the attacker's role as the battle starts or goes on.
# Policy codes: the index of the choice in simulator.rulesets.blocks.model.POLICIES.
WITHDRAW_NONE, WITHDRAW_FILL, WITHDRAW_WHEN_WEAKER = 0, 1, 2
STORM_NEVER, STORM_ROUND1, STORM_WHEN_STRONGER = 0, 1, 2
SALLY_NEVER, SALLY_WHEN_STRONGER = 0, 1
CHARGE_NEVER, CHARGE_ALWAYS = 0, 1
RETREAT_NEVER, RETREAT_WHEN_WEAKER, RETREAT_FROM_ROUND = 0, 1, 2
TIE_RANDOM, TIE_LISTED, TIE_WEAKEST = 0, 1, 2
HARRY_WITH_RETREAT, HARRY_ALWAYS = 0, 1
CASTLE_WITHDRAW_NEVER, CASTLE_WITHDRAW_WHEN_WEAKER = 0, 1
STORM_WITHDRAW_NEVER, STORM_WITHDRAW_WHEN_WEAKER = 0, 1
# Rule switches: 0 is the rule text's reading, 1 the released engine's (docs/blocks.md,
# "Rule text and released engine"); the index of the choice in
# simulator.rulesets.blocks.keys.SWITCHES.
LOST_FIELD_FIGHT_ON, LOST_FIELD_SWAP_ROLES = 0, 1
RELIEF_BESIEGED_RESERVES, RELIEF_FIELD_CONTESTED = 0, 1
FIRST_SALLY_NEVER, FIRST_SALLY_UNCONTESTED = 0, 1
QUIET_NO_RESERVES, QUIET_NO_BESIEGED_RESERVES = 0, 1
MARKS_KEPT, MARKS_CLEARED = 0, 1
SIXES_EVERY, SIXES_MISSED = 0, 1
HARRY_FIRE_CHARGE, HARRY_FIRE_PLAIN = 0, 1

ATTACKER, DEFENDER, DRAW = 0, 1, 2
NO_SIDE = -1
# The sides as the LLVM-inlined helpers' arguments: np.int64, as the places, or each
# literal side would compile another copy of each helper.
SIDE_ATTACKER, SIDE_DEFENDER, SIDE_ANY = np.int64(ATTACKER), np.int64(DEFENDER), np.int64(NO_SIDE)

# Columns of the outcome row: winner, steps, flags, per-side totals (attacker, defender),
# then steps lost by each block and whether it was eliminated.
O_WINNER, O_STEPS = 0, 1
FLAGS = (
    "attacker_won_field",
    "attacker_retreated",
    "defender_retreated",
    "castle_stormed",
    "castle_fell_to_attrition",
    "siege_continues",
    "defender_won",
    "roles_swapped",
    "storm_fought",
    "sally_made",
)
(
    F_ATTACKER_WON_FIELD,
    F_ATTACKER_RETREATED,
    F_DEFENDER_RETREATED,
    F_CASTLE_STORMED,
    F_CASTLE_FELL,
    F_SIEGE_CONTINUES,
    F_DEFENDER_WON,
    F_ROLES_SWAPPED,
    F_STORM_FOUGHT,
    F_SALLY_MADE,
) = range(10)
O_FLAGS = 2
SIDE_TOTALS = ("steps_lost", "blocks_eliminated")
X_STEPS_LOST, X_BLOCKS_ELIMINATED = 0, 1
O_TOTALS = O_FLAGS + len(FLAGS)
O_BLOCKS = O_TOTALS + 2 * len(SIDE_TOTALS)
#: Phases of a game turn: three combat rounds, then siege attrition.
PHASES_PER_TURN = 4
ATTRITION_PHASE = 4
#: Battles per parallel work item: scratch arrays are allocated once per block.
BLOCK = 64


def n_columns(n_blocks: int, placed: bool = False) -> int:
    """A row's columns; ``placed``: then where each block ended (a place at O_BLOCKS +
    2n + b), which a wave's fight reads (BlocksPrepared.run_fought)."""
    return O_BLOCKS + (3 if placed else 2) * n_blocks


@jit(counted=False, llvm_inline=True)
def count_at(blocks, pos, side, place_a, place_b):
    n = 0
    for b in range(blocks.shape[0]):
        if blocks[b, B_SIDE] == side and (pos[b] == place_a or pos[b] == place_b):
            n += 1
    return n


@jit(counted=False, llvm_inline=True)
def steps_at(blocks, steps, pos, side, place_a, place_b):
    total = 0
    for b in range(blocks.shape[0]):
        if blocks[b, B_SIDE] == side and (pos[b] == place_a or pos[b] == place_b):
            total += steps[b]
    return total


@jit(counted=False, llvm_inline=True)
def present(blocks, pos, side):
    """A side is still in the battle while it has a block anywhere in the area or on the road."""
    for b in range(blocks.shape[0]):  # noqa: SIM110 - a plain loop is what Numba compiles best
        if blocks[b, B_SIDE] == side and pos[b] <= SALLY:
            return True
    return False


@jit(counted=False, llvm_inline=True)
def move_all(blocks, pos, side, source, target):
    for b in range(blocks.shape[0]):
        if pos[b] == source and (side == NO_SIDE or blocks[b, B_SIDE] == side):
            pos[b] = target


@jit(inline=True)
def lose_step(blocks, steps, pos, b, row):
    s = blocks[b, B_SIDE]
    steps[b] -= 1
    row[O_BLOCKS + b] += 1
    row[O_TOTALS + 2 * X_STEPS_LOST + s] += 1
    if steps[b] == 0:
        pos[b] = GONE
        mark_eliminated = O_BLOCKS + blocks.shape[0] + b
        row[mark_eliminated] = 1
        row[O_TOTALS + 2 * X_BLOCKS_ELIMINATED + s] += 1


@jit(inline=True)
def choose_target(state, blocks, steps, pos, mark, enemy, place_a, place_b, castle, tie_break):
    """The enemy block the next hit goes to, or -1 when there is none."""
    n = blocks.shape[0]
    if castle:
        for b in range(n):
            if blocks[b, B_SIDE] == enemy and pos[b] == CASTLE and mark[b] == 1:
                return b
    most = 0
    tied = 0
    first = -1
    for b in range(n):
        if blocks[b, B_SIDE] == enemy and (pos[b] == place_a or pos[b] == place_b):
            if steps[b] > most:
                most = steps[b]
                tied = 1
                first = b
            elif steps[b] == most:
                tied += 1
    if tied <= 1 or tie_break == TIE_LISTED:
        return first
    if tie_break == TIE_WEAKEST:
        # The owner gives the hit to the equal block of least firepower (first listed).
        weakest = first
        for b in range(n):
            if (
                blocks[b, B_SIDE] == enemy
                and (pos[b] == place_a or pos[b] == place_b)
                and steps[b] == most
                and blocks[b, B_FIRE] < blocks[weakest, B_FIRE]
            ):
                weakest = b
        return weakest
    k = below(state, tied)
    for b in range(n):
        if (
            blocks[b, B_SIDE] == enemy
            and (pos[b] == place_a or pos[b] == place_b)
            and steps[b] == most
        ):
            if k == 0:
                return b
            k -= 1
    return first


@jit(inline=True)
def fire(
    state, blocks, params, steps, pos, mark, b, enemy, place_a, place_b, castle, charging, row
):
    """Block ``b`` rolls one die per step; hits go one at a time to the strongest enemy."""
    firepower = blocks[b, B_FIRE] + (1 if charging else 0)
    hits = 0
    sixes = 0
    for _ in range(steps[b]):
        roll = below(state, 6) + 1
        if roll <= firepower:
            hits += 1
        if charging and roll == 6 and (params[P_CHARGE_SIXES] == SIXES_EVERY or roll > firepower):
            sixes += 1
    for _ in range(hits):
        target = choose_target(
            state, blocks, steps, pos, mark, enemy, place_a, place_b, castle, params[P_TIE_BREAK]
        )
        if target < 0:
            break  # hits beyond the enemy's remaining steps are lost
        if castle:
            if mark[target] == 1:
                mark[target] = 0
                lose_step(blocks, steps, pos, target, row)
            else:
                mark[target] = 1
        else:
            lose_step(blocks, steps, pos, target, row)
    for _ in range(sixes):
        if steps[b] > 0:
            lose_step(blocks, steps, pos, b, row)


# The helpers are compiled each on its own and inlined by LLVM (llvm_inline), but for
# lose_step, fire and choose_target (per hit), inlined by Numba into field_round and
# castle_round: with every helper inlined by Numba, one_battle was 31 of blocks' 50 s of
# compiling. fire by LLVM ran some battles about a tenth slower (benchmarks-history.md, issue
# 37's third round), lose_step by LLVM siege_attrition 6% slower (2026-12-07); Numba's
# inlining of each of the small ones at each call site (present, move_all, clear_marks,
# ...) typed it again there: with them and castle_round inlined by Numba, one_battle's own
# compile was 14.5 CPU s, by LLVM 7.4, the battles as fast (docs/benchmarks.md, "Blocks'
# cold first answer"; castle_round by LLVM no longer ran storm slower).
@jit(counted=False, llvm_inline=True)
def field_round(state, blocks, params, steps, pos, mark, attacker, combat_round, castle_owner, row):
    """Every block in the field (and sallying) fires once: defender A, attacker A, ...
    unless its side's policy retreats it or withdraws it into the castle instead."""
    n = blocks.shape[0]
    for initiative in range(3):
        for turn in range(2):
            side = 1 - attacker if turn == 0 else attacker
            enemy = 1 - side
            for b in range(n):
                if (
                    blocks[b, B_SIDE] != side
                    or blocks[b, B_INITIATIVE] != initiative
                    or (pos[b] != FIELD and pos[b] != SALLY)
                ):
                    continue
                if count_at(blocks, pos, enemy, FIELD, SALLY) == 0:
                    return
                may_retreat = (
                    params[P_RETREAT_ROAD] == 1
                    and pos[b] == FIELD
                    and combat_round >= params[P_RETREAT_ROUND]
                )
                # Counting steps is the dearest part of a round: only when a policy asks.
                weaker = (
                    (may_retreat and params[P_RETREAT] == RETREAT_WHEN_WEAKER)
                    or params[P_CASTLE_WITHDRAW] == CASTLE_WITHDRAW_WHEN_WEAKER
                ) and steps_at(blocks, steps, pos, side, FIELD, SALLY) < steps_at(
                    blocks, steps, pos, enemy, FIELD, SALLY
                )
                retreats = may_retreat and (
                    (params[P_RETREAT] == RETREAT_WHEN_WEAKER and weaker)
                    or (params[P_RETREAT] == RETREAT_FROM_ROUND and side == attacker)
                )
                hit_and_run = (
                    may_retreat
                    and blocks[b, B_HARRY] == 1
                    and (retreats or params[P_HARRY] == HARRY_ALWAYS)
                )
                if retreats and not hit_and_run:
                    pos[b] = AWAY
                    row[O_FLAGS + F_ATTACKER_RETREATED + side] = 1
                    continue
                if (
                    not hit_and_run
                    and params[P_CASTLE_WITHDRAW] == CASTLE_WITHDRAW_WHEN_WEAKER
                    and weaker
                    and (
                        pos[b] == SALLY
                        or (
                            side != attacker
                            and side == castle_owner
                            and count_at(blocks, pos, side, CASTLE, SALLY) < params[P_CASTLE_LIMIT]
                        )
                    )
                ):
                    pos[b] = CASTLE
                    continue
                # The engine's harry is an action of its own, a plain fire: a knights
                # block that harries does not charge there.
                charging = (
                    params[P_CHARGE] == CHARGE_ALWAYS
                    and blocks[b, B_KNIGHTS] == 1
                    and not (hit_and_run and params[P_HARRY_FIRE] == HARRY_FIRE_PLAIN)
                )
                fire(
                    state,
                    blocks,
                    params,
                    steps,
                    pos,
                    mark,
                    b,
                    enemy,
                    FIELD,
                    SALLY,
                    False,
                    charging,
                    row,
                )
                if hit_and_run and pos[b] == FIELD:
                    pos[b] = AWAY
                    row[O_FLAGS + F_ATTACKER_RETREATED + side] = 1


@jit(counted=False, llvm_inline=True)
def castle_round(state, blocks, params, steps, pos, mark, besieged, row):
    """Stormers against the castle's blocks; the besieged side defends and fires first."""
    n = blocks.shape[0]
    for initiative in range(3):
        for turn in range(2):
            side = besieged if turn == 0 else 1 - besieged
            for b in range(n):
                if blocks[b, B_SIDE] != side or blocks[b, B_INITIATIVE] != initiative:
                    continue
                # The castle's blocks fire at the stormers; the stormers at the castle's
                # blocks, which take two hits a step.
                if side == besieged and pos[b] == CASTLE:
                    enemy, area, at_castle = 1 - side, STORM, False
                elif side != besieged and pos[b] == STORM:
                    enemy, area, at_castle = besieged, CASTLE, True
                else:
                    continue
                if count_at(blocks, pos, enemy, area, area) == 0:
                    return
                if (
                    at_castle
                    and params[P_STORM_WITHDRAW] == STORM_WITHDRAW_WHEN_WEAKER
                    and steps_at(blocks, steps, pos, side, STORM, STORM)
                    < steps_at(blocks, steps, pos, besieged, CASTLE, CASTLE)
                ):
                    pos[b] = FIELD  # the stormer withdraws from the storm instead of firing
                    continue
                fire(
                    state,
                    blocks,
                    params,
                    steps,
                    pos,
                    mark,
                    b,
                    enemy,
                    area,
                    area,
                    at_castle,
                    False,
                    row,
                )


@jit(counted=False, llvm_inline=True)
def try_storm(blocks, params, steps, pos, besieged, combat_round):
    """Continue a storm, or declare one if the policy says so. Returns whether to storm.
    Stormers join strongest first (listed order on ties) up to the castle limit."""
    besieging = 1 - besieged
    ongoing = count_at(blocks, pos, besieging, STORM, STORM) > 0
    policy = params[P_STORM]
    if not ongoing and (policy == STORM_NEVER or (policy == STORM_ROUND1 and combat_round != 1)):
        return False
    n = blocks.shape[0]
    while count_at(blocks, pos, besieging, STORM, TRYING) < params[P_CASTLE_LIMIT]:
        best = -1
        for b in range(n):
            if (
                blocks[b, B_SIDE] == besieging
                and pos[b] == FIELD
                and (best < 0 or steps[b] > steps[best])
            ):
                best = b
        if best < 0:
            break
        pos[best] = TRYING
    stormers = steps_at(blocks, steps, pos, besieging, STORM, TRYING)
    declared = ongoing or (
        stormers > 0
        and (
            policy == STORM_ROUND1
            or stormers >= steps_at(blocks, steps, pos, besieged, CASTLE, CASTLE)
        )
    )
    move_all(blocks, pos, besieging, TRYING, STORM if declared else FIELD)
    return declared


@jit(counted=False, llvm_inline=True)
def sally_wanted(blocks, params, steps, pos, besieged):
    """The besieged sally when what they would put in the field outnumbers the enemy's field."""
    if (
        params[P_SALLY] != SALLY_WHEN_STRONGER
        or count_at(blocks, pos, besieged, CASTLE, CASTLE) == 0
    ):
        return False
    ours = steps_at(blocks, steps, pos, besieged, CASTLE, FIELD) + steps_at(
        blocks, steps, pos, besieged, SALLY, SALLY
    )
    theirs = steps_at(blocks, steps, pos, 1 - besieged, FIELD, SALLY)
    return theirs > 0 and ours > theirs


@jit(counted=False, llvm_inline=True)
def contested(blocks, pos):
    return (
        count_at(blocks, pos, SIDE_ATTACKER, FIELD, SALLY) > 0
        and count_at(blocks, pos, SIDE_DEFENDER, FIELD, SALLY) > 0
    )


@jit(counted=False)
def finish(blocks, pos, steps_value, row):
    """The battle's winner and length (its steps), once a battle: called, not inlined at
    its four call sites (inlining it would compile four copies and make no battle faster)."""
    a = present(blocks, pos, SIDE_ATTACKER)
    d = present(blocks, pos, SIDE_DEFENDER)
    winner = DRAW
    if a and not d:
        winner = ATTACKER
    elif d and not a:
        winner = DEFENDER
    row[O_WINNER] = winner
    row[O_STEPS] = steps_value
    row[O_FLAGS + F_DEFENDER_WON] = 1 if winner == DEFENDER else 0
    if (
        count_at(blocks, pos, SIDE_ATTACKER, FIELD, SALLY) > 0
        and count_at(blocks, pos, SIDE_DEFENDER, FIELD, SALLY) == 0
    ):
        row[O_FLAGS + F_ATTACKER_WON_FIELD] = 1
    # Where each block ends (RESERVE .. AWAY), in a row with room for it: the side a
    # battle left, for a next wave (n_columns(n, placed=True)).
    n = blocks.shape[0]
    if row.shape[0] > O_BLOCKS + 2 * n:
        for b in range(n):
            row[O_BLOCKS + 2 * n + b] = pos[b]


@jit(counted=False)
def stopped(blocks, pos, phase, row):
    """The battle stops undecided after ``phase`` (the cut): its row is the state then."""
    finish(blocks, pos, phase, row)
    row[O_WINNER] = FIGHTING


@jit(counted=False, llvm_inline=True)
def in_field(blocks, pos, side):
    """The side's blocks outside the castle and off the road (stormers too), as the
    engine counts a contested field."""
    return count_at(blocks, pos, side, FIELD, SALLY) + count_at(blocks, pos, side, STORM, STORM)


@jit(counted=False, llvm_inline=True)
def clear_marks(mark):
    for b in range(mark.shape[0]):
        mark[b] = 0


@jit(inline=True)
def men_left(blocks, steps, pos, side):
    """A stop rule's men: the side's steps still in the battle (in the area or on the
    road to it; retreated and eliminated blocks are out of it)."""
    total = 0
    for b in range(blocks.shape[0]):
        if blocks[b, B_SIDE] == side and pos[b] <= SALLY:
            total += steps[b]
    return total


@jit(inline=True)
def block_left(steps, pos, b):
    """The steps block ``b`` has in the battle (a stop rule's ``gone``; -1: no block)."""
    if b < 0 or pos[b] > SALLY:
        return 0
    return steps[b]


@jit(counted=False)
def withdraw(blocks, params, steps, pos, side, attacker, castle_owner, phase, row):
    """``side`` withdraws after ``phase``, as the text's after-battle retreat goes:
    sallying blocks back into the castle, stormers back to the field, then the side's
    field blocks leave: into its castle while there is room when it holds one in the
    defender's role, else by the road (with no road, eliminated); its reserves turn back
    and its castle blocks stay. The row is the battle's end: ``side`` withdrew."""
    move_all(blocks, pos, SIDE_ANY, SALLY, CASTLE)
    move_all(blocks, pos, SIDE_ANY, STORM, FIELD)
    into_castle = side != attacker and side == castle_owner
    for b in range(blocks.shape[0]):
        if blocks[b, B_SIDE] != side:
            continue
        if pos[b] == RESERVE:
            pos[b] = AWAY
        elif pos[b] == FIELD:
            if into_castle and count_at(blocks, pos, side, CASTLE, CASTLE) < params[P_CASTLE_LIMIT]:
                pos[b] = CASTLE
                continue
            if params[P_RETREAT_ROAD] == 1:
                pos[b] = AWAY
            else:
                while pos[b] == FIELD:
                    lose_step(blocks, steps, pos, b, row)
            row[O_FLAGS + F_ATTACKER_RETREATED + side] = 1
    finish(blocks, pos, phase, row)
    row[O_WINNER] = ATTACKER_WITHDREW + side
    row[O_FLAGS + F_DEFENDER_WON] = 0


@jit(counted=False)
def phases_end(
    blocks, params, stops, steps, pos, lo, hi, attacker, castle_owner, rec_steps, track, row
):
    """Phases ``lo .. hi`` are over (more than one when the rounds left are skipped on
    the way to attrition: nothing changes in them) and the battle is undecided: a stop
    rule (kernels/stops.py) may withdraw a side, the cut stop the battle, and each asked
    phase's state goes to ``track``. Returns whether the battle has stopped. Called, not
    inlined, at its five sites: only a run that asks for it comes here."""
    rules = any_stop(stops)
    for phase in range(lo, hi + 1):
        if rules:
            side = withdrawing_side(
                stops,
                men_left(blocks, steps, pos, ATTACKER),
                men_left(blocks, steps, pos, DEFENDER),
                block_left(steps, pos, stops[0, STOP_GONE]),
                block_left(steps, pos, stops[1, STOP_GONE]),
                phase,
            )
            if side != NEITHER:
                withdraw(blocks, params, steps, pos, side, attacker, castle_owner, phase, row)
                return True
        if phase == params[P_CUT]:
            stopped(blocks, pos, phase, row)
            return True
        record(blocks, pos, phase, rec_steps, track, row)
    return False


@jit(inline=True)
def record(blocks, pos, phase, rec_steps, track, row):
    """The state after ``phase`` into each row of ``track`` asked for it."""
    for k in range(rec_steps.shape[0]):
        if rec_steps[k] == phase:
            copy_row(row, track[k])
            stopped(blocks, pos, phase, track[k])


@jit(counted=False, llvm_inline=True)
def one_battle(
    state,
    blocks,
    params,
    stops,
    steps,
    pos,
    mark,
    row,
    rec_steps,
    track,
    watching,
    cut,
    start,
    role,
):
    """One battle into ``row``, inlined by LLVM into :func:`_plain_battles`' and
    :func:`_battles`' loops over a block of battles. Called once a battle instead,
    through its address or directly from that loop, siege_attrition's 300 ns battles ran
    5-7% slower than at 98979f3; inlined, 10% faster (docs/benchmarks.md, sixth round).
    Inlined by Numba instead, the loop's compile took about 2 CPU seconds less (one LLVM
    pass over the battle, not two), but siege_attrition ran 4-6% slower (2026-12-07).
    ``watching``: a stop rule or a recording asks for every phase's end
    (:func:`phases_end`); so does the ``cut``. ``start`` is ``params[P_FROM_STEP]``,
    ``role`` ``params[P_ROLE]``."""
    n = blocks.shape[0]
    row[:] = 0
    for b in range(n):
        steps[b] = blocks[b, B_STEPS]
        pos[b] = blocks[b, B_PLACE]
        mark[b] = 0
    new_battle = params[P_SIEGE] == 0
    limit = params[P_CASTLE_LIMIT]
    # A battle in progress: the phases fought already, the turn it is in and the phase
    # it goes on with (1-3 a combat round, 4 attrition).
    first_turn = start // PHASES_PER_TURN + 1
    first_phase = start % PHASES_PER_TURN + 1
    engine_relief = params[P_RELIEF] == RELIEF_FIELD_CONTESTED
    marks_cleared = params[P_CASTLE_MARKS] == MARKS_CLEARED
    # Combat deployment: the defender may withdraw field blocks into the castle.
    if (
        new_battle
        and start == 0
        and params[P_WITHDRAW] != WITHDRAW_NONE
        and (
            params[P_WITHDRAW] == WITHDRAW_FILL
            or steps_at(blocks, steps, pos, SIDE_DEFENDER, FIELD, FIELD)
            < steps_at(blocks, steps, pos, SIDE_ATTACKER, FIELD, FIELD)
        )
    ):
        for b in range(n):
            if (
                blocks[b, B_SIDE] == DEFENDER
                and pos[b] == FIELD
                and count_at(blocks, pos, SIDE_DEFENDER, CASTLE, CASTLE) < limit
            ):
                pos[b] = CASTLE
    # np.int64, not the literal (and the sides below with it): a Literal[int] besieged
    # compiled try_storm and sally_wanted a second time.
    besieged = np.int64(NO_SIDE)
    for b in range(n):
        if pos[b] == CASTLE:
            besieged = blocks[b, B_SIDE]
    # The side that may withdraw into the castle during a field battle.
    castle_owner = besieged
    if castle_owner == NO_SIDE and limit > 0:
        castle_owner = np.int64(DEFENDER)
    # The side in the attacker's role: the attacker's, unless a battle in progress
    # gave it to the defender (a relief arrived, a sally).
    attacker = role
    if attacker != ATTACKER:
        row[O_FLAGS + F_ROLES_SWAPPED] = 1
    watching = watching or cut > 0
    if watching and start > 0:
        # Asked for a phase fought already: the battle as the scenario gives it.
        for k in range(rec_steps.shape[0]):
            if rec_steps[k] <= start:
                copy_row(row, track[k])
                stopped(blocks, pos, rec_steps[k], track[k])
        if 0 < cut <= start:
            stopped(blocks, pos, cut, row)
            return
    for turn in range(first_turn, params[P_TURNS] + 1):
        base = PHASES_PER_TURN * (turn - 1)
        resumed = turn == first_turn and first_phase > 1
        # Resumed at attrition: the turn's rounds and its retreat are over.
        straight_to_attrition = resumed and first_phase == ATTRITION_PHASE
        if turn > 1 and not resumed:
            # Reserves kept off the field by an early siege attrition are in the area now.
            move_all(blocks, pos, SIDE_ANY, RESERVE, FIELD)
            if marks_cleared:
                clear_marks(mark)
        for combat_round in range(1, 4):
            if resumed and combat_round < first_phase:
                continue  # fought already (a constant count of rounds: LLVM unrolls them)
            if (
                combat_round == 1
                and params[P_QUIET_SIEGE] == QUIET_NO_BESIEGED_RESERVES
                and besieged != NO_SIDE
                and count_at(blocks, pos, besieged, CASTLE, CASTLE) > 0
                and in_field(blocks, pos, 1 - besieged) == 0
            ):
                if watching and phases_end(
                    blocks,
                    params,
                    stops,
                    steps,
                    pos,
                    base + 1,
                    base + 1,
                    attacker,
                    castle_owner,
                    rec_steps,
                    track,
                    row,
                ):
                    return
                continue  # the engine skips round 1 when the besiegers are all on the road
            if combat_round >= 2:
                was_contested = (
                    engine_relief
                    and in_field(blocks, pos, SIDE_ATTACKER) > 0
                    and in_field(blocks, pos, SIDE_DEFENDER) > 0
                )
                relief = False
                for b in range(n):
                    if pos[b] == RESERVE and blocks[b, B_ARRIVES] == combat_round:
                        pos[b] = FIELD
                        relief = relief or blocks[b, B_SIDE] == besieged
                if engine_relief:
                    # The engine: relief is the field turning contested under a siege,
                    # whichever side's reserves arrive.
                    relief = (
                        besieged != NO_SIDE
                        and count_at(blocks, pos, besieged, CASTLE, CASTLE) > 0
                        and not was_contested
                        and in_field(blocks, pos, SIDE_ATTACKER) > 0
                        and in_field(blocks, pos, SIDE_DEFENDER) > 0
                    )
                if relief:
                    move_all(blocks, pos, SIDE_ANY, STORM, FIELD)
                    if marks_cleared:
                        clear_marks(mark)
                    attacker = besieged
            sally_allowed = besieged != NO_SIDE and not (
                new_battle and turn == 1 and combat_round == 1
            )
            castle_held = (
                besieged != NO_SIDE and count_at(blocks, pos, besieged, CASTLE, CASTLE) > 0
            )
            field_fought = False
            if contested(blocks, pos):
                if sally_allowed and sally_wanted(blocks, params, steps, pos, besieged):
                    move_all(blocks, pos, besieged, CASTLE, SALLY)
                    row[O_FLAGS + F_SALLY_MADE] = 1
                field_fought = True
            elif castle_held and try_storm(blocks, params, steps, pos, besieged, combat_round):
                attacker = 1 - besieged
                row[O_FLAGS + F_STORM_FOUGHT] = 1
                castle_round(state, blocks, params, steps, pos, mark, besieged, row)
                if count_at(blocks, pos, besieged, CASTLE, CASTLE) == 0:
                    row[O_FLAGS + F_CASTLE_STORMED] = 1
                    if engine_relief and present(blocks, pos, besieged):
                        # The engine: the stormers come out and, with the besieged side
                        # still on the road, the sides swap roles and the besiegers hold
                        # the empty castle.
                        move_all(blocks, pos, SIDE_ANY, STORM, FIELD)
                        attacker = besieged
                        castle_owner = 1 - besieged
                if marks_cleared and count_at(blocks, pos, 1 - besieged, STORM, STORM) == 0:
                    clear_marks(mark)  # the storm is over
            elif (
                castle_held
                and (
                    sally_allowed
                    or (params[P_FIRST_SALLY] == FIRST_SALLY_UNCONTESTED and besieged != NO_SIDE)
                )
                and sally_wanted(blocks, params, steps, pos, besieged)
            ):
                attacker = besieged
                move_all(blocks, pos, besieged, CASTLE, SALLY)
                row[O_FLAGS + F_SALLY_MADE] = 1
                field_fought = True
            elif (
                params[P_QUIET_SIEGE] == QUIET_NO_BESIEGED_RESERVES
                and besieged != NO_SIDE
                and count_at(blocks, pos, besieged, RESERVE, RESERVE) == 0
            ) or (
                count_at(blocks, pos, SIDE_ATTACKER, RESERVE, RESERVE)
                + count_at(blocks, pos, SIDE_DEFENDER, RESERVE, RESERVE)
                == 0
            ):
                straight_to_attrition = True
            if field_fought:
                # One call site for both ways into a field round: field_round is inlined
                # (it runs every round), and each site would be a copy of its code.
                field_round(
                    state,
                    blocks,
                    params,
                    steps,
                    pos,
                    mark,
                    attacker,
                    combat_round,
                    castle_owner,
                    row,
                )
            if (
                field_fought
                and params[P_LOST_FIELD] == LOST_FIELD_SWAP_ROLES
                and count_at(blocks, pos, attacker, FIELD, SALLY) > 0
                and count_at(blocks, pos, 1 - attacker, FIELD, SALLY) == 0
                and count_at(blocks, pos, 1 - attacker, RESERVE, RESERVE) > 0
            ):
                # The engine: the defender's field force is gone while its reserves are
                # coming, so the sides swap roles; the new defender takes the castle if
                # nobody holds it.
                if count_at(blocks, pos, 1 - attacker, CASTLE, CASTLE) == 0:
                    castle_owner = attacker
                attacker = 1 - attacker
            if params[P_CASTLE_WITHDRAW] != CASTLE_WITHDRAW_NEVER:
                for b in range(n):
                    if pos[b] == CASTLE:
                        besieged = blocks[b, B_SIDE]  # withdrawn mid-battle: a siege now
            if attacker != ATTACKER:
                row[O_FLAGS + F_ROLES_SWAPPED] = 1
            if not (present(blocks, pos, SIDE_ATTACKER) and present(blocks, pos, SIDE_DEFENDER)):
                finish(blocks, pos, base + combat_round, row)
                return
            # A phase skipped on the way to attrition leaves the state as it is; round 3's
            # phase ends after the retreat below. (watching first: a run that asks for
            # nothing pays one comparison a round.)
            if watching and (straight_to_attrition or combat_round < 3):
                last_phase = base + 3 if straight_to_attrition else base + combat_round
                if phases_end(
                    blocks,
                    params,
                    stops,
                    steps,
                    pos,
                    base + combat_round,
                    last_phase,
                    attacker,
                    castle_owner,
                    rec_steps,
                    track,
                    row,
                ):
                    return
            if straight_to_attrition:
                break
        if not straight_to_attrition:
            # After battle retreat.
            move_all(blocks, pos, SIDE_ANY, SALLY, CASTLE)
            move_all(blocks, pos, SIDE_ANY, STORM, FIELD)
            if marks_cleared:
                clear_marks(mark)
            if contested(blocks, pos):
                if params[P_RETREAT_ROAD] == 1:
                    move_all(blocks, pos, attacker, FIELD, AWAY)
                else:
                    # No road to retreat by: the blocks that must retreat are eliminated.
                    for b in range(n):
                        while blocks[b, B_SIDE] == attacker and pos[b] == FIELD:
                            lose_step(blocks, steps, pos, b, row)
                row[O_FLAGS + F_ATTACKER_RETREATED + attacker] = 1
            if not (present(blocks, pos, SIDE_ATTACKER) and present(blocks, pos, SIDE_DEFENDER)):
                finish(blocks, pos, base + 3, row)
                return
            if watching and phases_end(
                blocks,
                params,
                stops,
                steps,
                pos,
                base + 3,
                base + 3,
                attacker,
                castle_owner,
                rec_steps,
                track,
                row,
            ):
                return
        # Siege attrition: both sides are still here, so one holds the castle, the other the field.
        for b in range(n):
            if (
                blocks[b, B_SIDE] == besieged
                and pos[b] == CASTLE
                and below(state, 6) + 1 <= params[P_ATTRITION]
            ):
                lose_step(blocks, steps, pos, b, row)
        if besieged != NO_SIDE and count_at(blocks, pos, besieged, CASTLE, CASTLE) == 0:
            row[O_FLAGS + F_CASTLE_FELL] = 1
        if not (present(blocks, pos, SIDE_ATTACKER) and present(blocks, pos, SIDE_DEFENDER)):
            finish(blocks, pos, base + ATTRITION_PHASE, row)
            return
        # The last turn's attrition ends the battle: a siege still going is a draw.
        if (
            watching
            and turn < params[P_TURNS]
            and phases_end(
                blocks,
                params,
                stops,
                steps,
                pos,
                base + ATTRITION_PHASE,
                base + ATTRITION_PHASE,
                attacker,
                castle_owner,
                rec_steps,
                track,
                row,
            )
        ):
            return
    finish(blocks, pos, PHASES_PER_TURN * params[P_TURNS], row)
    row[O_FLAGS + F_SIEGE_CONTINUES] = 1


@functools.cache
def battle_by_address(plain: bool = True):
    """:func:`_plain_battles` (``plain``: a run that asks for none of the battle as it
    unfolds) or :func:`_battles` for :func:`blocks_battles`, called by its address
    (:func:`~kernels._jit.address_of`) once a block of battles, compiled or loaded on
    first use. Both take the same arguments, so blocks_battles is compiled once.

    On a cold cache a second process compiles field_round, phases_end and the battle's
    small helpers (kernels/_aside.py, :func:`compile_aside`) while this one compiles
    castle_round, blocks_battles and the tally; the battle's compile then loads those
    from the cache and links them as it would have (the cache keeps their LLVM bitcode,
    which LLVM inlines as before), so its rows are the same."""
    battles = _plain_battles if plain else _battles
    arg_types = _battles_types()
    aside = _aside.start(
        field_round, _FIELD_ROUND, __name__, "compile_aside",
        needed_by=(battles, arg_types), first=_compile_shared,
    )  # fmt: skip
    if aside is not None:
        try:
            for helper, helper_types in _HELPERS_HERE:
                compile_for(helper, helper_types, vectorized_loops=False)
            blocks_battles.compile(_blocks_battles_types())
        finally:
            aside.wait()
    # Without LLVM's loop vectorizer: a battle's loops run over its few blocks, and the
    # vector copies of them at every inlined site only lengthen the loop's code. The five
    # bundled scenarios ran 0.89-0.96x the time of 98979f3 (docs/benchmarks.md, sixth
    # round); with the vectorizer, the battle inlined (by Numba) into such a loop ran
    # relief 14% slower than 98979f3.
    return address_of(battles, arg_types, vectorized_loops=False)


@functools.cache
def _battles_types() -> tuple[Any, ...]:
    """The arguments' types of :func:`_plain_battles` and :func:`_battles`."""
    int64 = types.int64
    # state, blocks, params, stops, steps, pos, mark, seed, first, out, rec_steps, rec,
    # lo, hi
    scratch = (STATE, INT_TABLE, INTS, INT_TABLE, INTS, INTS, INTS)
    recorded = (INTS, types.int64[:, :, ::1])
    return (*scratch, types.uint64, int64, INT_TABLE, *recorded, int64, int64)


def _blocks_battles_types() -> tuple[Any, ...]:
    """The arguments' types of a run's call of :func:`blocks_battles`
    (simulator/rulesets/blocks/prepare.py): the battle by its address first."""
    battles = types.FunctionType(types.none(*_battles_types()))
    return (battles, INT_TABLE, INTS, INT_TABLE, types.uint64, types.int64, INT_TABLE, INTS,
            types.int64[:, :, ::1])  # fmt: skip


#: The types of :func:`one_battle`'s calls of its helpers, compiled ahead of it on a cold
#: cache (:func:`battle_by_address`): they must be the battle's own, or it compiles them
#: again. ``row`` is a row of a table, ``track`` a table of ``rec`` (C order); the sides,
#: places, the round and the phases are int64 (SIDE_ATTACKER, FIELD, ...).
_ROW = types.int64[::1]
_INT = types.int64
_FIELD_ROUND = (STATE, INT_TABLE, INTS, INTS, INTS, INTS, _INT, _INT, _INT, _ROW)
# blocks, params, stops, steps, pos, lo, hi, attacker, castle_owner, rec_steps, track, row
_PHASES_END = (INT_TABLE, INTS, INT_TABLE, INTS, INTS, _INT, _INT, _INT, _INT, INTS,
               types.int64[:, ::1], _ROW)  # fmt: skip
#: The helpers both processes' functions call, compiled here before the second starts.
_SHARED = [
    (count_at, (INT_TABLE, INTS, _INT, _INT, _INT)),
    (steps_at, (INT_TABLE, INTS, INTS, _INT, _INT, _INT)),
    (present, (INT_TABLE, INTS, _INT)),
    (move_all, (INT_TABLE, INTS, _INT, _INT, _INT)),
    (copy_row, (_ROW, _ROW)),
    (finish, (INT_TABLE, INTS, _INT, _ROW)),
    (stopped, (INT_TABLE, INTS, _INT, _ROW)),
]
#: The helpers this process compiles meanwhile, the battle's others compiled on their own.
_HELPERS_HERE = [
    (castle_round, (STATE, INT_TABLE, INTS, INTS, INTS, INTS, _INT, _ROW)),
]
#: Those the second process compiles after field_round and phases_end.
_HELPERS_ASIDE = [
    (try_storm, (INT_TABLE, INTS, INTS, INTS, _INT, _INT)),
    (sally_wanted, (INT_TABLE, INTS, INTS, INTS, _INT)),
    (clear_marks, (INTS,)),
    (in_field, (INT_TABLE, INTS, _INT)),
    (contested, (INT_TABLE, INTS)),
]


def _compile_shared() -> None:
    """:data:`_SHARED` compiled (or loaded), as the battle's compile would."""
    for helper, helper_types in _SHARED:
        compile_for(helper, helper_types, vectorized_loops=False)


def compile_aside() -> None:
    """What the second process compiles into Numba's cache (:func:`battle_by_address`),
    as the battle's own compile would: :func:`field_round` and :func:`phases_end` (with
    what they call, but for :data:`_SHARED`, which it loads from the cache), then
    :data:`_HELPERS_ASIDE`."""
    compile_for(field_round, _FIELD_ROUND, vectorized_loops=False)
    compile_for(phases_end, _PHASES_END, vectorized_loops=False)
    for helper, helper_types in _HELPERS_ASIDE:
        compile_for(helper, helper_types, vectorized_loops=False)


@jit(parallel=True)
def blocks_battles(battles, blocks, params, stops, seed, first, out, rec_steps, rec):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, every die rolled;
    ``battles`` is :func:`battle_by_address`, and every array C-contiguous. ``stops``
    are the sides' stop rules (kernels/stops.py); ``rec[i, k]`` is battle i's row after
    phase ``rec_steps[k]`` (ascending; ``rec`` of shape ``(len(out), 0, columns)`` and
    ``rec_steps`` empty when nothing is recorded)."""
    n = out.shape[0]
    n_blocks = blocks.shape[0]
    for chunk in prange((n + BLOCK - 1) // BLOCK):
        state = np.empty(4, np.uint64)
        steps = np.empty(n_blocks, np.int64)
        pos = np.empty(n_blocks, np.int64)
        mark = np.empty(n_blocks, np.int64)
        lo = chunk * BLOCK
        battles(
            state,
            blocks,
            params,
            stops,
            steps,
            pos,
            mark,
            seed,
            first,
            out,
            rec_steps,
            rec,
            lo,
            min(n, lo + BLOCK),
        )


@jit(counted=False)
def _plain_battles(
    state, blocks, params, stops, steps, pos, mark, seed, first, out, rec_steps, rec, lo, hi
):
    """:func:`_battles` for a run that asks for none of the battle as it unfolds (no
    stop rule, record or cut, from its start, the attacker in the attacker's role): the
    constants below leave every test for it out of the battle's code. A function of its
    own: with the tests in the one battle loop such runs were 5-8% slower than before
    stop rules came, with the two loops in one function storm's 6%."""
    zero = np.int64(0)
    for i in range(lo, hi):
        seed_battle(state, seed, first + i)
        one_battle(
            state, blocks, params, stops, steps, pos, mark, out[i], rec_steps, rec[i],
            False, zero, zero, zero,
        )  # fmt: skip


@jit(counted=False)
def _battles(
    state, blocks, params, stops, steps, pos, mark, seed, first, out, rec_steps, rec, lo, hi
):
    """Battles ``first + lo .. first + hi - 1`` into ``out[lo:hi]`` (and their states
    after the phases ``rec_steps`` into ``rec[lo:hi]``), the scratch arrays (``state`` ..
    ``mark``) the caller's, one set a thread."""
    recording = rec_steps.shape[0] > 0
    watching = recording or any_stop(stops)
    cut = params[P_CUT]
    start = params[P_FROM_STEP]
    role = params[P_ROLE]
    for i in range(lo, hi):
        seed_battle(state, seed, first + i)
        row = out[i]
        track = rec[i]
        one_battle(
            state, blocks, params, stops, steps, pos, mark, row, rec_steps, track, watching,
            cut, start, role,
        )  # fmt: skip
        if recording:
            # Decided by an asked phase: its final row stands for that phase and after.
            for k in range(rec_steps.shape[0]):
                if rec_steps[k] >= row[O_STEPS] and row[O_WINNER] != FIGHTING:
                    copy_row(row, track[k])
