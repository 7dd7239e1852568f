"""The ``blocks`` ruleset (docs/blocks.md): block-wargame field battles and sieges."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ..base import SIDES, Army, Force, InlineQuery, Ruleset
from ..designer import Knob
from . import designer, inline, keys, model
from .prepare import BlocksPrepared

if TYPE_CHECKING:
    import pandas as pd


class Blocks(Ruleset):
    name = "blocks"
    title = "Blocks: field battle, storm, sally and siege attrition in three combat rounds"
    step_unit = "phases"
    step_gloss = "rounds 1-3, 4 = attrition"
    column_words = MappingProxyType(
        {
            "attacker_won_field": "attacker held the field",
            "defender_won": "defender won",
            "attacker_retreated": "attacker retreated",
            "defender_retreated": "defender retreated",
            "castle_stormed": "castle stormed",
            "castle_fell_to_attrition": "castle starved",
            "siege_continues": "siege still going at the end",
            "roles_swapped": "defender took the attacker's role",
            "storm_fought": "a storm fought",
            "sally_made": "the besieged sallied",
            "steps_lost": "steps lost by {army}",
            "casualties": "steps lost by {subject} ({side})",
            "blocks_eliminated": "blocks of {army} eliminated",
            "eliminated": "{side}'s {subject} eliminated",
            "turn": "game turn of the decision",
        }
    )
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> BlocksPrepared:
        return BlocksPrepared(battle)

    def side_sizes(self, battle: model.Battle) -> tuple[Force, ...]:
        """Each side's blocks, and their steps as its men."""
        return tuple(
            Force(name, name, len(blocks), sum(block.steps for block in blocks))
            for name, blocks in zip(SIDES, (battle.attacker, battle.defender), strict=True)
        )

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    def not_for_worth(self) -> str:
        return designer.NOT_FOR_WORTH

    def knobs(self, scenario: Any) -> list[Knob]:
        return designer.knobs(scenario.data)

    def with_knob(self, scenario: Any, knob: Knob, value: float) -> dict[str, Any]:
        return designer.with_knob(scenario.data, knob, value)

    def unit_costs(self) -> dict[str, float]:
        return model.rating_costs()

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        # A block of each rating at full strength, in a new battle in the open field.
        return inline.scenario_data(
            InlineQuery(
                ", ".join([f"{attacker.type}:{keys.MAX_STEPS}"] * attacker.men),
                ", ".join([f"{defender.type}:{keys.MAX_STEPS}"] * defender.men),
            )
        )

    def units(self) -> pd.DataFrame:
        return model.unit_table()


RULESET = Blocks()
