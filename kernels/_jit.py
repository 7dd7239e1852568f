"""The one place kernels are compiled.

Every kernel goes through :func:`jit` so that caching, the error model and the
parallel flag are decided once. ``cache=True`` writes the machine code next to the
source (``__pycache__``), so only the first run after install pays for compilation.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, TypeVar

import numba
from numba import types
from numba.core.caching import FunctionCache
from numba.core.cpu import CPUTargetOptions
from numba.core.runtime import nrt
from numba.extending import intrinsic

F = TypeVar("F", bound=Callable[..., Any])


class _LoadingCache(FunctionCache):
    """Numba's cache of one function's machine code, loaded without the compiler's set-up.

    Numba's own ``load_overload`` first refreshes the target context: it imports and
    installs every lowering registry of Numba (about 0.1 s of every warm process, a tenth
    of a whole ``odds`` query), which only compiling uses. Machine code loaded from the
    cache needs the runtime's symbols (``rtsys.initialize``); the others it links to are
    registered when Numba is imported and its target context is made, and a parallel
    kernel's threads start from the loaded library's own initialisers. A compile later in
    the process refreshes the contexts itself (``numba.core.compiler``), so it finds
    everything Numba's way."""

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        nrt.rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


#: The private parts of Numba's cache the loader above calls: a Numba that renamed them
#: (``numba>=0.59`` is all pyproject asks) loads Numba's own way, only slower to start.
_LOADS_ITS_WAY = all(
    hasattr(FunctionCache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")
) and hasattr(nrt, "rtsys")

#: Numba's option that marks a function's machine code ``alwaysinline`` for LLVM, used by
#: ``jit(llvm_inline=True)``; a Numba without it inlines such a function its own way.
_LLVM_INLINES = hasattr(CPUTargetOptions, "forceinline")


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

    # Numba's own keyword for reference counting, absent from its type stubs.
    options: dict[str, Any] = {"_nrt": counted}

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
        if type(dispatcher._cache) is FunctionCache and _LOADS_ITS_WAY:
            dispatcher._cache.__class__ = _LoadingCache
        return dispatcher

    if func is None:
        return wrap
    return wrap(func)


def address_of(signature: Any, func: Callable[..., Any]) -> Any:
    """``func`` compiled once as a C callback of ``signature`` (``numba.cfunc``, cached,
    loaded as :func:`jit`'s kernels are), for a kernel to call through its address.

    A kernel that calls a jitted function links that function's code into its own, and a
    ``prange`` loop's machinery links it again into each of its three libraries: LLVM
    optimized and emitted blocks' battle function five times, about half of its first
    run's compiling. A callback passed to the kernel as an argument is typed as a
    first-class function and called through its address, so its code is compiled once.
    Arrays cross it as pointers (``data_of`` in the kernel) and shapes.
    """
    # function_type registers how a callback is typed and called; Numba imports it when
    # it sets up its compiler, which a process loading cached kernels skips.
    import numba.experimental.function_type  # noqa: F401
    from numba.core import ccallback, event, sigutils
    from numba.core.compiler_lock import global_compiler_lock

    # Any: Numba's stubs know none of the private parts overridden below.
    base: Any = ccallback.CFunc

    class Callback(base):
        @property
        def py_func(self) -> Callable[..., Any]:
            return func

        @global_compiler_lock
        def compile(self) -> None:
            # CFunc.compile, with the compiling announced: Numba announces a dispatcher's
            # compiles, not a callback's, and a first run says what it compiles and
            # counts its time (machine code emitted here, when the cache saves it) as
            # compiling, not as battles.
            context = self._targetdescr.target_context
            result = self._cache.load_overload(self._sig, context)
            data = {"dispatcher": self, "args": self._sig.args, "return_type": None}
            compiling = result is None
            with event.trigger_event("numba:compile", data=data) if compiling else nullcontext():
                if result is None:
                    result = self._compile_uncached()
                    self._cache.save_overload(self._sig, result)
                self._library = result.library
                self._wrapper_name = result.fndesc.llvm_cfunc_wrapper_name
                self._wrapper_address = self._library.get_pointer_to_function(self._wrapper_name)

    callback = Callback(
        func, sigutils.normalize_signature(signature), locals={}, options={"error_model": "numpy"}
    )
    callback.enable_caching()
    if type(callback._cache) is FunctionCache and _LOADS_ITS_WAY:
        callback._cache.__class__ = _LoadingCache
    callback.compile()
    return callback


def _data_of(typingctx: Any, array: Any) -> Any:
    """The address of ``array``'s first element, typed (a pointer to its dtype), for a
    callback of :func:`address_of`."""
    signature = types.CPointer(array.dtype)(array)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return context.make_array(sig.args[0])(context, builder, value=args[0]).data

    return signature, codegen


#: Called in a kernel as ``data_of(array)`` (Any: the intrinsic's typing signature is
#: not how a kernel calls it).
data_of: Any = intrinsic(_data_of)
