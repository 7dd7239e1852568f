"""Waves in plain Python: each battle a chain of a ruleset's reference battles.

Follows docs/unfolding.md ("Waves") with the validated models alone: wave k's battle is
the wave's own army (as its scenario against the other side as written holds it) against
the other side as the battle before left it, rebuilt here from the reference's own
fighters (tests/reference/wave_fights_<ruleset>.py), not from scenario tables as the
package does. One Python random stream runs every battle one after another, so agreement
with the package in distribution checks the survivors, the chain and the columns, not
the streams.
"""

from __future__ import annotations

import importlib
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from simulator.scenario.waves import NOT_FOUGHT, SIDE_WON, Waves


@dataclass(frozen=True)
class Fight:
    """One wave's reference battle: its ``winner`` code, the ``steps`` it lasted, whether
    it ended on the ruleset's turn limit, the men ``lost`` and ``alive`` at its end by
    (side, type), and the other side as it ``left`` it (the ruleset's own form; it is
    passed back to :meth:`WaveFights.fight` for the next wave)."""

    winner: int
    steps: int
    turn_limit: bool
    lost: Counter[tuple[str, str]]
    alive: Counter[tuple[str, str]]
    left: Any


class WaveFights(Protocol):
    """What the chain needs of a ruleset's reference (one module per ruleset,
    ``tests/reference/wave_fights_<ruleset>.py``, with ``FIGHTS`` an instance)."""

    def types(self, model: Any, side: str) -> Counter[str]:
        """``side``'s men per type in ``model`` (every type its columns name)."""

    def written(self, model: Any, side: str) -> Any:
        """``side`` of ``model`` as written, in the form :meth:`fight` takes."""

    def nothing_left(self, facing: Any) -> bool:
        """Whether nothing of a side so left is left to fight."""

    def fight(self, model: Any, side: str, facing: Any, rng: random.Random) -> Fight:
        """Wave ``model`` (its ``side``, as written) against the other side ``facing``."""


def fights_of(ruleset: str) -> WaveFights:
    """The ruleset's reference fights."""
    module = importlib.import_module(f"tests.reference.wave_fights_{ruleset}")
    return module.FIGHTS  # type: ignore[no-any-return]


def run(waves: Waves, battles: int, seed: int) -> dict[str, np.ndarray]:
    """The columns of ``battles`` battles of a scenario with waves, named as the
    package's (scenario/waves.py)."""
    rng = random.Random(seed)
    fights = fights_of(waves.ruleset)
    side, other = waves.side, waves.other
    models = [scenario.model for scenario in waves.scenarios]
    own_types = [fights.types(model, side) for model in models]
    other_types = fights.types(models[0], other)
    first_other = fights.written(models[0], other)
    all_own = list(dict.fromkeys(t for types in own_types for t in types))
    rows: dict[str, list[int]] = {}
    for _ in range(battles):
        row: dict[str, int] = {"winner": 0, "steps": 0, "turn_limit": 0, "waves_fought": 0}
        for t in all_own:
            row[f"casualties.{side}.{t}"] = 0
        for t in other_types:
            row[f"casualties.{other}.{t}"] = 0
        facing = first_other
        won = False
        for k, model in enumerate(models, 1):
            prefix = f"wave.{k}."
            columns = [
                f"{what}.{x}.{t}"
                for what in ("casualties", "left")
                for x, types in ((side, own_types[k - 1]), (other, other_types))
                for t in types
            ]
            if won:
                row[prefix + "winner"] = row[prefix + "steps"] = NOT_FOUGHT
                row.update({prefix + c: NOT_FOUGHT for c in columns})
                continue
            row["waves_fought"] = k
            if fights.nothing_left(facing):  # the wave wins unopposed
                row["winner"] = row[prefix + "winner"] = SIDE_WON[side][0]
                row[prefix + "steps"] = 0
                row["turn_limit"] = 0
                for c in columns:
                    what, x, t = c.split(".")
                    row[prefix + c] = own_types[k - 1][t] if (what, x) == ("left", side) else 0
                won = True
                continue
            fight = fights.fight(model, side, facing, rng)
            row["winner"] = row[prefix + "winner"] = fight.winner
            row[prefix + "steps"] = fight.steps
            row["steps"] += fight.steps
            row["turn_limit"] = int(fight.turn_limit)
            for c in columns:
                what, x, t = c.split(".")
                row[prefix + c] = (fight.lost if what == "casualties" else fight.alive)[(x, t)]
                if what == "casualties":
                    row[f"casualties.{x}.{t}"] += fight.lost[(x, t)]
            facing = fight.left
            won = fight.winner in SIDE_WON[side]
        for key, value in row.items():
            rows.setdefault(key, []).append(value)
    return {key: np.array(values, np.int64) for key, values in rows.items()}
