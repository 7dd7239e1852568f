"""Olympia battles walked through a table of the battle's Markov chain (random order).

A battle whose chain is small (the exact solver's state space, kernels/olympia/exact.py)
is cheaper to walk than to simulate: the table holds, for every position a battle can
reach, its chance of a change per strike and the cumulative chances of the positions
that change leads to, computed once per scenario by the exact solver's own reading of a
position (:func:`~kernels.olympia.exact.position`). A battle then costs, per change, one
draw for the strikes until it (geometric) and one for which change it is, and a pass
over the final position to fill its outcome row: no chances recomputed, no
bookkeeping of strikers and targets.

Every outcome column follows from the final position and the strikes, or from draws
the strike kernel makes about things the chain does not keep: a noble's wound (1..100
from his health, killed at 0) decides killed or wounded, and prisoners are taken after
the battle, so both are drawn at the end, from the same distributions. The strikes are
always drawn (the outcome row has them), so the geometric draw is on every change. It
inverts an exponential draw: the failures before the first success at chance ``p`` are
``floor(E / -log(1 - p))`` for ``E`` exponential (P(f >= k) = P(E >= -k log(1 - p)) =
(1 - p) ** k), and ``E`` comes from a ziggurat (one random number and a table look-up
almost always) rather than a logarithm. The table stores ``1 / -log(1 - p)``.

Only the ``random`` strike order: under ``alternating`` order the strikes between two
changes follow the sides' budgets, which are not geometric (the skip kernel runs it).

Table layout (one row per reachable position, the opening first; rows padded to one
width ``L``, the most changes any position has, so that the pick is a count over a
fixed number of entries with no branch on the draw):

* ``code[x]``: the position's index in the exact solver's mixed-radix space, decoded
  at the end of a battle into the groups' counts and the structures' points;
* ``ends[x]``: the winner (ATTACKER, DEFENDER, DRAW) where a battle ends, -1 where it
  goes on;
* ``scale[x]``: ``1 / -log(1 - p)`` with ``p`` its chance of a change per strike;
* ``cum[x * L + j]``, ``j < L - 1``: the cumulative chances of its changes (2.0 past
  its last, never reached), ``to[x * L + j]`` the positions they lead to.
"""

from __future__ import annotations

import functools
import heapq
import math

import numba
import numpy as np
from numba import prange, types

from .. import _aside
from .._jit import INT_TABLE, INTS, REALS, STATE, address_of, jit
from ..rng import below, next_u64, next_u64_held, seed_battle, uniform
from ..rows import copy_row
from ..stops import FIGHTING
from . import layout
from .exact import (
    ONCE,
    PLAYS,
    decode,
    opening,
    position,
    position_scratch,
    side_status,
    structure_of,
)
from .strike import (
    finish,
    is_broken,
    keep_left,
    left_at,
)

#: Calls of at most this many battles run on one thread: the runner's first chunks are
#: small, and on a busy machine a parallel region waits for every thread of its team to be
#: scheduled (25-35 ms a call of 8 to 2,048 battles at a load of 12 on 2 cores, against
#: 0.2 ms of walking for 512 of the yardstick battles).
SERIAL_UP_TO = 512
#: The recording walk stores a battle's row for this many asked strikes at each change
#: (:func:`_held`): its row of them is this much longer than the strikes asked. 8 rather
#: than 4: knights_vs_pikemen's walk that counts 100 strikes 1.49x the plain walk's time
#: against 1.67x (one thread, AMD EPYC), archers_in_rain's the same.
RUN = 8
#: The strikes :func:`_recorded`'s table of asked strikes covers (8 bytes each).
BEFORE_MOST = 1 << 16
#: Padding of a row's cumulative chances: a uniform number in [0, 1) never reaches it.
PAST = 2.0
#: Failures before the first success when there is none to expect.
NEVER = 1 << 62
#: The exponential ziggurat of Marsaglia and Tsang (2000), 256 layers, on 53-bit
#: magnitudes: a draw is ``j * WE[i]`` for a layer ``i`` (8 random bits) and a magnitude
#: ``j`` (53 other bits), accepted at once when ``j < KE[i]`` (about 99% of draws).
ZIGGURAT_R = 7.697117470131487
_ZIGGURAT_V = 3.949659822581572e-3
_M53 = 9007199254740992.0
#: rng.py's ``uniform``: 53 random bits times 2**-53.
_UNIT = 1.0 / _M53


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ke = np.zeros(256, np.int64)
    we = np.zeros(256)
    fe = np.zeros(256)
    de = ZIGGURAT_R
    te = de
    q = _ZIGGURAT_V / math.exp(-de)
    ke[0] = int((de / q) * _M53)
    ke[1] = 0
    we[0] = q / _M53
    we[255] = de / _M53
    fe[0] = 1.0
    fe[255] = math.exp(-de)
    for i in range(254, 0, -1):
        de = -math.log(_ZIGGURAT_V / de + math.exp(-de))
        ke[i + 1] = int((de / te) * _M53)
        te = de
        fe[i] = math.exp(-de)
        we[i] = de / _M53
    return ke, we, fe


KE, WE, FE = _ziggurat_tables()


@jit(inline=True)
def exponential_from(state, bits):
    """An exponential number of mean 1 from the 64 random bits ``bits`` (the ziggurat
    above; its rare slow path takes more numbers from ``state``, and a logarithm in the
    tail past ZIGGURAT_R). A kernel that keeps its stream in registers tries the fast
    path itself and calls this with the same bits when it fails."""
    while True:
        i = np.int64(bits & np.uint64(255))
        j = np.int64(bits >> np.uint64(11))
        x = j * WE[i]
        if j < KE[i]:
            return x
        if i == 0:
            # The tail past R is R plus an exponential (memoryless).
            return ZIGGURAT_R - math.log(1.0 - uniform(state))
        if FE[i] + uniform(state) * (FE[i - 1] - FE[i]) < math.exp(-x):
            return x
        bits = next_u64(state)


@jit(inline=True)
def exponential(state):
    """An exponential number of mean 1 from the stream ``state``."""
    return exponential_from(state, next_u64(state))


@jit(inline=True)
def exponential_held(state, s0, s1, s2, s3):
    """:func:`exponential` from the stream ``state`` held in ``s0 .. s3`` (registers):
    ``(s0, s1, s2, s3, e)``. The ziggurat's fast path on the held state; its rare rest
    writes the state back to ``state``, draws there, and is read back."""
    s0, s1, s2, s3, bits = next_u64_held(s0, s1, s2, s3)
    layer = np.int64(bits & np.uint64(255))
    magnitude = np.int64(bits >> np.uint64(11))
    if magnitude < KE[layer]:
        return s0, s1, s2, s3, magnitude * WE[layer]
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    e = exponential_from(state, bits)
    return state[0], state[1], state[2], state[3], e


@jit(inline=True)
def failures(state, scale):
    """Failures before the first success at the chance ``p`` whose
    ``scale = 1 / -log(1 - p)`` is given (0 when ``p`` is 1)."""
    f = math.floor(exponential(state) * scale)
    return NEVER if f >= NEVER else np.int64(f)


@jit
def chain_table(groups, survive, sides, radix, stride, sradix, sstride, max_rows):
    """The table of the chain of a ``random``-order battle (module docstring): the
    positions reachable from the opening, from the largest index of the exact solver's
    state space down. Returns ``(code, ends, scale, p_change, cum, to, width, once)``
    with ``once`` the winner of a battle whose opening is already broken and whose one
    strike changes nothing (-1 otherwise). A chain of more than ``max_rows`` positions
    is given up at that point: ``width`` 0 and no rows."""
    scratch = position_scratch(groups.shape[0])
    _cnt, _remaining, _unit_men, _rating, _w, _t, per_side, succ, prob, n_ev, q = scratch
    value, alive, ws = per_side[0], per_side[1], per_side[5]
    space = (radix, stride, sradix, sstride)
    start = opening(groups, stride, sradix, sstride)
    # Positions reached and not yet given a row, largest index first (a heap of negated
    # indices): every change lowers the index, so when a position comes off the heap all
    # that lead to it have been seen, and the rows come out in falling index. Only
    # reachable positions are touched, however large the space (break points cut it
    # short). A position reached by several changes is pushed once for each and comes
    # off the heap that many times in a row: the first gives it its row, the others are
    # passed over. (No dictionary of the positions seen: Numba's typed dictionary took
    # about 2 of the table kernel's 10 compile seconds, and a hash a change.)
    pending = [-start]
    last = start + 1  # no position: the index of the last row given
    capacity = 1024
    code = np.empty(capacity, np.int64)
    ends = np.empty(capacity, np.int64)
    p_change = np.empty(capacity)
    # Each row's changes, (successor index, chance) with rows of variable length first.
    edge_start = np.zeros(capacity + 1, np.int64)
    edge_to = np.empty(capacity * 4, np.int64)
    edge_p = np.empty(capacity * 4)
    n = 0
    width = 1
    once = -1
    while len(pending) > 0:
        index = -heapq.heappop(pending)
        if index == last:
            continue  # reached again: its row is given
        last = index
        if n == max_rows:
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros(0), np.zeros(0), np.zeros(0), empty, 0, -1
        if n == capacity:
            capacity *= 2
            code = _grown(code, capacity)
            ends = _grown(ends, capacity)
            p_change = _grown(p_change, capacity)
            edge_start = _grown(edge_start, capacity + 1)
        code[n] = index
        status = position(index, start, groups, survive, sides, layout.RANDOM, space, scratch)
        e0 = edge_start[n]
        e = e0
        ends[n] = -1
        p_change[n] = 0.0
        if status == ONCE:
            lost_a = is_broken(value, alive, sides, 0)
            lost_d = is_broken(value, alive, sides, 1)
            once = layout.DRAW if lost_a and lost_d else (1 if lost_a else 0)
        if status < ONCE:
            ends[n] = status
        else:
            total = ws[0] + ws[1]
            p = (ws[0] * q[0] + ws[1] * q[1]) / total
            if not p > 0.0 and status == PLAYS:
                # Strikers who can change nothing: the skip kernel's draw (the strike
                # kernel would strike forever).
                ends[n] = layout.DRAW
            elif p > 0.0:
                p_change[n] = p
                for s in range(2):
                    for k in range(n_ev[s]):
                        if e + 1 > edge_to.shape[0]:
                            edge_to = _grown(edge_to, 2 * edge_to.shape[0])
                            edge_p = _grown(edge_p, 2 * edge_p.shape[0])
                        to = succ[s, k]
                        share = ws[s] * prob[s, k] / (total * p)
                        if e > e0 and edge_to[e - 1] == to:
                            edge_p[e - 1] += share  # an engine's points past what is left
                        else:
                            edge_to[e] = to
                            edge_p[e] = share
                            e += 1
                        heapq.heappush(pending, -to)
        edge_start[n + 1] = e
        width = max(width, e - e0)
        n += 1
    # Padded rows, successors as row numbers.
    scale = np.zeros(n)
    cum = np.full(n * width, PAST)
    to_row = np.zeros(n * width, np.int64)
    for x in range(n):
        p = p_change[x]
        scale[x] = 0.0 if p >= 1.0 else 1.0 / -math.log1p(-p)
        running = 0.0
        for j in range(edge_start[x + 1] - edge_start[x]):
            e = edge_start[x] + j
            to_row[x * width + j] = _row_of(code, n, edge_to[e])
            running += edge_p[e]
            if e + 1 < edge_start[x + 1]:
                cum[x * width + j] = running
    return code[:n].copy(), ends[:n].copy(), scale, p_change[:n].copy(), cum, to_row, width, once


@jit(inline=True)
def _row_of(code, n, index):
    """The row of the position ``index`` among the table's first ``n`` rows, whose codes
    fall row by row (a binary search; the position is one of them)."""
    low, high = 0, n - 1
    while low < high:
        middle = (low + high) // 2
        if code[middle] > index:
            low = middle + 1
        else:
            high = middle
    return low


@jit
def _grown(a, size):
    b = np.empty(size, a.dtype)
    # An element loop: a slice assignment between arrays compiles Numba's shape-mismatch
    # error message with it (about a second of every cold run).
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@jit(counted=False)
def settle_row(
    state, groups, sides, radix, stride, sradix, sstride, code, winner, steps, scratch, row, at
):
    """Fill ``row`` from the final position ``code``: casualties, engines and
    structures from the position, nobles' wounds and prisoners drawn (``scratch``: rows
    cnt, health, and per side remaining, value, alive; ``health`` is left as drawn, for
    the rows recorded on the way: :func:`position_row`); where ``at`` is not -1, each
    group's state at the end into ``row[at:]`` (waves: strike.py's ``keep_left``).

    Called, not inlined: it runs once a battle, and its three copies in :func:`_walk`
    tripled what Numba compiled (a cold run's largest function); without reference
    counting the call costs no atomic increments of its arrays. The groups' state is
    written here, behind one test, rather than after each of its three calls in
    :func:`_walk` (Numba inlined a copy at each), so the walk's loop is again the code
    it was before waves came in (3,072 lines of assembly against 3,030 at e282492). The
    position is decoded by :func:`_decoded`, without integer division."""
    cnt = scratch[0]
    health = scratch[1]
    remaining = scratch[2, :2]
    value = scratch[3, :2]
    alive = scratch[4, :2]
    _decoded(code, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
    side_status(groups, sides, cnt, value, alive)
    for g in range(groups.shape[0]):
        health[g] = groups[g, layout.G_HEALTH]
        _group_lost(state, groups, g, cnt, health, row, True)
    _structures(sides, remaining, row)
    finish(state, groups, cnt, health, alive, winner, steps, row)
    if at >= 0:
        keep_left(groups, cnt, health, row, at)


#: Below this a position's index and its strides are exact as float64, and the floor of
#: their correctly rounded quotient is the integer quotient (:func:`_decoded`).
EXACT_QUOTIENTS = 1 << 53


@jit(inline=True)
def _quotient(n, d):
    """``n // d`` for ``0 <= n < EXACT_QUOTIENTS``, ``d >= 1``: a true quotient that is
    not an integer lies at least ``1 / d`` below the next one, more than half a unit
    in its last place (``n / d * 2**-53 < 1 / d``), so rounding never reaches it."""
    return np.int64(float(n) / float(d))


@jit(inline=True)
def _decoded(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining):
    """exact.py's ``decode`` of position ``index`` into ``cnt`` and ``remaining``, by
    float division: a digit is ``index // stride`` less ``radix`` times the next
    digit's ``index // stride`` (the strides are the radixes' running products), so
    each digit costs one quotient, all of them independent, where ``decode`` takes two
    64-bit integer divisions: the walk 4% faster on knights_vs_pikemen, 9% on
    archers_in_rain (one thread, AMD EPYC). ``decode`` itself past EXACT_QUOTIENTS."""
    if index >= EXACT_QUOTIENTS:
        decode(index, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
        return
    n = groups.shape[0]
    below_digit = _quotient(index, stride[0])
    for g in range(n):
        up = _quotient(index, stride[g + 1] if g + 1 < n else sstride[0])
        cnt[g] = below_digit - up * radix[g]
        below_digit = up
    up = _quotient(index, sstride[1])
    remaining[0] = below_digit - up * sradix[0]
    remaining[1] = up - _quotient(index, sstride[1] * sradix[1]) * sradix[1]


@jit(inline=True)
def _group_lost(state, groups, g, cnt, health, row, wound):
    """Add to ``row`` what group ``g`` has lost at counts ``cnt``: its men by type, its
    engines, or its noble, out wounded or killed as ``health`` says, with ``wound`` (a
    constant: inlined, Numba drops the other branch) his wound drawn first from
    ``state``: :func:`settle_row`'s loop reads a group's columns once, as it did before
    :func:`position_row` shared it."""
    s = groups[g, layout.G_SIDE]
    lost = groups[g, layout.G_COUNT] - cnt[g]
    kind = groups[g, layout.G_KIND]
    if kind == layout.MAN:
        row[groups[g, layout.G_COLUMN]] += lost
    elif kind == layout.ENGINE:
        row[layout.extra(s, layout.X_ENGINES_LOST)] += lost
    elif kind == layout.NOBLE and lost == 1:
        if wound:
            health[g] -= 1 + below(state, 100)
        killed = health[g] <= 0
        row[layout.extra(s, layout.X_KILLED if killed else layout.X_WOUNDED)] += 1
        if groups[g, layout.G_LEADER] == 1:
            row[layout.extra(s, layout.X_LEADER_KILLED if killed else layout.X_LEADER_WOUNDED)] = 1


@jit(inline=True)
def _structures(sides, remaining, row):
    """Each side's structure in ``row`` with ``remaining`` points before it collapses."""
    for s in range(2):
        if sides[s, layout.S_HAS_STRUCTURE] == 1:
            sdef, sdmg, standing = structure_of(sides, remaining[s], s)
            row[layout.extra(s, layout.X_STRUCTURE_DEF)] = sdef
            row[layout.extra(s, layout.X_STRUCTURE_DMG)] = sdmg
            row[layout.extra(s, layout.X_COLLAPSED)] = 1 - standing


@jit
def position_row(groups, sides, radix, stride, sradix, sstride, code, health, scratch, row):
    """``row`` (cleared here) as it stands at position ``code`` of a battle still
    fighting, its nobles' wounds those of ``health`` (the battle's final draws: a noble
    out now is out at the end, wounded or killed as he will be found)."""
    row[:] = 0
    cnt = scratch[0]
    remaining = scratch[2, :2]
    decode(code, groups, radix, stride, sides, sradix, sstride, cnt, remaining)
    for g in range(groups.shape[0]):
        _group_lost(None, groups, g, cnt, health, row, False)
    _structures(sides, remaining, row)


@jit
def position_table(groups, sides, radix, stride, sradix, sstride, code, ends, once, width):
    """Every row of the table as a battle there stands (``width`` columns, nobles out
    counted wounded), and one more for a battle decided by a broken opening: its winner
    (``ends``, or ``once``) in O_WINNER, FIGHTING where the battle goes on: the states
    the recording walk counts the battles by (:func:`_recorded`)."""
    n = code.shape[0]
    table = np.zeros((n + 1, width), np.int64)
    health = groups[:, layout.G_HEALTH].copy()
    scratch = np.empty((5, max(groups.shape[0], 2)), np.int64)
    for x in range(n):
        position_row(
            groups, sides, radix, stride, sradix, sstride, code[x], health, scratch, table[x]
        )
        table[x, layout.O_WINNER] = ends[x] if ends[x] >= 0 else FIGHTING
    position_row(groups, sides, radix, stride, sradix, sstride, code[0], health, scratch, table[n])
    table[n, layout.O_WINNER] = once if once >= 0 else FIGHTING
    return table


def count_parts(battles: int) -> int:
    """The parts :func:`chain_battles` counts ``battles`` battles into: one a thread of
    Numba's (set by the caller) when they run in parallel, else one."""
    return 1 if battles <= SERIAL_UP_TO else numba.get_num_threads()


@functools.cache
def walk_by_address(recording: bool = False):
    """The walk :func:`chain_battles` calls by its address
    (:func:`~kernels._jit.address_of`), compiled or loaded on first use: :func:`_walk`,
    or with ``recording`` :func:`_recorded`. Both take the same arguments, so one
    compiled :func:`chain_battles` calls either; a call is one or the other for all its
    battles, and the plain walk holds no branch, variable or code of the recording
    one."""
    return address_of(_recorded if recording else _walk, _walk_types())


@functools.cache
def _walk_types() -> tuple[types.Type, ...]:
    """The arguments' types of a walk (:func:`walk_by_address`)."""
    space = types.UniTuple(INTS, 4)
    table = types.Tuple((INTS, INTS, REALS, REALS, INTS))
    int64, real = types.int64, types.float64
    # groups, sides, space, table, once, p_open, seed, first, out, asked, counts, rec,
    # a, b, scratch, lo, hi
    given = (INT_TABLE, INT_TABLE, space, table, int64, real, types.uint64, int64, INT_TABLE)
    recorded = (INTS, INT_TABLE, types.int64[:, :, ::1])
    made = (STATE, STATE, INT_TABLE)
    return (*given, *recorded, *made, int64, int64)


#: The compile :func:`walk_aside` started, until a run of the chain kernel waited for it
#: (read at every call: a list, not a look-up by function and signature).
_walk_compiling: list[_aside.Aside] = []


@functools.cache
def walk_aside() -> None:
    """On a cold cache, the plain walk and :func:`chain_battles` compiled in a second
    process from now on (kernels/_aside.py, :func:`walk_and_battles`), once a process:
    called as a battle's table starts to build, so that what walks it compiles beside
    the table's kernel (a cold ``prices --ruleset olympia`` compiled the three one after
    the other: 13, 12 and 2 CPU seconds). A table over budget leaves them compiled for a
    later run."""
    aside = _aside.start(_walk, _walk_types(), __name__, "walk_and_battles")
    if aside is not None:
        _walk_compiling.append(aside)


def walk_and_battles() -> None:
    """The plain walk and :func:`chain_battles` for it compiled (the second process of
    :func:`walk_aside`), for the types a run's call of them has (:func:`walk_chain`)."""
    walk = walk_by_address().numba_type  # the type a call gives it
    space = types.UniTuple(INTS, 4)
    table = types.Tuple((INTS, INTS, REALS, REALS, INTS))
    int64, counts = types.int64, types.int64[:, :, ::1]
    # walk, groups, sides, space, table, once, p_open, seed, first, out, asked, counts, rec
    chain_battles.compile((
        walk, INT_TABLE, INT_TABLE, space, table, int64, types.float64, types.uint64, int64,
        INT_TABLE, INTS, counts, counts,
    ))  # fmt: skip


def walk_chain(recording: bool, *given) -> None:
    """:func:`chain_battles` of ``given`` (its arguments after the walk) on the walk
    :func:`walk_by_address` gives. Where they compile aside (:func:`walk_aside`), this
    process waits for them there, then loads both from the cache (not compiling the
    tally meanwhile: the table's kernel leaves little to wait for, and a price search
    never counts outcomes)."""
    if _walk_compiling and not recording:
        for aside in list(_walk_compiling):
            aside.wait(compile_meanwhile=False)
        _walk_compiling.clear()  # after the wait: a thread that finds it empty need not
    chain_battles(walk_by_address(recording), *given)


@jit(parallel=True)
def chain_battles(
    walk, groups, sides, space, table, once, p_open, seed, first, out, asked, counts, rec
):
    """Battles ``first .. first + len(out) - 1`` of run ``seed``, walked through the
    table of :func:`chain_table` by ``walk`` (:func:`walk_by_address`; every array
    C-contiguous): ``space`` the digits of its positions ``(radix, stride, sradix,
    sstride)``, ``table`` its rows ``(code, ends, scale, cum, to)`` (row 0 the opening;
    ``p_open`` its chance of a change, used when ``once`` says the opening is already
    broken). Up to SERIAL_UP_TO battles run on the calling thread.

    ``asked``: the strikes after which the recording walk records each battle's state
    (ascending, counted from the kernel's first strike; empty in a plain run). It adds
    each battle to ``counts[part, x, k]`` (``(parts, len(code) + 1, len(asked))``, else
    ``(1, 0, 0)``), ``x`` the table row it stands at after ``asked[k]`` (its last row
    once decided; row ``len(code)``: decided by a broken opening, its row the
    opening's); the battles are walked in ``parts`` runs of blocks, one a thread, each
    counting into its own part (so no two threads add to the same count). Where ``rec``
    has room (``(len(out), len(asked), width)``, else ``(0, 0, width)``) it writes each
    battle's whole row after each asked strike (:func:`_recorded`).

    The walk's two random states and its scratch are made here, a set a part, so that
    the plain walk allocates nothing and runs without reference counting."""
    n = out.shape[0]
    rows = max(groups.shape[0], 2)
    if n <= SERIAL_UP_TO:
        a, b = np.empty(4, np.uint64), np.empty(4, np.uint64)
        scratch = np.empty((5, rows), np.int64)
        walk(
            groups, sides, space, table, once, p_open, seed, first, out, asked, counts[0],
            rec, a, b, scratch, np.int64(0), n,
        )  # fmt: skip
        return
    blocks = (n + layout.BLOCK - 1) // layout.BLOCK
    # A block a part, but for counts in parts: a run of blocks each, counted into its own.
    counted = np.int64(1 if counts.shape[1] > 0 else 0)
    parts = counts.shape[0] if counted else blocks
    for part in prange(parts):
        held = counts[part * counted]
        a, b = np.empty(4, np.uint64), np.empty(4, np.uint64)
        scratch = np.empty((5, rows), np.int64)
        for block in range(part * blocks // parts, (part + 1) * blocks // parts):
            lo = block * layout.BLOCK
            hi = min(n, lo + layout.BLOCK)
            walk(
                groups, sides, space, table, once, p_open, seed, first, out, asked, held, rec,
                a, b, scratch, lo, hi,
            )  # fmt: skip


@jit(counted=False)
def _walk(
    groups, sides, space, table, once, p_open, seed, first, out, asked, counts, rec, a, b,
    scratch, lo, hi,
):  # fmt: skip
    """Battles ``first + lo .. first + hi - 1`` into ``out[lo:hi]``, two at a time, with
    the random states ``a`` and ``b`` and ``scratch`` (``(5, groups)``) given (``asked``,
    ``counts`` and ``rec`` are the recording walk's: :func:`_recorded`).

    A change costs little arithmetic but a chain of dependent steps (the row's chances,
    the pick, the next row), so one battle leaves the processor waiting; two battles
    walked in turn overlap their waits (knights_vs_pikemen: 518 -> 362 ns a battle's
    walk, one thread, AMD EPYC). Each battle draws from its own stream, so the pairing
    changes no number.

    The recording walk is a function of its own, chosen once a call: written as a
    branch of this one (a call of it here), the plain walk ran 1.07-1.23x slower than
    before recording came in (each of the branch and the wave columns alone 1.00-1.01x),
    the two together making this function's code larger (4,300 lines of assembly
    against 3,000) around the same loop.

    Without reference counting (its arrays made by :func:`chain_battles`) the walk
    holds each battle's random state in registers (:func:`_change`), its battles 3-5%
    faster (one thread, AMD EPYC); compiled with Numba's counting (of the arrays handed
    to that inlined helper, a change), the same walk ran 1.4-1.7x slower."""
    radix, stride, sradix, sstride = space
    code, ends, scale, cum, to = table
    width = cum.shape[0] // ends.shape[0]
    # Each group's state at a battle's end, where the caller's rows have room (waves).
    left_column = left_at(groups, out.shape[1])
    # A battle broken before its first strike takes the single path below.
    paired = lo if once >= 0 else lo + (hi - lo) // 2 * 2
    for i in range(lo, paired, 2):
        seed_battle(a, seed, first + i)
        seed_battle(b, seed, first + i + 1)
        # Rows as np.int64 from the start: a literal 0 compiles _change for it apart.
        xa, xb, steps_a, steps_b = np.int64(0), np.int64(0), 0, 0
        a0, a1, a2, a3 = a[0], a[1], a[2], a[3]
        b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
        while ends[xa] < 0 and ends[xb] < 0:
            a0, a1, a2, a3, strikes_a, xa = _change(a, a0, a1, a2, a3, scale, cum, to, width, xa)
            b0, b1, b2, b3, strikes_b, xb = _change(b, b0, b1, b2, b3, scale, cum, to, width, xb)
            steps_a += strikes_a
            steps_b += strikes_b
        a[0], a[1], a[2], a[3] = a0, a1, a2, a3
        b[0], b[1], b[2], b[3] = b0, b1, b2, b3
        xa, steps_a = _walk_on(a, ends, scale, cum, to, width, xa, steps_a)
        xb, steps_b = _walk_on(b, ends, scale, cum, to, width, xb, steps_b)
        settle_row(
            a, groups, sides, radix, stride, sradix, sstride, code[xa], ends[xa], steps_a,
            scratch, _cleared(out[i]), left_column,
        )  # fmt: skip
        settle_row(
            b, groups, sides, radix, stride, sradix, sstride, code[xb], ends[xb], steps_b,
            scratch, _cleared(out[i + 1]), left_column,
        )  # fmt: skip
    for i in range(paired, hi):
        seed_battle(a, seed, first + i)
        row = _cleared(out[i])
        if once >= 0:
            # Broken before the first strike: one strike, a change with its chance.
            x = 0
            if uniform(a) < p_open:
                x = _pick(a, cum, to, width, 0)
            winner = ends[x] if x != 0 else once
            steps = 1
        else:
            x, steps = _walk_on(a, ends, scale, cum, to, width, np.int64(0), np.int64(0))
            winner = ends[x]
        settle_row(
            a, groups, sides, radix, stride, sradix, sstride, code[x], winner, steps,
            scratch, row, left_column,
        )  # fmt: skip


@jit
def _recorded(
    groups, sides, space, table, once, p_open, seed, first, out, asked, counts, rec, a, b,
    scratch, lo, hi,
):  # fmt: skip
    """:func:`_walk`'s battles, two at a time as it walks them, each battle's table row
    after each strike of ``asked`` held as the walk passes it (the row before a change
    holds every strike up to it), then counted into ``counts[x, k]`` at its end (its
    outcome row left unwritten: :func:`_settled`) or its outcome row written and, where
    ``rec`` has room, its whole row after each strike asked. The draws are the plain
    walk's (the geometric draw, then the pick, each change; the wounds and prisoners at
    the end), so each battle's outcome row is the plain run's and its state after a
    strike the one it passed on its way there.

    A battle's rows are held in a short row of this call's (``held``), in the
    processor's cache, and counted as the battle ends: written to a table of every
    battle's rows and counted in a second pass, they took the recording 1.55-1.91x a
    plain run's time (knights_vs_pikemen's 100 strikes)."""
    code, ends, scale, cum, to = table
    width = cum.shape[0] // ends.shape[0]
    last = asked.shape[0]
    if (counts.shape[0] > 0 and (counts.shape[0] <= ends.shape[0] or counts.shape[1] < last)) or (
        rec.shape[0] > 0 and rec.shape[1] < last
    ):
        raise ValueError("counts: a row a table row and one more, a column a strike asked")
    # Each battle's row after each asked strike (RUN more: _held), the two walked in turn.
    held = np.empty((2, last + RUN), np.int64)
    # before[s]: the asked strikes before strike s (all of them past the last), so a
    # change at strike s holds the battle's row in held[k:before[s]]. The table stops
    # at BEFORE_MOST strikes (a step asked far past any battle's end, as "each battle's
    # final row" is asked, made it 8 GB); past it a search of ``asked`` says the same.
    top = min(max(asked[last - 1] + 1, 0), BEFORE_MOST) if last > 0 else 0
    before = np.empty(top + 1, np.int64)
    k = 0
    for strike in range(top + 1):
        while k < last and asked[k] < strike:
            k += 1
        before[strike] = k
    ha, hb = held[0], held[1]
    # Past the table's end (a strike asked past BEFORE_MOST) every battle walks alone,
    # searching ``asked`` there; else the pairs look strikes up with no branch, the
    # table's last entry (every strike asked) standing for every strike past it.
    paired = lo if once >= 0 or last == 0 or asked[last - 1] >= top else lo + (hi - lo) // 2 * 2
    for i in range(lo, paired, 2):
        seed_battle(a, seed, first + i)
        seed_battle(b, seed, first + i + 1)
        xa, xb, steps_a, steps_b, ka, kb = 0, 0, 0, 0, 0, 0
        # Rows held until every strike asked is passed, the rest walked as plainly.
        while ends[xa] < 0 and ends[xb] < 0:
            steps_a += failures(a, scale[xa]) + 1
            steps_b += failures(b, scale[xb]) + 1
            if ka < last:
                ka = _held(ha, ka, before[min(steps_a, top)], xa)
            if kb < last:
                kb = _held(hb, kb, before[min(steps_b, top)], xb)
            xa = _pick(a, cum, to, width, xa)
            xb = _pick(b, cum, to, width, xb)
        while ends[xa] < 0:
            steps_a += failures(a, scale[xa]) + 1
            if ka < last:
                ka = _held(ha, ka, before[min(steps_a, top)], xa)
            xa = _pick(a, cum, to, width, xa)
        while ends[xb] < 0:
            steps_b += failures(b, scale[xb]) + 1
            if kb < last:
                kb = _held(hb, kb, before[min(steps_b, top)], xb)
            xb = _pick(b, cum, to, width, xb)
        _settled(
            a, groups, sides, space, code, xa, ends[xa], steps_a, xa, ka, ha, i, asked, counts,
            rec, out, scratch,
        )  # fmt: skip
        _settled(
            b, groups, sides, space, code, xb, ends[xb], steps_b, xb, kb, hb, i + 1, asked,
            counts, rec, out, scratch,
        )  # fmt: skip
    for i in range(paired, hi):
        seed_battle(a, seed, first + i)
        k = 0
        if once >= 0:
            # Broken before the first strike: one strike, a change with its chance.
            k = _held(ha, k, _before(before, asked, 1), np.int64(0))
            x = 0
            if uniform(a) < p_open:
                x = _pick(a, cum, to, width, 0)
            winner = ends[x] if x != 0 else once
            steps = 1
            final = x if x != 0 else ends.shape[0]
        else:
            x = 0
            steps = 0
            while ends[x] < 0:
                steps += failures(a, scale[x]) + 1
                k = _held(ha, k, _before(before, asked, steps), x)
                x = _pick(a, cum, to, width, x)
            winner = ends[x]
            final = x
        _settled(
            a, groups, sides, space, code, x, winner, steps, final, k, ha, i, asked, counts,
            rec, out, scratch,
        )  # fmt: skip


@jit(inline=True)
def _before(before, asked, strike):
    """The asked strikes before ``strike``: ``before``'s entry, or past its end a search
    of ``asked`` (all of them once ``strike`` is past the last)."""
    if strike < before.shape[0]:
        return before[strike]
    return np.searchsorted(asked, strike)


@jit(inline=True)
def _held(held, k, upto, x):
    """A battle at row ``x`` for asked strikes ``k .. upto - 1``, into its ``held``: RUN
    entries stored whatever the gap (``held`` has RUN more than the strikes asked, and
    what lies past ``upto`` is written again after), the rest of a longer gap by a loop.
    A loop of the gap's length alone missed its exit a change in two (7 ns a strike
    recorded, knights_vs_pikemen, AMD EPYC); this one's length never changes. Returns
    ``upto``."""
    for j in range(RUN):
        held[k + j] = x
    for j in range(k + RUN, upto):
        held[j] = x
    return upto


@jit
def _settled(
    state, groups, sides, space, code, x, winner, steps, final, k, held, i, asked, counts, rec,
    out, scratch,
):  # fmt: skip
    """Battle ``i`` walked to row ``x`` (``final`` the row its state is counted by):
    its last asked strikes held there, then its rows after the asked strikes counted
    where ``counts`` has room; else its outcome row settled (the plain walk's draws) and
    where ``rec`` has room its whole row after each asked strike.

    A battle counted has no outcome row: its count is of its positions alone, and the
    draws of a row (nobles' wounds, prisoners) come after its last strike, from its own
    stream, changing no other battle's numbers."""
    radix, stride, sradix, sstride = space
    last = asked.shape[0]
    for j in range(k, last):
        held[j] = final
    if counts.shape[0] > 0:
        for j in range(last):
            counts[held[j], j] += 1
        return
    row = _cleared(out[i])
    # The recording walk writes no groups' state, as before settle_row took ``at``.
    settle_row(
        state, groups, sides, radix, stride, sradix, sstride, code[x], winner, steps,
        scratch, row, np.int64(-1),
    )  # fmt: skip
    if rec.shape[0] == 0:
        return
    for k in range(last):
        if asked[k] >= steps:
            copy_row(row, rec[i, k])
        else:
            # scratch[1] holds the nobles' final wounds (settle_row).
            row_k = rec[i, k]
            position_row(
                groups, sides, radix, stride, sradix, sstride, code[held[k]], scratch[1],
                scratch, row_k,
            )  # fmt: skip
            row_k[layout.O_WINNER] = FIGHTING
            row_k[layout.O_STEPS] = asked[k]


@jit(inline=True)
def _cleared(row):
    row[:] = 0
    return row


@jit(counted=False, llvm_inline=True)
def _walk_on(state, ends, scale, cum, to, width, x, steps):
    """The battle at row ``x`` after ``steps`` strikes walked to its end: its last row
    and strikes (its random state held in registers meanwhile: :func:`_change`).
    Inlined by LLVM, not by Numba: at its three call sites in ``_walk``, with the draws
    it inlines, it made ``_walk`` 8.3 of the path's 22.2 s of compiling (3.2 + 1.2 so,
    the walk as fast)."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    while ends[x] < 0:
        s0, s1, s2, s3, strikes, x = _change(state, s0, s1, s2, s3, scale, cum, to, width, x)
        steps += strikes
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return x, steps


@jit(counted=False, llvm_inline=True)
def _change(state, s0, s1, s2, s3, scale, cum, to, width, x):
    """One change of a battle at row ``x`` whose random state ``state`` is held in
    ``s0 .. s3``: ``(s0, s1, s2, s3, strikes, row)``, the strikes it took (the
    failures before it and itself) and the row it leads to. The same draws as
    :func:`failures` then :func:`_pick` on ``state``, which is written and read back
    only on the ziggurat's rare slow path; in registers, a battle's next number waits
    for no store and load of its state (the chain of one change to the next).

    Inlined by LLVM, not by Numba: Numba typed and inlined its ziggurat again at each of
    its three call sites (two in :func:`_walk`, one in :func:`_walk_on`; shared_chain.py
    has three more), a cold compile of the walk 12.5-13.4 CPU s against 8.5-9.5 so (Intel
    Xeon, load 3.5), the walk as fast (0.99-1.04x, benchmarks/kernel_versions.py). Its
    callers pass the row as an ``np.int64``: a literal 0 compiled it once more."""
    s0, s1, s2, s3, e = exponential_held(state, s0, s1, s2, s3)
    f = math.floor(e * scale[x])
    strikes = (NEVER if f >= NEVER else np.int64(f)) + 1
    s0, s1, s2, s3, bits = next_u64_held(s0, s1, s2, s3)
    u = float(bits >> np.uint64(11)) * _UNIT
    base = x * width
    passed = 0
    for j in range(width - 1):
        passed += u >= cum[base + j]
    return s0, s1, s2, s3, strikes, to[base + passed]


@jit(inline=True)
def _pick(state, cum, to, width, x):
    """The position row ``x``'s change leads to: the count of its cumulative chances a
    uniform number passes, over the padded row (no branch on the draw)."""
    u = uniform(state)
    base = x * width
    passed = 0
    for j in range(width - 1):
        passed += u >= cum[base + j]
    return to[base + passed]
