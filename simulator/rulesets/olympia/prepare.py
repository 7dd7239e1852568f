"""Olympia model -> the kernels' group table (see kernels/olympia.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import olympia as k

from ..base import Prepared
from .model import SIDES, Battle

#: The strike-by-strike kernel is the reference; issue-level faster kernels may
#: replace it where they apply (see ``choose_kernel``).
KERNELS = ("strike",)


@dataclass
class OlympiaArrays:
    groups: np.ndarray  # int64 [G, N_GROUP_FIELDS]
    survive: np.ndarray  # float64 [G]
    sides: np.ndarray  # int64 [2, N_SIDE_FIELDS]
    order: int
    casualty_names: list[str]
    start_value: tuple[int, int]

    @property
    def n_columns(self) -> int:
        return k.O_CASUALTIES + len(self.casualty_names)


def compile_battle(battle: Battle) -> OlympiaArrays:
    rows: list[list[int]] = []
    survive: list[float] = []
    casualty_names: list[str] = []
    side_table = np.zeros((2, k.N_SIDE_FIELDS), np.int64)
    unit_base = 0
    for s, side in enumerate(battle.sides):
        side_name = SIDES[s]
        capacity = battle.capacity[side.structure.kind] if side.structure else 0
        placed = 0  # men and nobles so far in stack order, for the structure's capacity
        start = 0

        def add(kind: int, unit: int, row: int, count: int, front: int, rear: int, defense: int,
                value: int, column: int, health: int, noncombatant: bool, leader: bool,
                chance_to_survive: float) -> None:
            nonlocal placed, start
            start += value * count if kind != k.ENGINE else 0
            # Split a group where the structure's capacity ends: the first N men are inside.
            inside = 0 if kind == k.ENGINE else max(0, min(count, capacity - placed))
            if kind != k.ENGINE:
                placed += count
            for part, protected in ((inside, 1), (count - inside, 0)):
                if part > 0:
                    rows.append([s, unit, row, part, kind, front, rear, defense, value, protected,
                                 column, health, int(noncombatant), int(leader)])
                    survive.append(chance_to_survive)

        for u, unit in enumerate(side.units):
            gu = unit_base + u
            nb = battle.noble
            missile = nb.missile + unit.noble.missile_bonus
            if "wind" in battle.weather:
                missile //= 2
            attack = nb.attack + unit.noble.attack_bonus
            defense = nb.defense + unit.noble.defense_bonus
            add(k.NOBLE, gu, unit.behind, 1, max(attack, missile), missile, defense,
                max(attack, missile) + defense, -1, unit.noble.health, False, u == 0, 0.0)
            for men in unit.men:
                if men.count == 0:
                    continue
                ftype = battle.fighters[men.type]
                r = ftype.ratings(battle.terrain, battle.weather)
                name = f"casualties.{side_name}.{men.type}"
                if name not in casualty_names:
                    casualty_names.append(name)
                column = k.O_CASUALTIES + casualty_names.index(name)
                add(k.MAN, gu, men.behind, men.count, r.strike, r.missile, r.defense, r.value,
                    column, 0, ftype.noncombatant, False, ftype.survive)
        for name, count in side.engines:
            r = battle.engines[name].ratings
            add(k.ENGINE, unit_base, 0, count, r.strike, r.missile, r.defense, 0, -1, 0, False,
                False, 0.0)
        side_table[s, k.S_START] = start
        side_table[s, k.S_BREAK] = side.break_point
        side_table[s, k.S_LEADER_UNIT] = unit_base
        if side.structure is not None:
            side_table[s, k.S_HAS_STRUCTURE] = 1
            side_table[s, k.S_STRUCTURE_DEF] = side.structure.defense
            side_table[s, k.S_STRUCTURE_DMG] = side.structure.damage
        unit_base += len(side.units)
    return OlympiaArrays(
        groups=np.array(rows, np.int64).reshape(-1, k.N_GROUP_FIELDS),
        survive=np.array(survive, np.float64),
        sides=side_table,
        order=k.RANDOM if battle.strike_order == "random" else k.ALTERNATING,
        casualty_names=casualty_names,
        start_value=(int(side_table[0, k.S_START]), int(side_table[1, k.S_START])),
    )


class OlympiaPrepared(Prepared):
    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.arrays = compile_battle(battle)
        self.kernel = "strike"
        self.notes = battle.notes
        self.columns = self._columns()
        self.flags = frozenset(c for c in self.columns
                               if c.startswith(("leader_", "structure_collapsed")))

    def _columns(self) -> dict[str, int]:
        """Outcome columns worth reporting for this battle, name -> index in the row."""
        columns = {"winner": k.O_WINNER, "steps": k.O_STEPS}
        for s, side_name in enumerate(SIDES):
            side = self.battle.sides[s]
            for x, extra in enumerate(k.EXTRAS):
                if extra.startswith("structure") and side.structure is None:
                    continue
                if extra == "engines_lost" and not side.engines:
                    continue
                columns[f"{extra}.{side_name}"] = k.O_EXTRAS + 2 * x + s
        for i, name in enumerate(self.arrays.casualty_names):
            columns[name] = k.O_CASUALTIES + i
        return columns

    def run_matrix(self, seed: int, first: int, count: int, kernel: str | None = None) -> np.ndarray:
        a = self.arrays
        out = np.zeros((count, a.n_columns), np.int64)
        if count:
            k.strike_battles(a.groups, a.survive, a.sides, a.order, np.uint64(seed), first, out)
        return out

    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        out = self.run_matrix(seed, first, count)
        return {name: out[:, col] for name, col in self.columns.items()}
