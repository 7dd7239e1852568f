"""A combination of a scenario with ranges made from another of its family, not validated
and prepared whole (docs/unknowns.md, "Speed"; Ruleset.fill_in).

The counts of men and the break points change nothing of a battle's group table but each
group's count, each side's starting value and its break point, as long as no count becomes
0 or leaves 0 (a group left out or put in, a row or a type fielded or not), no side behind a
structure holds men that change (its capacity splits a group where it ends) and the
scenario does not name the chain kernel (refused where its table grows over budget;
``skip`` and ``strike`` run any battle). Then the battle's model and arrays are those of
the combination it is made from with those few numbers put in; anything else is
validated and prepared whole. tests/test_unknowns_fill_in.py checks that the two ways
give the same model, arrays and rows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from kernels.olympia import layout as k

from .model import SIDES, Battle, Side
from .prepare import OlympiaArrays, OlympiaPrepared

#: The data paths filled in: a side's break point, a count of men of a unit's table of
#: men by type or of its list of men.
FILLED = re.compile(
    r"(?P<side>attacker|defender)\.(?:(?P<break>break_point)"
    r"|units\[(?P<unit>\d+)\]\.men(?:\.(?P<type>[^.\[\]]+)|\[(?P<entry>\d+)\]\.count))"
)


def fills_in(path: str) -> bool:
    return FILLED.fullmatch(path) is not None


def fill_in(
    template: OlympiaPrepared, values: Mapping[str, Any]
) -> tuple[Battle, OlympiaPrepared] | None:
    """``template``'s battle with ``values`` (paths :data:`FILLED` matches) put in, and
    it prepared; None where it cannot be made so (module docstring)."""
    battle = template.battle
    if battle.kernel == "chain":
        return None
    breaks = [side.break_point for side in battle.sides]
    counts: dict[tuple[int, int, int], int] = {}
    for path, value in values.items():
        found = FILLED.fullmatch(path)
        if found is None or type(value) is not int:
            return None
        s = SIDES.index(found["side"])
        if found["break"]:
            breaks[s] = value
            continue
        units = battle.sides[s].units
        u = int(found["unit"])
        if u >= len(units):
            return None
        men = units[u].men
        if found["type"] is not None:
            at = [j for j, m in enumerate(men) if m.type == found["type"]]
            if len(at) != 1:
                return None
            j = at[0]
        else:
            j = int(found["entry"])
            if j >= len(men):
                return None
        if (value == 0) != (men[j].count == 0) or battle.sides[s].structure is not None:
            return None
        counts[(s, u, j)] = value
    sides = [_side(side, s, breaks[s], counts) for s, side in enumerate(battle.sides)]
    filled = dataclasses.replace(battle, attacker=sides[0], defender=sides[1])
    return filled, OlympiaPrepared(filled, _arrays(template, breaks, counts))


def _side(side: Side, s: int, break_point: int, counts: Mapping[tuple[int, int, int], int]) -> Side:
    """``side`` (side ``s``) with its break point and its counts of ``counts``."""
    units = list(side.units)
    for (of, u, j), count in counts.items():
        if of == s:
            men = list(units[u].men)
            men[j] = dataclasses.replace(men[j], count=count)
            units[u] = dataclasses.replace(units[u], men=tuple(men))
    return dataclasses.replace(side, units=tuple(units), break_point=break_point)


def _arrays(
    template: OlympiaPrepared, breaks: list[int], counts: Mapping[tuple[int, int, int], int]
) -> OlympiaArrays:
    """The template's arrays with the groups' counts, the sides' starting values (each
    group's count times its value, as prepare.py's ``GroupTable`` adds them) and break
    points put in."""
    a = template.arrays
    groups = a.groups.copy()
    for g, origin in enumerate(a.origins):
        count = counts.get(origin)
        if count is not None:
            groups[g, k.G_COUNT] = count
    sides = a.sides.copy()
    for s in range(2):
        mine = (groups[:, k.G_SIDE] == s) & (groups[:, k.G_KIND] != k.ENGINE)
        sides[s, k.S_START] = int(groups[mine, k.G_COUNT] @ groups[mine, k.G_VALUE])
        sides[s, k.S_BREAK] = breaks[s]
    return dataclasses.replace(
        a,
        groups=groups,
        survive=a.survive.copy(),
        sides=sides,
        casualty_names=list(a.casualty_names),
        start_value=(int(sides[0, k.S_START]), int(sides[1, k.S_START])),
        origins=list(a.origins),
    )
