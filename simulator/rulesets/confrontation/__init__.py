"""The ``confrontation`` ruleset (docs/confrontation.md)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ...input.reader import Node
from ..base import SIDES, Army, Force, InlineQuery, Ruleset
from ..keys import read_cost
from . import designer, inline, keys, model
from .prepare import ConfrontationPrepared

if TYPE_CHECKING:
    import pandas as pd


class Confrontation(Ruleset):
    name = "confrontation"
    title = "Confrontation: strength, resolve and integrity, stacks on a hex map"
    step_unit = "turns"
    column_words = MappingProxyType(
        {
            "damage": "dice rolled against {army}",
            "destroyed": "{side}'s {subject} destroyed",
            "integrity": "{side}'s {subject}: integrity left",
            "resolve_x2": "{side}'s {subject}: resolve left",
        }
    )
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> ConfrontationPrepared:
        return ConfrontationPrepared(battle)

    def side_sizes(self, battle: model.Battle) -> tuple[Force, ...]:
        """Each side's units (a piece each: men and units are one)."""
        forces = []
        for s, name in enumerate(SIDES):
            units = sum(len(stack.units) for stack in battle.stacks if stack.side == s)
            forces.append(Force(name, name, units, units))
        return tuple(forces)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    rating_fields = (("arms", 1.0), ("resolve", 0.5), ("integrity", 1.0))
    positive_ratings = ("integrity",)

    def forces(self, battle: model.Battle) -> list[tuple[str, str, int]]:
        return designer.forces(battle)

    def add_men(self, scenario: Any, side: str, kind: str, count: int) -> dict[str, Any]:
        return designer.add_units(scenario.data, side, kind, count)

    def room(self, scenario: Any, side: str) -> int:
        return designer.room(scenario.data, side)

    def unit_costs(self) -> dict[str, float]:
        source = Source("package")
        return {
            name: read_cost(Node(fields, f"(package) {name}", source))
            for name, fields in model.standard_types().items()
        }

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        return inline.one_type_data(attacker, defender)

    def units(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        costs = self.unit_costs()
        for name, f in model.standard_types().items():
            a, b = f.get("a", 1.0), f.get("b", 0.5)
            rows.append(
                {
                    "type": name,
                    "arms": f["arms"],
                    "resolve": f["resolve"],
                    "integrity": f["integrity"],
                    "a": a,
                    "b": b,
                    "advantages": f.get("advantages", 0),
                    # Exact, shown as a float: strengths are multiples of 1/80,000.
                    "strength": float(
                        model.strength(f["arms"], f["resolve"], a, b, f.get("advantages", 0))
                    ),
                    "reach": "yes" if f.get("reach") else "",
                    "aerial": "yes" if f.get("aerial") else "",
                    "speed": f.get("speed", 0),
                    "abilities": ", ".join(f.get("abilities", model.ABILITIES)),
                    "cost": costs[name],
                }
            )
        return pd.DataFrame(rows)


RULESET = Confrontation()
