"""The risk tests run against the installed plugin, found as battle-odds finds it: through
its entry point. A test run where it is not installed yet (battle-odds' own suite, in CI)
installs it (editable, no dependencies, no build isolation) into the running environment
first, and uninstalls it at the end, leaving the environment as it found it."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import rulesets

ROOT = Path(__file__).resolve().parent.parent
DIST = "battle-odds-risk"
_installed_here = False


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--quiet", *args], check=True)


def pytest_configure(config: pytest.Config) -> None:
    global _installed_here
    try:
        importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        _pip("install", "--no-deps", "--no-build-isolation", "-e", str(ROOT))
        _installed_here = True
        importlib.invalidate_caches()
        # An editable install is found through a path hook set up at interpreter start.
        if str(ROOT) not in sys.path:
            sys.path.append(str(ROOT))
        rulesets.refresh()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _installed_here:
        _pip("uninstall", "--yes", DIST)
        rulesets.refresh()
