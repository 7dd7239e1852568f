"""Kinds of men for the skip kernel (kernels/olympia/skip.py) and its batch path.

Groups of men alike in everything but their unit (five units of soldiers, say) have the
same chances, so the skip kernel keeps its sums per *kind*, at the kind's first group.
Which group of the kind a death came from matters only when a group may empty (its unit's
noble comes into reach, its row may clear), so it is drawn only then: each kind counts
down the deaths it can take before any of its groups could be empty (its room), and when
that is used up the deaths since its counts were last exact are shared out among its
groups (``settle``), a multivariate hypergeometric draw.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from ..rng import below, uniform
from . import layout

#: Rows of the kind table: each group's kind (its first group), where the kind's groups
#: start in the member row, how many there are, and the groups listed kind by kind; and,
#: for the per-death path, each group's casualty column (-1: not men) and value (in this
#: table rather than arrays of their own: each array handed to the per-battle call is
#: seven or nine more words passed, 2% of the yardstick battle).
K_REP, K_START, K_SIZE, K_MEMBER, K_COLUMN, K_VALUE = range(6)
#: Rows of the per-battle room of each kind: the deaths it can still take before any of
#: its groups could be empty, and that room when its groups' counts were last exact.
R_LEFT, R_SETTLED = 0, 1


@jit(inline=True)
def hypergeometric(state, n, good, total):
    """Good ones among ``n`` drawn without replacement from ``total``, ``good`` of them
    good: the support walked outwards from the mode (mode, mode + 1, mode - 1, ...) until
    the probabilities passed exceed one uniform number, which is exact for any order of
    the walk and takes about two standard deviations of steps."""
    bad = total - good
    lo = max(0, n - bad)
    hi = min(n, good)
    if lo == hi:
        return lo
    mode = min(max((n + 1) * (good + 1) // (total + 2), lo), hi)
    p_mode = math.exp(
        math.lgamma(good + 1.0)
        - math.lgamma(mode + 1.0)
        - math.lgamma(good - mode + 1.0)
        + math.lgamma(bad + 1.0)
        - math.lgamma(n - mode + 1.0)
        - math.lgamma(bad - n + mode + 1.0)
        - math.lgamma(total + 1.0)
        + math.lgamma(n + 1.0)
        + math.lgamma(total - n + 1.0)
    )
    u = uniform(state) - p_mode
    up = mode
    down = mode
    p_up = p_mode
    p_down = p_mode
    while u >= 0.0:
        if up == hi and down == lo:
            return mode  # rounding left u past the whole support
        if up < hi:
            p_up *= (good - up) * (n - up) / ((up + 1.0) * (bad - n + up + 1.0))
            up += 1
            u -= p_up
            if u < 0.0:
                return up
        if down > lo:
            p_down *= down * (bad - n + down) / ((good - down + 1.0) * (n - down + 1.0))
            down -= 1
            u -= p_down
            if u < 0.0:
                return down
    return mode


@jit(inline=True)
def kind_room(cnt, kinds, k, dying):
    """The deaths kind ``k`` can take before any of its groups could be empty: its
    smallest standing group's men less one (``dying``: a group about to lose a man, or
    -1)."""
    fewest = 0
    for m in range(kinds[K_START, k], kinds[K_START, k] + kinds[K_SIZE, k]):
        g = kinds[K_MEMBER, m]
        men = cnt[g] - (g == dying)
        if men > 0 and (fewest == 0 or men < fewest):
            fewest = men
    return max(fewest - 1, 0)


@jit(counted=False)
def settle(state, cnt, kinds, room, k):
    """Kind ``k``'s deaths since its groups' counts were last exact, shared out among
    its groups, and the group of the death at hand, drawn in proportion to their men;
    the kind's room is then counted after that death.

    Between two such moments the men of a kind are alike for every chance, so which
    group each death came from was a draw without replacement from the kind's men: its
    counts are a multivariate hypergeometric draw, one group at a time. A kind of one
    group draws nothing."""
    start = kinds[K_START, k]
    size = kinds[K_SIZE, k]
    deaths = room[R_SETTLED, k] - room[R_LEFT, k]
    men = 0
    for m in range(start, start + size):
        men += cnt[kinds[K_MEMBER, m]]
    standing = men - deaths  # the kind's men once its deaths are shared out
    for m in range(start, start + size):
        g = kinds[K_MEMBER, m]
        share = deaths if m == start + size - 1 else hypergeometric(state, deaths, cnt[g], men)
        men -= cnt[g]
        cnt[g] -= share
        deaths -= share
    group = kinds[K_MEMBER, start]
    if size > 1:
        r = below(state, standing)
        for m in range(start, start + size):
            group = kinds[K_MEMBER, m]
            if r < cnt[group]:
                break
            r -= cnt[group]
    room[R_LEFT, k] = kind_room(cnt, kinds, k, group)
    room[R_SETTLED, k] = room[R_LEFT, k]
    return group


@jit(inline=True)
def gather_kinds(groups, kinds, room, w, t, ws, ts):
    """Each kind's strikers and targets counted at its first group, less its deaths
    not yet shared out among its groups (whose counts ``refresh`` read)."""
    # Backwards: a kind's first group comes before its others, which are then added in.
    for g in range(groups.shape[0] - 1, -1, -1):
        k = kinds[K_REP, g]
        if k != g:
            t[k] += t[g]
            w[k] += w[g]
            t[g] = 0
            w[g] = 0
            continue
        deaths = room[R_SETTLED, k] - room[R_LEFT, k]
        if deaths > 0:
            s = groups[k, layout.G_SIDE]
            if t[k] > 0:
                t[k] -= deaths
                ts[s] -= deaths
            if w[k] > 0:
                w[k] -= deaths
                ws[s] -= deaths


@jit
def kind_table(groups, survive):
    """Groups of men alike in everything but their unit (side, row, ratings, defense,
    value, protection, casualty column, survival) are one kind: the chances of the
    per-death path are kept per kind, at its first group. Nobles and engines are kinds of
    their own. Rows as the K_ constants say."""
    n = groups.shape[0]
    kinds = np.zeros((6, n), np.int64)
    for g in range(n):
        kinds[K_REP, g] = g
        if groups[g, layout.G_KIND] != layout.MAN:
            continue
        for h in range(g):
            if (
                kinds[K_REP, h] != h
                or groups[h, layout.G_KIND] != layout.MAN
                or survive[h] != survive[g]
            ):
                continue
            alike = True
            for f in range(groups.shape[1]):
                if f != layout.G_UNIT and f != layout.G_COUNT and groups[h, f] != groups[g, f]:
                    alike = False
            if alike:
                kinds[K_REP, g] = h
                break
    for g in range(n):
        kinds[K_SIZE, kinds[K_REP, g]] += 1
        kinds[K_COLUMN, g] = (
            groups[g, layout.G_COLUMN] if groups[g, layout.G_KIND] == layout.MAN else -1
        )
        kinds[K_VALUE, g] = groups[g, layout.G_VALUE]
    start = 0
    for k in range(n):
        kinds[K_START, k] = start
        start += kinds[K_SIZE, k]
    placed = np.zeros(n, np.int64)
    for g in range(n):
        k = kinds[K_REP, g]
        kinds[K_MEMBER, kinds[K_START, k] + placed[k]] = g
        placed[k] += 1
    return kinds
