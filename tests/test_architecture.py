"""The layers of docs/architecture.md hold: import-linter's contracts in pyproject.toml
(layers that import only downwards, independent rulesets, kernels free of the simulator,
no import circles) pass, and a broken one fails the suite with import-linter's message."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lint_imports() -> str:
    """``lint-imports`` of the installed import-linter (a dev dependency)."""
    found = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    return found or shutil.which("lint-imports") or "lint-imports"


def test_import_contracts_are_kept():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # No cache: a cached graph of an older tree would pass a broken one.
    done = subprocess.run(
        [lint_imports(), "--no-cache", "--no-logo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
