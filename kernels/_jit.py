"""The one place kernels are compiled.

Every kernel goes through :func:`jit` so that caching, the error model and the
parallel flag are decided once. ``cache=True`` writes the machine code next to the
source (``__pycache__``), so only the first run after install pays for compilation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

import numba
from numba import types
from numba.core.caching import FunctionCache
from numba.core.cpu import CPUTargetOptions
from numba.core.typing.typeof import typeof_impl

from ._warm import LOADS_ITS_WAY, SHORTCUTS, LoadingCache

F = TypeVar("F", bound=Callable[..., Any])


#: Numba's option that marks a function's machine code ``alwaysinline`` for LLVM, used by
#: ``jit(llvm_inline=True)``; a Numba without it inlines such a function its own way. Like
#: every use of Numba's private parts here, off with kernels/_warm.py's ``SHORTCUTS``.
_LLVM_INLINES = SHORTCUTS and hasattr(CPUTargetOptions, "forceinline")


def jit(
    func: F | None = None,
    *,
    parallel: bool = False,
    inline: bool = False,
    counted: bool = True,
    llvm_inline: bool = False,
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

    ``llvm_inline=True`` is for a large helper that runs often: it is compiled once on
    its own and LLVM inlines its code at each call site (Numba's ``forceinline``: the
    function is ``alwaysinline``). Numba's own passes (inlining, SSA, type inference),
    which cost more than linearly in a function's size, then see the caller and the
    helper apart: blocks' round and counting helpers so took its cold compile from 50
    to 34 CPU seconds, the battles as fast. Not every helper keeps its speed so (LLVM optimizes
    it alone first): measure (benchmarks/kernel_versions.py). A helper called with a
    literal argument is compiled once more for it, so call it with ``np.int64``.
    """

    # Numba's own keyword for reference counting, absent from its type stubs (private: with
    # the shortcuts off every function counts references, only slower).
    options: dict[str, Any] = {} if not SHORTCUTS else {"_nrt": counted}

    def wrap(f: F) -> F:
        late = llvm_inline and _LLVM_INLINES
        early = inline or (llvm_inline and not late)
        if late:
            options["forceinline"] = True
        dispatcher = numba.njit(
            cache=True,
            parallel=parallel,
            nogil=True,
            error_model="numpy",
            inline="always" if early else "never",
            **options,
        )(f)
        if type(dispatcher._cache) is FunctionCache and LOADS_ITS_WAY:
            dispatcher._cache.__class__ = LoadingCache
        return dispatcher

    if func is None:
        return wrap
    return wrap(func)


#: The array types a kernel passes to a function given by address: C order, as every
#: prepared scenario's arrays are.
STATE = types.uint64[::1]  # a battle's random state
INTS = types.int64[::1]
INT_TABLE = types.int64[:, ::1]
REALS = types.float64[::1]
REAL_TABLE = types.float64[:, ::1]


def address_of(
    dispatcher: Any, arg_types: tuple[Any, ...], *, vectorized_loops: bool = True
) -> Any:
    """``dispatcher`` (a :func:`jit` function) compiled for ``arg_types`` (loaded from the
    cache when it is there), to be handed to a kernel as an argument and called through
    its address.

    A kernel that calls a jitted function links that function's code into its own, and a
    ``prange`` loop's machinery links it again into each of its three libraries: LLVM
    optimized and emitted blocks' battle function five times, about half of its first
    run's compiling. Passed as an argument, the function is typed as a first-class
    function (Numba's wrapper address protocol) and called through the C wrapper Numba
    compiles beside every jitted function, so its code is compiled once, as any kernel's
    (cached, its compile announced). ``arg_types`` are the types the kernel passes,
    layouts included. Each kernel module keeps one such function per signature
    (``functools.cache``), made on first use, so that importing the kernels compiles
    nothing.

    ``vectorized_loops=False`` compiles the function, and the helpers it calls, without
    LLVM's loop vectorizer: for a battle whose loops run over a handful of pieces, the
    vector copy of each loop (and its scalar remainder, at every site a helper is
    inlined) only lengthens the code a battle runs through. Measure before choosing it:
    without it for every kernel, blocks' battles ran up to 8% faster, but
    confrontation's and skirmish's 1-10% slower (docs/benchmarks.md, sixth round). A
    function loaded from the cache runs the code it was compiled with.
    """
    # function_type registers how such an argument is typed and passed; Numba imports it
    # when it sets up its compiler, which a process loading cached kernels skips.
    import numba.experimental.function_type  # noqa: F401

    compile_for(dispatcher, arg_types, vectorized_loops=vectorized_loops)
    return _Address(dispatcher.overloads[arg_types])


def compile_for(
    dispatcher: Any, arg_types: tuple[Any, ...], *, vectorized_loops: bool = True
) -> None:
    """``dispatcher`` compiled for ``arg_types`` (or loaded from the cache), as
    :func:`address_of` compiles a function: also for a helper of such a function compiled
    ahead of it, in this process or a second one (kernels/_aside.py), which must be
    compiled with the same ``vectorized_loops`` for its code to be the code the function's
    own compile would have made of it."""
    with nullcontext() if vectorized_loops or not SHORTCUTS else _loops_kept_scalar():
        dispatcher.compile(arg_types)


@contextmanager
def _loops_kept_scalar() -> Iterator[None]:
    """Within the block, Numba's compiles run LLVM without its loop vectorizer.

    Numba reads ``config.LOOP_VECTORIZE`` each time it builds LLVM's pass managers (per
    library it optimizes). Held under Numba's compiler lock, so no compile on another
    thread sees the setting; Numba re-reads its configuration from the environment only
    when the environment changed, which a user's ``NUMBA_LOOP_VECTORIZE`` set in the
    block would do, and that value is then kept."""
    from numba.core import config as numba_config
    from numba.core.compiler_lock import global_compiler_lock

    config: Any = numba_config  # its settings are set from the environment, unknown to mypy

    with global_compiler_lock:
        config.reload_config()  # any change of the environment applied first, not mid-way
        before = config.LOOP_VECTORIZE
        config.LOOP_VECTORIZE = 0
        try:
            yield
        finally:
            config.LOOP_VECTORIZE = before


class _Address(types.WrapperAddressProtocol):
    """A compiled function as a kernel's argument: its C wrapper's address and signature."""

    def __init__(self, compiled: Any) -> None:
        self._signature = compiled.signature
        self._address = int(
            compiled.library.get_pointer_to_function(compiled.fndesc.llvm_cfunc_wrapper_name)
        )
        #: Its Numba type, made once: Numba's own typing of such an argument builds a new
        #: FunctionType at every kernel call (a third of a small call's 100 us when
        #: profiled: a scenario with ranges makes a call per combination of inputs).
        self.numba_type = types.FunctionType(self._signature)

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self) -> Any:
        return self._signature


@typeof_impl.register(_Address)
def _typeof_address(value: _Address, context: Any) -> Any:
    return value.numba_type
