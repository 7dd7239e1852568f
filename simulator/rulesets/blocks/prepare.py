"""Blocks model -> the kernel's block table and parameter vector (see kernels/blocks.py)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

import numpy as np

from kernels import blocks as k
from kernels import blocks_stacked

from .. import base
from ..base import BY_STEP, FROM_STEP, STOP_RULES, Prepared, add_to_most
from ..outcomes import Outcomes, Recorded
from ..stacked import StackedRuns
from . import waves
from .keys import SWITCHES
from .model import INITIATIVES, POLICIES, SIDES, Battle

_PLACE = {"field": int(k.FIELD), "castle": int(k.CASTLE), "reserve": int(k.RESERVE)}


@dataclass
class BlocksArrays:
    blocks: np.ndarray  # int64 [N, N_BLOCK_FIELDS]
    params: np.ndarray  # int64 [N_PARAMS]
    block_names: list[tuple[str, str]]  # (side, name), in table order
    stops: np.ndarray  # int64 [2, N_STOP]: each side's stop rule (kernels/stops.py)

    def __post_init__(self) -> None:
        # C order, once: the kernel passes them to a battle compiled for C order.
        self.blocks = np.ascontiguousarray(self.blocks)
        self.params = np.ascontiguousarray(self.params)
        self.stops = np.ascontiguousarray(self.stops)


def _row_of(names: list[tuple[str, str]], side: str, name: str) -> int:
    """The block table's row of ``side``'s block ``name``."""
    return names.index((side, name))


def compile_battle(battle: Battle) -> BlocksArrays:
    rows: list[list[int]] = []
    names: list[tuple[str, str]] = []
    for s, side in enumerate(battle.sides):
        for block in side:
            rows.append(
                [
                    s,
                    block.steps,
                    INITIATIVES.index(block.initiative),
                    block.firepower,
                    int(block.knights),
                    int(block.harry),
                    _PLACE[block.at],
                    block.arrives,
                ]
            )
            names.append((SIDES[s], block.name))
    params = np.zeros(k.N_PARAMS, np.int64)
    params[k.P_CASTLE_LIMIT] = battle.castle_limit
    params[k.P_ATTRITION] = battle.attrition
    params[k.P_SIEGE] = int(battle.siege)
    params[k.P_TURNS] = battle.turns
    policies = battle.policies
    for index, key in (
        (k.P_WITHDRAW, "withdraw"),
        (k.P_STORM, "storm"),
        (k.P_SALLY, "sally"),
        (k.P_CHARGE, "charge"),
        (k.P_RETREAT, "retreat"),
        (k.P_TIE_BREAK, "tie_break"),
        (k.P_HARRY, "harry"),
        (k.P_CASTLE_WITHDRAW, "castle_withdraw"),
        (k.P_STORM_WITHDRAW, "storm_withdraw"),
    ):
        params[index] = POLICIES[key].index(getattr(policies, key))
    params[k.P_RETREAT_ROUND] = policies.retreat_round
    for index, key in (
        (k.P_LOST_FIELD, "lost_field"),
        (k.P_RELIEF, "relief"),
        (k.P_FIRST_SALLY, "first_sally"),
        (k.P_QUIET_SIEGE, "quiet_siege"),
        (k.P_CASTLE_MARKS, "castle_marks"),
        (k.P_CHARGE_SIXES, "charge_sixes"),
        (k.P_HARRY_FIRE, "harry_fire"),
    ):
        params[index] = SWITCHES[key].index(getattr(battle.switches, key))
    params[k.P_RETREAT_ROAD] = int(battle.retreat_road)
    params[k.P_FROM_STEP] = battle.from_step
    params[k.P_ROLE] = SIDES.index(battle.attacker_role)
    # A stop rule's men are steps; its ``gone`` names a block, the kernel's row index.
    stops = np.stack(
        [
            rule.encode(sum(block.steps for block in blocks), partial(_row_of, names, side))
            for side, rule, blocks in zip(SIDES, battle.retreats, battle.sides, strict=True)
        ]
    )
    return BlocksArrays(
        blocks=np.array(rows, np.int64).reshape(-1, k.N_BLOCK_FIELDS),
        params=params,
        block_names=names,
        stops=stops,
    )


class BlocksPrepared(StackedRuns, Prepared):
    #: Whether :meth:`run` gives where each block ended (``place.`` columns, read by
    #: :meth:`survivors`): in the wave chain only (:meth:`for_waves`).
    keeps_places = False
    #: What of the battle as it unfolds it cannot give, and why (waves: see __init__).
    lacks = MappingProxyType(
        {
            base.WAVES: (
                "an existing siege (siege = true) or the roles swapped: the next wave's "
                "fight is a new battle, and its castle may have fallen while the besieged "
                "side fights on outside it, which the scenario's [battle] cannot say"
            )
        }
    )

    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.arrays = compile_battle(battle)
        self.kernel = "dice"
        self.notes = battle.notes
        self.columns = self._columns()
        self.flags = frozenset(
            [*k.FLAGS, *(c for c in self.columns if c.startswith("eliminated."))]
        )
        # Steps only fall: a block loses at most the steps it starts with.
        bounds: dict[str, tuple[int | None, int | None]] = {}
        for side_name, blocks in zip(SIDES, (battle.attacker, battle.defender), strict=True):
            for block in blocks:
                name = f"casualties.{side_name}.{block.name}"
                add_to_most(bounds, name, block.steps)
            bounds[f"steps_lost.{side_name}"] = (0, sum(b.steps for b in blocks))
            bounds[f"blocks_eliminated.{side_name}"] = (0, len(blocks))
        bounds["turn"] = (1, battle.turns)
        self.column_bounds = bounds
        self.step_limit = k.PHASES_PER_TURN * battle.turns
        self.unfolds = frozenset({BY_STEP, STOP_RULES, FROM_STEP})
        if not battle.siege and battle.attacker_role == "attacker":
            self.unfolds |= {base.WAVES}
        self.stop_rules = battle.retreats
        self.from_step = battle.from_step

    def _columns(self) -> dict[str, int]:
        """Outcome column name -> index in the kernel's row."""
        columns = {"winner": k.O_WINNER, "steps": k.O_STEPS}
        for f, flag in enumerate(k.FLAGS):
            columns[flag] = k.O_FLAGS + f
        for x, total in enumerate(k.SIDE_TOTALS):
            for s, side in enumerate(SIDES):
                columns[f"{total}.{side}"] = k.O_TOTALS + 2 * x + s
        n = len(self.arrays.block_names)
        for b, (side, name) in enumerate(self.arrays.block_names):
            columns[f"casualties.{side}.{name}"] = k.O_BLOCKS + b
        for b, (side, name) in enumerate(self.arrays.block_names):
            columns[f"eliminated.{side}.{name}"] = k.O_BLOCKS + n + b
        return columns

    def run_matrix(self, seed: int, first: int, count: int, cut: int = 0) -> np.ndarray:
        """The kernel's rows; with ``cut``, each battle still undecided after phase
        ``cut`` stops there (``winner`` FIGHTING, its row the state then)."""
        return self.recorded_matrix(seed, first, count, cut)[0]

    def recorded_matrix(
        self,
        seed: int,
        first: int,
        count: int,
        cut: int = 0,
        record: Sequence[int] = (),
        placed: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`run_matrix`'s rows and, in the same pass, each battle's row after each
        of the phases ``record`` (ascending): ``rec[i, k]`` is battle i's after
        ``record[k]``. ``placed``: the rows end with where each block ended."""
        a = self.arrays
        columns = k.n_columns(a.blocks.shape[0], placed)
        out = np.zeros((count, columns), np.int64)
        rec_steps = np.ascontiguousarray(record, np.int64)
        # Every row of ``rec`` is written (the state after the phase, or the battle's
        # final row): no zeros to write first (5% of a --by-round of relief).
        rec = np.empty((count, len(rec_steps), columns), np.int64)
        params = a.params
        if cut:
            params = params.copy()
            params[k.P_CUT] = cut
        if count:
            k.blocks_battles(
                k.battle_by_address(self._plain(cut or len(rec_steps))),
                a.blocks,
                params,
                a.stops,
                np.uint64(seed),
                first,
                out,
                rec_steps,
                rec,
            )
        return out, rec

    def _plain(self, asked: int = 0) -> bool:
        """Whether a run (``asked``: a cut or recorded steps) runs the battles' plain code
        (kernels/blocks.py's _plain_battles): one that asks for none of the battle as it
        unfolds, without the tests for it."""
        plain = not (asked or self.from_step)
        plain = plain and self.battle.attacker_role == "attacker"
        return plain and all(rule.never for rule in self.stop_rules)

    def stack_key(self) -> tuple[Any, ...]:
        # The plain code and the other are two battle functions: a stack runs one.
        return (type(self), self._plain(), self.keeps_places)

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        return (self.arrays.blocks, self.arrays.params, self.arrays.stops)

    def stack_sizes(self) -> tuple[int, ...]:
        blocks = self.arrays.blocks.shape[0]
        return (k.n_columns(blocks, False), blocks)

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        if self.keeps_places:
            raise NotImplementedError("the stacked kernel keeps no block's place")
        return blocks_stacked.blocks_stacked, k.battle_by_address(self._plain())

    def derived_columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        if self.battle.turns > 1:
            return {"turn": (rows[:, k.O_STEPS] - 1) // k.PHASES_PER_TURN + 1}
        return {}

    def derived_key(self) -> tuple[Any, ...]:
        return (type(self), self.battle.turns > 1)

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        out = self.run_matrix(seed, first, count, self._cut(step))
        return {name: out[:, col] for name, col in self.columns.items()}

    def run_through(
        self, seed: int, first: int, count: int, steps: Sequence[int]
    ) -> Mapping[str, np.ndarray]:
        """Every asked phase's state in one pass of the kernel (the same rows as
        :meth:`run_until` gives for each, battle by battle)."""
        if not len(steps):
            return {}
        _, rec = self.recorded_matrix(seed, first, count, record=[int(s) for s in steps])
        # Views of the record, as run_until's columns are of its rows (a copy of each
        # column cost more than the kernel's pass: 0.14 s against 0.11 s on relief).
        return Recorded(rec, self.columns)

    def _cut(self, step: int) -> int:
        # At the turn limit a battle still going is a draw: no cut there.
        return step if self.step_limit is None or step < self.step_limit else 0

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        if not self.keeps_places:
            return self.columns_of(self.run_matrix(seed, first, count))
        out = self.recorded_matrix(seed, first, count, placed=True)[0]
        at = k.O_BLOCKS + 2 * len(self.arrays.block_names)
        places = {
            f"{waves.PLACE}.{side}.{name}": at + b
            for b, (side, name) in enumerate(self.arrays.block_names)
        }
        return Outcomes(out, {**self.columns, **places}, self.derived_columns(out))

    def for_waves(self, later: bool = False) -> BlocksPrepared:
        """This battle as the wave chain runs it: :meth:`run` gives where each block
        ended too (``place.<side>.<name>``, kernels/blocks.py's places, which
        :meth:`survivors` reads), the same battles; a plain run's rows leave them out."""
        kept = copy.copy(self)
        kept.keeps_places = True
        return kept

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        return waves.survivors(self.battle, rows, side, data)
