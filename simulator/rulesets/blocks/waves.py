"""Blocks' side as a battle left it, for the next wave (docs/unfolding.md, "Waves").

A battle's row holds each block's steps lost and, for a wave's fight, where it ended
(kernels/blocks.py's places). The side left is its blocks still in the area, each with
its steps left: a block in the castle (or sallying from it) in the castle, one in the
field (or storming) in the field, a reserve that had not arrived still on the road,
arriving in its round of the next fight; eliminated blocks and blocks that left by the
road (the battle's own retreat) are gone. Only the defender holds the castle in a new
battle (the next fight is one), so an attacker's block left in it is written in the
field. A stop rule's ``gone`` that names a block no longer there holds from the start of
the next fight, as ``after = 1`` does: it is written so (stop_rules.rule_left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kernels import blocks as k

from ..distinct import distinct_rows
from ..stop_rules import rule_left
from .model import SIDES, Battle, Block

#: Where a block ended -> where the next fight finds it (None: gone).
_AT = {
    int(k.RESERVE): "reserve",
    int(k.FIELD): "field",
    int(k.STORM): "field",
    int(k.TRYING): "field",
    int(k.CASTLE): "castle",
    int(k.SALLY): "castle",
    int(k.GONE): None,
    int(k.AWAY): None,
}
#: The column prefix of where a block ended, in a wave chain's run (for_waves).
PLACE = "place"


def survivors(
    battle: Battle, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:meth:`simulator.rulesets.base.Prepared.survivors` of a blocks battle."""
    blocks = battle.sides[SIDES.index(side)]
    state = np.column_stack(
        [rows[f"casualties.{side}.{b.name}"] for b in blocks]
        + [rows[f"{PLACE}.{side}.{b.name}"] for b in blocks]
    )
    distinct, index = distinct_rows(state)
    n = len(blocks)
    tables = [_left(blocks, side, data, row[:n], row[n:]) for row in distinct]
    return index.reshape(-1), tables


def _left(
    blocks: Sequence[Block],
    side: str,
    data: Mapping[str, Any],
    lost: np.ndarray,
    places: np.ndarray,
) -> dict[str, Any] | None:
    kept = []
    for block, steps_lost, place in zip(blocks, lost.tolist(), places.tolist(), strict=True):
        at = _AT[place]
        if at is None:
            continue
        if at == "castle" and side == "attacker":
            at = "field"
        written: dict[str, Any] = {
            "name": block.name,
            "rating": block.rating,
            "steps": block.steps - steps_lost,
            "max_steps": block.max_steps,
            "traits": [t for t in ("knights", "harry") if getattr(block, t)],
            "at": at,
        }
        if at == "reserve":
            written["round"] = block.arrives
        kept.append(written)
    if not kept:
        return None
    return {**rule_left(data, [b["name"] for b in kept]), "blocks": kept}
