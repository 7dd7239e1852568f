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
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernels.olympia import layout as k

from .model import SIDES, Battle, Men, Side, Unit
from .prepare import OlympiaArrays, OlympiaPrepared

#: The data paths filled in: a side's break point, a count of men of a unit's table of
#: men by type or of its list of men.
FILLED = re.compile(
    r"(?P<side>attacker|defender)\.(?:(?P<break>break_point)"
    r"|units\[(?P<unit>\d+)\]\.men(?:\.(?P<type>[^.\[\]]+)|\[(?P<entry>\d+)\]\.count))"
)
#: The templates' plans kept (by the template's id, with the template), at most.
MAX_PLANS = 256


def fills_in(path: str) -> bool:
    return FILLED.fullmatch(path) is not None


@functools.lru_cache(maxsize=1024)
def _target(path: str) -> tuple[int, int, str | int] | None:
    """What ``path`` sets: (side, -1, "") for a break point, (side, unit, type name or
    index in its list of men) for a count; None for any other path."""
    found = FILLED.fullmatch(path)
    if found is None:
        return None
    s = SIDES.index(found["side"])
    if found["break"]:
        return s, -1, ""
    return s, int(found["unit"]), found["type"] or int(found["entry"])


@dataclass(frozen=True)
class _Plan:
    """What filling in from one template needs, worked out once for it: each man
    entry's place, count and group row, the groups' values and the sides' starting
    values (a combination is filled in a few hundred times from each)."""

    entries: dict[tuple[int, int, str | int], tuple[int, int, int]]  # -> (side, unit, j)
    counts: dict[tuple[int, int, int], int]
    rows: dict[tuple[int, int, int], int]
    values: list[int]
    starts: tuple[int, int]
    behind_structure: tuple[bool, bool]

    @classmethod
    def of(cls, template: OlympiaPrepared) -> _Plan:
        entries: dict[tuple[int, int, str | int], tuple[int, int, int]] = {}
        counts = {}
        for s, side in enumerate(template.battle.sides):
            for u, unit in enumerate(side.units):
                types = [m.type for m in unit.men]
                for j, men in enumerate(unit.men):
                    entries[(s, u, j)] = (s, u, j)
                    if types.count(men.type) == 1:
                        entries[(s, u, men.type)] = (s, u, j)
                    counts[(s, u, j)] = men.count
        a = template.arrays
        rows = {origin: g for g, origin in enumerate(a.origins)}
        return cls(
            entries,
            counts,
            rows,
            a.groups[:, k.G_VALUE].tolist(),
            a.start_value,
            tuple(side.structure is not None for side in template.battle.sides),  # type: ignore[arg-type]
        )


_PLANS: dict[int, tuple[OlympiaPrepared, _Plan]] = {}


def _plan(template: OlympiaPrepared) -> _Plan:
    known = _PLANS.get(id(template))
    if known is not None and known[0] is template:
        return known[1]
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()
    plan = _Plan.of(template)
    _PLANS[id(template)] = (template, plan)
    return plan


def fill_in(
    template: OlympiaPrepared, values: Mapping[str, Any]
) -> tuple[Battle, OlympiaPrepared] | None:
    """``template``'s battle with ``values`` (paths :data:`FILLED` matches) put in, and
    it prepared; None where it cannot be made so (module docstring)."""
    battle = template.battle
    if battle.kernel == "chain":
        return None
    plan = _plan(template)
    breaks = [battle.attacker.break_point, battle.defender.break_point]
    counts: dict[tuple[int, int, int], int] = {}
    for path, value in values.items():
        target = _target(path)
        if target is None or type(value) is not int:
            return None
        if target[1] < 0:
            breaks[target[0]] = value
            continue
        entry = plan.entries.get(target)
        if entry is None:
            return None
        if (value == 0) != (plan.counts[entry] == 0) or plan.behind_structure[entry[0]]:
            return None
        counts[entry] = value
    sides = [_side(side, s, breaks[s], counts) for s, side in enumerate(battle.sides)]
    filled = dataclasses.replace(battle, attacker=sides[0], defender=sides[1])
    return filled, OlympiaPrepared(filled, _arrays(template.arrays, plan, breaks, counts))


def _side(side: Side, s: int, break_point: int, counts: Mapping[tuple[int, int, int], int]) -> Side:
    """``side`` (side ``s``) with its break point and its counts of ``counts``."""
    if break_point == side.break_point and all(of != s for of, _, _ in counts):
        return side
    units = list(side.units)
    for (of, u, j), count in counts.items():
        if of == s:
            men = list(units[u].men)
            was = men[j]
            men[j] = Men(was.type, count, was.behind)
            unit = units[u]
            units[u] = Unit(unit.noble, unit.behind, tuple(men))
    return Side(tuple(units), break_point, side.structure, side.engines)


def _arrays(
    a: OlympiaArrays,
    plan: _Plan,
    breaks: list[int],
    counts: Mapping[tuple[int, int, int], int],
) -> OlympiaArrays:
    """The template's arrays ``a`` with the groups' counts, the sides' starting values
    (each group's count times its value, as prepare.py's ``GroupTable`` adds them) and
    break points put in."""
    groups = a.groups.copy()
    starts = list(plan.starts)
    for origin, count in counts.items():
        g = plan.rows.get(origin)  # none for a count of 0: no group
        if g is not None:
            groups[g, k.G_COUNT] = count
            starts[origin[0]] += (count - plan.counts[origin]) * plan.values[g]
    sides = a.sides.copy()
    for s in range(2):
        sides[s, k.S_START] = starts[s]
        sides[s, k.S_BREAK] = breaks[s]
    return OlympiaArrays(
        groups,
        a.survive.copy(),
        sides,
        a.order,
        list(a.casualty_names),
        (starts[0], starts[1]),
        list(a.origins),
    )
