"""The one place kernels are compiled.

Every kernel goes through :func:`jit` so that caching, the error model and the
parallel flag are decided once. ``cache=True`` writes the machine code next to the
source (``__pycache__``), so only the first run after install pays for compilation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numba

F = TypeVar("F", bound=Callable[..., Any])


def jit(
    func: F | None = None, *, parallel: bool = False, inline: bool = False, counted: bool = True
) -> Any:
    """``numba.njit`` with the project's settings.

    ``error_model="numpy"`` keeps division free of Python-style zero checks in hot
    loops (kernels guard their own divisions); ``nogil`` lets Dask threads overlap.
    ``inline=True`` is for the small helpers called once per strike: inlined at
    Numba's level, the calls and the reference counting of their array arguments go
    away (about a fifth faster on the plain Olympia kernel when measured).

    ``counted=False`` compiles a function without reference counting, for per-phase
    helpers that allocate nothing (Numba refuses to compile an allocation in them).
    Numba otherwise counts a reference to every array argument on entry and to every
    array handed to an inlined helper, with an atomic instruction each time; on arrays
    shared by all threads (the scenario's tables) those atomics contend, and they were
    three fifths of the Age of Gods kernel's time when profiled.
    """

    # Numba's own keyword for reference counting, absent from its type stubs.
    counting: dict[str, Any] = {"_nrt": counted}

    def wrap(f: F) -> F:
        return numba.njit(
            cache=True,
            parallel=parallel,
            nogil=True,
            error_model="numpy",
            inline="always" if inline else "never",
            **counting,
        )(f)

    if func is None:
        return wrap
    return wrap(func)
