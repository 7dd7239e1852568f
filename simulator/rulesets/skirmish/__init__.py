"""The ``skirmish`` ruleset (docs/skirmish.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ...input.reader import Node
from ..base import SIDES, Army, Force, InlineQuery, Ruleset
from . import designer, inline, keys, model
from .prepare import SkirmishPrepared

if TYPE_CHECKING:
    import pandas as pd


class Skirmish(Ruleset):
    name = "skirmish"
    title = "Skirmish: hex-tile battles, best expected move each turn, riposte"
    step_unit = "turns"
    column_words = MappingProxyType(
        {
            "damage": "health removed by {army}'s {subject}",
            "healing": "health restored by {army}'s healers",
            "health_left": "{side}'s {subject}: health left",
        }
    )
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> SkirmishPrepared:
        return SkirmishPrepared(battle)

    def side_sizes(self, battle: model.Battle) -> tuple[Force, ...]:
        """Each side's participants (a figure each: men and units are one), from the
        stacks on the field."""
        forces = []
        for s, name in enumerate(SIDES):
            units = sum(1 for p in battle.participants if p.side == s)
            forces.append(Force(name, "stacks", units, units))
        return tuple(forces)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    rating_fields = (("attack", 1.0), ("defence", 1.0), ("damage", 1.0), ("health", 1.0))
    positive_ratings = ("health",)
    types_key = "unit_types"

    def forces(self, battle: model.Battle) -> list[tuple[str, str, int]]:
        return designer.forces(battle)

    def add_men(self, scenario: Any, side: str, kind: str, count: int) -> dict[str, Any]:
        return designer.add_units(scenario, side, kind, count)

    def room(self, scenario: Any, side: str) -> int:
        return designer.room(scenario.model, side)

    def inline_option(self, data: Mapping[str, Any], key: str) -> str | None:
        """``stacks[i]...`` came from the option of stack i's owner (see inline.OWNERS)."""
        match = re.match(r"stacks\[(\d+)\]", key)
        if match:
            return f"--{data['stacks'][int(match[1])]['owner']}"
        return super().inline_option(data, key)

    def unit_costs(self) -> dict[str, float]:
        return {name: u.cost for name, u in _package_types().items()}

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        return inline.scenario_data(
            InlineQuery(inline.stacks_of(attacker), inline.stacks_of(defender))
        )

    def units(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "type": name,
                    "attack": u.attack,
                    "defence": u.defence,
                    "damage": u.damage,
                    "health": u.health,
                    "abilities": ", ".join(u.abilities),
                    "cost": u.cost,
                }
                for name, u in _package_types().items()
            ]
        )


def _package_types() -> dict[str, model.UnitType]:
    return model.unit_types(Node(None, "unit_types", Source("package")), Source("package"))


RULESET = Skirmish()
