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
    """Import Numba without the SciPy it loads to see whether BLAS is there.

    When SciPy is installed, ``import numba`` imports it to check its version and
    imports ``scipy.linalg.cython_blas`` (with scipy.linalg: 0.2 s of every process) to
    decide whether ``np.dot`` and the like may compile; no kernel here uses them. SciPy
    is "not found" while Numba loads, and the BLAS answer then set to whether SciPy is
    installed: Numba imports SciPy's BLAS itself when a kernel that needs it compiles."""
    if "numba" in sys.modules or "scipy" in sys.modules:
        return
    sys.modules["scipy"] = None  # type: ignore[assignment]  # an import of it fails at once
    try:
        import numba.np.arraymath as arraymath
    finally:
        del sys.modules["scipy"]
    from importlib.util import find_spec

    arraymath._HAVE_BLAS = find_spec("scipy") is not None


_import_numba_without_scipy()

from ._jit import jit  # noqa: E402

__all__ = ["jit"]
