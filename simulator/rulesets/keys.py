"""The keys every scenario has, whatever its ruleset, and a ruleset's whole file format."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BattleOddsError
from ..input.fields import Field, ListOf, Table, json_schema, markdown_table

if TYPE_CHECKING:
    from ..input.reader import Node

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

# The ``cost`` of a unit type, a key of every ruleset's unit table (docs/matrix.md).
# None of the rule texts prices its units, so every type costs 1 per man unless a table
# says otherwise; ``battle-odds matrix`` spends a budget in these units.
#: What one man of a type costs when nothing says otherwise.
DEFAULT_COST = 1.0
#: A cost is above 0 (a free type would fill any budget without end) and small enough that
#: a budget over it stays a count of men.
MIN_COST = 0.001
MAX_COST = 1_000_000
COST = Field(
    "cost",
    "number",
    "what one man of the type costs (battle-odds matrix spends budgets in it)",
    lo=MIN_COST,
    hi=MAX_COST,
    default=DEFAULT_COST,
)


#: The most waves a side may bring after its first army (docs/unfolding.md, "Waves").
MOST_WAVES = 20


def with_waves(side: Table) -> Table:
    """A side's table with its ``waves``: the side's next armies, each written as the
    side is (its own units, nothing inherited), for a ruleset that gives waves."""
    army = replace(side, name=side.name, doc=f"one more army of the {side.name}", required=False)
    waves = ListOf(
        "waves",
        f"the {side.name}'s next armies, each fighting what the battle before it left "
        "(docs/unfolding.md, Waves)",
        army,
        1,
        MOST_WAVES,
    )
    return replace(side, fields=(*side.fields, waves))


def read_cost(node: Node, key: str = "cost", default: float | None = DEFAULT_COST) -> float:
    """``node[key]`` as a cost: a finite number in MIN_COST..MAX_COST."""
    return float(node.read(replace(COST, default=default), key))


def scenario_format(ruleset: str, specific: Table) -> Table:
    """A ruleset's whole file: the common keys (``ruleset`` fixed to its name), then its own."""
    fixed = Field("ruleset", "choice", RULESET.doc, choices=(ruleset,), required=True)
    return Table("", specific.doc, (fixed, *COMMON[1:], *specific.fields), specific.other)


def file_format(name: str) -> Table:
    """Every key of ruleset ``name``'s scenario files."""
    from . import get

    ruleset = get(name, "--ruleset")
    if not ruleset.scenario_keys.fields:
        raise BattleOddsError(
            f"--ruleset {name}: the ruleset declares no scenario keys (Ruleset.scenario_keys), "
            "so there is no file format to describe"
        )
    return scenario_format(name, ruleset.scenario_keys)


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
    from . import builtin_names

    changed = []
    for name in builtin_names():
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
