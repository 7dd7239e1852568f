"""The ``skirmish`` ruleset (seeds/004, spec/skirmish.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...errors import Source
from ..base import InlineQuery, Ruleset
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

    def inline_option(self, data: Mapping[str, Any], key: str) -> str | None:
        """``stacks[i]...`` came from the option of stack i's owner (see inline.OWNERS)."""
        match = re.match(r"stacks\[(\d+)\]", key)
        if match:
            return f"--{data['stacks'][int(match[1])]['owner']}"
        return super().inline_option(data, key)

    def units(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "type": name,
                    "attack": u["attack"],
                    "defence": u["defence"],
                    "damage": u["damage"],
                    "health": u["health"],
                    "abilities": ", ".join(u["abilities"]),
                }
                for name, u in model.standard_unit_types().items()
            ]
        )


RULESET = Skirmish()
