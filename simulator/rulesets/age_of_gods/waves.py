"""Age of Gods' side as a battle left it, for the next wave (docs/age_of_gods.md, "Waves").

Olympia's side left (rulesets/olympia/waves.py: men per unit and row, rows closed up, a
wounded noble back with his health, a killed noble's unit gone, the structure's defense
and damage, nothing of a side that lost or withdrew) with what this ruleset adds: the
men control limits kept out of the battle are back in their unit (the next fight's
limits choose again who takes part); allies who came are units of the side now, after
its own; allies still to come arrive in the next fight's round that is as many rounds
away as their round was from the battle's end. Men who fled left the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..olympia.waves import side_left, side_states
from .model import SIDES, Battle

if TYPE_CHECKING:
    from .prepare import AgeOfGodsArrays


def survivors(
    battle: Battle,
    arrays: AgeOfGodsArrays,
    rows: Mapping[str, np.ndarray],
    side: str,
    data: Mapping[str, Any],
) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:meth:`simulator.rulesets.base.Prepared.survivors` of an Age of Gods battle."""
    s = SIDES.index(side)
    allies = battle.allies[s]
    steps = np.asarray(rows["steps"], np.int64)
    # The rounds allies still had to wait when the battle ended (0: they came).
    wait = np.maximum(allies.round - steps, 0) if allies is not None else np.zeros_like(steps)
    has_structure = battle.sides[s].structure is not None
    index, states, origins = side_states(arrays.origins, rows, side, has_structure, [wait])
    tables = [
        None if row[0] else _left(battle, s, origins, int(row[1]), row[2:], data, arrays)
        for row in states
    ]
    return index, tables


def _left(
    battle: Battle,
    s: int,
    origins: Sequence[tuple[int, int, int]],
    wait: int,
    state: np.ndarray,
    data: Mapping[str, Any],
    arrays: AgeOfGodsArrays,
) -> dict[str, Any] | None:
    """Side ``s``'s table with ``state`` applied (see the module's docstring), or None
    when no noble of it is on the field."""
    own = battle.sides[s]
    allies = battle.allies[s]
    written = {key: value for key, value in data.items() if key != "allies"}
    if allies is not None and wait == 0:  # they came: units of the side now
        side = replace(own, units=own.units + allies.units)
        written["units"] = [*data["units"], *data["allies"]["units"]]
        kept_out = arrays.kept_out[s]
    else:  # the allies' groups hold nobody yet: the side's own units alone
        n = len(own.units)
        mine = [i for i, origin in enumerate(origins) if origin[1] < n]
        # The groups' states, then the structure's (after every group's).
        state = np.concatenate([state[mine], state[len(origins) :]])
        origins = [origins[i] for i in mine]
        side, kept_out = own, arrays.kept_out[s][:n]
    left = side_left(side, origins, state, written, kept_out)
    if left is not None and allies is not None and wait > 0:
        left["allies"] = {**data["allies"], "round": wait}
    return left
