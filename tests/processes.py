"""``python -m simulator`` started as a real process, its output piped, for the tests that
watch one run (Ctrl-C, faults, checkpoints)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    )
