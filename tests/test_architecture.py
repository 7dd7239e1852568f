"""The layers of docs/architecture.md hold: import-linter's contracts in pyproject.toml
(layers that import only downwards, independent rulesets, kernels free of the simulator,
no import circles) pass, and a broken one fails the suite with import-linter's message."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests import ROOT


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


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOTTED = re.compile(r"(?<![\w./-])simulator(?:\.[A-Za-z_]\w*)+")
SLASHED = re.compile(r"(?<![\w./-])simulator/[\w./]*\w")


def module_file(module: str) -> Path | None:
    """The file of ``module`` in this tree (not through an install elsewhere)."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def unresolved(name: str) -> bool:
    """``simulator.a.b.c``: the longest module prefix that is a file of this tree, then
    attributes of it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module_file(module) is None:
            continue
        thing: object = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(thing, attribute):
                return True
            thing = getattr(thing, attribute)
        return False
    return True


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_named_modules_exist(page: Path) -> None:
    """Every ``simulator.x.y`` and ``simulator/x/y.py`` a page names is a module (or a
    name in one) and a file of this tree: pages that name old module paths fail."""
    text = page.read_text(encoding="utf-8")
    missing = sorted({n for n in DOTTED.findall(text) if unresolved(n)})
    missing += sorted({p for p in SLASHED.findall(text) if not (ROOT / p).exists()})
    assert missing == []


def test_the_studies_layout_says_which_modules_are_commands() -> None:
    """Each module at the top of simulator/studies/ answers one question, a command of
    the same name (``regress``, ``exact`` and the rest); what they are built of lives in
    simulator/studies/machinery/, which imports none of them (the ``studies`` contract),
    and no command module imports another but the compositions the ``questions``
    contract names."""
    from simulator.cli import COMMANDS

    commands = set(COMMANDS)  # every command, loaded or not (the CLI loads them on use)
    studies = ROOT / "simulator" / "studies"
    tops = {p.stem for p in studies.glob("*.py")} - {"__init__"}
    assert tops <= commands, tops - commands
    machinery = {p.stem for p in (studies / "machinery").glob("*.py")} - {"__init__"}
    assert machinery and not machinery & commands
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    by_id = {c["id"]: c for c in contracts["contracts"]}
    forbidden = set(by_id["studies"]["forbidden_modules"])
    assert forbidden == {f"simulator.studies.{name}" for name in tops}
    assert set(by_id["questions"]["modules"]) == forbidden


def test_every_command_module_of_the_command_line_is_independent() -> None:
    """The ``commands`` contract names exactly the modules of simulator/cli/ that
    register a command: a new command's module is independent of the others from its
    first line, and what two share goes in a module of no command (options, one_type)."""
    cli = ROOT / "simulator" / "cli"
    registering = {
        f"simulator.cli.{p.stem}" for p in cli.glob("*.py") if "@app.command" in p.read_text()
    }
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    by_id = {c["id"]: c for c in contracts["contracts"]}
    assert by_id["commands"]["type"] == "independence"
    assert set(by_id["commands"]["modules"]) == registering
    assert not by_id["commands"].get("ignore_imports")


#: A file a module's text names: ``kernels/tally.py``, ``prepare.py`` (not a glob's
#: ``*_stacked.py``).
NAMED_FILE = re.compile(r"(?<![\w./*<>-])((?:[\w-]+/)*[A-Za-z_]\w*\.py)\b")


def test_the_packages_name_only_files_of_the_tree() -> None:
    """Every file a module of simulator/ names in its docstrings and comments
    (``kernels/tally.py``, ``stats.py``) is a file of this tree, or one the skeleton
    writes from its template: prose that names a file since moved or removed (the
    command modules' "registered at the end of ``cli.py``") fails."""
    skip = {".git", "__pycache__", "build", "dist", ".mypy_cache", ".ruff_cache"}
    tree = []
    for folder, folders, names in os.walk(ROOT):
        folders[:] = [f for f in folders if f not in skip and not f.startswith(".")]
        tree += [(Path(folder) / name).relative_to(ROOT) for name in names]
    paths = {"/".join(p.parts[i:]) for p in tree for i in range(len(p.parts))}
    paths |= {path.removesuffix(".tmpl") for path in paths if path.endswith(".py.tmpl")}
    written = {Path(p).name for p in _skeleton_layout()}
    missing = [
        f"{source.relative_to(ROOT)}: {name}"
        for source in sorted((ROOT / "simulator").rglob("*.py"))
        for name in NAMED_FILE.findall(source.read_text(encoding="utf-8"))
        if name not in paths and Path(name).name not in written
    ]
    assert missing == []


def _skeleton_layout() -> list[str]:
    from simulator.skeleton import LAYOUT

    return list(LAYOUT.values())
