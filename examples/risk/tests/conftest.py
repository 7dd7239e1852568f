"""The risk tests run against the installed plugin, found as battle-odds finds it: through
its entry point. A test run from a checkout where it is not installed yet installs it
(editable, no dependencies) into the running environment first."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

from simulator import rulesets

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure() -> None:
    try:
        importlib.metadata.distribution("battle-odds-risk")
    except importlib.metadata.PackageNotFoundError:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT)],
            check=True,
        )
        importlib.invalidate_caches()
        # An editable install is found through a path hook set up at interpreter start.
        if str(ROOT) not in sys.path:
            sys.path.append(str(ROOT))
        rulesets.refresh()
