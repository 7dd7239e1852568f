"""Designer hooks for blocks: no unit types to count, so ``worth`` does not apply;
``sensitivity`` turns each block's firepower (1..6) and steps (1..4)."""

from __future__ import annotations

import copy
from typing import Any

from ..designer import COUNT, RATING, Knob
from .keys import MAX_STEPS
from .model import SIDES

NOT_FOR_WORTH = (
    "worth does not apply to blocks: a block is one named piece with its own rating and "
    "steps, not men of a type that can be added (try `battle-odds sensitivity`)"
)


def _labels(blocks: list[Any]) -> list[str]:
    names = [str(b.get("name", f"block {i + 1}")) for i, b in enumerate(blocks)]
    return [n if names.count(n) == 1 else f"{n} #{i + 1}" for i, n in enumerate(names)]


def knobs(data: Any) -> list[Knob]:
    knobs = []
    for side in SIDES:
        blocks = (data.get(side) or {}).get("blocks") or []
        for label, block in zip(_labels(blocks), blocks, strict=True):
            knobs.append(
                Knob(COUNT, side, label, "steps", block["steps"], lowest=1, highest=MAX_STEPS)
            )
            knobs.append(
                Knob(
                    RATING, side, label, "firepower", int(block["rating"][1:]), lowest=1, highest=6
                )
            )
    return knobs


def with_knob(data: Any, knob: Knob, value: float) -> dict[str, Any]:
    changed = copy.deepcopy(dict(data))
    assert knob.side is not None
    blocks = changed[knob.side]["blocks"]
    block = blocks[_labels(blocks).index(knob.subject)]
    if knob.field == "steps":
        block["steps"] = int(value)
        # More steps than the block's maximum would be refused: the maximum grows with them.
        block["max_steps"] = max(int(value), int(block.get("max_steps", block["steps"])))
    else:
        block["rating"] = f"{block['rating'][0]}{int(value)}"
    return changed
