"""Numba kernels, and the public pieces a ruleset's own kernel is built from.

``kernels.jit`` is the one decorator kernels are compiled with (cached machine code,
NumPy's error model, no GIL); ``kernels.rng`` holds the per-battle random streams. Both
are public for rulesets written outside battle-odds (docs/writing-a-ruleset.md); the
kernel modules of the built-in rulesets are not.
"""

from ._jit import jit

__all__ = ["jit"]
