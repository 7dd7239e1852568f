"""Confrontation model -> the kernel's tables (see kernels/confrontation.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from kernels import confrontation as k
from kernels import confrontation_stacked

from ..base import BY_STEP, FROM_STEP, STOP_RULES, TURN_LIMIT, WAVES, add_to_most
from ..outcomes import Outcomes
from ..recorded_turns import RecordedTurns
from ..stacked import StackedRuns
from . import waves
from .model import ABILITIES, SIDES, Action, Battle, hundredths, unit_column

_ABILITY = {"attack": k.ATTACK, "bombard": k.BOMBARD, "strike": k.STRIKE}


@dataclass
class ConfrontationArrays:
    units: np.ndarray  # int64 [U, N_UNIT_FIELDS]
    floats: np.ndarray  # float64 [U, N_FLOAT_FIELDS]: arms, a, b in whole hundredths
    stacks: np.ndarray  # int64 [S, N_STACK_FIELDS]
    distance: np.ndarray  # int64 [S, S]
    actions: np.ndarray  # int64 [A, N_ACTION_FIELDS]
    entry_start: np.ndarray  # int64 [E + 1]
    turn_entry: np.ndarray  # int64 [T]
    params: np.ndarray  # int64 [N_PARAMS]
    stops: np.ndarray  # int64 [2, N_STOP]: each side's stop rule
    casualty_names: list[str]

    @property
    def n_columns(self) -> int:
        return k.first_casualty_column(self.units.shape[0]) + len(self.casualty_names)

    def tables(self, params: np.ndarray) -> tuple[np.ndarray, ...]:
        """The kernel's tables, in its order, with ``params`` (these or a cut's)."""
        return (
            self.units,
            self.floats,
            self.stacks,
            self.distance,
            self.actions,
            self.entry_start,
            self.turn_entry,
            params,
            self.stops,
        )


def compile_battle(battle: Battle) -> ConfrontationArrays:
    unit_rows: list[list[int]] = []
    float_rows: list[list[float]] = []
    stack_rows: list[list[int]] = []
    casualty_names: list[str] = []
    first_unit: list[int] = []
    for s, stack in enumerate(battle.stacks):
        first_unit.append(len(unit_rows))
        for unit in stack.units:
            name = f"casualties.{SIDES[stack.side]}.{unit.type}"
            if name not in casualty_names:
                casualty_names.append(name)
            mask = sum(1 << _ABILITY[a] for a in unit.abilities)
            unit_rows.append(
                [
                    stack.side,
                    s,
                    unit.integrity,
                    round(unit.resolve * 2),
                    unit.advantages + stack.advantages,
                    int(unit.reach),
                    int(unit.aerial),
                    unit.speed,
                    mask,
                    casualty_names.index(name),
                ]
            )
            float_rows.append([hundredths(unit.arms), hundredths(unit.a), hundredths(unit.b)])
        stack_rows.append([stack.side, first_unit[-1], len(unit_rows)])
    units = np.array(unit_rows, np.int64).reshape(-1, k.N_UNIT_FIELDS)
    units[:, k.U_CASUALTY] += k.first_casualty_column(units.shape[0])
    distance = np.array([[a.distance(b) for b in battle.stacks] for a in battle.stacks], np.int64)

    entries = [battle.simple_turn()] if battle.policy == "simple" else list(battle.script)
    action_rows: list[list[int]] = []
    entry_start = [0]
    for entry in entries:
        for action in entry:
            action_rows.extend(_expand(action, battle, first_unit))
        entry_start.append(len(action_rows))
    turn_entry = [0] * battle.turns
    if battle.policy == "script":
        turn_entry = [
            -1 if e is None else e
            for e in (battle.script_entry(t) for t in range(1, battle.turns + 1))
        ]
    params = np.zeros(k.N_PARAMS, np.int64)
    params[k.P_TURNS] = battle.turns
    params[k.P_NEARBY] = battle.nearby
    params[k.P_RULE] = k.FLAT1 if battle.min_damage_rule == "flat1" else k.TWO_DICE
    params[k.P_FROM] = battle.from_step
    stops = np.stack([_stop_row(battle, s, casualty_names) for s in range(len(SIDES))])
    return ConfrontationArrays(
        units=units,
        floats=np.array(float_rows, np.float64).reshape(-1, k.N_FLOAT_FIELDS),
        stacks=np.array(stack_rows, np.int64).reshape(-1, k.N_STACK_FIELDS),
        distance=distance,
        actions=np.array(action_rows, np.int64).reshape(-1, k.N_ACTION_FIELDS),
        entry_start=np.array(entry_start, np.int64),
        turn_entry=np.array(turn_entry, np.int64),
        params=params,
        stops=stops,
        casualty_names=casualty_names,
    )


def _stop_row(battle: Battle, side: int, casualty_names: list[str]) -> np.ndarray:
    """The kernel's row of ``side``'s stop rule. Its men are its units; ``gone`` names a
    type, which the kernel counts by the side's casualty column of that type."""
    men = sum(len(stack.units) for stack in battle.stacks if stack.side == side)

    def type_index(kind: str) -> int:
        return casualty_names.index(f"casualties.{SIDES[side]}.{kind}")

    return battle.retreat[side].encode(men, type_index)


def _expand(action: Action, battle: Battle, first_unit: list[int]) -> list[list[int]]:
    """A stack's action is each of its units' in stack order."""
    stack = battle.stacks[action.stack]
    members = range(len(stack.units)) if action.unit is None else (action.unit,)
    ability = k.CHOOSE if action.ability is None else _ABILITY[action.ability]
    target = k.CHOOSE if action.target is None else action.target
    return [[first_unit[action.stack] + u, ability, target] for u in members]


class ConfrontationPrepared(StackedRuns, RecordedTurns):
    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.arrays = compile_battle(battle)
        self.kernel = "turn"
        self.columns = self._columns()
        self.flags = frozenset(
            [TURN_LIMIT, *(c for c in self.columns if c.startswith("destroyed."))]
        )
        notes = []
        if battle.min_damage_rule == "flat1":
            notes.append(
                "min_damage_rule = flat1: a confrontation the attacker is not "
                "stronger in deals exactly 1 damage (the source's worked example)"
            )
        self.notes = tuple(notes)
        self.column_bounds = self._bounds()
        self.step_limit = battle.turns
        self.unfolds = frozenset({BY_STEP, STOP_RULES, FROM_STEP})
        self.stop_rules = battle.retreat
        self.from_step = battle.from_step
        if battle.policy == "simple":  # a script names stacks a wave may have lost
            self.unfolds |= {WAVES}

    def _bounds(self) -> dict[str, tuple[int | None, int | None]]:
        """A side loses at most its units of a type, a unit's integrity left is 0 to its
        integrity, damage rolled is never below 0 (resolve may fall below 0: unbounded)."""
        bounds: dict[str, tuple[int | None, int | None]] = {
            f"damage.{side}": (0, None) for side in SIDES
        }
        for stack, unit in self.battle.units():
            name = f"casualties.{SIDES[stack.side]}.{unit.type}"
            add_to_most(bounds, name, 1)
            bounds[f"integrity.{unit_column(stack, unit)}"] = (0, unit.integrity)
        return bounds

    def _columns(self) -> dict[str, int]:
        n = self.arrays.units.shape[0]
        columns = {"winner": k.O_WINNER, "steps": k.O_STEPS}
        for s, side in enumerate(SIDES):
            columns[f"damage.{side}"] = k.O_DAMAGE + s
        labels = [unit_column(stack, unit) for stack, unit in self.battle.units()]
        for u, label in enumerate(labels):
            columns[f"destroyed.{label}"] = k.column_destroyed(n, u)
        for u, label in enumerate(labels):
            columns[f"integrity.{label}"] = k.column_integrity(n, u)
        for u, label in enumerate(labels):
            columns[f"resolve_x2.{label}"] = k.column_resolve2(n, u)
        for i, name in enumerate(self.arrays.casualty_names):
            columns[name] = k.first_casualty_column(n) + i
        return columns

    def run_marked(
        self, seed: int, first: int, count: int, cut: int = 0, marks: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`run_matrix`'s rows and, in the same pass, each battle's row after each
        of ``marks`` (turns, ascending), shape ``(count, len(marks), columns)``."""
        a = self.arrays
        out = np.zeros((count, a.n_columns), np.int64)
        turns = np.array(marks, np.int64)
        # Every battle writes each of its marks' rows (recorded, or its final row).
        trails = np.empty((count, len(turns) * a.n_columns), np.int64)
        params = a.params
        if cut:
            params = params.copy()
            params[k.P_CUT] = cut
        if count:
            k.confrontation_battles(
                k.battle_by_address(),
                *a.tables(params),
                turns,
                np.uint64(seed),
                first,
                out,
                trails,
            )
        return out, trails.reshape(count, len(turns), a.n_columns)

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        return self.columns_of(self.run_matrix(seed, first, count))

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        return self.arrays.tables(self.arrays.params)

    def stack_sizes(self) -> tuple[int, ...]:
        return (self.arrays.n_columns, self.arrays.units.shape[0], self.arrays.stacks.shape[0])

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        kernel = confrontation_stacked.confrontation_stacked
        return kernel, k.battle_by_address(kernel, given)

    def derived_columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        # Only the last turn ends a battle undecided: every draw is one the limit ended.
        return {TURN_LIMIT: (rows[:, k.O_WINNER] == k.DRAW).astype(np.int64)}

    lacks = MappingProxyType(
        {WAVES: "a scripted battle's turns name stacks that an earlier wave may destroy"}
    )

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        return waves.survivors(self.battle, rows, side, data)


__all__ = ["ABILITIES", "ConfrontationArrays", "ConfrontationPrepared", "compile_battle"]
