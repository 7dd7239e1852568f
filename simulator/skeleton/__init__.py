"""``battle-odds new-ruleset``: the skeleton of a ruleset package written outside
battle-odds (docs/writing-a-ruleset.md).

The skeleton installs (``pip install -e``), registers itself under the
``battle_odds.rulesets`` entry point, passes its own tests (written with
``simulator.testing``) and answers ``battle-odds odds`` with a trivial rule: one die a
side a round, the lower die loses a man, ties to the defender. The files are the
``*.tmpl`` templates beside this module, with ``${name}`` and the like filled in.
"""

from __future__ import annotations

import keyword
import re
from importlib import resources
from pathlib import Path
from string import Template

from .. import rulesets
from ..atomic import write_folder_atomically
from ..errors import BattleOddsError

#: Template -> where it goes in the package folder (``{package}``: the import package).
LAYOUT = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "package_init.py.tmpl": "{package}/__init__.py",
    "keys.py.tmpl": "{package}/keys.py",
    "model.py.tmpl": "{package}/model.py",
    "prepare.py.tmpl": "{package}/prepare.py",
    "kernel.py.tmpl": "{package}/kernel.py",
    "reference.py.tmpl": "{package}/reference.py",
    "inline.py.tmpl": "{package}/inline.py",
    "starter.toml.tmpl": "{package}/starter.toml",
    "scenario.toml.tmpl": "scenarios/first_battle.toml",
    "test_rules.py.tmpl": "tests/test_rules.py",
}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def check_name(name: str) -> None:
    """A ruleset name is a lowercase Python identifier that no ruleset has yet."""
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise BattleOddsError(
            f"NAME '{name}': expected a lowercase Python identifier (a-z, 0-9, _, starting "
            "with a letter), e.g. my_game"
        )
    if name in rulesets.builtin_names():
        raise BattleOddsError(f"NAME '{name}': a built-in ruleset's name; choose another")
    if name in rulesets.names():
        raise BattleOddsError(
            f"NAME '{name}': a ruleset of that name is installed already; choose another"
        )


def files(name: str) -> dict[str, str]:
    """Relative path -> text of every file of ruleset ``name``'s package."""
    package = f"{name}_ruleset"
    values = {
        "name": name,
        "package": package,
        "dist": "battle-odds-" + name.replace("_", "-"),
        "Class": "".join(part.capitalize() for part in name.split("_")),
    }
    here = resources.files(__name__)
    return {
        target.format(package=package): Template(
            here.joinpath(template).read_text(encoding="utf-8")
        ).substitute(values)
        for template, target in LAYOUT.items()
    }


def write(name: str, parent: Path) -> Path:
    """Write ruleset ``name``'s package as folder ``parent/name``, all of it or nothing;
    never over an existing folder."""
    check_name(name)
    folder = parent / name
    if folder.exists():
        raise BattleOddsError(f"{folder}: already exists; choose another NAME or --path")
    try:
        write_folder_atomically(folder, files(name))
    except FileExistsError:
        raise BattleOddsError(f"{folder}: already exists; choose another NAME or --path") from None
    except OSError as exc:
        raise BattleOddsError(f"{folder}: cannot write ({exc.strerror})") from None
    return folder
