"""Skirmish's side as a battle left it, for the next wave (docs/unfolding.md, "Waves").

A battle's row holds every participant's health at its end. The side left is its stacks
as they stood, each on its tile with its owner, holding its units still alive (health
above 0), each at the health it was left with; a stack with no unit left is gone. It is
written as the side's own ``stacks`` (``[defender] stacks = [...]``), which take the place
of the field's stacks that fought for it. A healer's healing, once a battle, is not
carried over: the next wave's fight is a battle of its own (as its first turn's charge
is), and the game keeps a unit's health between battles, not what it did in one. A
stop rule's ``gone`` naming a type no longer there holds from the next fight's start,
written as ``after = 1`` (stop_rules.rule_left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..distinct import distinct_rows
from ..stop_rules import rule_left
from .model import SIDES, Battle, Participant


def survivors(
    battle: Battle,
    columns: Sequence[str],
    rows: Mapping[str, np.ndarray],
    side: str,
    data: Mapping[str, Any],
) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:meth:`simulator.rulesets.base.Prepared.survivors` of a skirmish battle; ``columns``
    names each participant's health column, in participant order."""
    fighters = [p for p in battle.participants if p.side == SIDES.index(side)]
    health = np.column_stack([rows[columns[p.id]] for p in fighters])
    distinct, index = distinct_rows(health)
    tables = [_left(battle, fighters, data, row) for row in distinct]
    return index.reshape(-1), tables


def _left(
    battle: Battle,
    fighters: Sequence[Participant],
    data: Mapping[str, Any],
    health: np.ndarray,
) -> dict[str, Any] | None:
    kept: dict[int, list[dict[str, Any]]] = {}
    for p, h in zip(fighters, health.tolist(), strict=True):
        if h > 0:
            kept.setdefault(p.stack, []).append({"type": p.unit.name, "health": int(h)})
    if not kept:
        return None
    stacks = [
        {
            "tile": list(battle.stacks[index].tile),
            "owner": battle.stacks[index].owner,
            "units": units,
        }
        for index, units in sorted(kept.items())
    ]
    types = [unit["type"] for units in kept.values() for unit in units]
    return {**rule_left(data, types), "stacks": stacks}
