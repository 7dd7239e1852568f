"""kernels/_warm.py: what a process loading cached kernels skips of Numba's set-up gives
what Numba's own way gives (tests/test_startup.py runs a whole query both ways)."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from numba.core import environment, errors

import kernels  # noqa: F401  # installs kernels/_warm.py's pieces
from kernels import _warm
from tests.processes import needs_numba_shortcuts, toy_probe

pytestmark = needs_numba_shortcuts


@pytest.mark.parametrize(
    "array",
    [
        np.zeros(3),
        np.zeros((2, 3), np.int64),
        np.zeros((2, 3), order="F"),
        np.zeros((4, 6), np.uint64)[::2, ::3],  # neither C nor Fortran order
        np.zeros(0, np.int32),
        np.zeros(3, np.bool_),
        np.zeros(2, "U3"),
        np.zeros(2, "M8[s]"),
        np.zeros(2, object),
    ],
    ids=["float", "int table", "fortran", "strided", "empty", "bool", "text", "dates", "object"],
)
@pytest.mark.parametrize("writeable", [True, False])
def test_an_arrays_type_is_numbas(array: np.ndarray, writeable: bool) -> None:
    array = array.copy() if array.flags.owndata else array
    array.flags.writeable = writeable
    assert _warm._typeof_ndarray(array, None) == _warm._numba_typeof_ndarray(array, None)


class Subclass(np.ndarray):
    pass


def test_a_masked_array_or_a_subclass_goes_to_numbas_own_typeof() -> None:
    with pytest.raises(errors.NumbaTypeError, match="MaskedArray"):
        _warm._typeof_ndarray(np.ma.masked_array([1.0, 2.0]), None)
    sub = np.zeros(3).view(Subclass)
    assert _warm._typeof_ndarray(sub, None) == _warm._numba_typeof_ndarray(sub, None)


def test_an_unsupported_dtype_is_numbas_error() -> None:
    for typeof in (_warm._typeof_ndarray, _warm._numba_typeof_ndarray):
        with pytest.raises(errors.NumbaValueError, match=re.escape("Unsupported array dtype: |V8")):
            typeof(np.zeros(2, "V8"), None)


def test_an_environment_of_numbas_own_module_is_rebuilt_without_importing_it() -> None:
    consts = [1.5, "a constant"]
    env = _warm._rebuild_env("numba.no_such_module", consts, "env_for_the_test")
    assert env.globals == {"__name__": "numba.no_such_module"}
    assert list(env.consts) == consts
    assert environment.lookup_environment("env_for_the_test") is env
    assert _warm._rebuild_env("numba.no_such_module", [], "env_for_the_test") is env
    # Any other module's environment is Numba's: its globals are the module's.
    own = _warm._rebuild_env(__name__, [], "env_of_this_test_module")
    assert own.globals is globals()


def test_an_environment_pickles_under_numbas_own_name() -> None:
    """Cache files name Numba's function, so they load with or without battle-odds."""
    assert environment._rebuild_env is _warm._rebuild_env  # installed
    env = _warm._rebuild_env("numba.no_such_module", [2], "env_pickled_for_the_test")
    data = pickle.dumps(env)
    assert b"numba.core.environment" in data and b"kernels" not in data
    assert pickle.loads(data) is env


LAZY_MODULE = """
import numpy as np
from kernels import jit

@jit
def tripled(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = 3 * a[i] + 1
    return out
"""

#: Calls the cached function (compiled on a cold cache, loaded on a warm one), then
#: compiles a function that links it in; prints what each gave and the library's state.
LAZY_PROBE = """
import json
import numba
import numpy as np
import toy_lazy as t
a = np.arange(5, dtype=np.int64)
first = t.tripled(a).tolist()
library = t.tripled.overloads[t.tripled.signatures[0]].library
kind = type(library).__name__
waiting = getattr(library, "_bitcode", None) is not None

@numba.njit  # not cached: compiled here, linking in tripled's library
def summed(a):
    return t.tripled(a).sum() + 1

print(json.dumps({"first": first, "summed": int(summed(a)), "kind": kind,
                  "waiting": waiting, "after": getattr(library, "_bitcode", None) is not None}))
"""


# Slow tier (docs/testing.md): 4.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_library_loaded_lazily_is_parsed_when_a_compile_links_it(tmp_path: Path) -> None:
    """A warm process loads a cached function's machine code without its bitcode; a
    compile in that process that calls the function links the bitcode in, parsed then,
    and both answer as on a cold cache."""
    probe = toy_probe(tmp_path, "toy_lazy", LAZY_MODULE, LAZY_PROBE)
    cold, warm = probe(), probe()
    assert cold["first"] == [1, 4, 7, 10, 13] and cold["summed"] == 36
    assert cold["kind"] == "JITCodeLibrary"  # compiled: Numba's own library
    assert warm["kind"] == "LazyLinkingLibrary" and warm["waiting"] is True
    assert warm["first"] == cold["first"] and warm["summed"] == cold["summed"]
    assert warm["after"] is False  # parsed for the compile that linked it
