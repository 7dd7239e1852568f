"""The ``risk`` ruleset: the classic Risk dice battle, as a battle-odds plugin.

Each round the attacker rolls one die per fighting army, at most three, and the
defender one per army, at most two; the highest dice are compared pairwise, the
defender winning ties, and each comparison costs its loser one army. The battle goes
on until a side has no armies left (no retreat). ``steps`` counts rounds.

Besides the four required methods it gives the optional hooks that make sense for a
battle of one unit type: its scenario keys (``battle-odds schema``, located validation
errors), an exact solver, a starter scenario (``starter.toml``, for ``battle-odds new``)
and where reinforcements go (``worth``, ``sensitivity``). It has no unit costs, so
``battle-odds matrix`` says there is no matrix of types to fight.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pandas as pd

from simulator.errors import BattleOddsError, Source
from simulator.rulesets import ExactResult, InlineQuery, Ruleset
from simulator.scenario.scenario import Scenario

from . import exact, inline, keys, model
from .prepare import RiskPrepared

__all__ = ["RULESET", "Risk"]

#: The one unit type: an army, in the outcome columns ``casualties.<side>.army``.
ARMY = "army"


class Risk(Ruleset):
    name = "risk"
    title = "Risk: dice rounds, highest dice compared, defender wins ties, to the last army"
    step_unit = "rounds"
    scenario_keys = keys.SCENARIO

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
                    "type": ARMY,
                    "attacker dice": f"1 per army, at most {keys.DEFAULT_ATTACKER_DICE}",
                    "defender dice": f"1 per army, at most {keys.DEFAULT_DEFENDER_DICE}",
                    "notes": "highest dice compared pairwise; the defender wins ties",
                }
            ]
        )

    def exact(self, scenario: Scenario, max_states: int | None = None) -> ExactResult:
        return exact.solve(scenario, exact.MAX_STATES if max_states is None else max_states)

    # Where reinforcements go (worth, sensitivity): a side's armies.

    def forces(self, battle: model.Battle) -> list[tuple[str, str, int]]:
        return [("attacker", ARMY, battle.attacker), ("defender", ARMY, battle.defender)]

    def add_men(self, scenario: Scenario, side: str, kind: str, count: int) -> dict[str, Any]:
        data = copy.deepcopy(dict(scenario.data))
        armies = data[side]["armies"] + count
        if armies < 1:
            raise BattleOddsError(f"the {side} has {armies - count} armies: cannot take {-count}")
        data[side]["armies"] = armies
        return data

    def room(self, scenario: Scenario, side: str) -> int:
        return keys.MOST_ARMIES - int(getattr(scenario.model, side))


RULESET = Risk()
