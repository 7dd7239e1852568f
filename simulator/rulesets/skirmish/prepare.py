"""Skirmish model -> the kernel's participant table (see kernels/skirmish.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels import skirmish as k
from kernels import skirmish_stacked

from .. import base
from ..base import BY_STEP, FROM_STEP, STOP_RULES, TURN_LIMIT, add_to_most
from ..outcomes import Outcomes
from ..recorded_turns import RecordedTurns
from ..stacked import StackedRuns
from . import waves
from .model import SIDES, Battle, Participant

#: Move types whose health removed is reported as ``damage.<side>.<move>``.
DAMAGE_MOVES = ("strike", "archery", "charge", "riposte")


@dataclass(frozen=True)
class Move:
    """One move of a battle's log (the source's serialised tuple, plus its turn)."""

    turn: int  # 1-based
    participant: int
    target: int
    move_type: str
    effect: int

    def as_tuple(self) -> tuple[int, int, str, int]:
        return (self.participant, self.target, self.move_type, self.effect)


def participant_table(battle: Battle) -> tuple[np.ndarray, list[str]]:
    """The int64 table, and the casualty column names in column order."""
    table = np.zeros((len(battle.participants), k.N_P_FIELDS), np.int64)
    casualty_names: list[str] = []
    first_casualty = k.O_HEALTH + len(battle.participants)
    for p in battle.participants:
        name = f"casualties.{SIDES[p.side]}.{p.unit.name}"
        if name not in casualty_names:
            casualty_names.append(name)
        abilities = p.unit.abilities
        table[p.id] = (
            p.side,
            p.unit.attack,
            p.unit.defence,
            p.unit.damage,
            p.unit.health,
            p.health,
            "strike" in abilities,
            "archery" in abilities,
            "charge" in abilities,
            "healing" in abilities,
            first_casualty + casualty_names.index(name),
            p.healed,
        )
    return table, casualty_names


def rule_params(battle: Battle) -> np.ndarray:
    """The kernel's rule switches for ``battle`` (kernels/skirmish.py, ``PARAM_*``)."""
    params = np.zeros(k.N_PARAMS, np.int64)
    params[k.PARAM_EXPECTED_VALUE] = k.EXACT if battle.expected_value == "exact" else k.SAMPLED5
    params[k.PARAM_TURN_LIMIT] = battle.turn_limit
    engine = int(battle.rules == "engine")
    params[k.PARAM_RIPOSTE_DAMAGE] = engine
    params[k.PARAM_CHARGE_DAMAGE] = engine
    params[k.PARAM_STALEMATE_START] = engine
    params[k.PARAM_FROM] = battle.from_step
    return params


def stop_rows(battle: Battle, casualty_names: list[str]) -> np.ndarray:
    """The kernel's ``(2, N_STOP)`` stop rules: a side's men are its participants,
    ``gone`` a type the kernel counts by the side's casualty column of that type."""
    rows = []
    for s, side in enumerate(SIDES):
        men = sum(1 for p in battle.participants if p.side == s)

        def type_index(kind: str, side: str = side) -> int:
            return casualty_names.index(f"casualties.{side}.{kind}")

        rows.append(battle.retreat[s].encode(men, type_index))
    return np.stack(rows)


def health_column(p: Participant) -> str:
    return f"health_left.{SIDES[p.side]}.{p.id}.{p.unit.name}"


class SkirmishPrepared(StackedRuns, RecordedTurns):
    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.table, self.casualty_names = participant_table(battle)
        self.params = rule_params(battle)
        self.stops = stop_rows(battle, self.casualty_names)
        self.kernel = f"turns ({battle.rules} rules, {battle.expected_value} expected values)"
        self.flags = frozenset({TURN_LIMIT})
        notes = []
        if battle.reseated:
            notes.append(
                "under the engine's rules sides go by owner alone: the stacks of "
                f"{', '.join(battle.reseated)} defend (the rule text's alliances would "
                "seat them otherwise)"
            )
        if battle.staying_out:
            owners = sorted({battle.stacks[i].owner for i in battle.staying_out})
            notes.append(
                f"{len(battle.staying_out)} stack(s) on the field stay out of the battle "
                f"(allied with both sides or neither): owner {', '.join(owners)}"
            )
        self.notes = tuple(notes)
        self.n_columns = k.O_HEALTH + len(battle.participants) + len(self.casualty_names)
        self.columns = self._columns()
        self.column_bounds = self._bounds()
        self.step_limit = battle.turn_limit
        self.unfolds = frozenset({BY_STEP, STOP_RULES, FROM_STEP, base.WAVES})
        self.stop_rules = battle.retreat
        self.from_step = battle.from_step

    def _bounds(self) -> dict[str, tuple[int | None, int | None]]:
        """A side loses at most its participants of a type; health left is 0 to the most
        a participant can have (healing restores up to the type's health); damage and
        healing are never below 0."""
        bounds: dict[str, tuple[int | None, int | None]] = {
            name: (0, None) for name in self.columns if name.startswith(("damage.", "healing."))
        }
        for p in self.battle.participants:
            name = f"casualties.{SIDES[p.side]}.{p.unit.name}"
            add_to_most(bounds, name, 1)
            bounds[health_column(p)] = (0, max(p.health, p.unit.health))
        return bounds

    def _columns(self) -> dict[str, int]:
        """Outcome columns worth reporting for this battle, name -> index in the row."""
        columns = {"winner": k.O_WINNER, "steps": k.O_STEPS, TURN_LIMIT: k.O_TURN_LIMIT}
        ability: dict[str, list[set[int]]] = {m: [set(), set()] for m in k.MOVE_TYPES}
        for p in self.battle.participants:
            for a in p.unit.abilities:
                ability[a][p.side].add(p.id)
        for s, side in enumerate(SIDES):
            for move in DAMAGE_MOVES:
                # A riposte answers a strike: the side needs strikers and so does the enemy.
                used = (
                    ability["strike"][s] and ability["strike"][1 - s]
                    if move == "riposte"
                    else ability[move][s]
                )
                if used:
                    columns[f"damage.{side}.{move}"] = (
                        k.O_EFFECT + s * k.N_MOVE_TYPES + k.MOVE_TYPES.index(move)
                    )
            if ability["healing"][s]:
                columns[f"healing.{side}"] = k.O_EFFECT + s * k.N_MOVE_TYPES + k.HEALING
        for p in self.battle.participants:
            columns[health_column(p)] = k.O_HEALTH + p.id
        for i, name in enumerate(self.casualty_names):
            columns[name] = k.O_HEALTH + len(self.battle.participants) + i
        return columns

    def table_bytes(self) -> int:
        """The kernel's table of expected damage, every participant against every other
        (float64), built by every call."""
        return 8 * len(self.battle.participants) ** 2

    def run_marked(
        self, seed: int, first: int, count: int, cut: int = 0, marks: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`run_matrix`'s rows and, in the same pass, each battle's row after each
        of ``marks`` (turns, ascending), shape ``(count, len(marks), columns)``."""
        out = np.zeros((count, self.n_columns), np.int64)
        turns = np.array(marks, np.int64)
        # Every battle writes each of its marks' rows (recorded, or its final row).
        trails = np.empty((count, len(turns) * self.n_columns), np.int64)
        params = self.params
        if cut:
            params = params.copy()
            params[k.PARAM_CUT] = cut
        if count:
            k.skirmish_battles(
                k.battle_by_address(),
                self.table,
                params,
                self.stops,
                turns,
                np.uint64(seed),
                first,
                out,
                trails,
            )
        return out, trails.reshape(count, len(turns), self.n_columns)

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        return self.columns_of(self.run_matrix(seed, first, count))

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        return (self.table, self.params, self.stops)

    def stack_sizes(self) -> tuple[int, ...]:
        return (self.n_columns, self.table.shape[0])

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        kernel = skirmish_stacked.skirmish_stacked
        return kernel, k.battle_by_address(kernel, given)

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        health = [health_column(p) for p in self.battle.participants]
        return waves.survivors(self.battle, health, rows, side, data)

    def replay(self, seed: int, battle: int) -> tuple[dict[str, int], list[Move]]:
        """Outcome row and move log of battle ``battle`` of run ``seed``.

        The kernel runs the battle from its own stream, exactly as ``run`` does; a log
        too short for the battle is lengthened and the battle run again (same stream,
        same battle).
        """
        room = 64 * max(1, len(self.battle.participants))
        while True:
            row = np.zeros(self.n_columns, np.int64)
            log = np.zeros((room, k.N_LOG_FIELDS), np.int64)
            made = int(
                k.skirmish_replay(
                    self.table, self.params, self.stops, np.uint64(seed), battle, row, log
                )
            )
            if made <= room:
                break
            room = made
        moves = [
            Move(
                int(r[k.L_TURN]) + 1,
                int(r[k.L_PARTICIPANT]),
                int(r[k.L_TARGET]),
                k.MOVE_TYPES[int(r[k.L_MOVE_TYPE])],
                int(r[k.L_EFFECT]),
            )
            for r in log[:made]
        ]
        return {name: int(row[col]) for name, col in self.columns.items()}, moves
