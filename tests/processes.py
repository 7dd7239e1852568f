"""``python -m simulator`` started as a real process, its output piped, for the tests that
watch one run (Ctrl-C, faults, checkpoints)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kernels._warm import SHORTCUTS
from tests import ROOT


def started(
    args: list[str], env: dict[str, str] | None = None, new_session: bool = False
) -> subprocess.Popen[str]:
    """``python -m simulator ARGS`` started in the repository, stdout and stderr piped as
    text, ``env`` added to this process's (NumPy's own threads kept to one, so that the
    threads a test counts are the kernels'); ``new_session``: in a process group of its
    own, as a terminal starts a command, so that Ctrl-C can reach the whole group."""
    return subprocess.Popen(
        [sys.executable, "-m", "simulator", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **(env or {})},
        start_new_session=new_session,
        preexec_fn=_as_a_terminal_starts_it if new_session else None,
    )


def _as_a_terminal_starts_it() -> None:
    """In the child before it runs: Ctrl-C at its default and unblocked, as a shell gives
    a foreground command. A disposition or mask is inherited, and a test process may
    hold SIGINT ignored or blocked (in a full two-worker run, a command started so from
    one worker ran to its end through the Ctrl-C, printing nothing on stderr); a command
    started with Ctrl-C ignored keeps ignoring it, as Python does, like `nohup`."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def toy_probe(
    tmp_path: Path, module: str, source: str, probe: str
) -> Callable[..., dict[str, object]]:
    """A function that runs ``probe`` (Python code printing one JSON line last, its
    arguments in ``sys.argv``) in a new process that can import ``module`` (written from
    ``source`` into ``tmp_path``) and battle-odds, with a Numba cache of its own: the
    first call compiles, later ones load."""
    (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
    )

    def run(*args: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", probe, *args],
            capture_output=True, text=True, check=True, cwd=tmp_path, env=env,
        )  # fmt: skip
        result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
        return result

    return run


#: For tests of kernels/_warm.py's and _jit.py's uses of Numba's private parts, which
#: ``BATTLE_ODDS_NUMBA_SHORTCUTS=0`` turns off (``.ci/run`` runs the suite once so).
needs_numba_shortcuts = pytest.mark.skipif(
    not SHORTCUTS, reason="BATTLE_ODDS_NUMBA_SHORTCUTS=0: Numba left wholly its own"
)
