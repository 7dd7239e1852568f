"""Olympia model -> the kernels' group table (see kernels/olympia/strike.py)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kernels.olympia import chain as olympia_chain
from kernels.olympia import layout as k
from kernels.olympia import shared_chain, strike
from kernels.olympia import skip as olympia_skip
from kernels.olympia import stacked as olympia_stacked

from ...errors import BattleOddsError, did_you_mean
from ..base import BY_STEP, FROM_STEP, STOP_RULES, WAVES, Prepared
from ..outcomes import Outcomes, Recorded
from ..stacked import StackedRuns, stack
from ..stop_rules import STOP_AFTER
from . import waves
from .keys import KERNELS, RULE_KERNELS
from .model import SIDES, Battle, Ratings, weathered
from .shared import SharedChain, Sharing
from .space import Layout, layout, positions, reachable_bound

#: The reference kernel: every battle can run it, and a group of scenarios whose choices
#: have no other kernel in common runs on it.
REFERENCE_KERNEL = "strike"
#: What ``auto`` runs when the chain's table is over budget or the order is
#: ``alternating``: ``skip``, faster than ``strike`` on every battle measured, from a noble
#: a side to 19,000 men (benchmarks/run.py prints every kernel and the pick on each
#: scenario): a kill costs it about what a strike costs ``strike``.
AUTO_KERNEL = "skip"
#: ``asked`` of a plain run: no strike's row recorded.
NONE_ASKED = np.zeros(0, np.int64)
#: The chain kernel's ``counts`` where it counts nothing (one part of no rows).
NOT_COUNTED = np.zeros((1, 0, 0), np.int64)
#: The chain kernel counts the states after the strikes asked by its table's rows
#: (``count_through``) when the counts, a row a strike, are at most this many (8 MB):
#: knights_vs_pikemen's 3,652 rows by 100 strikes are 365,200. Larger ones record rows.
COUNTED_MOST = 1 << 20
#: The chain kernel's budget. Its table holds the positions a battle can reach (break
#: points cut the exact solver's space short: 707 of its 8,484 positions on "noble, 100
#: soldier" against "noble, 20 knight", 3,651 of 37,884 on knights_vs_pikemen, 18,630 of
#: 227,304 on knights_in_swamp). ``auto`` runs it when a cheap bound on those positions
#: (space.reachable_bound: 2,832, 16,128 and 133,056 there) is at most this many, so a
#: table is never built only to be given up; the build, a few microseconds a position,
#: stops past this many rows ...
CHAIN_MAX_POSITIONS = 1_000_000
#: ``chain`` is worth its table for a run of ``battles`` battles when the table's cheap
#: bound on positions is at most this many per battle. Building it costs about 3
#: microseconds a position, and the chain kernel saves 10 to 20 microseconds a battle
#: over ``skip`` (knights_vs_pikemen with 4 to 12 men added, one thread, AMD EPYC): the
#: table of 180,000 positions of "+8 swordsman" takes 0.65 s, 40,000 battles' savings.
CHAIN_BATTLES_PER_POSITION = 4
#: ... and the table (32 bytes per position and 16 per change it can make) is kept when
#: it is at most this many bytes.
CHAIN_MAX_BYTES = 64 << 20


@dataclass
class OlympiaArrays:
    groups: np.ndarray  # int64 [G, N_GROUP_FIELDS]
    survive: np.ndarray  # float64 [G]
    sides: np.ndarray  # int64 [2, N_SIDE_FIELDS]
    order: int
    casualty_names: list[str]
    start_value: tuple[int, int]
    #: Where each group comes from: (side, unit, index of its men in the unit, -1 for
    #: the noble), or (side, -1, index of the engine kind in the side's engines).
    origins: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def n_columns(self) -> int:
        return k.O_CASUALTIES + len(self.casualty_names)


@dataclass
class GroupTable:
    """The group table being built, side by side in stack order."""

    rows: list[list[int]] = field(default_factory=list)
    survive: list[float] = field(default_factory=list)
    side: int = 0
    capacity: int = 0  # men the side's structure protects
    placed: int = 0  # men and nobles so far in the side's stack order
    start: int = 0  # the side's starting value

    def begin_side(self, side: int, capacity: int) -> None:
        self.side, self.capacity, self.placed, self.start = side, capacity, 0, 0

    def add(
        self,
        kind: int,
        unit: int,
        row: int,
        count: int,
        ratings: Ratings,
        column: int = -1,
        health: int = 0,
        noncombatant: bool = False,
        leader: bool = False,
        chance_to_survive: float = 0.0,
    ) -> None:
        value = 0 if kind == k.ENGINE else ratings.value
        self.start += value * count
        # Split a group where the structure's capacity ends: the first N men are inside.
        inside = 0 if kind == k.ENGINE else max(0, min(count, self.capacity - self.placed))
        if kind != k.ENGINE:
            self.placed += count
        for part, protected in ((inside, 1), (count - inside, 0)):
            if part > 0:
                self.rows.append(
                    [
                        self.side,
                        unit,
                        row,
                        part,
                        kind,
                        ratings.strike,
                        ratings.missile,
                        ratings.defense,
                        value,
                        protected,
                        column,
                        health,
                        int(noncombatant),
                        int(leader),
                    ]
                )
                self.survive.append(chance_to_survive)


def compile_battle(battle: Battle) -> OlympiaArrays:
    table = GroupTable()
    origins: list[tuple[int, int, int]] = []

    def came_from(side: int, unit: int, index: int) -> None:
        origins.extend([(side, unit, index)] * (len(table.rows) - len(origins)))

    casualty_names: list[str] = []
    side_table = np.zeros((2, k.N_SIDE_FIELDS), np.int64)
    unit_base = 0
    for s, side in enumerate(battle.sides):
        side_name = SIDES[s]
        table.begin_side(s, battle.capacity[side.structure.kind] if side.structure else 0)
        for u, unit in enumerate(side.units):
            noble = weathered(
                Ratings(
                    battle.noble.attack + unit.noble.attack_bonus,
                    battle.noble.defense + unit.noble.defense_bonus,
                    battle.noble.missile + unit.noble.missile_bonus,
                ),
                battle.weather,
                rain_grounded=False,
            )
            table.add(
                k.NOBLE,
                unit_base + u,
                unit.behind,
                1,
                noble,
                health=unit.noble.health,
                leader=u == 0,
            )
            came_from(s, u, -1)
            for j, men in enumerate(unit.men):
                if men.count == 0:
                    continue
                ftype = battle.fighters[men.type]
                name = f"casualties.{side_name}.{men.type}"
                if name not in casualty_names:
                    casualty_names.append(name)
                table.add(
                    k.MAN,
                    unit_base + u,
                    men.behind,
                    men.count,
                    ftype.ratings(battle.terrain, battle.weather),
                    column=k.O_CASUALTIES + casualty_names.index(name),
                    noncombatant=ftype.noncombatant,
                    chance_to_survive=ftype.survive,
                )
                came_from(s, u, j)
        for e, (name, count) in enumerate(side.engines):
            table.add(k.ENGINE, unit_base, 0, count, battle.engines[name].ratings)
            came_from(s, -1, e)
        start = table.start
        side_table[s, k.S_START] = start
        side_table[s, k.S_BREAK] = side.break_point
        side_table[s, k.S_LEADER_UNIT] = unit_base
        if side.structure is not None:
            side_table[s, k.S_HAS_STRUCTURE] = 1
            side_table[s, k.S_STRUCTURE_DEF] = side.structure.defense
            side_table[s, k.S_STRUCTURE_DMG] = side.structure.damage
        unit_base += len(side.units)
    return OlympiaArrays(
        groups=np.array(table.rows, np.int64).reshape(-1, k.N_GROUP_FIELDS),
        survive=np.array(table.survive, np.float64),
        sides=side_table,
        order=k.RANDOM if battle.strike_order == "random" else k.ALTERNATING,
        casualty_names=casualty_names,
        start_value=(int(side_table[0, k.S_START]), int(side_table[1, k.S_START])),
        origins=origins,
    )


def encode_stops(battle: Battle, arrays: OlympiaArrays) -> np.ndarray:
    """Both sides' stop rules as the kernels take them (kernels/stops.py's rows): ``gone``
    as the type's casualty column, ``after`` counted from the strikes the kernel fights
    (a battle in progress's ``from_step`` taken off; an ``after`` already passed holds
    after the first strike: no side withdraws before the battle goes on)."""
    rows = []
    for s, side in enumerate(battle.sides):

        def column(name: str, side_name: str = SIDES[s]) -> int:
            return k.O_CASUALTIES + arrays.casualty_names.index(f"casualties.{side_name}.{name}")

        row = battle.retreat[s].encode(side.men, column)
        if row[STOP_AFTER] > 0:
            row[STOP_AFTER] = max(int(row[STOP_AFTER]) - battle.from_step, 1)
        rows.append(row)
    return np.array(rows, np.int64)


def choose_kernel(wanted: str = "auto", table: ChainTable | None = None) -> str:
    """The kernel to run: ``wanted`` unless it is ``auto``; then ``chain`` when the
    battle's chain ``table`` fits the budget, ``skip`` beyond it."""
    if wanted != "auto":
        return wanted
    return "chain" if table is not None else AUTO_KERNEL


@dataclass(frozen=True)
class ChainTable:
    """A battle's chain as the chain kernel walks it (kernels/olympia/chain.py)."""

    space: Layout
    code: np.ndarray
    ends: np.ndarray
    scale: np.ndarray
    p_change: np.ndarray
    cum: np.ndarray
    to: np.ndarray
    width: int
    once: int

    @property
    def nbytes(self) -> int:
        parts = (self.code, self.ends, self.scale, self.p_change, self.cum, self.to)
        return sum(a.nbytes for a in parts)


def chain_refusal(arrays: OlympiaArrays) -> str | None:
    """Why the chain kernel cannot run this battle within its budget, or None."""
    if arrays.order != k.RANDOM:
        return "the chain kernel runs the random strike order only"
    if positions(arrays) >= 1 << 62:
        return "its positions do not fit 64-bit indices"
    bound = reachable_bound(arrays)
    if bound > CHAIN_MAX_POSITIONS:
        return (
            f"it can reach up to {bound:,} positions, over the chain kernel's limit of "
            f"{CHAIN_MAX_POSITIONS:,}"
        )
    return None


def build_chain(arrays: OlympiaArrays) -> ChainTable | None:
    """The battle's chain table, or None when it is over budget (chain_refusal, or a
    table of more than CHAIN_MAX_BYTES)."""
    if chain_refusal(arrays) is not None:
        return None
    space = layout(arrays)
    olympia_chain.walk_aside()
    code, ends, scale, p_change, cum, to, width, once = olympia_chain.chain_table(
        arrays.groups,
        arrays.survive,
        arrays.sides,
        space.radix,
        space.stride,
        space.sradix,
        space.sstride,
        CHAIN_MAX_POSITIONS,
    )
    table = ChainTable(space, code, ends, scale, p_change, cum, to, int(width), int(once))
    return table if table.width > 0 and table.nbytes <= CHAIN_MAX_BYTES else None


def side_bounds(groups: np.ndarray) -> dict[str, tuple[int | None, int | None]]:
    """The most each side's extras can count, from a group table of olympia's layout:
    nobles wounded, killed or captured at most the side's nobles, engines lost at most
    its engines, structures' defense and damage never below 0."""
    bounds: dict[str, tuple[int | None, int | None]] = {}
    # As plain numbers: a table has a few rows, and masks of arrays that small cost
    # more than the rows (a fifth of preparing a price search's cells).
    rows = groups[:, [k.G_SIDE, k.G_KIND, k.G_COUNT]].tolist()
    for s, side_name in enumerate(SIDES):
        for kind, extras in (
            (k.NOBLE, ("nobles_wounded", "nobles_killed", "nobles_captured")),
            (k.ENGINE, ("engines_lost",)),
        ):
            most = sum(count for side, of, count in rows if side == s and of == kind)
            bounds.update({f"{extra}.{side_name}": (0, most) for extra in extras})
        for extra in ("structure_defense", "structure_damage"):
            bounds[f"{extra}.{side_name}"] = (0, None)
    return bounds


#: Outcome columns and flags by what they depend on (OlympiaPrepared._columns_and_flags).
_COLUMNS: dict[tuple[Any, ...], tuple[dict[str, int], frozenset[str]]] = {}


class OlympiaPrepared(StackedRuns, Prepared):
    #: Whether :meth:`run` gives each group's state at the end (``waves.LEFT_PREFIX``
    #: columns, read by :meth:`survivors`): in the wave chain only (:meth:`for_waves`).
    keeps_left = False

    def __init__(self, battle: Battle, arrays: OlympiaArrays | None = None) -> None:
        """``arrays``: the battle's, where already made (fill_in.py), else compiled."""
        self.battle = battle
        self.arrays = compile_battle(battle) if arrays is None else arrays
        # ``auto`` is settled on first use (kernel below): it builds the chain's table.
        self._kernel = None if battle.kernel == "auto" else battle.kernel
        self._chain: ChainTable | None = None
        self._chain_built = False
        #: The chain table's rows as battles there stand (count_through), made on first use.
        self._positions: np.ndarray | None = None
        #: The kernel's recording kept between calls of :meth:`record_columns`.
        self._recording: np.ndarray | None = None
        #: A table shared with other combinations of a scenario with ranges, and this
        #: one's params for its walk (shared.py, :meth:`share_chain`).
        self._shared: tuple[SharedChain, np.ndarray] | None = None
        self.notes = battle.notes
        self.unfolds = frozenset({BY_STEP, STOP_RULES, FROM_STEP, WAVES})
        self.stop_rules = battle.retreat
        self.from_step = battle.from_step
        self.columns, self.flags = self._columns_and_flags()

    # Made on first use, as the chain's table is: a scenario with ranges prepares each
    # of its combinations, and most are only walked (these were a sixth of preparing).
    @functools.cached_property
    def stops(self) -> np.ndarray:
        """Both sides' rules as the kernels take them (kernels/stops.py)."""
        return encode_stops(self.battle, self.arrays)

    @functools.cached_property
    def column_bounds(self) -> Mapping[str, tuple[int | None, int | None]]:  # type: ignore[override]
        brought: dict[str, int] = {}
        for side, side_name in zip(self.battle.sides, SIDES, strict=True):
            for unit in side.units:
                for men in unit.men:
                    name = f"casualties.{side_name}.{men.type}"
                    brought[name] = brought.get(name, 0) + men.count
        bounds: dict[str, tuple[int | None, int | None]] = {
            name: (0, count) for name, count in brought.items()
        }
        bounds.update(side_bounds(self.arrays.groups))
        return bounds

    @property
    def has_rules(self) -> bool:
        """Whether either side has a stop rule (then only RULE_KERNELS run it)."""
        return not all(rule.never for rule in self.stop_rules)

    def memory_bytes(self, battles: int) -> int:
        """:meth:`Prepared.memory_bytes`, and in the wave chain each group's state at the
        end (a column a group, :attr:`keeps_left`)."""
        kept = 8 * len(self.arrays.groups) * battles if self.keeps_left else 0
        return super().memory_bytes(battles) + kept

    def table_bytes(self) -> int:
        """The chain kernel's table, when it may run: at most CHAIN_MAX_BYTES."""
        return CHAIN_MAX_BYTES if self.battle.kernel in ("auto", "chain") else 0

    def sharing(self, checked: Sequence[StackedRuns]) -> Callable[[StackedRuns], bool]:
        """Combinations that differ only in counts and break points walk one chain
        table (shared.py)."""
        return Sharing(checked, build_chain)  # type: ignore[arg-type,return-value]

    def share_chain(self, chain: SharedChain, record: np.ndarray) -> None:
        """Walk ``chain``'s table from now on, as its ``record`` says (a combination of a
        scenario with ranges: shared.py), on the chain kernel's numbers: each battle
        that kernel's own."""
        self._shared = (chain, record)
        self._kernel = "chain"

    def stacks(self) -> bool:
        """Whether its battles run on a stacked kernel: a shared chain table's walk
        (shared.py), or kernels/olympia/stacked.py's, for a plain run on ``skip`` (no
        stop rule, no group's state kept) of armies too small for deaths in batches.
        Any other runs by a call of its own."""
        if self._shared is not None:
            return True
        return (
            self.kernel == "skip"
            and not self.has_rules
            and not self.keeps_left
            and olympia_skip.batch_rows_for(self.arrays.groups) is None
        )

    def stacked_table_bytes(self) -> int:
        """None: the stacked kernel builds no table for a scenario (a block of battles
        sets up its scenario's opening position in its own scratch)."""
        return 0

    def stack_key(self) -> tuple[Any, ...]:
        """Its shared table's walk, or the skip kernel's stacked one."""
        return (type(self), None if self._shared is None else self._shared[0])

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        """Its tables as kernels/olympia/stacked.py takes them: the skip kernel's tables
        and what it computes from them once a call (``keep``, ``inv``, ``limits``); on a
        shared table, its record (kernels/olympia/shared_chain.py)."""
        a = self.arrays
        if self._shared is not None:
            return (self._shared[1],)
        keep = 1.0 - a.survive
        inv = np.zeros(int(a.groups[:, k.G_COUNT].sum()) + 2)
        inv[1:] = 1.0 / np.arange(1, len(inv))
        limits = a.sides[:, k.S_START] * a.sides[:, k.S_BREAK]
        params = np.array([a.order, self.from_step, *limits], np.int64)  # stacked.P_ORDER ..
        return (a.groups, a.survive, keep, inv, a.sides, params)

    def stack_sizes(self) -> tuple[int, ...]:
        return (self.arrays.n_columns,)

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        if self._shared is not None:
            return shared_chain.shared_stacked, shared_chain.run_by_address()
        return olympia_stacked.skip_stacked, olympia_stacked.run_by_address()

    def stacked_shared(self) -> tuple[Any, ...]:
        """On a shared table: the family's groups and sides, the table's digits and its
        rows (kernels/olympia/shared_chain.py's ``shared_stacked``)."""
        if self._shared is None:
            return ()
        chain = self._shared[0]
        t, space = chain.table, chain.space
        return (
            chain.groups,
            chain.sides,
            (space.radix, space.stride, space.sradix, space.sstride),
            (t.code, t.scale, t.cum, t.to, chain.verdict, chain.going),
        )

    def _columns_and_flags(self) -> tuple[dict[str, int], frozenset[str]]:
        """:meth:`_columns` and the flags among them, made once for the battles that
        share what they depend on (a scenario with ranges prepares hundreds)."""
        key = (
            tuple(side.structure is None for side in self.battle.sides),
            tuple(not side.engines for side in self.battle.sides),
            tuple(self.arrays.casualty_names),
        )
        known = _COLUMNS.get(key)
        if known is None:
            columns = self._columns()
            flags = frozenset(
                c for c in columns if c.startswith(("leader_", "structure_collapsed"))
            )
            if len(_COLUMNS) >= 1024:
                _COLUMNS.clear()
            known = _COLUMNS[key] = (columns, flags)
        return dict(known[0]), known[1]

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

    @property
    def kernel(self) -> str:
        """The kernel that runs this battle (``auto`` settled)."""
        if self._kernel is None:
            if self.has_rules:
                self._kernel = RULE_KERNELS[0]
            else:
                self._kernel = choose_kernel("auto", self.chain_table())
        return self._kernel

    @kernel.setter
    def kernel(self, name: str) -> None:
        self._kernel = name

    def chain_table(self) -> ChainTable | None:
        """The chain kernel's table, built on first use and kept (None: over budget)."""
        if not self._chain_built:
            self._chain = build_chain(self.arrays)
            self._chain_built = True
        return self._chain

    def kernel_choices(self, battles: int | None = None) -> tuple[str, ...]:
        """The kernels that can run this battle, the one it runs first: a kernel the
        scenario names, or after ``auto``'s choice the others that can run it, faster
        first (``chain`` only where its table fits); the reference kernel last. With
        ``battles``, ``chain`` only where its table is worth building for that many
        battles (CHAIN_BATTLES_PER_POSITION), so that a group of many scenarios of a few
        thousand battles each builds no table it would not repay."""
        if self.battle.kernel != "auto":
            return tuple(dict.fromkeys((self.battle.kernel, REFERENCE_KERNEL)))
        if self.has_rules:
            return RULE_KERNELS
        if battles is not None and not self._chain_built and not self._chain_pays(battles):
            return (AUTO_KERNEL, REFERENCE_KERNEL)
        able = ("chain", AUTO_KERNEL) if self.chain_table() is not None else (AUTO_KERNEL,)
        return tuple(dict.fromkeys((self.kernel, *able, REFERENCE_KERNEL)))

    def choices_before_building(
        self, battles: int | None = None
    ) -> tuple[tuple[str, ...], frozenset[str]]:
        """:meth:`kernel_choices` with the chain table not built yet: ``chain`` among them,
        and first unless a kernel is settled, only if its table fits the budget."""
        if self._chain_built or self.battle.kernel != "auto" or self.has_rules:
            return self.kernel_choices(battles), frozenset()
        if battles is not None and not self._chain_pays(battles):
            return (AUTO_KERNEL, REFERENCE_KERNEL), frozenset()  # as kernel_choices says
        if battles is None and chain_refusal(self.arrays) is not None:
            return self.kernel_choices(), frozenset()  # no table to build
        may = (self._kernel or "chain", "chain", AUTO_KERNEL, REFERENCE_KERNEL)
        return tuple(dict.fromkeys(may)), frozenset({"chain"})

    def _chain_pays(self, battles: int) -> bool:
        """Whether the chain table would repay its building over ``battles`` battles."""
        if chain_refusal(self.arrays) is not None:
            return False
        return reachable_bound(self.arrays) <= battles * CHAIN_BATTLES_PER_POSITION

    def use_kernel(self, name: str) -> None:
        """Run ``name`` from now on (a group's common kernel: Prepared.use_kernel)."""
        kernel_run(name)  # an unknown name is an error, never another kernel
        if self.has_rules and name not in RULE_KERNELS:
            raise BattleOddsError(f"kernel {name!r} does not run stop rules")
        if self._shared is not None and name != "chain":
            self._shared = None  # its own kernel from now on
        if name == "chain" and self._shared is None and self.chain_table() is None:
            raise BattleOddsError(
                f'kernel "chain": {chain_refusal(self.arrays) or "its table is over budget"}'
            )
        self.kernel = name

    def run_matrix(
        self, seed: int, first: int, count: int, kernel: str | None = None
    ) -> np.ndarray:
        """The kernel's rows; with :attr:`keeps_left`, each group's state at the end
        after the outcome's columns (kernels/olympia/strike.py's ``left_at``)."""
        width = self.arrays.n_columns + (len(self.arrays.groups) if self.keeps_left else 0)
        out = np.zeros((count, width), np.int64)
        if not count:
            return out
        if self._shared is not None and kernel is None and not self.keeps_left:
            # On its shared table, as a stacked call runs it (from_step added there).
            rows = np.zeros((count, width + 1), np.int64)
            numbers = np.arange(first, first + count, dtype=np.int64)
            seeds = np.full(count, seed, np.uint64)
            self.run_stacked(stack([self]), np.zeros(count, np.int64), seeds, numbers, rows)
            return np.ascontiguousarray(rows[:, :width])
        rec = np.zeros((count, 0, width), np.int64)
        kernel_run(kernel or self.kernel)(self, np.uint64(seed), first, out, NONE_ASKED, rec)
        if self.from_step:
            out[:, k.O_STEPS] += self.from_step
        return out

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        out = self.run_matrix(seed, first, count)
        places = self.columns
        if self.keeps_left:
            at = self.arrays.n_columns
            left = {f"{waves.LEFT_PREFIX}{g}": at + g for g in range(len(self.arrays.groups))}
            places = {**places, **left}
        return Outcomes(out, places)

    def for_waves(self, later: bool = False) -> OlympiaPrepared:
        """This battle as the wave chain runs it: :meth:`run` gives each group's state
        at the end too (the same battles, the same numbers). A later wave's fight
        against what an earlier one left runs ``skip`` where the scenario says ``auto``:
        its few battles against each army left would not repay the chain's table
        (building one per army left was a fifth of a three-wave run)."""
        kept = copy.copy(self)
        kept._recording = None  # never shared between two prepared battles
        kept.keeps_left = True
        if later and self._kernel is None and not self.has_rules:
            kept._kernel = AUTO_KERNEL
        return kept

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        side_model = self.battle.sides[SIDES.index(side)]
        return waves.survivors(side_model, self.arrays.origins, rows, side, data)

    @property
    def recording_kernel(self) -> str:
        """The kernel that records the state after a strike (``run_through``): the one
        that runs the battle (each records in one pass; stop rules run on ``skip`` or
        ``strike``, which record them too)."""
        return self.kernel

    def state_columns(self, steps: Sequence[int]) -> dict[str, np.ndarray] | None:
        """The chain's table rows as battles there stand (and one for a battle decided
        by a broken opening), when the battle runs on the chain kernel and its counts,
        a row a strike, are at most COUNTED_MOST (else None: ``run_through``'s rows are
        counted)."""
        if self.kernel != "chain" or not len(steps):
            return None
        table = self.chain_table()
        if table is None or (len(table.code) + 1) * len(steps) > COUNTED_MOST:
            return None
        if self._positions is None:
            space = table.space
            self._positions = olympia_chain.position_table(
                self.arrays.groups, self.arrays.sides, space.radix, space.stride,
                space.sradix, space.sstride, table.code, table.ends, np.int64(table.once),
                np.int64(self.arrays.n_columns),
            )  # fmt: skip
        counted = [name for name in self.columns if name.startswith("casualties.")]
        return {name: self._positions[:, self.columns[name]] for name in ("winner", *counted)}

    def count_through(
        self, seed: int, first: int, count: int, steps: Sequence[int], counts: np.ndarray
    ) -> None:
        """The battles walked on the chain kernel to their ends, as ``run_through``
        walks them, each one's table row after each strike of ``steps`` counted into
        ``counts`` (tests/test_olympia_chain_unfolding.py: the rows' counts)."""
        if not count or not len(steps):
            return
        asked = np.asarray(steps, np.int64) - self.from_step
        out = np.empty((count, 0), np.int64)  # a battle counted writes no outcome row
        empty = np.empty((0, 0, 0), np.int64)
        # The walk counts into a part of its own on each thread (added up here after).
        parts = olympia_chain.count_parts(count)
        held = counts[np.newaxis] if parts == 1 else np.zeros((parts, *counts.shape), np.int64)
        _walk_chain(self, np.uint64(seed), first, out, asked, held, empty)
        if parts > 1:
            counts += held.sum(axis=0)

    def run_through(self, seed: int, first: int, count: int, steps: Sequence[int]) -> Recorded:
        """The state after each strike of ``steps`` in one pass of each battle (the
        kernel records the row as it passes each; a battle decided earlier has its
        final row there), battles stopped once every step is recorded."""
        width = self.arrays.n_columns
        asked = np.asarray(steps, np.int64) - self.from_step
        # Every row of ``rec`` is written (recorded on the way, or the battle's final
        # row), so it needs no zeros. The columns are views of it, step by battle: a
        # copy of each into its own array cost the caller more than the kernel's pass
        # (knights_vs_pikemen's 100 strikes: 0.25 s against 0.16 s for 20,000 battles).
        # The caller sizes its blocks of battles by the rows they record.
        out = np.zeros((count, width), np.int64)
        rec = np.empty((count, len(asked), width), np.int64)
        if count and len(asked):
            kernel_run(self.recording_kernel)(self, np.uint64(seed), first, out, asked, rec)
            if self.from_step:
                rec[:, :, k.O_STEPS] += self.from_step
        return Recorded(rec, self.columns)

    def record_columns(
        self, seed: int, first: int, count: int, steps: Sequence[int], names: Sequence[str]
    ) -> np.ndarray:
        """``run_through``'s columns ``names`` in one array ``(len(steps), count,
        len(names))``, gathered in one pass over the kernel's recording, which is kept
        for the next call of the same size: a block of castle_siege's battles records
        400 MB, and reading each column of it apart (strided) took longer than the
        gather, a fresh array for each call a tenth of the kernel's time in page faults
        (issue 52's 200,000 paths)."""
        width = self.arrays.n_columns
        asked = np.asarray(steps, np.int64) - self.from_step
        shape = (count, len(asked), width)
        rec = self._recording
        if rec is None or rec.shape != shape:
            rec = self._recording = np.empty(shape, np.int64)
        out = np.zeros((count, width), np.int64)
        if count and len(asked):
            kernel_run(self.recording_kernel)(self, np.uint64(seed), first, out, asked, rec)
        got = np.take(rec, [self.columns[name] for name in names], axis=2).transpose(1, 0, 2)
        if self.from_step and "steps" in names:
            got[:, :, list(names).index("steps")] += self.from_step
        return got

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        """The battles stopped after strike ``step`` when undecided then (``run_through``
        of that one step, the same battles)."""
        through = self.run_through(seed, first, count, [step])
        return {name: rows[0] for name, rows in through.items()}


#: How a kernel runs battles: ``run(prepared, seed, first, out, asked, rec)`` fills
#: ``out``'s rows and, for each strike of ``asked`` (counted from the kernel's first
#: strike), ``rec``'s (kernels/olympia/strike.py's ``strike_battles``).
KernelRun = Callable[[OlympiaPrepared, np.uint64, int, np.ndarray, np.ndarray, np.ndarray], None]


def _run_strike(
    prepared: OlympiaPrepared,
    seed: np.uint64,
    first: int,
    out: np.ndarray,
    asked: np.ndarray,
    rec: np.ndarray,
) -> None:
    a = prepared.arrays
    strike.strike_battles(
        a.groups, a.survive, a.sides, a.order, seed, first, out, prepared.stops, asked, rec
    )


def _run_skip(
    prepared: OlympiaPrepared,
    seed: np.uint64,
    first: int,
    out: np.ndarray,
    asked: np.ndarray,
    rec: np.ndarray,
) -> None:
    a = prepared.arrays
    # Deaths in batches jump over the changes a stop rule or a recorded step looks at.
    # A plain run's kernel is compiled without the rules and steps (``unfolding`` None).
    plain = not len(asked) and not prepared.has_rules
    rows = olympia_skip.batch_rows_for(a.groups) if plain else None
    unfolding = None if plain else np.int64(1)
    olympia_skip.skip_battles(
        a.groups,
        a.survive,
        a.sides,
        a.order,
        seed,
        first,
        out,
        prepared.stops,
        asked,
        rec,
        rows,
        unfolding,
    )


def _run_chain(
    prepared: OlympiaPrepared,
    seed: np.uint64,
    first: int,
    out: np.ndarray,
    asked: np.ndarray,
    rec: np.ndarray,
) -> None:
    _walk_chain(prepared, seed, first, out, asked, NOT_COUNTED, rec)


def _walk_chain(
    prepared: OlympiaPrepared,
    seed: np.uint64,
    first: int,
    out: np.ndarray,
    asked: np.ndarray,
    counts: np.ndarray,
    rec: np.ndarray,
) -> None:
    """The chain kernel's battles into ``out``, each one counted by its table row after
    each strike of ``asked`` into ``counts`` where it has room (``(parts, rows,
    strikes)``, kernels/olympia/chain.py's ``chain_battles``) and, where ``rec`` has
    room, its whole row then: the plain walk where nothing is asked, the recording one
    else."""
    if prepared.has_rules:
        raise BattleOddsError("the chain kernel does not run stop rules")
    a = prepared.arrays
    table = prepared.chain_table()
    if table is None:
        raise BattleOddsError(
            f'kernel = "chain": {chain_refusal(a) or "its table is over budget"}; '
            'use "skip" or "auto"'
        )
    space = table.space
    olympia_chain.walk_chain(
        len(asked) > 0,
        a.groups,
        a.sides,
        (space.radix, space.stride, space.sradix, space.sstride),
        (table.code, table.ends, table.scale, table.cum, table.to),
        table.once,
        float(table.p_change[0]),
        seed,
        first,
        out,
        asked,
        counts,
        rec if len(asked) else np.empty((0, 0, out.shape[1]), np.int64),
    )


#: The kernel table: what runs each name of keys.KERNELS (the one list of the names).
KERNEL_RUNS: dict[str, KernelRun] = {"strike": _run_strike, "skip": _run_skip, "chain": _run_chain}
if tuple(KERNEL_RUNS) != KERNELS:  # pragma: no cover - a table out of step with the names
    raise ImportError(f"olympia's kernel table {tuple(KERNEL_RUNS)} is not keys.KERNELS {KERNELS}")


def kernel_run(name: str) -> KernelRun:
    """What runs the kernel ``name``; an unknown name is an error naming the kernels."""
    if name not in KERNEL_RUNS:
        raise BattleOddsError(
            f"kernel {name!r}: expected one of {', '.join(KERNELS)}"
            + did_you_mean(name, KERNELS, False)
        )
    return KERNEL_RUNS[name]
