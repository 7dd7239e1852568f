"""Olympia's reference battles as waves (tests/reference/waves.py): a side is its units,
structure and siege engines, and the side a battle left is rebuilt from the reference's
own men (tests/reference/olympia.py): each unit whose noble is alive, with the health he
has left and his men still standing by type and row (rows left empty closed up), the
structure unless it collapsed, the engines standing; nothing of a side that lost or
withdrew.

The reference's ``one_battle`` keeps its men to itself, and that module is not edited
(its hash keys the stored samples): ``fight`` sees them by wrapping its ``build`` for the
one call."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from simulator.rulesets.olympia.model import SIDES, Battle, Men, Side, Unit
from simulator.rulesets.olympia.model import Structure as SideStructure
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from tests.reference import olympia as ref
from tests.reference.waves import Fight


class OlympiaFights:
    def types(self, model: Battle, side: str) -> Counter[str]:
        men: Counter[str] = Counter()
        for unit in model.sides[SIDES.index(side)].units:
            for m in unit.men:
                if m.count:
                    men[m.type] += m.count
        return men

    def written(self, model: Battle, side: str) -> Side:
        return model.sides[SIDES.index(side)]

    def nothing_left(self, facing: Side | None) -> bool:
        return facing is None

    def fight(self, model: Battle, side: str, facing: Side, rng: random.Random) -> Fight:
        s = SIDES.index(side)
        other = SIDES[1 - s]
        battle = replace(model, **{other: facing})
        if model.from_step and facing is not model.sides[1 - s]:
            battle = replace(battle, from_step=0)  # a later wave starts a fight
        built: list[tuple[list[ref.Man], list[ref.Structure | None], list[int]]] = []
        build = ref.build

        def keeping(b: Battle) -> tuple[list[ref.Man], list[ref.Structure | None], list[int]]:
            built.append(build(b))
            return built[-1]

        ref.build = keeping
        try:
            row = ref.one_battle(battle, rng, OlympiaPrepared(battle).columns)
        finally:
            ref.build = build
        men, structures, _ = built[0]
        fighters = [m for m in men if m.kind == "man"]
        lost = Counter((SIDES[m.side], m.type) for m in fighters if not m.standing)
        alive = Counter((SIDES[m.side], m.type) for m in fighters if m.standing)
        winner = row["winner"]
        o = 1 - s
        gone = winner == 1 - o or winner == ref.ATTACKER_WITHDREW + o
        left = None if gone else _left(facing, [m for m in men if m.side == o], structures[o])
        return Fight(winner, row["steps"], False, lost, alive, left)


def _left(side: Side, men: list[ref.Man], structure: ref.Structure | None) -> Side | None:
    """``side`` as the battle left its ``men`` and ``structure``."""
    units = []
    for u, unit in enumerate(side.units):
        noble = next(m for m in men if m.kind == "noble" and m.unit == u)
        if noble.health <= 0:
            continue
        standing: Counter[tuple[str, int]] = Counter(
            (m.type, m.row) for m in men if m.kind == "man" and m.unit == u and m.standing
        )
        units.append(
            Unit(
                replace(unit.noble, health=noble.health),
                unit.behind,
                tuple(Men(t, n, row) for (t, row), n in standing.items()),
            )
        )
    if not units:
        return None
    units = closed_up(units)
    engines = Counter(m.type for m in men if m.kind == "engine" and m.standing)
    kept = None
    if side.structure is not None and structure is not None and structure.standing:
        kept = SideStructure(side.structure.kind, structure.defense, structure.damage)
    return replace(
        side,
        units=tuple(units),
        structure=kept,
        engines=tuple((name, engines[name]) for name, _ in side.engines if engines[name]),
    )


def closed_up(units: list[Unit]) -> list[Unit]:
    """``units`` with the rows left empty closed up (a rear row moves up once the rows
    before it are gone)."""
    rows = sorted({u.behind for u in units} | {m.behind for u in units for m in u.men})
    row_of = {row: new for new, row in enumerate(rows)}
    return [
        Unit(u.noble, row_of[u.behind], tuple(replace(m, behind=row_of[m.behind]) for m in u.men))
        for u in units
    ]


FIGHTS = OlympiaFights()
