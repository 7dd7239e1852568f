"""The ``skirmish`` ruleset (seeds/004, spec/skirmish.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...errors import Source
from ...reader import Node
from ..base import Army, InlineQuery, Ruleset
from . import inline, model
from .prepare import SkirmishPrepared


class Skirmish(Ruleset):
    name = "skirmish"
    title = "Skirmish: hex-tile battles, best expected move each turn, riposte"
    step_unit = "turns"

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> SkirmishPrepared:
        return SkirmishPrepared(battle)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    def unit_costs(self) -> dict[str, float]:
        return {name: u.cost for name, u in _package_types().items()}

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        return inline.scenario_data(
            InlineQuery(inline.stacks_of(attacker), inline.stacks_of(defender))
        )

    def units(self) -> pd.DataFrame:
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
