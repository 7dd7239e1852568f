"""The ``age_of_gods`` ruleset (docs/age_of_gods.md): an opening volley,
then rounds of special / missile / melee phases resolved simultaneously."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...errors import Source
from ...reader import Node
from ..base import InlineQuery, Ruleset
from . import inline, keys, model
from .prepare import AgeOfGodsPrepared


class AgeOfGods(Ruleset):
    name = model.RULESET_NAME
    title = "Olympia: The Age of Gods: rounds of simultaneous special, missile and melee phases"
    step_unit = "rounds"
    scenario_keys = keys.SCENARIO

    def validate(self, data: Mapping[str, Any], source: Source) -> model.Battle:
        return model.validate(data, source)

    def prepare(self, battle: model.Battle) -> AgeOfGodsPrepared:
        return AgeOfGodsPrepared(battle)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        return inline.scenario_data(query)

    rating_fields = (("attack", 1.0), ("defense", 1.0), ("missile", 1.0))

    def units(self) -> pd.DataFrame:
        rows = []
        fighters = model.fighter_types(Node(None, "units", Source("package")), Source("package"))
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
                "notes": "leaves the battle when hit, with a 1-100 wound",
            }
        )
        return pd.DataFrame(rows)


RULESET = AgeOfGods()
