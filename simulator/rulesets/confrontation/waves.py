"""Confrontation's side as a battle left it, for the next wave (docs/unfolding.md, "Waves").

A battle's row holds every unit's whole state: destroyed or not, its integrity left and
its resolve (doubled). The side left is its stacks as written, each on its space with its
advantages, holding its units not destroyed, each with its integrity and resolve as the
battle left them and its name kept (a unit's and a stack's name label their columns); a
stack with no unit left is gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..distinct import distinct_rows
from .model import SIDES, Battle, Stack, unit_column


def survivors(
    battle: Battle, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:meth:`simulator.rulesets.base.Prepared.survivors` of a confrontation battle."""
    stacks = [stack for stack in battle.stacks if stack.side == SIDES.index(side)]
    labels = [unit_column(stack, unit) for stack in stacks for unit in stack.units]
    state = np.column_stack(
        [
            rows[f"{what}.{label}"]
            for what in ("destroyed", "integrity", "resolve_x2")
            for label in labels
        ]
    )
    distinct, index = distinct_rows(state)
    n = len(labels)
    tables = [_left(stacks, data, row[:n], row[n : 2 * n], row[2 * n :]) for row in distinct]
    return index.reshape(-1), tables


def _left(
    stacks: Sequence[Stack],
    data: Mapping[str, Any],
    destroyed: np.ndarray,
    integrity: np.ndarray,
    resolve_x2: np.ndarray,
) -> dict[str, Any] | None:
    kept = []
    u = 0
    for stack, written in zip(stacks, data["stacks"], strict=True):
        units = []
        for unit, unit_data in zip(stack.units, written["units"], strict=True):
            if not destroyed[u]:
                twice = int(resolve_x2[u])
                units.append(
                    {
                        **unit_data,
                        "name": unit.name,
                        "integrity": int(integrity[u]),
                        "resolve": twice // 2 if twice % 2 == 0 else twice / 2,
                    }
                )
            u += 1
        if units:
            kept.append({**written, "name": stack.name, "units": units})
    return {**data, "stacks": kept} if kept else None
