"""The ``olympia`` ruleset (docs/olympia.md)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ...input.reader import Node
from .. import words
from ..base import SIDES, Army, Force, InlineQuery, Prepared, Ruleset
from . import fill_in, inline, keys, model, sweep
from .prepare import OlympiaPrepared, chain_refusal, compile_battle

if TYPE_CHECKING:
    import pandas as pd

    from ...scenario.scenario import Scenario
    from ..exact import ExactResult, ExactState


class Olympia(Ruleset):
    name = "olympia"
    title = "Olympia (G2): one strike at a time until a side breaks"
    step_unit = "strikes"
    column_words = MappingProxyType(words.NOBLES_AND_STRUCTURES)
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        battle = model.validate(data, source)
        if battle.kernel == "chain":
            # Whether the chain kernel can run needs the compiled battle, which the model
            # (below prepare) cannot build.
            refusal = chain_refusal(compile_battle(battle))
            if refusal is not None:
                node = Node(data, "", source).child("battle", {})
                raise node.fail(f'{refusal}; use "skip" or "auto"', "kernel", battle.kernel)
        return battle

    def prepare(self, battle: model.Battle) -> OlympiaPrepared:
        return OlympiaPrepared(battle)

    def fills_in(self, path: str) -> bool:
        """Counts of men and break points (fill_in.py)."""
        return fill_in.fills_in(path)

    def fill_in(
        self, prepared: Prepared, values: Mapping[str, Any]
    ) -> tuple[model.Battle, OlympiaPrepared] | None:
        if not isinstance(prepared, OlympiaPrepared):
            return None
        return fill_in.fill_in(prepared, values)

    def side_sizes(self, battle: model.Battle) -> tuple[Force, ...]:
        """Each side's units (a noble each) and men, nobles among them."""
        return tuple(
            Force(
                name,
                name,
                len(side.units),
                sum(men.count for unit in side.units for men in unit.men) + len(side.units),
            )
            for name, side in zip(SIDES, battle.sides, strict=True)
        )

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    def sweep_path(self, data: Mapping[str, Any], path: str) -> str:
        return sweep.sweep_path(data, path)

    def exact(self, scenario: Scenario, max_states: int | None = None) -> ExactResult:
        from . import exact as solver  # the solver's kernel compiles only when asked for

        if max_states is None:
            return solver.exact(scenario)
        return solver.exact(scenario, max_states=max_states)

    def exact_after(self, scenario: Scenario, step: int) -> ExactState:
        from . import exact as solver

        return solver.exact_after(scenario, step)

    rating_fields = (("attack", 1.0), ("defense", 1.0), ("missile", 1.0))

    def unit_costs(self) -> dict[str, float]:
        return {name: f.cost for name, f in _package_fighters().items()}

    def cannot_fight_alone(self) -> dict[str, str]:
        return {name: "noncombatant" for name, f in _package_fighters().items() if f.noncombatant}

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        return inline.scenario_data(
            InlineQuery(
                f"noble, {attacker.men} {attacker.type}", f"noble, {defender.men} {defender.type}"
            ),
            inline.parse_army_again,
        )

    def units(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        costs = self.unit_costs()
        for name, f in model.standard_fighters().items():
            ship, swamp = f.get("ship", {}), f.get("swamp", {})
            rows.append(
                {
                    "type": name,
                    "kind": "fighter",
                    "attack": f["attack"],
                    "defense": f["defense"],
                    "missile": f.get("missile", 0),
                    "ship": f"{ship.get('attack', f['attack'])}/{ship.get('defense', f['defense'])}"
                    if ship
                    else "",
                    "swamp": f"{swamp['attack']}/{swamp['defense']}" if swamp else "",
                    "cost": costs[name],
                    "notes": ", ".join(
                        n
                        for n, on in (
                            (f"survives a hit {f.get('survive', 0):.0%}", f.get("survive")),
                            ("missile 0 in rain", f.get("rain_grounded")),
                            ("does not strike when attacking (alternating)", f.get("noncombatant")),
                        )
                        if on
                    ),
                }
            )
        for name, e in model.standard_engines().items():
            rows.append(
                {
                    "type": name,
                    "kind": "siege engine",
                    "attack": e["attack"],
                    "defense": e["defense"],
                    "missile": e.get("missile", 0),
                    "ship": "",
                    "swamp": "",
                    "cost": None,
                    "notes": "targets the structure only, 5-10 damage",
                }
            )
        return pd.DataFrame(rows)


def _package_fighters() -> dict[str, model.FighterType]:
    return model._fighter_types(Node(None, "units", Source("package")), Source("package"))


RULESET = Olympia()
