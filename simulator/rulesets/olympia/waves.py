"""Olympia's side as a battle left it, for the next wave (docs/unfolding.md, "Waves").

The next wave's fight is a new combat against the same stack, so the side left is the
side as written with what the battle changed: each unit's men still standing, in their
rows (rows left empty closed up: a rear row moves up when the rows before it are gone,
as it does in battle); a noble hit and only wounded back in his unit with the health he
was left with (he left the battle that wounded him, not the stack); a unit whose noble
was killed gone (a noble is hit only once his men are down, so it has none); the
structure with the defense and damage it was left with, gone once it collapsed; the
siege engines still standing. A side that lost or withdrew left the field (the source
text's defeated units are taken or retreat): nothing of it is left. The kernel's rows
hold each group's state at the end of a battle when the wave chain asks for it
(kernels/olympia/strike.py's ``left_at``); its break point and stop rule are the side's as
written, counted against what it brings to the new fight.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kernels.olympia import COLLAPSE_DAMAGE

from ..distinct import distinct_rows
from .model import SIDES, Side

#: The column of group g's state at a battle's end (a noble's health left, the men or
#: engines of another group still standing) in the rows of a run that keeps it.
LEFT_PREFIX = "group_left."
#: ``winner`` codes: a side won (0, 1), then drew (2), then withdrew (3 + side).
_WITHDREW = 3


def survivors(
    side_model: Side,
    origins: Sequence[tuple[int, int, int]],
    rows: Mapping[str, np.ndarray],
    side: str,
    data: Mapping[str, Any],
) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
    """:meth:`simulator.rulesets.base.Prepared.survivors` of an olympia battle:
    ``side_model`` the side as this battle's model holds it, ``origins`` where each of
    the battle's groups comes from (``OlympiaArrays.origins``)."""
    index, states, there = side_states(origins, rows, side, side_model.structure is not None)
    tables = [None if row[0] else side_left(side_model, there, row[1:], data) for row in states]
    return index, tables


def side_states(
    origins: Sequence[tuple[int, int, int]],
    rows: Mapping[str, np.ndarray],
    side: str,
    has_structure: bool,
    more: Sequence[np.ndarray] = (),
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """The states ``side`` was left in by the battles of ``rows``, each once: each
    battle's index among them, the distinct states (whether the side left the field,
    then the ``more`` columns a ruleset adds, then its groups' states, then its
    structure's defense and damage when it has one) and the origins of its groups."""
    s = SIDES.index(side)
    mine = [g for g, origin in enumerate(origins) if origin[0] == s]
    winner = np.asarray(rows["winner"])
    gone = (winner == 1 - s) | (winner == _WITHDREW + s)
    columns = [gone.astype(np.int64), *more] + [rows[f"{LEFT_PREFIX}{g}"] for g in mine]
    if has_structure:
        columns += [rows[f"structure_defense.{side}"], rows[f"structure_damage.{side}"]]
    distinct, index = distinct_rows(np.column_stack(columns))
    return index.reshape(-1), distinct, [origins[g] for g in mine]


def side_left(
    side: Side,
    origins: Sequence[tuple[int, int, int]],
    state: np.ndarray,
    data: Mapping[str, Any],
    kept_out: Sequence[Sequence[int]] | None = None,
) -> dict[str, Any] | None:
    """The side's table with ``state`` (its groups' states, then its structure's defense
    and damage) applied, or None when no noble of it is left. ``kept_out``: each unit's
    men (by its list of men) who stayed out of the battle, back in their unit (Age of
    Gods' control limits)."""
    health = [0] * len(side.units)
    if kept_out is None:
        men = [[0] * len(unit.men) for unit in side.units]
    else:
        men = [list(out) for out in kept_out]
    engines = [0] * len(side.engines)
    for (_, u, index), value in zip(origins, state[: len(origins)].tolist(), strict=True):
        if u < 0:
            engines[index] += value
        elif index < 0:
            health[u] = value
        else:
            men[u][index] += value
    kept = [u for u in range(len(side.units)) if health[u] > 0]
    if not kept:
        return None
    rows = sorted(
        {side.units[u].behind for u in kept}
        | {m.behind for u in kept for m, n in zip(side.units[u].men, men[u], strict=True) if n}
    )
    row_of = {row: new for new, row in enumerate(rows)}
    units = []
    for u in kept:
        unit, written = side.units[u], data["units"][u]
        entry = {
            key: value for key, value in written.items() if key not in ("men", "behind", "noble")
        }
        entry["noble"] = {**written.get("noble", {}), "health": health[u]}
        entry["behind"] = row_of[unit.behind]
        entry["men"] = [
            {"type": m.type, "count": n, "behind": row_of[m.behind]}
            for m, n in zip(unit.men, men[u], strict=True)
            if n
        ]
        units.append(entry)
    left: dict[str, Any] = {
        key: value for key, value in data.items() if key not in ("units", "siege_engines")
    }
    left["units"] = units
    retreat = data.get("retreat")
    fields = {m["type"] for unit in units for m in unit["men"]}
    if isinstance(retreat, Mapping) and "gone" in retreat and retreat["gone"] not in fields:
        # Its type is gone already: the rule holds from the start of the next fight,
        # which is withdrawing after its first step (a type it no longer fields cannot
        # be written).
        rule = {key: value for key, value in retreat.items() if key != "gone"}
        rule["after"] = 1
        left["retreat"] = rule
    standing = {name: n for (name, _), n in zip(side.engines, engines, strict=True) if n}
    if standing:
        left["siege_engines"] = standing
    if side.structure is not None:
        defense, damage = (int(x) for x in state[-2:])
        if damage >= COLLAPSE_DAMAGE:
            del left["structure"]
        else:
            left["structure"] = {**data["structure"], "defense": defense, "damage": damage}
    return left
