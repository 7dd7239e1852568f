"""The keys every scenario has, whatever its ruleset, and a ruleset's whole file format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..fields import Field, Table, json_schema, markdown_table

DEFAULT_BATTLES = 100_000
DEFAULT_SEED = 20261121
#: Battles of one run: battle indices and counts stay far inside 64-bit integers.
MAX_BATTLES = 1_000_000_000
MAX_SEED = 2**63 - 1
DOCS_BEGIN = "<!-- keys:begin -->"
DOCS_END = "<!-- keys:end -->"

RULESET = Field("ruleset", "text", "the ruleset this scenario is played under", required=True)
NAME = Field("name", "text", "the scenario's name in reports (default: the file's name)")
DESCRIPTION = Field("description", "text", "free text shown in reports", default="")
BATTLES = Field(
    "battles", "int", "battles to simulate", lo=1, hi=MAX_BATTLES, default=DEFAULT_BATTLES
)
SEED = Field(
    "seed",
    "int",
    "the run's random seed: the same seed replays the same battles",
    lo=0,
    hi=MAX_SEED,
    default=DEFAULT_SEED,
)
COMMON = (RULESET, NAME, DESCRIPTION, BATTLES, SEED)


def scenario_format(ruleset: str, specific: Table) -> Table:
    """A ruleset's whole file: the common keys (``ruleset`` fixed to its name), then its own."""
    fixed = Field("ruleset", "choice", RULESET.doc, choices=(ruleset,), required=True)
    return Table("", specific.doc, (fixed, *COMMON[1:], *specific.fields), specific.other)


def file_format(name: str) -> Table:
    """Every key of ruleset ``name``'s scenario files."""
    from . import get

    return scenario_format(name, get(name).scenario_keys)


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ruleset ``name``'s scenario files (as JSON data)."""
    return json_schema(file_format(name), f"battle-odds {name} scenario")


def docs_section(name: str) -> str:
    """The key table of ruleset ``name``'s docs page, between its markers."""
    return (
        f"{DOCS_BEGIN}\n## Scenario keys\n\n"
        "Every key a scenario file may hold, generated from the definitions the validator "
        "reads (`simulator/rulesets/"
        f"{name}/keys.py`). A value outside its range is an error naming the file, line, "
        "key, the value and the allowed range; `nan` and `inf` are never accepted. "
        f"`battle-odds schema --ruleset {name}` prints the same as a JSON Schema.\n\n"
        f"{markdown_table(file_format(name))}{DOCS_END}\n"
    )


def update_docs(docs: Path) -> list[Path]:
    """Rewrite the generated key section of each ruleset's page in ``docs`` (appending
    it at the end where there is none yet); returns the pages changed."""
    from . import names

    changed = []
    for name in names():
        page = docs / f"{name}.md"
        text = page.read_text(encoding="utf-8") if page.exists() else ""
        if DOCS_BEGIN in text:
            head, _, rest = text.partition(DOCS_BEGIN)
            _, _, tail = rest.partition(DOCS_END + "\n")
            new = head + docs_section(name) + tail
        else:
            new = text.rstrip("\n") + ("\n\n" if text else "") + docs_section(name)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed
