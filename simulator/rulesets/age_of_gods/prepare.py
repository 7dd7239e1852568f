"""Age of Gods model -> the group table of kernels/age_of_gods.py (Olympia's layout
with more columns)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels import age_of_gods as k
from kernels import age_of_gods_stacked
from kernels.olympia import layout as ol
from kernels.stops import N_STOP

from ..base import BY_STEP, FROM_STEP, STOP_RULES, WAVES, Prepared
from ..olympia.model import Men, Side, Unit
from ..olympia.prepare import side_bounds
from ..olympia.waves import LEFT_PREFIX
from ..outcomes import Outcomes, Recorded
from ..stacked import StackedRuns
from . import waves
from .keys import RANKS
from .model import (
    CONTROL_LIMIT,
    CONTROL_LIMIT_DEFENDING_EXTRA,
    GARRISON_CONTROL_LIMIT,
    SIDES,
    UNLIMITED,
    Battle,
    Leader,
    noble_in_battle,
)


def engine_order(battle: Battle, men: list[Men]) -> list[int]:
    """The engine's list order of a noble's men (combat.c, combat_comp): highest attack
    + defense + missile of the type's own ratings first, then highest attack + missile;
    ties keep stack order."""

    def key(i: int) -> tuple[int, int]:
        r = battle.fighters[men[i].type].land
        return (-(r.attack + r.defense + r.missile), -(r.attack + r.missile))

    return sorted(range(len(men)), key=key)


def control_limit(battle: Battle, side: int, leader: Leader) -> tuple[int, int]:
    """The men and the beasts a unit's leader fields under control limits. The text's
    rule: CONTROL_LIMIT men and beasts together (more when defending). The engine's
    (combat.c, calc_man_limit and calc_beast_limit): a noble 10 + his Control-battle
    experience + his rank's bonus (+20 defending) men and his Use-beasts experience in
    beasts; a garrison 20 (+20) men and no beasts; a monster stack no limit."""
    defending = side == 1
    if battle.control_rules == "text":
        return CONTROL_LIMIT + (CONTROL_LIMIT_DEFENDING_EXTRA if defending else 0), -1
    if leader.kind == "beast":
        return UNLIMITED, UNLIMITED
    extra = CONTROL_LIMIT_DEFENDING_EXTRA if defending else 0
    if leader.kind == "garrison":
        return GARRISON_CONTROL_LIMIT + extra, 0
    men = CONTROL_LIMIT + leader.control_battle + RANKS[leader.rank] + extra
    return men, leader.use_beasts


def fielded(battle: Battle, side: int, unit: Unit, leader: Leader | None = None) -> list[Men]:
    """The men of ``unit`` who take part (:func:`fielded_at`)."""
    return [men for _, men in fielded_at(battle, side, unit, leader)]


def fielded_at(
    battle: Battle, side: int, unit: Unit, leader: Leader | None = None
) -> list[tuple[int, Men]]:
    """The men of ``unit`` who take part. Under control limits a leader fields at most
    his limit (:func:`control_limit`): under the text's rule strongest first by attack +
    defense + missile in this battle, ties in stack order; under the engine's in its
    list order, beasts counted apart. The men come in stack order, or in the engine's
    list order when a rule of the engine's depends on it (its control limits, or its
    structures, whose bonus covers the first men of the list), each with its index in
    the unit's list of men."""
    leader = leader or Leader()
    written = [j for j, m in enumerate(unit.men) if m.count > 0]
    men = [unit.men[j] for j in written]
    engine_control = battle.control_limits and battle.control_rules == "engine"
    listed = (
        engine_order(battle, men)
        if engine_control or battle.structure_rules == "engine"
        else list(range(len(men)))
    )
    kept = {i: m.count for i, m in enumerate(men)}
    if battle.control_limits:
        limit, beasts = control_limit(battle, side, leader)
        if beasts < 0:  # the text's rule: one limit for all, strongest first

            def strength(i: int) -> int:
                r = battle.fighter_ratings(battle.fighters[men[i].type])
                return r.attack + r.defense + r.missile

            for i in sorted(listed, key=lambda i: -strength(i)):
                kept[i] = min(men[i].count, limit)
                limit -= kept[i]
        else:
            for i in listed:
                if battle.fighters[men[i].type].animal:
                    kept[i] = min(men[i].count, beasts)
                    beasts -= kept[i]
                else:
                    kept[i] = min(men[i].count, limit)
                    limit -= kept[i]
    return [(written[i], Men(men[i].type, kept[i], men[i].behind)) for i in listed if kept[i] > 0]


@dataclass
class AgeOfGodsArrays:
    groups: np.ndarray  # int64 [G, k.N_GROUP_FIELDS]
    survive: np.ndarray  # float64 [G]
    flee: np.ndarray  # float64 [G]
    sides: np.ndarray  # int64 [2, k.N_SIDE_FIELDS]
    columns: list[str]  # casualty and fled columns, from k.O_COLUMNS on
    left_out: tuple[int, int]  # men kept out by control limits, per side
    #: Where each group comes from: (side, unit in Battle.units_of order, index in the
    #: unit's men; -1: its noble), as OlympiaArrays.origins.
    origins: list[tuple[int, int, int]]
    #: Per side, per unit (units_of order): the men of each entry control limits keep out.
    kept_out: tuple[list[list[int]], list[list[int]]]


#: A group's row: the column of each of its fields.
GROUP_FIELDS = (
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
    (k.G_ATTACK_PCT, "attack_pct"),
    (k.G_DEFENSE_PCT, "defense_pct"),
    (k.G_INSIDE, "inside"),
    (k.G_ARRIVES, "arrives"),
)


def compile_battle(battle: Battle) -> AgeOfGodsArrays:
    rows: list[list[int]] = []
    survive: list[float] = []
    flee: list[float] = []
    columns: list[str] = []
    sides = np.zeros((2, k.N_SIDE_FIELDS), np.int64)
    left_out = [0, 0]
    origins: list[tuple[int, int, int]] = []
    kept_out: tuple[list[list[int]], list[list[int]]] = ([], [])

    def column(name: str) -> int:
        if name not in columns:
            columns.append(name)
        return k.O_COLUMNS + columns.index(name)

    unit_base = 0
    for s, side in enumerate(battle.sides):
        quarters = battle.defender_quarters if s == 1 else k.QUARTERS
        engine_structure = battle.structure_rules == "engine" and side.structure is not None
        room = battle.capacity[side.structure.kind] if side.structure else 0
        start = 0
        units = battle.units_of(s)
        for u, (unit, leader, arrives) in enumerate(units):
            nb = noble_in_battle(battle, unit.noble, leader)
            tactics = {
                "attack_pct": leader.attack_percent,
                "defense_pct": leader.defense_percent,
                "arrives": arrives,
                # Allies come from outside: never inside the side's structure.
                "inside": int(side.structure is not None and arrives == 0),
            }
            # (fields, count, survive, flee, index in the unit's men; -1: the noble): the
            # noble first, then his men, in list order
            entries: list[tuple[dict[str, int], int, float, float, int]] = [
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
                        **tactics,
                    },
                    1,
                    0.0,
                    0.0,
                    -1,
                )
            ]
            men = fielded_at(battle, s, unit, leader)
            out = [m.count for m in unit.men]
            for j, m in men:
                out[j] -= m.count
            kept_out[s].append(out)
            left_out[s] += sum(out)
            for j, m in men:
                f = battle.fighters[m.type]
                r = battle.fighter_ratings(f)
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
                            **tactics,
                        },
                        m.count,
                        f.survive,
                        f.flee,
                        j,
                    )
                )
            for fields, count, chance_to_survive, chance_to_flee, j in entries:
                if arrives <= battle.from_step:  # on the field when the battle (re)starts
                    start += fields["value"] * count
                # Under the text's structure rules the first `room` men and nobles of the
                # side (stack order) are inside, for good; under the engine's the bonus
                # goes to whoever is among the first men targeted (the kernel decides).
                inside = 0 if engine_structure or arrives else min(count, room)
                room -= inside
                band = len(rows)
                for part, protected in ((inside, 1), (count - inside, 0)):
                    if part == 0:
                        continue
                    row = [0] * k.N_GROUP_FIELDS
                    for index, key in GROUP_FIELDS:
                        row[index] = fields.get(key, 0)
                    row[ol.G_SIDE], row[ol.G_UNIT], row[ol.G_COUNT] = s, unit_base + u, part
                    row[ol.G_PROTECTED], row[k.G_BAND] = protected, band
                    rows.append(row)
                    origins.append((s, u, j))
                    survive.append(chance_to_survive)
                    flee.append(chance_to_flee)
        sides[s, ol.S_START] = start
        sides[s, ol.S_BREAK] = side.break_point
        sides[s, ol.S_LEADER_UNIT] = unit_base
        sides[s, k.S_QUARTERS] = quarters
        text_terrain = battle.terrain_rules == "text"
        sides[s, k.S_ATTACK_QUARTERS] = quarters if text_terrain else k.QUARTERS
        sides[s, k.S_SPECIAL_TERRAIN] = int(text_terrain)
        covers = battle.capacity[side.structure.kind] if side.structure is not None else 0
        sides[s, k.S_COVERS] = covers if engine_structure else 0
        sides[s, k.S_CERTAIN_CAPTURE] = int(battle.prisoner_rules == "engine")
        sides[s, k.S_NO_PRISONERS] = int(battle.leaders[s][0].kind == "garrison")
        sides[s, k.S_WITHDRAWAL_PRISONERS] = int(battle.prisoner_rules == "engine")
        sides[s, k.S_FROM_STEP] = battle.from_step
        _structure(sides[s], side)
        unit_base += len(units)
    return AgeOfGodsArrays(
        groups=np.array(rows, np.int64).reshape(-1, k.N_GROUP_FIELDS),
        survive=np.array(survive, np.float64),
        flee=np.array(flee, np.float64),
        sides=sides,
        columns=columns,
        left_out=(left_out[0], left_out[1]),
        origins=origins,
        kept_out=kept_out,
    )


def _structure(side_row: np.ndarray, side: Side) -> None:
    if side.structure is not None:
        side_row[ol.S_HAS_STRUCTURE] = 1
        side_row[ol.S_STRUCTURE_DEF] = side.structure.defense
        side_row[ol.S_STRUCTURE_DMG] = side.structure.damage


#: Olympia extras that mean something here (no siege engines in this ruleset).
EXTRAS = tuple(x for x in ol.EXTRAS if x != "engines_lost")


@functools.lru_cache(maxsize=256)
def _column_places(structures: tuple[bool, ...], casualties: tuple[str, ...]) -> dict[str, int]:
    """The outcome columns of a battle whose sides have a structure or not and whose
    groups' casualty and fled columns are ``casualties``, name -> place in the kernel's
    row (made once for the combinations of a scenario's unknowns that share them)."""
    columns = {"winner": ol.O_WINNER, "steps": ol.O_STEPS}
    for s, side_name in enumerate(SIDES):
        for extra in EXTRAS:
            if structures[s] or not extra.startswith("structure"):
                # Olympia's layout, not its jitted extra(): called from Python, that
                # compiled on a cold run (0.6 s) for nothing a battle runs.
                columns[f"{extra}.{side_name}"] = ol.O_EXTRAS + 2 * ol.EXTRAS.index(extra) + s
    for i, name in enumerate(casualties):
        columns[name] = k.O_COLUMNS + i
    return columns


class AgeOfGodsPrepared(StackedRuns, Prepared):
    kernel = "phased"
    #: Whether :meth:`run` gives each group's state at the end (olympia's
    #: ``waves.LEFT_PREFIX`` columns, read by :meth:`survivors`): in the wave chain only.
    keeps_left = False

    def __init__(self, battle: Battle) -> None:
        self.battle = battle
        self.arrays = compile_battle(battle)
        notes = []
        for s, count in enumerate(self.arrays.left_out):
            if count:
                notes.append(f"control limits: {count} {SIDES[s]} men stay out of the battle")
        self.notes = tuple(notes)
        self.unfolds = frozenset({BY_STEP, STOP_RULES, FROM_STEP, WAVES})
        self.stop_rules = battle.retreats
        self.from_step = battle.from_step
        self.stops = self._stops()
        self.phases = list(k.PHASES[: k.STALEMATE])
        if (self.arrays.groups[:, ol.G_FRONT] == 0).any():
            # Only men with no attack can leave a whole round without a strike.
            self.phases.append(k.PHASES[k.STALEMATE])
        if not all(rule.never for rule in self.stop_rules):
            self.phases.append(k.PHASES[k.WITHDRAWAL])
        self.columns = self._columns()
        self.flags = frozenset(
            [c for c in self.columns if c.startswith(("leader_", "structure_collapsed"))]
            + [f"decided_in.{p}" for p in self.phases]
        )
        self.column_bounds = self._bounds()

    def men_of(self, side: int) -> int:
        """The side's men (fighters, nobles not counted, allies included) who take part:
        what a stop rule's percentage is of."""
        groups = self.arrays.groups
        mine = (groups[:, ol.G_SIDE] == side) & (groups[:, ol.G_KIND] == ol.MAN)
        return int(groups[mine, ol.G_COUNT].sum())

    def _stops(self) -> np.ndarray:
        """The sides' stop rules as kernels/stops.py's rows: ``gone`` names a type by its
        casualty column (a type control limits keep wholly out has none: no group of it,
        so it is gone from the start)."""
        stops = np.empty((2, N_STOP), np.int64)
        for s, rule in enumerate(self.stop_rules):

            def column(name: str, s: int = s) -> int:
                key = f"casualties.{SIDES[s]}.{name}"
                if key in self.arrays.columns:
                    return k.O_COLUMNS + self.arrays.columns.index(key)
                return k.O_COLUMNS + len(self.arrays.columns)  # past every group's column

            stops[s] = rule.encode(self.men_of(s), column)
        return stops

    def _bounds(self) -> dict[str, tuple[int | None, int | None]]:
        """Men lost or fled of a type: at most the men of it who take part (control
        limits may keep some out); nobles as olympia's."""
        groups = self.arrays.groups
        men = np.zeros(k.O_COLUMNS + len(self.arrays.columns), np.int64)
        for g in np.flatnonzero(groups[:, ol.G_KIND] == ol.MAN):
            men[groups[g, ol.G_COLUMN]] += groups[g, ol.G_COUNT]
            if groups[g, k.G_FLED_COLUMN] >= 0:
                men[groups[g, k.G_FLED_COLUMN]] += groups[g, ol.G_COUNT]
        bounds: dict[str, tuple[int | None, int | None]] = {
            name: (0, int(men[k.O_COLUMNS + i])) for i, name in enumerate(self.arrays.columns)
        }
        bounds.update(side_bounds(groups))
        return bounds

    def _columns(self) -> dict[str, int]:
        structures = tuple(side.structure is not None for side in self.battle.sides)
        return dict(_column_places(structures, tuple(self.arrays.columns)))

    def run_matrix(self, seed: int, first: int, count: int, cut: int = 0) -> np.ndarray:
        """The kernel's rows; with ``cut``, each battle still undecided after round
        ``cut`` stops there (``winner`` FIGHTING, its row the state then)."""
        return self.run_recorded(seed, first, count, cut)[0]

    def run_recorded(
        self, seed: int, first: int, count: int, cut: int = 0, asked: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`run_matrix`'s rows, and each battle's rows after the ``asked`` rounds
        (ascending; shape ``(count, len(asked), columns)``) from the same pass."""
        a = self.arrays
        width = k.O_COLUMNS + len(a.columns)
        out = np.zeros((count, width + (len(a.groups) if self.keeps_left else 0)), np.int64)
        through = np.zeros((count, len(asked), out.shape[1]), np.int64)
        sides = a.sides
        if cut:
            sides = sides.copy()
            sides[0, ol.S_CUT] = cut
        if count:
            k.phased_battles(
                k.battle_by_address(),
                a.groups,
                a.survive,
                a.flee,
                sides,
                self.stops,
                np.array(asked, np.int64),
                np.uint64(seed),
                first,
                out,
                through,
            )
        return out, through

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        out = self.run_matrix(seed, first, count, step)
        return {name: out[:, col] for name, col in self.columns.items()}

    def run_through(
        self, seed: int, first: int, count: int, steps: Sequence[int]
    ) -> Mapping[str, np.ndarray]:
        """One pass: every battle fought once, to the last asked round at most, its row
        recorded after each asked round."""
        asked = [int(step) for step in steps]
        if not asked:
            return {}
        _, through = self.run_recorded(seed, first, count, max(asked), asked)
        return Recorded(through, self.columns)

    def run(self, seed: int, first: int, count: int) -> Outcomes:
        out = self.run_matrix(seed, first, count)
        if not self.keeps_left:
            return self.columns_of(out)
        at = k.O_COLUMNS + len(self.arrays.columns)
        left = {f"{LEFT_PREFIX}{g}": at + g for g in range(len(self.arrays.groups))}
        return Outcomes(out, {**self.columns, **left}, self.derived_columns(out))

    def derived_columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {
            f"decided_in.{phase}": (rows[:, k.O_PHASE] == k.PHASES.index(phase)).astype(np.int64)
            for phase in self.phases
        }

    def derived_key(self) -> tuple[Any, ...]:
        return (type(self), *self.phases)

    def stack_key(self) -> tuple[Any, ...]:
        # The wave chain's rows (each group's state kept) are not the stacked kernel's.
        return (type(self), self.keeps_left)

    def stack_tables(self) -> tuple[np.ndarray, ...]:
        a = self.arrays
        return (a.groups, a.survive, a.flee, a.sides, self.stops)

    def stack_sizes(self) -> tuple[int, ...]:
        groups = self.arrays.groups
        return (k.O_COLUMNS + len(self.arrays.columns), len(groups), groups[:, ol.G_UNIT].max() + 1)

    def stacked_kernel(self, given: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        """:meth:`StackedRuns.stacked_kernel`, the stacked kernel named to the battle's
        compile (kernels/age_of_gods.py's ``battle_by_address``): on a cold cache this
        process compiles it for ``given`` while a second one compiles the battle."""
        if self.keeps_left:
            raise NotImplementedError("the stacked kernel keeps no group's state")
        kernel = age_of_gods_stacked.phased_stacked
        return kernel, k.battle_by_address(kernel, given)

    def memory_bytes(self, battles: int) -> int:
        """:meth:`Prepared.memory_bytes`, and in the wave chain each group's state at the
        end (a column a group, :attr:`keeps_left`)."""
        kept = 8 * len(self.arrays.groups) * battles if self.keeps_left else 0
        return super().memory_bytes(battles) + kept

    def for_waves(self, later: bool = False) -> AgeOfGodsPrepared:
        """This battle as the wave chain runs it: :meth:`run` gives each group's state
        at the end too (the same battles, the same numbers)."""
        kept = copy.copy(self)
        kept.keeps_left = True
        return kept

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        return waves.survivors(self.battle, self.arrays, rows, side, data)
