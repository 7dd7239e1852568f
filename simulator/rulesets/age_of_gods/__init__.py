"""The ``age_of_gods`` ruleset (docs/age_of_gods.md): an opening volley,
then rounds of special / missile / melee phases resolved simultaneously."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import Source
from ...input.reader import Node
from .. import words
from ..base import SIDES, Army, Force, InlineQuery, Ruleset
from . import inline, keys, model
from .prepare import AgeOfGodsPrepared

if TYPE_CHECKING:
    import pandas as pd


class AgeOfGods(Ruleset):
    name = model.RULESET_NAME
    title = "Olympia: The Age of Gods: rounds of simultaneous special, missile and melee phases"
    step_unit = "rounds"
    column_words = MappingProxyType(words.NOBLES_AND_STRUCTURES)
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> AgeOfGodsPrepared:
        return AgeOfGodsPrepared(battle)

    def side_sizes(self, battle: model.Battle) -> tuple[Force, ...]:
        """Each side's units (a noble each), allies among them, and men, nobles among
        them (before control limits keep any out)."""
        forces = []
        for s, name in enumerate(SIDES):
            units = [unit for unit, _, _ in battle.units_of(s)]
            men = sum(men.count for unit in units for men in unit.men) + len(units)
            forces.append(Force(name, name, len(units), men))
        return tuple(forces)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    rating_fields = (("attack", 1.0), ("defense", 1.0), ("missile", 1.0))

    def unit_costs(self) -> dict[str, float]:
        return {name: f.cost for name, f in _package_fighters().items()}

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        return inline.scenario_data(
            InlineQuery(
                f"noble, {attacker.men} {attacker.type}", f"noble, {defender.men} {defender.type}"
            )
        )

    def units(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        fighters = _package_fighters()
        for name, f in fighters.items():
            notes = [
                text
                for text, on in (
                    ("mounted", f.mounted),
                    ("defense x2 against mounted", f.pike),
                    (f"survives a hit {f.survive:.0%}", f.survive),
                    (f"survivors flee {f.flee:.0%} after losses", f.flee),
                    ("missile 0 in rain", f.rain_grounded),
                )
                if on
            ]
            rows.append(
                {
                    "type": name,
                    "kind": "fighter",
                    "attack": f.land.attack,
                    "defense": f.land.defense,
                    "missile": f.land.missile,
                    "ship": f"{f.ship.attack}/{f.ship.defense}" if f.ship else "",
                    "swamp": f"{f.swamp.attack}/{f.swamp.defense}" if f.swamp else "",
                    "cost": f.cost,
                    "notes": ", ".join(notes),
                }
            )
        nb = model.noble_ratings()
        rows.append(
            {
                "type": "noble",
                "kind": "noble",
                "attack": nb.attack,
                "defense": nb.defense,
                "missile": nb.missile,
                "ship": "",
                "swamp": "",
                "cost": None,
                "notes": "leaves the battle when hit, with a 1-100 wound",
            }
        )
        return pd.DataFrame(rows)


def _package_fighters() -> dict[str, model.FighterType]:
    return model.fighter_types(Node(None, "units", Source("package")), Source("package"))


RULESET = AgeOfGods()
