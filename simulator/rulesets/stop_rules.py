"""A side's stop rule: when it withdraws from a battle still undecided.

``[attacker.retreat]`` / ``[defender.retreat]`` in a scenario of any ruleset::

    [attacker.retreat]
    at_most = 5          # its men left (nobles not counted) are 5 or fewer; or "30%"
    gone = "knight"      # its knights are all gone
    after = 3            # 3 steps (the ruleset's: strikes, rounds, phases, turns) fought
    outnumbered = 2.0    # the enemy's men are at least twice its own

Any of them together: the side withdraws after the first step at whose end one holds
(kernels/stops.py says the order, and what happens when both sides' rules hold).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import did_you_mean
from ..input.fields import Field, Table

if TYPE_CHECKING:
    from ..input.reader import Node

#: kernels/stops.py's columns and "no rule" values (not imported: kernels load Numba).
STOP_AT_MOST, STOP_AFTER, STOP_OUTNUMBERED, STOP_GONE, N_STOP = 0, 1, 2, 3, 4
NO_STOP = (-1, 0, 0, -1)
#: The most steps ``after`` may name, and the largest ``outnumbered`` ratio.
MAX_AFTER = 1_000_000
MAX_OUTNUMBERED = 1_000.0
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

RETREAT = Table(
    "retreat",
    "when this side withdraws with its survivors: after the first step at whose end any "
    "of these holds (docs/unfolding.md)",
    (
        Field(
            "at_most",
            "text",
            "its men left (nobles not counted) are this many or fewer: a whole number or a "
            'percentage of its men at the start ("30%")',
        ),
        Field("gone", "text", "its men of this type are all gone"),
        Field("after", "int", "this many steps have been fought", lo=1, hi=MAX_AFTER),
        Field(
            "outnumbered",
            "number",
            "the enemy's men are at least this multiple of its own",
            lo=1.0,
            hi=MAX_OUTNUMBERED,
        ),
    ),
)


@dataclass(frozen=True)
class StopRule:
    """One side's rule; every part None when it has none (:data:`NEVER`)."""

    at_most: int | None = None
    at_most_percent: float | None = None
    gone: str | None = None
    after: int | None = None
    outnumbered: float | None = None

    @property
    def never(self) -> bool:
        return self == NEVER

    def men_at_most(self, men_at_start: int) -> int | None:
        """The men left at or below which the side withdraws (a percentage of
        ``men_at_start`` rounded down), or None."""
        if self.at_most is not None:
            return self.at_most
        if self.at_most_percent is not None:
            return math.floor(men_at_start * self.at_most_percent / 100.0)
        return None

    def encode(self, men_at_start: int, type_index: Callable[[str], int]) -> np.ndarray:
        """The kernel's row (kernels/stops.py): ``type_index`` gives the ruleset's index
        of the type ``gone`` names."""
        row = np.array(NO_STOP, np.int64)
        k = self.men_at_most(men_at_start)
        if k is not None:
            row[STOP_AT_MOST] = k
        if self.after is not None:
            row[STOP_AFTER] = self.after
        if self.outnumbered is not None:
            row[STOP_OUTNUMBERED] = round(self.outnumbered * 1000)
        if self.gone is not None:
            row[STOP_GONE] = type_index(self.gone)
        return row

    def words(self, step_unit: str = "steps") -> str:
        """The rule as a reader says it: "at 5 men or fewer, or after 3 rounds"."""
        parts = []
        if self.at_most is not None:
            parts.append(f"at {self.at_most} men left or fewer")
        if self.at_most_percent is not None:
            parts.append(f"at {self.at_most_percent:g}% of its men left or fewer")
        if self.gone is not None:
            parts.append(f"when no {self.gone} is left")
        if self.after is not None:
            parts.append(f"after {self.after} {step_unit}")
        if self.outnumbered is not None:
            parts.append(f"when outnumbered {self.outnumbered:g} to 1")
        return ", or ".join(parts) if parts else "never"


NEVER = StopRule()


def read_stop_rule(node: Node, types: Sequence[str]) -> StopRule:
    """The ``retreat`` table of a side's ``node`` (NEVER when absent), its ``gone``
    checked against the side's unit ``types``."""
    if not node.has("retreat"):
        return NEVER
    rule = node.child("retreat")
    rule.only(RETREAT)
    at_most: int | None = None
    percent: float | None = None
    raw = rule.table().get("at_most")
    if raw is not None:
        if isinstance(raw, int) and not isinstance(raw, bool):
            if raw < 0:
                raise rule.fail(f"{raw} is below 0: expected a count of men, 0 or more", "at_most")
            at_most = raw
        else:
            match = _PERCENT.match(raw) if isinstance(raw, str) else None
            if match is None or not 0 <= float(match.group(1)) <= 100:
                raise rule.fail(
                    f"{raw!r}: expected a whole number of men (5) or a percentage of "
                    'its men at the start, 0% to 100% ("30%")',
                    "at_most",
                    raw,
                )
            percent = float(match.group(1))
    gone = rule.read(RETREAT["gone"]) if rule.has("gone") else None
    if gone is not None and gone not in types:
        raise rule.fail(
            f"{gone!r} is not a type this side fields" + did_you_mean(gone, types),
            "gone",
            gone,
        )
    return StopRule(
        at_most=at_most,
        at_most_percent=percent,
        gone=gone,
        after=rule.read(RETREAT["after"]) if rule.has("after") else None,
        outnumbered=rule.read(RETREAT["outnumbered"]) if rule.has("outnumbered") else None,
    )


def rule_left(side: Mapping[str, Any], fielded: Collection[str]) -> dict[str, Any]:
    """A side's table ``side`` as written for its next fight (a wave's, docs/unfolding.md
    "Waves"), with only ``fielded`` of its types (or blocks) left: a ``retreat.gone``
    naming one no longer there holds from the start of that fight, and is written as
    ``after = 1`` does (a rule is looked at after the first step, never before)."""
    table = dict(side)
    rule = table.get("retreat")
    if isinstance(rule, Mapping) and "gone" in rule and rule["gone"] not in fielded:
        table["retreat"] = {**{k: v for k, v in rule.items() if k != "gone"}, "after": 1}
    return table
