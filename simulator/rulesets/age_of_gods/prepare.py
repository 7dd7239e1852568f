"""Age of Gods model -> the group table of kernels/age_of_gods.py (Olympia's layout
with more columns)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import age_of_gods as k
from kernels import olympia as ol

from ..base import Prepared
from ..olympia.model import Men, Side, Unit
from .model import CONTROL_LIMIT, CONTROL_LIMIT_DEFENDING_EXTRA, SIDES, Battle, noble_in_battle


def fielded(battle: Battle, side: int, unit: Unit) -> list[Men]:
    """The men of ``unit`` who take part, in stack order. Under control limits a noble
    fields at most CONTROL_LIMIT men (more when defending), strongest first by attack +
    defense + missile in this battle; ties keep stack order."""
    men = [m for m in unit.men if m.count > 0]
    if not battle.control_limits:
        return men
    limit = CONTROL_LIMIT + (CONTROL_LIMIT_DEFENDING_EXTRA if side == 1 else 0)

    def strength(m: Men) -> int:
        r = battle.fighters[m.type].ratings(battle.terrain, battle.weather)
        return r.attack + r.defense + r.missile

    kept: dict[int, int] = {}
    for i in sorted(range(len(men)), key=lambda i: -strength(men[i])):
        kept[i] = min(men[i].count, limit)
        limit -= kept[i]
    return [Men(m.type, kept[i], m.behind) for i, m in enumerate(men) if kept[i] > 0]


@dataclass
class AgeOfGodsArrays:
    groups: np.ndarray  # int64 [G, k.N_GROUP_FIELDS]
    survive: np.ndarray  # float64 [G]
    flee: np.ndarray  # float64 [G]
    sides: np.ndarray  # int64 [2, k.N_SIDE_FIELDS]
    columns: list[str]  # casualty and fled columns, from k.O_COLUMNS on
    left_out: tuple[int, int]  # men kept out by control limits, per side


def compile_battle(battle: Battle) -> AgeOfGodsArrays:
    rows: list[list[int]] = []
    survive: list[float] = []
    flee: list[float] = []
    columns: list[str] = []
    sides = np.zeros((2, k.N_SIDE_FIELDS), np.int64)
    left_out = [0, 0]

    def column(name: str) -> int:
        if name not in columns:
            columns.append(name)
        return k.O_COLUMNS + columns.index(name)

    unit_base = 0
    for s, side in enumerate(battle.sides):
        quarters = battle.defender_quarters if s == 1 else k.QUARTERS
        room = battle.capacity[side.structure.kind] if side.structure else 0
        start = 0
        for u, unit in enumerate(side.units):
            nb = noble_in_battle(battle, unit.noble)
            # (fields, count, survive, flee): the noble first, then his men, in stack order
            entries: list[tuple[dict[str, int], int, float, float]] = [
                (
                    {
                        "kind": ol.NOBLE,
                        "row": unit.behind,
                        "front": nb.attack,
                        "rear": nb.missile,
                        "def": nb.defense,
                        "value": nb.value,
                        "column": -1,
                        "fled": -1,
                        "health": unit.noble.health,
                        "leader": int(u == 0),
                    },
                    1,
                    0.0,
                    0.0,
                )
            ]
            men = fielded(battle, s, unit)
            left_out[s] += sum(m.count for m in unit.men) - sum(m.count for m in men)
            for m in men:
                f = battle.fighters[m.type]
                r = f.ratings(battle.terrain, battle.weather)
                entries.append(
                    (
                        {
                            "kind": ol.MAN,
                            "row": m.behind,
                            "front": r.attack,
                            "rear": r.missile,
                            "def": r.defense,
                            "value": r.value,
                            "column": column(f"casualties.{SIDES[s]}.{m.type}"),
                            "fled": column(f"fled.{SIDES[s]}.{m.type}") if f.flee > 0 else -1,
                            "mounted": int(f.mounted),
                            "pike": int(f.pike),
                            "special": f.special.strength if f.special else 0,
                            "targets": f.special.targets if f.special else 0,
                        },
                        m.count,
                        f.survive,
                        f.flee,
                    )
                )
            for fields, count, chance_to_survive, chance_to_flee in entries:
                start += fields["value"] * count
                # The first `room` men and nobles of the side (stack order) are inside.
                inside = min(count, room)
                room -= inside
                band = len(rows)
                for part, protected in ((inside, 1), (count - inside, 0)):
                    if part == 0:
                        continue
                    row = [0] * k.N_GROUP_FIELDS
                    for index, key in (
                        (ol.G_KIND, "kind"),
                        (ol.G_ROW, "row"),
                        (ol.G_FRONT, "front"),
                        (ol.G_REAR, "rear"),
                        (ol.G_DEF, "def"),
                        (ol.G_VALUE, "value"),
                        (ol.G_COLUMN, "column"),
                        (ol.G_HEALTH, "health"),
                        (ol.G_LEADER, "leader"),
                        (k.G_MOUNTED, "mounted"),
                        (k.G_PIKE, "pike"),
                        (k.G_SPECIAL, "special"),
                        (k.G_SPECIAL_TARGETS, "targets"),
                        (k.G_FLED_COLUMN, "fled"),
                    ):
                        row[index] = fields.get(key, 0)
                    row[ol.G_SIDE], row[ol.G_UNIT], row[ol.G_COUNT] = s, unit_base + u, part
                    row[ol.G_PROTECTED], row[k.G_BAND] = protected, band
                    rows.append(row)
                    survive.append(chance_to_survive)
                    flee.append(chance_to_flee)
        sides[s, ol.S_START] = start
        sides[s, ol.S_BREAK] = side.break_point
        sides[s, ol.S_LEADER_UNIT] = unit_base
        sides[s, k.S_QUARTERS] = quarters
        _structure(sides[s], side)
        unit_base += len(side.units)
    return AgeOfGodsArrays(
        groups=np.array(rows, np.int64).reshape(-1, k.N_GROUP_FIELDS),
        survive=np.array(survive, np.float64),
        flee=np.array(flee, np.float64),
        sides=sides,
        columns=columns,
        left_out=(left_out[0], left_out[1]),
    )


def _structure(side_row: np.ndarray, side: Side) -> None:
    if side.structure is not None:
        side_row[ol.S_HAS_STRUCTURE] = 1
        side_row[ol.S_STRUCTURE_DEF] = side.structure.defense
        side_row[ol.S_STRUCTURE_DMG] = side.structure.damage


#: Olympia extras that mean something here (no siege engines in this ruleset).
EXTRAS = tuple(x for x in ol.EXTRAS if x != "engines_lost")


class AgeOfGodsPrepared(Prepared):
    kernel = "phased"

    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.arrays = compile_battle(battle)
        notes = []
        for s, count in enumerate(self.arrays.left_out):
            if count:
                notes.append(f"control limits: {count} {SIDES[s]} men stay out of the battle")
        self.notes = tuple(notes)
        self.phases = list(k.PHASES[: k.STALEMATE])
        if (self.arrays.groups[:, ol.G_FRONT] == 0).any():
            # Only men with no attack can leave a whole round without a strike.
            self.phases.append(k.PHASES[k.STALEMATE])
        self.columns = self._columns()
        self.flags = frozenset(
            [c for c in self.columns if c.startswith(("leader_", "structure_collapsed"))]
            + [f"decided_in.{p}" for p in self.phases]
        )

    def _columns(self) -> dict[str, int]:
        columns = {"winner": ol.O_WINNER, "steps": ol.O_STEPS}
        for s, side_name in enumerate(SIDES):
            has_structure = self.battle.sides[s].structure is not None
            for extra in EXTRAS:
                if has_structure or not extra.startswith("structure"):
                    columns[f"{extra}.{side_name}"] = ol.extra(s, ol.EXTRAS.index(extra))
        for i, name in enumerate(self.arrays.columns):
            columns[name] = k.O_COLUMNS + i
        return columns

    def run_matrix(self, seed: int, first: int, count: int) -> np.ndarray:
        a = self.arrays
        out = np.zeros((count, k.O_COLUMNS + len(a.columns)), np.int64)
        if count:
            k.phased_battles(a.groups, a.survive, a.flee, a.sides, np.uint64(seed), first, out)
        return out

    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        out = self.run_matrix(seed, first, count)
        result = {name: out[:, col] for name, col in self.columns.items()}
        for phase in self.phases:
            result[f"decided_in.{phase}"] = (out[:, k.O_PHASE] == k.PHASES.index(phase)).astype(
                np.int64
            )
        return result
