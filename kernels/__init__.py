"""Numba kernels, and the public pieces a ruleset's own kernel is built from.

``kernels.jit`` is the one decorator kernels are compiled with (cached machine code,
NumPy's error model, no GIL); ``kernels.rng`` holds the per-battle random streams. Both
are public for rulesets written outside battle-odds (docs/writing-a-ruleset.md); the
kernel modules of the built-in rulesets are not.
"""

import os
import sys

# OpenMP's threads (Numba's default threading layer) wait for the next parallel call by
# spinning, not sleeping: up to 300,000 turns after every call. Kernel calls here are
# sized to a quarter of a second, so a sleeping thread's wake-up (tens of microseconds)
# costs nothing; but a study calls many small kernels (a price search: thousands of
# cells of a thousand battles), and on a shared machine the spinning threads took more
# CPU than the battles (a price list: 25 CPU seconds with spinning, 10 without, at load
# 5 on 2 cores). Set before OpenMP's library loads (at the first parallel call); a
# value the environment sets is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _import_numba_without_scipy() -> None:
    """Import Numba without the SciPy it loads to check its version.

    When SciPy is installed, ``import numba`` imports it (0.015 s) only to check that its
    version is one Numba supports; no kernel here uses SciPy. It is "not found" while
    Numba loads. A kernel compiled later imports Numba's array support, which loads
    SciPy's BLAS itself if SciPy is there (``np.dot`` and the like)."""
    if "numba" in sys.modules or "scipy" in sys.modules:
        return
    sys.modules["scipy"] = None  # type: ignore[assignment]  # an import of it fails at once
    try:
        import numba  # noqa: F401
    finally:
        del sys.modules["scipy"]


_import_numba_without_scipy()

from ._jit import jit  # noqa: E402

__all__ = ["jit"]
