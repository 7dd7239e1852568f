"""kernels.jit's ways of inlining a helper: ``llvm_inline=True`` leaves the helper a
function of its own for Numba (compiled once, apart from its callers) and has LLVM inline
it at every call site; a Numba without the option inlines it at Numba's level instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernels._jit
from kernels import jit
from tests import ROOT
from tests.processes import needs_numba_shortcuts, toy_probe

#: A helper too large for LLVM to inline on its own at two call sites, written twice: one
#: plainly called, one ``llvm_inline``; each called twice by a kernel of its own.
HELPER = """
def {name}(a, k):
    total = 0
{loops}
    return total
"""
LOOP = """    for i in range(a.shape[0]):
        if a[i] > k + {j}:
            total += a[i] * {three} - k
        elif a[i] == k - {j}:
            total -= {seven}
        else:
            total += (a[i] ^ k) % {five}
"""
LOOPS = "".join(LOOP.format(j=j, three=j + 3, seven=j + 7, five=j + 5) for j in range(6))
MODULE = (
    "import numpy as np\nfrom kernels import jit\n"
    + HELPER.format(name="called_body", loops=LOOPS)
    + HELPER.format(name="inlined_body", loops=LOOPS)
    + """
called_body = jit(counted=False)(called_body)
inlined_body = jit(counted=False, llvm_inline=True)(inlined_body)


@jit
def calls(a):
    return called_body(a, np.int64(2)) + called_body(a, np.int64(3))


@jit
def inlines(a):
    return inlined_body(a, np.int64(2)) + inlined_body(a, np.int64(3))
"""
)

#: Compiles one kernel of the module above (on an empty cache: machine code loaded from a
#: cache cannot be inspected) and prints its answer and the calls left in its LLVM code.
PROBE = """
import json, sys, warnings
import numpy as np
import toy_kernels
kernel = getattr(toy_kernels, sys.argv[1])
answer = int(kernel(np.arange(10)))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Numba warns that inspecting cached code is unsure
    code = kernel.inspect_llvm(kernel.signatures[0])
calls = sum(1 for line in code.splitlines() if " call " in line and "_body" in line)
print(json.dumps({"answer": answer, "calls": calls}))
"""


def _compiled(kernel: str, folder: Path) -> dict[str, int]:
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(folder / f"cache-{kernel}"),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(folder)]),
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE, kernel],
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
        env=env,
    )
    result: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    return result


# Toy kernels compiled into a cache of their own (11-14 s at load 4): slow tier.
@pytest.mark.slow
@pytest.mark.skipif(not kernels._jit._LLVM_INLINES, reason="this Numba has no forceinline")
def test_an_llvm_inlined_helper_leaves_no_call_in_its_caller(tmp_path: Path) -> None:
    (tmp_path / "toy_kernels.py").write_text(MODULE, encoding="utf-8")
    called = _compiled("calls", tmp_path)
    inlined = _compiled("inlines", tmp_path)
    assert called["answer"] == inlined["answer"]
    assert called["calls"] == 2  # LLVM alone would leave this helper called at both sites
    assert inlined["calls"] == 0


def test_without_numbas_forceinline_a_helper_is_inlined_numbas_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def helper(x):  # type: ignore[no-untyped-def]
        return x + 1

    if kernels._jit._LLVM_INLINES:
        late = jit(llvm_inline=True)(helper)
        assert late.targetoptions["inline"] == "never"
        assert late.targetoptions["forceinline"] is True
    monkeypatch.setattr(kernels._jit, "_LLVM_INLINES", False)
    early = jit(llvm_inline=True)(helper)
    assert early.targetoptions["inline"] == "always"
    assert "forceinline" not in early.targetoptions


BY_ADDRESS_MODULE = (
    "import numpy as np\nfrom numba import prange\nfrom kernels import jit\n"
    + HELPER.format(name="plain_body", loops=LOOPS)
    + """
plain_body = jit(counted=False)(plain_body)


@jit(parallel=True)
def through_address(body, a, out):
    for k in prange(out.shape[0]):
        out[k] = body(a, np.int64(k))


@jit(parallel=True)
def linked(a, out):
    for k in prange(out.shape[0]):
        out[k] = plain_body(a, np.int64(k))
"""
)

#: Runs both kernels (one given the body by address_of) and prints their answers, whether
#: the body's compile was announced, and whether its code was linked into each parallel
#: kernel's.
BY_ADDRESS_PROBE = """
import json, warnings
import numpy as np
from numba.core import event
heard = []
class Heard(event.Listener):
    def on_start(self, ev):
        heard.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Heard())
import toy_by_address as t
from numba import types
from kernels._jit import address_of
body = address_of(t.plain_body, (types.int64[::1], types.int64))
a = np.arange(10, dtype=np.int64)
via, direct = np.zeros(4, np.int64), np.zeros(4, np.int64)
t.through_address(body, a, via)
t.linked(a, direct)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    code = "".join(t.through_address.inspect_llvm().values()) if heard else ""
    plain = "".join(t.linked.inspect_llvm().values()) if heard else ""
print(json.dumps({"via": via.tolist(), "direct": direct.tolist(), "heard": heard,
                  "linked": "plain_body" in code, "linked_plainly": "plain_body" in plain}))
"""


# Toy kernels compiled into a cache of their own (11-14 s at load 4): slow tier.
@pytest.mark.slow
def test_a_function_by_address_is_compiled_once_announced_and_not_linked(tmp_path: Path) -> None:
    """A kernel calling a function by its address (address_of) gets the same answers
    as one calling it directly, without the function's code in its own; the function's
    compile is announced as a kernel's (the compile notice and clock), and a second
    process loads it from the cache, compiling nothing of it."""
    probe = toy_probe(tmp_path, "toy_by_address", BY_ADDRESS_MODULE, BY_ADDRESS_PROBE)
    cold = probe()
    assert cold["via"] == cold["direct"] and cold["via"] != [0, 0, 0, 0]
    assert "plain_body" in cold["heard"]  # type: ignore[operator]
    assert cold["linked"] is False
    assert cold["linked_plainly"] is True  # the check sees a linked function
    warm = probe()
    assert warm["via"] == cold["via"] and warm["heard"] == []


VECTOR_MODULE = """
from kernels import jit


@jit(counted=False)
def total(a):
    s = 0
    for k in range(a.shape[0]):
        s += a[k] * 3
    return s
"""

#: Compiles ``total`` by address with the loop vectorizer as asked, runs it, and prints
#: its answer, whether its machine code uses vector registers' packed integer adds, and
#: the vectorizer's setting after the compile.
VECTOR_PROBE = """
import json, sys, warnings
import numpy as np
from numba import config, njit, types
from kernels._jit import address_of
import toy_vector as t
body = address_of(t.total, (types.int64[::1],), vectorized_loops=sys.argv[1] == "yes")
call = njit(lambda f, a: f(a))
answer = call(body, np.arange(1000, dtype=np.int64))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    code = "".join(t.total.inspect_asm().values())
print(json.dumps({"answer": answer, "packed": "vpaddq" in code or "paddq" in code,
                  "setting": config.LOOP_VECTORIZE}))
"""


# Slow tier (docs/testing.md): 3.5 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("vectorized", [True, pytest.param(False, marks=needs_numba_shortcuts)])
def test_a_function_by_address_compiles_its_loops_scalar_when_asked(
    tmp_path: Path, vectorized: bool
) -> None:
    """blocks' battle runs faster without LLVM's vector copies of its loops over a few
    blocks: address_of(vectorized_loops=False) compiles the function so, the answer the
    same, and leaves Numba's setting as it was for every other compile."""
    probe = toy_probe(tmp_path, "toy_vector", VECTOR_MODULE, VECTOR_PROBE)
    env_setting = os.environ.get("NUMBA_LOOP_VECTORIZE", "1")
    result = probe("yes" if vectorized else "no")
    assert result["answer"] == 3 * sum(range(1000))
    assert result["packed"] is (vectorized and env_setting != "0")
    assert result["setting"] == int(env_setting)
