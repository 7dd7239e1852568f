"""What a process that only loads cached kernels skips of Numba's set-up.

A warm query's kernels come from Numba's cache; everything here is about not paying,
in every such process, for parts of Numba that only compiling (or a NumPy subclass the
kernels never see) needs. Each piece keeps Numba's behaviour and only defers work; a
compile later in the same process finds Numba as it would have been.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np
from llvmlite import binding as ll
from numba.core import environment, errors, types
from numba.core.caching import FunctionCache
from numba.core.codegen import JITCodeLibrary, JITCPUCodegen
from numba.core.runtime import nrt
from numba.core.typing.typeof import typeof_impl
from numba.np import numpy_support


class LoadingCache(FunctionCache):
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
        codegen = target_context.codegen()
        # The libraries this load makes are ones that parse their bitcode on first need.
        # (Numba holds its compiler lock: no other library is made meanwhile.)
        codegen._library_class = LazyLinkingLibrary
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        finally:
            del codegen._library_class  # the class's own again


class LazyLinkingLibrary(JITCodeLibrary):
    """A cached function's library whose LLVM bitcode is parsed on first need.

    The cache holds a function's machine code and the bitcode of its functions, which
    only a later compile linking them in reads. Numba parses the bitcode as it loads and
    walks it to record the symbols it defines: 0.03 s of a warm query's four loads
    (1,400 calls into LLVM). Here the machine code is loaded as Numba loads it; the
    bitcode is parsed, and its symbols recorded, when a compile links the library in.
    A symbol is looked up in the machine code loaded, as Numba's execution engine would
    after its check that the symbol is defined (it finds none that is not)."""

    _bitcode: bytes | None = None
    _parsed: Any = None

    @property
    def _shared_module(self) -> Any:
        if self._bitcode is not None:
            module = ll.parse_bitcode(self._bitcode)
            self._bitcode = None
            self._codegen._engine._load_defined_symbols(module)
            self._parsed = module
        return self._parsed

    @_shared_module.setter
    def _shared_module(self, module: Any) -> None:
        self._parsed = module

    @classmethod
    def _unserialize(cls, codegen: Any, state: Any) -> Any:
        name, kind, data = state
        if kind != "object":
            return super()._unserialize(codegen, state)
        object_code, shared_bitcode = data
        library = codegen.create_library(name)
        library.enable_object_caching()
        library._set_compiled_object(object_code)
        library._bitcode = shared_bitcode
        library._finalize_final_module()
        return library

    def get_pointer_to_function(self, name: str) -> int:
        self._ensure_finalized()
        return int(self._codegen._engine.get_function_address(name))


#: The one switch for everything here: ``BATTLE_ODDS_NUMBA_SHORTCUTS=0`` in the environment
#: leaves Numba wholly its own (kernels load from the cache Numba's way, nothing of it is
#: replaced), for a Numba release these pieces were not tested with, or to tell whether a
#: fault is theirs. ``.ci/run`` runs the test suite once so.
SHORTCUTS = os.environ.get("BATTLE_ODDS_NUMBA_SHORTCUTS", "1").strip() != "0"

#: The private parts of Numba this module replaces or calls: a Numba that renamed them
#: loads its own way, only slower to start (pyproject bounds Numba to the releases tested).
LOADS_ITS_WAY = SHORTCUTS and (
    all(
        hasattr(FunctionCache, name)
        for name in ("_load_overload", "_guard_against_spurious_io_errors")
    )
    and hasattr(nrt, "rtsys")
    and all(
        hasattr(JITCodeLibrary, name)
        for name in ("_unserialize", "_set_compiled_object", "_finalize_final_module")
    )
    and hasattr(JITCPUCodegen, "_library_class")
    and hasattr(environment, "_rebuild_env")
    and typeof_impl.dispatch(np.ndarray).__name__ == "_typeof_ndarray"
)

_numba_rebuild_env = environment._rebuild_env


def _rebuild_env(modname: str, consts: list[Any], env_name: str) -> Any:
    """A cached function's environment, as Numba's ``_rebuild_env`` makes it, without
    importing Numba's own modules for it.

    Every function a kernel was compiled from has an environment: its module's globals
    and its constants. A kernel that made an array holds the environments of Numba's
    implementations of ``np.empty`` and the like, whose modules (``numba.np.arrayobj``,
    ``numba.np.arraymath``, with the string support they import) took 0.03 s of every
    warm query to import for them. Only object mode reads an environment's globals
    (``numba.core.pylowering``), and Numba's implementations compile in nopython mode:
    their environments get a dictionary naming the module, and their constants as
    loaded."""
    if modname in sys.modules or not modname.startswith("numba."):
        return _numba_rebuild_env(modname, consts, env_name)
    env = environment.lookup_environment(env_name)
    if env is None:
        env = environment.Environment({"__name__": modname})
        env.consts[:] = consts
        env.env_name = env_name
        environment.Environment._memo[env_name] = env
    return env


# Pickled as Numba's own function (the name a cache file holds), so cache files written
# here load in any process, with battle-odds imported or not.
_rebuild_env.__module__ = _numba_rebuild_env.__module__
_rebuild_env.__qualname__ = _numba_rebuild_env.__qualname__

_numba_typeof_ndarray = typeof_impl.dispatch(np.ndarray)


def _typeof_ndarray(val: np.ndarray, c: Any) -> Any:
    """An array's Numba type, as Numba's ``_typeof_ndarray`` gives it, without importing
    ``numpy.ma`` for an array that is a plain ``ndarray``.

    Numba rejects masked arrays first (``isinstance(val, np.ma.MaskedArray)``), which
    imports ``numpy.ma`` (0.025 s) at the first call of every kernel; an array whose type
    is ``ndarray`` itself is no subclass, so no masked array."""
    if type(val) is not np.ndarray:
        return _numba_typeof_ndarray(val, c)
    try:
        dtype = numpy_support.from_dtype(val.dtype)
    except errors.NumbaNotImplementedError:
        raise errors.NumbaValueError(f"Unsupported array dtype: {val.dtype}") from None
    layout = numpy_support.map_layout(val)
    return types.Array(dtype, val.ndim, layout, readonly=not val.flags.writeable)


if LOADS_ITS_WAY:
    environment._rebuild_env = _rebuild_env
    typeof_impl.register(np.ndarray)(_typeof_ndarray)
