"""The skip kernel's path for big armies: many deaths from one table, by thinning.

The skip kernel (kernels/olympia/skip.py) draws each change from chances it keeps up to
date: after every death it updates the kill rate of every target kind of the other side
and the sums over them, and the next draw waits on those updates. With thousands of men a
side a death moves every chance by a fraction of a percent, so this path draws from a
table fixed for a *batch* of up to ``B`` deaths and corrects by thinning, which is exact:

* A strike is a *candidate* (striker kind ``i``, target kind ``j``) with the fixed chance
  ``Q[i, j] = W_i T_j pkill[i, j] / ((TS_e - B)(S - B))``, with ``W_i``, ``T_j``, ``TS_e``
  and ``S`` the strikers of kind ``i``, the targets of kind ``j``, the targets of side
  ``e`` and all strikers when the batch starts (a structure is a target of count one, and
  engines strike only the structure, with no ``1 / TS_e``).
* A candidate is the change with chance ``a = (w_i t_j / (W_i T_j)) ((TS_e - B) / ts_e)
  ((S - B) / s)``, the counts now; otherwise the strike missed. Counts only fall and at
  most ``B`` men die in a batch, so ``a <= 1``, and a strike makes change ``(i, j)`` with
  chance ``Q[i, j] a``, ``w_i t_j pkill[i, j] / (ts_e s)``: the strike kernel's chance.

So the strikes until the next candidate are geometric with one chance for the whole batch
(an exponential times a constant), the candidate is one look-up in an alias table (Walker,
built by Vose's method), and a death moves counts only: no chance is recomputed until the
batch ends. A batch ends after ``B`` deaths, at the battle's end, or at a change the
skip kernel's rare path makes (a group emptied, a noble, an engine, a structure hit),
which it hands back. A kind whose room is used up has its deaths shared out among its
groups inside the batch (kernels/olympia/kinds.py); if the group drawn for the death at
hand stands, the batch goes on. ``B`` is the fewest targets on a side or strikers over
BATCH_SHARE, so that at most about ``2 / BATCH_SHARE`` of the candidates are thinned
out, and the path runs only while those are at least BATCH_FROM: smaller battles never
take it, and draw the numbers they drew before it.

The large benchmark battle (11,072 deaths, all but one of them in batches, 29 tables and
12,440 candidates a battle, 89% of them kept) went from 419 to 222 microseconds a battle
on one thread (docs/benchmarks.md).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..rng import next_u64_held
from . import layout
from .chain import KE, WE, exponential_from
from .kinds import K_COLUMN, K_VALUE, R_LEFT, settle

#: The path runs while the fewest targets on a side, and the strikers, are at least this
#: many (the bundled scenarios, a few hundred men at most, never take it) ...
BATCH_FROM = 256
#: ... and a batch takes at most this fraction of them: about ``2 / BATCH_SHARE`` of
#: the candidates are thinned out at its end, and a table is built every few hundred deaths.
BATCH_SHARE = 12
#: Most candidates in a table: an index of 11 low bits leaves 53 high bits, disjoint, for
#: the alias table's uniform number.
MOST_ENTRIES = 2048
#: Columns of the integer table, a row per candidate (its fields side by side): its striker group,
#: target group (the group one past the padding for a structure, whose count is 1), struck
#: side, which count of targets divides its chance (its side, or 2 for none: engines), its
#: alias, the target's casualty column (-1: not a man, or a structure) and value; the two
#: work lists of Vose's method.
E_STRIKER, E_TARGET, E_SIDE, E_SLOT, E_ALIAS, E_COLUMN, E_VALUE, E_SMALL, E_LARGE = range(9)
#: Columns of the float table: each candidate's alias chance and thinning factor; its first
#: three rows' third column hold ``1 / ts[0]``, ``1 / ts[1]`` and 1.
F_PROB, F_THIN, F_SLOTS = range(3)
#: The batch's state between calls, in cells the table's build no longer needs: the
#: deaths its table may still take (0: a new one is due; -k: none could be built, the
#: per-change path for k changes) and its alias mask, in rows
#: H_UNUSED and H_MASK of the integer table's column E_SMALL, and its geometric scale in
#: row H_SCALE of the float table's column F_SLOTS (rows 0-2 hold the counts' factors).
H_UNUSED, H_MASK, H_SCALE = 0, 1, 3
#: What a batch ended with (BATCH_NONE: none ran, this position is for the per-change path).
BATCH_FULL, BATCH_OVER, BATCH_CHANGE, BATCH_NONE = range(4)
#: Misses before a candidate when there is none to expect: larger than any battle.
NEVER = 1 << 62
#: A 53-bit integer times this is a uniform number in [0, 1).
UNIT = 1.0 / 9007199254740992.0


@jit(inline=True)
def batch_deaths(ts, strikers):
    """The deaths a batch may take from this position (0: none, the per-change path)."""
    fewest = min(ts[0], ts[1], strikers)
    return fewest // BATCH_SHARE if fewest >= BATCH_FROM else 0


@jit(inline=True)
def _candidate(table, weights, m, g, j, e, slot, column, value, thin, chance):
    table[m, E_STRIKER] = g
    table[m, E_TARGET] = j
    table[m, E_SIDE] = e
    table[m, E_SLOT] = slot
    table[m, E_COLUMN] = column
    table[m, E_VALUE] = value
    weights[m, F_THIN] = thin
    weights[m, F_PROB] = chance


@jit(counted=False)
def batch_table(
    groups, w, t, ts, strikers, pkill, sphit, tl, nt, man_column, man_value, deaths, table, weights
):
    """The candidates of a batch of at most ``deaths`` deaths and their alias table, in
    ``table`` and ``weights`` (columns as the E_ and F_ constants say); returns the alias
    table's size less one (a mask of the random index), and ``1 / -log(1 - P)`` for the
    chance ``P`` that a strike is a candidate. Size -1: the batch cannot run (``P`` is
    not below 1, nothing can change, or too many candidates)."""
    n = groups.shape[0]
    structure = n + 1  # its count t[n + 1] is 1
    strikers_low = float(strikers - deaths)
    m = 0
    total = 0.0
    for g in range(n):
        if w[g] == 0:
            continue
        e = 1 - groups[g, layout.G_SIDE]
        men = float(w[g])
        if groups[g, layout.G_KIND] == layout.ENGINE:
            if sphit[g] > 0.0:
                if m == MOST_ENTRIES:
                    return -1, 0.0
                chance = men * sphit[g] / strikers_low
                _candidate(table, weights, m, g, structure, e, 2, -1, 0, strikers_low / men, chance)
                total += chance
                m += 1
            continue
        low = float(ts[e] - deaths) * strikers_low
        for k in range(nt[e] + 1):
            if k < nt[e]:
                j = tl[e, k]
                hit = pkill[g, j]
                column = man_column[j]
            else:
                j = structure
                hit = sphit[g]
                column = -1
            if hit <= 0.0:
                continue
            if m == MOST_ENTRIES:
                return -1, 0.0
            chance = men * t[j] * hit / low
            thin = low / (men * t[j])
            value = man_value[j] if column >= 0 else 0
            _candidate(table, weights, m, g, j, e, e, column, value, thin, chance)
            total += chance
            m += 1
    if not (0.0 < total < 1.0):
        return -1, 0.0
    size = 1
    while size < m:
        size *= 2
    # Vose's method: every slot keeps itself with its chance and gives its alias the
    # rest. The padding has no chance (never kept) and no thinning factor (never a
    # change, were rounding to keep one).
    n_small = 0
    n_large = 0
    for k in range(size):
        if k >= m:
            _candidate(table, weights, k, 0, structure, 0, 2, -1, 0, 0.0, 0.0)
        else:
            weights[k, F_PROB] *= size / total
        table[k, E_ALIAS] = k
        if weights[k, F_PROB] < 1.0:
            table[n_small, E_SMALL] = k
            n_small += 1
        else:
            table[n_large, E_LARGE] = k
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        few = table[n_small, E_SMALL]
        many = table[n_large - 1, E_LARGE]
        table[few, E_ALIAS] = many
        weights[many, F_PROB] = (weights[many, F_PROB] + weights[few, F_PROB]) - 1.0
        if weights[many, F_PROB] < 1.0:
            n_large -= 1
            table[n_small, E_SMALL] = many
            n_small += 1
    for k in range(n_large):
        weights[table[k, E_LARGE], F_PROB] = 1.0
    for k in range(n_small):
        weights[table[k, E_SMALL], F_PROB] = 1.0  # rounding: their chances are 1 within it
    return size - 1, 1.0 / -math.log1p(-total)


@jit(counted=False)
def batch_run(
    state,
    w,
    t,
    per_side,
    cnt,
    kinds,
    room,
    row,
    inv,
    limits,
    table,
    weights,
    mask,
    scale,
    deaths,
    steps,
):
    """Candidates from the table until ``deaths`` men died, the battle ended, or a change
    this path leaves to the skip kernel came. Returns ``(how, side, target, striker,
    steps, died)``: ``how`` BATCH_FULL, BATCH_OVER (``side`` lost) or BATCH_CHANGE (the
    change at ``side``: ``target`` a group, or -1 its structure, struck by ``striker``),
    and ``died`` the men this call took. Indices are unsigned where they are known not
    to be negative: no wrap-around check."""
    value, alive = per_side[0], per_side[1]
    ws, ts = per_side[5], per_side[6]
    left = room[R_LEFT]
    structure = t.shape[0] - 1
    weights[0, F_SLOTS] = inv[ts[0]]
    weights[1, F_SLOTS] = inv[ts[1]]
    weights[2, F_SLOTS] = 1.0
    strikers = ws[0] + ws[1]
    mask64 = np.uint64(mask)
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    died = 0
    while True:
        # The strikes until a candidate: floor(E * scale) misses, E exponential by the
        # ziggurat's fast path here (the state in registers), its rare rest by the array.
        s0, s1, s2, s3, bits = next_u64_held(s0, s1, s2, s3)
        layer = bits & np.uint64(255)
        mag = np.int64(bits >> np.uint64(11))
        x = mag * WE[layer]
        if mag >= KE[layer]:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            x = exponential_from(state, bits)
            s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        steps += np.int64(min(math.floor(x * scale), NEVER)) + 1
        # Which candidate: a slot from the low bits, kept or its alias by the high bits.
        s0, s1, s2, s3, bits = next_u64_held(s0, s1, s2, s3)
        k = bits & mask64
        if np.int64(bits >> np.uint64(11)) * UNIT >= weights[k, F_PROB]:
            k = np.uint64(table[k, E_ALIAS])
        # Whether it is the change (thinning), from the counts now.
        s0, s1, s2, s3, bits = next_u64_held(s0, s1, s2, s3)
        g = np.uint64(table[k, E_STRIKER])
        j = np.uint64(table[k, E_TARGET])
        e = np.uint64(table[k, E_SIDE])
        keep = w[g] * t[j] * weights[k, F_THIN]
        keep *= weights[np.uint64(table[k, E_SLOT]), F_SLOTS] * inv[np.uint64(strikers)]
        if np.int64(bits >> np.uint64(11)) * UNIT >= keep:
            continue  # a miss
        column = table[k, E_COLUMN]
        if column < 0:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            target = -1 if j == structure else np.int64(j)
            return BATCH_CHANGE, np.int64(e), target, np.int64(g), steps, died
        if left[j] > 0:
            left[j] -= 1  # no group of his kind can empty: which one is drawn later
        else:
            # The kind's deaths shared out among its groups, and his group drawn.
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            group = settle(state, cnt, kinds, room, np.int64(j))
            s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
            if cnt[group] == 1:
                return BATCH_CHANGE, np.int64(e), group, np.int64(g), steps, died
            cnt[group] -= 1
        # A man dies and his group stands: the skip kernel's per-death path, counts only.
        row[np.uint64(column)] += 1
        value[e] -= table[k, E_VALUE]
        alive[e] -= 1
        t[j] -= 1
        ts[e] -= 1
        weights[e, F_SLOTS] = inv[np.uint64(ts[e])]
        if w[j] > 0:
            w[j] -= 1
            ws[e] -= 1
            strikers -= 1
        if alive[e] == 0 or value[e] * 100 <= limits[e]:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            return BATCH_OVER, np.int64(e), -1, -1, steps, died
        died += 1
        if died == deaths:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            return BATCH_FULL, np.int64(e), -1, -1, steps, died


@jit(counted=False)
def batch_step(
    state,
    groups,
    w,
    t,
    per_side,
    cnt,
    kinds,
    room,
    row,
    pkill,
    sphit,
    tl,
    nt,
    inv,
    limits,
    table,
    weights,
    steps,
):
    """A batch from this position, on the table still in use or a new one; returns
    ``(how, side, target, striker, steps)`` as :func:`batch_run` (BATCH_NONE: none ran).
    A change handed back moves the chances: the caller then sets the table's deaths left
    (row H_UNUSED) to 0, as the per-change path does at any such change."""
    ws, ts = per_side[5], per_side[6]
    strikers = ws[0] + ws[1]
    deaths = batch_deaths(ts, strikers)
    if deaths == 0:
        table[H_UNUSED, E_SMALL] = 0
        return BATCH_NONE, 0, -1, -1, steps
    if table[H_UNUSED, E_SMALL] < 0:
        # No table could be built lately: the per-change path, for as many changes.
        table[H_UNUSED, E_SMALL] += 1
        return BATCH_NONE, 0, -1, -1, steps
    if table[H_UNUSED, E_SMALL] == 0:
        mask, scale = batch_table(
            groups,
            w,
            t,
            ts,
            strikers,
            pkill,
            sphit,
            tl,
            nt,
            kinds[K_COLUMN],
            kinds[K_VALUE],
            deaths,
            table,
            weights,
        )
        if mask < 0:
            table[H_UNUSED, E_SMALL] = -deaths
            return BATCH_NONE, 0, -1, -1, steps
        table[H_UNUSED, E_SMALL] = deaths
        table[H_MASK, E_SMALL] = mask
        weights[H_SCALE, F_SLOTS] = scale
    unused = table[H_UNUSED, E_SMALL]
    how, e, target, striker, steps, died = batch_run(
        state,
        w,
        t,
        per_side,
        cnt,
        kinds,
        room,
        row,
        inv,
        limits,
        table,
        weights,
        table[H_MASK, E_SMALL],
        weights[H_SCALE, F_SLOTS],
        unused,
        steps,
    )
    table[H_UNUSED, E_SMALL] = unused - died
    return how, e, target, striker, steps
