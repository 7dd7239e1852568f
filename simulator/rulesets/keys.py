"""The keys every scenario has, whatever its ruleset, and a ruleset's whole file format."""

from __future__ import annotations

from ..fields import Field, Table

DEFAULT_BATTLES = 100_000
DEFAULT_SEED = 20261121
#: Battles of one run: battle indices and counts stay far inside 64-bit integers.
MAX_BATTLES = 1_000_000_000
MAX_SEED = 2**63 - 1

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
