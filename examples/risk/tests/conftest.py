"""The risk tests run against the plugin found as battle-odds finds it: through its entry
point. A test run where it is not installed (battle-odds' own suite, in CI) installs
nothing: for the length of the session a temporary folder holding the distribution's
metadata (its name, version and entry point, read from examples/risk/pyproject.toml) goes
on ``sys.path`` beside the package's source, and on this process's ``PYTHONPATH`` for the
processes it starts (Dask workers), and comes off at the end. The environment the tests run
in, and every other process using it, never sees the plugin."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from simulator import rulesets

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DIST = "battle-odds-risk"
#: The folders this session put on sys.path (empty when the plugin was installed already).
_added: list[str] = []
#: PYTHONPATH as the session found it (None: unset), for the processes outside the session.
_found_pythonpath: list[str | None] = []


def metadata_folder(project_root: Path, into: Path) -> Path:
    """A ``*.dist-info`` folder in ``into`` declaring the project's name, version and entry
    points, as an installer would write it: what ``importlib.metadata`` reads."""
    project = tomllib.loads((project_root / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    name, version = project["name"], project["version"]
    info = into / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    groups = project.get("entry-points", {})
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
            for group, points in groups.items()
        ),
        encoding="utf-8",
    )
    return info


def _distributes(config: pytest.Config) -> bool:
    """True in pytest-xdist's controlling process (README's ``pytest -n auto``), which runs
    no test: its workers inherit its environment, so it adds nothing, and each worker makes
    the plugin findable for its own session as a single process does."""
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", 0))


def installed_in_the_environment() -> bool:
    try:
        importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def pytest_configure(config: pytest.Config) -> None:
    if installed_in_the_environment() or _distributes(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="battle-odds-risk-"))
    metadata_folder(ROOT, folder)
    _added.extend([str(folder), str(ROOT)])
    sys.path[:0] = _added
    found = os.environ.get("PYTHONPATH")
    _found_pythonpath.append(found)
    os.environ["PYTHONPATH"] = os.pathsep.join([*_added, *([found] if found else [])])
    importlib.invalidate_caches()
    rulesets.refresh()


@pytest.fixture
def added_by_the_session() -> bool:
    """Whether this session made the plugin findable (False: it was installed already)."""
    return bool(_added)


@pytest.fixture
def environment_outside() -> dict[str, str]:
    """The environment variables of a process outside this session (a user's shell)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if _found_pythonpath and _found_pythonpath[0] is not None:
        env["PYTHONPATH"] = _found_pythonpath[0]
    return env


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _added:
        return
    for entry in _added:
        while entry in sys.path:
            sys.path.remove(entry)
    shutil.rmtree(_added[0], ignore_errors=True)
    if _found_pythonpath:
        found = _found_pythonpath.pop()
        if found is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = found
    for module in [m for m in sys.modules if m == "risk_ruleset" or m.startswith("risk_ruleset.")]:
        del sys.modules[module]
    _added.clear()
    importlib.invalidate_caches()
    rulesets.refresh()
