"""Every balance-study notebook runs from top to bottom with a small battle count."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests import ROOT
from tests.test_human_output import raw_identifiers

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NOTEBOOKS = ROOT / "notebooks"


def test_notebooks_match_their_builder():
    """The committed notebooks are what notebooks/build.py writes (no hand edits lost)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks", NOTEBOOKS / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, make in module.NOTEBOOKS.items():
        on_disk = nbformat.read(NOTEBOOKS / name, as_version=4)
        assert [c.source for c in on_disk.cells] == [c.source for c in make().cells], name


def readme_notebook_command() -> list[str]:
    """README's command that executes the notebooks headless, as a user types it."""
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    lines = [line for line in readme.splitlines() if line.startswith("jupyter nbconvert ")]
    assert len(lines) == 1, "README shows one command that executes the notebooks"
    return shlex.split(lines[0])


def test_the_notebooks_extra_has_what_readmes_command_needs() -> None:
    """README's `pip install -e ".[notebooks]"` brings the program its command runs."""
    extras = tomllib.loads((NOTEBOOKS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    needed = {
        re.split(r"[<>=\[ ]", r)[0] for r in extras["project"]["optional-dependencies"]["notebooks"]
    }
    assert readme_notebook_command()[1] in needed
    assert {"ipykernel", "nbformat"} <= needed


# Each notebook run in a kernel of its own, end to end (15-33 s each at load 4): slow tier.
@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    """Each notebook runs from top to bottom through README's own command."""
    command = readme_notebook_command()
    command = [*command[: command.index("--output-dir") + 1], str(tmp_path), str(path)]
    env = {**os.environ, "BATTLE_ODDS_NOTEBOOK_BATTLES": "1200"}
    ran = subprocess.run(command, cwd=NOTEBOOKS, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr[-3000:]
    notebook = nbformat.read(tmp_path / path.name, as_version=4)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, f"{path.name}: expected its plots in the outputs"
    said = prose_of(outputs)
    named = TITLE_RULESET.search(notebook.cells[0].source)
    ruleset = named.group(1) if named else "olympia"
    assert raw_identifiers(said, ruleset) == [], path.name
    if "blocks" in path.name:  # a block loses steps, not men
        assert not re.search(r"\bmen\b", said), said


def prose_of(outputs: list[Any]) -> str:
    """What a notebook says in sentences: its printed lines (not the progress lines of a
    long study on stderr) and the conclusions it displays as Markdown."""
    printed = [o.text for o in outputs if o.output_type == "stream" and o.name == "stdout"]
    shown = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    return "\n".join(printed + shown)


#: An attack/defense pair in prose: "a knight (45/45)", "knights fight at 20/20".
RATING_PAIR = re.compile(r"\b(\d+)/(\d+)\b")
WORD = re.compile(r"[a-z_]+")
#: The ruleset a notebook studies, as its title names it: "# ... (olympia)".
TITLE_RULESET = re.compile(r"^# .*\((\w+)\)\s*$", re.MULTILINE)


def stated_ratings(text: str, table: Any) -> list[tuple[str, str]]:
    """(type, "a/d") for every rating pair the prose gives a type of ``table``: the nearest
    type named (singular or plural) in the same sentence, at most 40 characters before."""
    found = []
    for pair in RATING_PAIR.finditer(text):
        before = re.split(r"[.\d]", text[max(0, pair.start() - 40) : pair.start()])[-1]
        words = [w.removesuffix("s") if w not in table.index else w for w in WORD.findall(before)]
        named = [w for w in words if w in table.index]
        if named:
            found.append((named[-1], f"{pair.group(1)}/{pair.group(2)}"))
    return found


def test_notebook_prose_states_the_unit_tables_ratings() -> None:
    """A rating the prose gives a type ("a knight (45/45)") is one the unit table has for
    it: on land, on a ship or in a swamp."""
    from simulator import rulesets

    checked = 0
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        text = "\n".join(
            c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"
        )
        named = TITLE_RULESET.search(text)
        if not named:
            continue
        table = rulesets.get(named.group(1)).units().set_index("type")
        for unit, pair in stated_ratings(text, table):
            row = table.loc[unit]
            allowed = {f"{int(row['attack'])}/{int(row['defense'])}"}
            allowed |= {str(row[w]) for w in ("ship", "swamp") if row.get(w)}
            assert pair in allowed, f"{path.name}: {unit} {pair}, the unit table has {allowed}"
            checked += 1
    assert checked >= 4


def test_the_rating_check_sees_a_wrong_pair() -> None:
    from simulator import rulesets

    table = rulesets.get("olympia").units().set_index("type")
    assert stated_ratings("A knight (80/80) is rated far above a soldier (5/5).", table) == [
        ("knight", "80/80"),
        ("soldier", "5/5"),
    ]
