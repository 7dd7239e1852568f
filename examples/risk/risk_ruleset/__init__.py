"""The ``risk`` ruleset: the classic Risk dice battle, as a battle-odds plugin.

Each round the attacker rolls one die per fighting army, at most three, and the
defender one per army, at most two; the highest dice are compared pairwise, the
defender winning ties, and each comparison costs its loser one army. The battle goes
on until a side has no armies left (no retreat). ``steps`` counts rounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from simulator.errors import Source
from simulator.exact import ExactResult
from simulator.rulesets import InlineQuery, Ruleset
from simulator.scenario import Scenario

from . import exact, inline, model
from .prepare import RiskPrepared

__all__ = ["RULESET", "Risk"]


class Risk(Ruleset):
    name = "risk"
    title = "Risk: dice rounds, highest dice compared, defender wins ties, to the last army"
    step_unit = "rounds"

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> RiskPrepared:
        return RiskPrepared(battle)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    def units(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "type": "army",
                    "attacker dice": f"1 per army, at most {model.DEFAULT_ATTACKER_DICE}",
                    "defender dice": f"1 per army, at most {model.DEFAULT_DEFENDER_DICE}",
                    "notes": "highest dice compared pairwise; the defender wins ties",
                }
            ]
        )

    def exact(self, scenario: Scenario, max_states: int | None = None) -> ExactResult:
        return exact.solve(scenario, exact.MAX_STATES if max_states is None else max_states)


RULESET = Risk()
