"""Per-battle random streams.

Battle ``i`` of a run with seed ``s`` owns a xoshiro256** state derived from
``(s, i)`` through SplitMix64, so its numbers do not depend on which thread, chunk,
process or machine runs it. xoshiro256** (period 2**256 - 1) makes overlapping
streams between battles practically impossible, which a bare SplitMix64 per battle
(period 2**64, one Weyl sequence) would not guarantee for 10**9 battles.

The state is a ``uint64[4]`` array owned by the caller, so kernels allocate it once
per block of battles rather than once per battle.

This module is public: a ruleset written outside battle-odds draws its numbers with
the functions in ``__all__``, from inside a kernel compiled with :func:`kernels.jit`
(docs/writing-a-ruleset.md, "The randomness contract")::

    state = new_state()                 # once per block of battles
    seed_battle(state, seed, first + i) # before battle first + i
    die = below(state, 6) + 1           # every number of that battle from its state
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["below", "chance", "new_state", "next_u64", "seed_battle", "uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
# Keeps the stream of (seed, i) apart from the stream of (seed + 1, i - 1) and the like.
_BATTLE_SALT = np.uint64(0xD1B54A32D192ED03)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@jit
def _splitmix64(x):
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@jit(inline=True)
def new_state():
    """An unseeded stream state (``uint64[4]``), to be filled by :func:`seed_battle`."""
    return np.empty(4, np.uint64)


@jit
def seed_battle(state, seed, battle):
    """Fill ``state`` with the stream of battle ``battle`` of run ``seed``."""
    x = _splitmix64(np.uint64(seed)) ^ _splitmix64(np.uint64(battle) * _BATTLE_SALT)
    for k in range(4):
        x = _splitmix64(x + np.uint64(k))
        state[k] = x
    # The all-zero state is the one fixed point of xoshiro; SplitMix64 output of four
    # distinct inputs cannot all be zero, but guard anyway because it costs nothing.
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = _GOLDEN


@jit(inline=True)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@jit(inline=True)
def next_u64_held(s0, s1, s2, s3):
    """:func:`next_u64` on a state held in four locals (registers, not memory), for a
    kernel's hottest loop: ``(s0, s1, s2, s3, bits)``. The same numbers as
    :func:`next_u64` on the array those locals were read from."""
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return s0, s1, s2, s3, result


@jit(inline=True)
def next_u64(state):
    """The next 64 random bits of the stream (xoshiro256**), as a uint64."""
    s0, s1, s2, s3, result = next_u64_held(state[0], state[1], state[2], state[3])
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@jit(inline=True)
def uniform(state):
    """A float64 in [0, 1) with 53 random bits."""
    return float(next_u64(state) >> np.uint64(11)) * _TO_UNIT


@jit(inline=True)
def below(state, n):
    """A uniform integer in ``0 .. n-1`` (``n >= 1``; bias below 2**-53 * n)."""
    k = np.int64(uniform(state) * n)
    # Guards the rounding of uniform() * n up to n for n near 2**53.
    return k if k < n else n - 1


@jit(inline=True)
def chance(state, numerator, denominator):
    """True with probability ``numerator / denominator`` (integers, denominator > 0)."""
    return uniform(state) * denominator < numerator
