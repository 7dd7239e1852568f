"""Age of Gods' reference battles as waves (tests/reference/waves.py): a side is its
units, leaders, allies and structure, and the side a battle left is rebuilt from the
reference's own men (tests/reference/age_of_gods.py): each unit whose noble is alive,
with the health he has left, his men still standing and those control limits kept out,
by type and row in the order written (rows left empty closed up); allies who came
among the side's units, after its own; allies still to come with the rounds they still
had to wait; the structure unless it collapsed; nothing of a side that lost or withdrew.

The reference's ``simulate`` keeps its fights to itself, and that module is not edited
(its hash keys the stored samples): ``fight`` sees them by wrapping its ``Fight`` for the
one call."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace

from simulator.rulesets.age_of_gods.model import SIDES, Allies, Battle, Leader
from simulator.rulesets.olympia.model import Men, Side, Unit
from simulator.rulesets.olympia.model import Structure as SideStructure
from tests.reference import age_of_gods as ref
from tests.reference.wave_fights_olympia import closed_up
from tests.reference.waves import Fight


@dataclass(frozen=True)
class Facing:
    """A side as a battle left it (or as written): its units, their leaders, its allies."""

    side: Side
    leaders: tuple[Leader, ...]
    allies: Allies | None


def _with(model: Battle, o: int, facing: Facing) -> Battle:
    """``model`` with side ``o`` as ``facing`` has it."""
    leaders = list(model.leaders)
    allies = list(model.allies)
    leaders[o], allies[o] = facing.leaders, facing.allies
    return replace(
        model,
        **{SIDES[o]: facing.side},
        leaders=(leaders[0], leaders[1]),
        allies=(allies[0], allies[1]),
    )


class AgeOfGodsFights:
    def types(self, model: Battle, side: str) -> Counter[str]:
        """The men of each type who take part (control limits keep some out)."""
        s = SIDES.index(side)
        men = ref.Fight(model, random.Random(0)).men
        return Counter(m.type for m in men if m.side == s and not m.noble)

    def written(self, model: Battle, side: str) -> Facing:
        s = SIDES.index(side)
        return Facing(model.sides[s], model.leaders[s], model.allies[s])

    def nothing_left(self, facing: Facing | None) -> bool:
        return facing is None

    def fight(self, model: Battle, side: str, facing: Facing, rng: random.Random) -> Fight:
        s = SIDES.index(side)
        o = 1 - s
        battle = _with(model, o, facing)
        if model.from_step and facing.side is not model.sides[o]:
            battle = replace(battle, from_step=0)  # a later wave starts a fight
        made: list[ref.Fight] = []
        fight_class = ref.Fight

        class Keeping(fight_class):  # type: ignore[misc, valid-type]
            def __init__(self, b: Battle, r: random.Random) -> None:
                super().__init__(b, r)
                made.append(self)

        ref.Fight = Keeping  # type: ignore[misc]
        try:
            row = ref.simulate(battle, 1, rng.getrandbits(64))
        finally:
            ref.Fight = fight_class  # type: ignore[misc]
        fought = made[0]
        winner, steps = int(row["winner"][0]), int(row["steps"][0])
        lost: Counter[tuple[str, str]] = Counter()
        for name, column in row.items():
            if name.startswith("casualties.") and column[0]:
                _, x, t = name.split(".", 2)
                lost[(x, t)] = int(column[0])
        alive: Counter[tuple[str, str]] = Counter()
        for x in SIDES:
            for t, n in self.types(battle, x).items():
                alive[(x, t)] = n - lost[(x, t)]
        gone = winner == 1 - o or winner == ref.ATTACKER_WITHDREW + o
        left = None if gone else _left(battle, o, fought, steps)
        return Fight(winner, steps, False, lost, alive, left)


def _left(battle: Battle, o: int, fight: ref.Fight, steps: int) -> Facing | None:
    """Side ``o`` of ``battle`` as ``fight``, ended after round ``steps``, left it."""
    units: list[Unit] = []
    leaders: list[Leader] = []
    coming: list[tuple[Unit, Leader]] = []
    wait = 0
    for u, (unit, leader, arrives) in enumerate(battle.units_of(o)):
        if arrives > steps:
            coming.append((unit, leader))
            wait = arrives - steps
            continue
        mine = [m for m in fight.men if m.side == o and m.unit == u]
        noble = next(m for m in mine if m.noble)
        if noble.health <= 0:
            continue
        fielded = Counter((m.type, m.row) for m in mine if not m.noble)
        standing = Counter((m.type, m.row) for m in mine if not m.noble and m.present)
        men = []
        for written in unit.men:  # the men standing, and those control limits kept out
            key = (written.type, written.behind)
            n = standing[key] + written.count - fielded[key]
            if n > 0:
                men.append(Men(written.type, n, written.behind))
        units.append(Unit(replace(unit.noble, health=noble.health), unit.behind, tuple(men)))
        leaders.append(leader)
    if not units:
        return None
    units = closed_up(units)
    side = battle.sides[o]
    kept = None
    structure = fight.structures[o]
    if side.structure is not None and structure is not None and structure.standing:
        kept = SideStructure(side.structure.kind, structure.defense, structure.damage)
    allies = None
    if coming:
        allies = Allies(wait, tuple(u for u, _ in coming), tuple(ld for _, ld in coming))
    return Facing(replace(side, units=tuple(units), structure=kept), tuple(leaders), allies)


FIGHTS = AgeOfGodsFights()
