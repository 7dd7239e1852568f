"""Waves: a side's next army fights whatever the battle before it left (docs/unfolding.md,
"Waves").

``[[attacker.waves]]`` (or ``[[defender.waves]]``, one side only) lists the side's second,
third, ... army, each written as the side is in the scenario's ruleset (its own units,
nothing inherited). Battle i of the scenario is a chain of fights: wave 1 (the side as
``[attacker]`` writes it) fights the other side; when that fight did not end in its
side's win (its side lost, broke, withdrew or drew), wave 2 fights the other side as
battle i of wave 1 left it (the ruleset's :meth:`~simulator.rulesets.base.Prepared.survivors`:
men left, wounds, damage), and so on until a wave wins or none is left. The survivors of
a wave that did not win leave the field. A wave that finds nothing of the other side left
wins without a fight (0 steps, no losses). The whole battle's outcome is the last wave's.

The randomness contract holds through the chain. Wave 1 is battle i of the scenario
without its waves, on the run's seed, exactly. Wave k fights on a stream of its own that
is a pure function of (seed, k, battle i): battles are grouped by the army the wave meets
(battles that left it alike share one prepared scenario), and the battle that is the r-th
of its block of :data:`WAVE_BLOCK` to meet army g is battle ``block * WAVE_BLOCK + r`` of
that scenario on a seed hashed from (seed, k, g) (scenario/groups.py, as unknowns.py does
for the inputs each battle drew). A chunk that starts inside a block fights the block's
earlier battles' waves again to count them, unless the chunk before it was this one's
neighbour (kept in a small cache), as it is in a run on this machine.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError, Source
from ..rulesets.base import SIDES, TURN_LIMIT, WAVES, Prepared
from ..rulesets.keys import MOST_WAVES
from .groups import GroupedPrepared, grouped_calls
from .unknowns import run_group

if TYPE_CHECKING:
    from .scenario import Scenario

#: The key of a side's table that lists its waves.
WAVES_KEY = "waves"
#: Battles of a block (see the module's docstring): a chunk starting inside one fights at
#: most this many battles' waves again to count them.
WAVE_BLOCK = 1 << 12
#: A wave's columns for a battle in which it did not fight.
NOT_FOUGHT = -1
#: Outcome columns of each wave: ``wave.<k>.<what>`` (k from 1, the side's first army).
WAVE_PREFIX = "wave."
#: ``[battle]``'s key of a battle in progress (docs/unfolding.md): the first wave's alone.
FROM_STEP_KEY = "from_step"
#: How many waves fought, 1 .. the side's waves.
WAVES_FOUGHT = "waves_fought"
#: ``winner`` codes a side's fight counts as its win: a win, the enemy withdrew
#: (kernels/stops.py's ATTACKER_WITHDREW 3, DEFENDER_WITHDREW 4).
SIDE_WON = {"attacker": (0, 4), "defender": (1, 3)}

_GROUP_SALT = np.uint64(0x3C6EF372FE94F82B)
_NOTHING_LEFT = -2  # the group of battles whose wave finds nobody: no kernel call
_IDLE = -1  # the group of battles in which the wave does not fight


def split_waves(
    data: Mapping[str, Any], source: Source
) -> tuple[dict[str, Any], str | None, list[Any]]:
    """``data`` without the waves, the side that brings them (None: no waves) and its
    waves' tables as written; a misshapen ``waves`` key is one line."""
    found = [s for s in SIDES if isinstance(data.get(s), Mapping) and WAVES_KEY in data[s]]
    if not found:
        return dict(data), None, []
    if len(found) == 2:
        raise source.error(
            f"defender.{WAVES_KEY}",
            "both sides bring waves: give [[attacker.waves]] or [[defender.waves]], not both",
        )
    side = found[0]
    tables = data[side][WAVES_KEY]
    key = f"{side}.{WAVES_KEY}"
    if not isinstance(tables, list) or not tables:
        raise source.error(
            key, f"expected a list of the {side}'s next armies ([[{key}]]), at least one"
        )
    if len(tables) > MOST_WAVES:
        raise source.error(key, f"{len(tables)} waves: a side brings at most {MOST_WAVES}")
    for k, table in enumerate(tables):
        if not isinstance(table, Mapping) or not table:
            raise source.error(
                f"{key}[{k}]", f"a wave with no men: expected the army, written as [{side}] is"
            )
    plain = dict(data)
    plain[side] = {name: value for name, value in data[side].items() if name != WAVES_KEY}
    return plain, side, list(tables)


@dataclass(frozen=True)
class _WaveSource(Source):
    """The scenario's source, naming the keys of the side's army at ``side.waves[k]``."""

    side: str = ""
    wave: int = 0

    def error(self, key: str, message: str, value: object = None) -> BattleOddsError:
        if key == self.side or key.startswith((self.side + ".", self.side + "[")):
            key = f"{self.side}.{WAVES_KEY}[{self.wave}]{key[len(self.side) :]}"
        return super().error(key, message, value)


def _group_of(table: Mapping[str, Any] | None) -> int:
    """A side table's group: 63 bits of a hash of its canonical JSON (a pure function of
    its content, on any machine)."""
    if table is None:
        return _NOTHING_LEFT
    text = json.dumps(table, separators=(",", ":"), sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def _mix(x: int) -> int:
    """SplitMix64's finaliser on a Python int (64-bit wrapping)."""
    mask = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def group_seed(seed: int, wave: int, group: int) -> int:
    """The seed of wave ``wave``'s fights against army ``group`` in run ``seed`` (63 bits)."""
    x = _mix((seed & ((1 << 64) - 1)) ^ int(_GROUP_SALT))
    x = _mix(x ^ _mix(wave))
    return _mix(x ^ group) >> 1


class WavesOnlyRun(BattleOddsError, AttributeError):
    """A command that reads a ruleset's model was given a scenario with waves: one line
    (an AttributeError too, so that ``getattr(model, name, default)`` takes the default)."""


class Waves:
    """The model of a scenario with waves: the scenario without them (wave 1's fight),
    the side that brings them, each wave's scenario against the other side as written
    (checked when read), and the fights against what earlier waves left (validated
    when a battle first needs them)."""

    def __init__(
        self,
        ruleset: str,
        data: Mapping[str, Any],
        side: str,
        tables: list[Any],
        source: Source,
        validate: Callable[[Mapping[str, Any], Source], Scenario],
    ) -> None:
        self.ruleset = ruleset
        self.side = side
        self.other = SIDES[1 - SIDES.index(side)]
        self.source = source
        self._validate = validate
        self.data = dict(data)
        self.first = validate(self.data, source)
        #: Each wave's side table, wave 1's (the side as ``[attacker]`` writes it) first.
        self.tables: list[Mapping[str, Any]] = [self.data[side], *tables]
        self.scenarios = [self.first]
        for k, table in enumerate(tables):
            wave_source = _WaveSource(source.label, source.text, source.path, None, side, k)
            self.scenarios.append(validate({**self.data, side: table}, wave_source))
        self._fights: dict[tuple[int, int], Prepared] = {}
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """How many waves the side brings, its first army counted."""
        return len(self.tables)

    def __getattr__(self, name: str) -> Any:
        # The ruleset's commands other than a whole run read a ruleset's model: say so
        # in one line rather than fail inside them.
        if name.startswith("__"):
            raise AttributeError(name)
        raise WavesOnlyRun(
            f"{self.source.label}: a scenario with waves ([[{self.side}.waves]]) is "
            "answered by `battle-odds run` and simulator.simulate (whole battles, wave "
            "after wave), not by this command or option"
        )

    def fight(self, wave: int, group: int, against: Mapping[str, Any]) -> Prepared:
        """The prepared fight of wave ``wave`` (from 1) against the other side's table
        ``against`` (its group ``group``)."""
        with self._lock:
            known = self._fights.get((wave, group))
        if known is not None:
            return known
        data = {**self.data, self.side: self.tables[wave - 1], self.other: against}
        battle = data.get("battle")
        if isinstance(battle, Mapping) and FROM_STEP_KEY in battle:
            # Only the first wave joins a battle in progress: a later one starts a fight.
            data["battle"] = {k: v for k, v in battle.items() if k != FROM_STEP_KEY}
        source = Source(f"{self.source.label} (wave {wave}, against what wave {wave - 1} left)")
        try:
            scenario = self._validate(data, source)
        except BattleOddsError as exc:
            raise BattleOddsError(
                f"{exc} [the {self.other} as an earlier wave left it: {json.dumps(against)}]"
            ) from None
        prepared = rulesets.get(self.ruleset).prepare(scenario.model).for_waves(later=True)
        with self._lock:
            if len(self._fights) > 4096:
                self._fights.clear()
            self._fights[(wave, group)] = prepared
        return prepared

    def prepare(self) -> WavesPrepared:
        return WavesPrepared(self)


def _men(prepared: Prepared, side: str) -> dict[str, int]:
    """The men of each type ``side`` brings to a prepared fight (from its casualty
    columns' bounds: a ruleset bounds a type's casualties by the men of it brought)."""
    head = f"casualties.{side}."
    return {
        name[len(head) :]: int(most)
        for name, (_, most) in prepared.column_bounds.items()
        if name.startswith(head) and most is not None
    }


class WavesPrepared(GroupedPrepared):
    """A scenario with waves, ready to run any range of battles: each battle's chain of
    fights (see the module's docstring), wave by wave over the chunk's battles.

    Columns: the whole battle's ``winner`` (the last wave's), ``steps`` (the steps of
    every wave that fought, added), ``casualties.<side>.<type>`` (every wave's losses,
    added), ``waves_fought``; and for each wave k ``wave.<k>.winner``, ``wave.<k>.steps``,
    ``wave.<k>.casualties.<side>.<type>`` and ``wave.<k>.left.<side>.<type>`` (each
    side's men left after it), all :data:`NOT_FOUGHT` in battles it did not fight."""

    grouped_by = "waves"

    def __init__(self, waves: Waves) -> None:
        self.waves = waves
        ruleset = rulesets.get(waves.ruleset)
        self.openers = [ruleset.prepare(s.model).for_waves() for s in waves.scenarios]
        first = self.openers[0]
        if WAVES not in first.unfolds:
            lacks = first.lacks.get(WAVES)
            raise waves.source.error(
                f"{waves.side}.{WAVES_KEY}",
                f"the {waves.ruleset} ruleset does not give waves"
                + (f": {lacks}" if lacks else " (its prepared scenario does not declare them)"),
            )
        side, other = waves.side, waves.other
        self.men = [_men(p, side) for p in self.openers]
        for k, men in enumerate(self.men[1:]):
            if sum(men.values()) <= 0:
                raise waves.source.error(f"{side}.{WAVES_KEY}[{k}]", "a wave with no men")
        self.other_men = _men(first, other)
        self.kernel = first.kernel
        self.notes = tuple(dict.fromkeys(n for p in self.openers for n in p.notes))
        self.turn_limit = TURN_LIMIT in first.flags
        side_types = list(dict.fromkeys(t for men in self.men for t in men))
        names: list[str] = ["winner", "steps"]
        bounds: dict[str, tuple[int | None, int | None]] = {}
        for t in side_types:
            bounds[f"casualties.{side}.{t}"] = (0, sum(men.get(t, 0) for men in self.men))
        for t, n in self.other_men.items():
            bounds[f"casualties.{other}.{t}"] = (0, n)
        ordered = sorted(bounds, key=lambda name: SIDES.index(name.split(".")[1]))
        names += ordered
        if self.turn_limit:
            names.append(TURN_LIMIT)
        names.append(WAVES_FOUGHT)
        bounds[WAVES_FOUGHT] = (1, waves.count)
        for k, men in enumerate(self.men, 1):
            names += [f"wave.{k}.winner", f"wave.{k}.steps"]
            bounds[f"wave.{k}.winner"] = (NOT_FOUGHT, None)
            bounds[f"wave.{k}.steps"] = (NOT_FOUGHT, None)
            for what in ("casualties", "left"):
                for s, types in ((side, men), (other, self.other_men)):
                    for t, n in types.items():
                        name = f"wave.{k}.{what}.{s}.{t}"
                        names.append(name)
                        bounds[name] = (NOT_FOUGHT, n)
        self.columns = MappingProxyType({name: i for i, name in enumerate(names)})
        self.column_bounds = MappingProxyType(bounds)
        self.flags = frozenset({TURN_LIMIT} if self.turn_limit else ())
        limit = first.step_limit
        self.step_limit = None if limit is None else limit * waves.count
        self._cache: dict[tuple[int, int], tuple[int, list[np.ndarray]]] = {}
        self._lock = threading.Lock()

    def memory_bytes(self, battles: int) -> int:
        # The chunk's columns, each wave's groups, and one fight's call.
        own = 8 * (3 * len(self.columns) + 2 * self.waves.count) * battles
        return own + max(p.memory_bytes(battles) for p in self.openers)

    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        out, groups = self._chain(seed, first, count)
        self._remember(seed, first, count, groups)
        return out

    # -- the chain of fights ---------------------------------------------------------

    def _earlier(self, seed: int, wave: int, start: int, count: int) -> np.ndarray:
        """The groups of wave ``wave`` for battles ``start .. start + count - 1`` of run
        ``seed`` (``start`` a block's first battle): from the cache, or fought again."""
        with self._lock:
            known = self._cache.get((seed, start))
        if known is not None and known[0] >= start + count:
            return known[1][wave - 2][:count]
        _, groups = self._chain(seed, start, count)
        self._remember(seed, start, count, groups)
        return groups[wave - 2]

    def _remember(self, seed: int, first: int, count: int, groups: list[np.ndarray]) -> None:
        """Keep the groups of the battles of the last block this run reached, for the
        chunk that follows it (the runner's next call)."""
        if count == 0 or not groups:
            return
        end = first + count
        start = (end - 1) // WAVE_BLOCK * WAVE_BLOCK
        with self._lock:
            if start < first:
                known = self._cache.get((seed, start))
                if known is None or known[0] != first:
                    return
                kept = [np.concatenate([a, b]) for a, b in zip(known[1], groups, strict=True)]
            else:
                kept = [g[start - first :] for g in groups]
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[(seed, start)] = (end, kept)

    def _chain(
        self, seed: int, first: int, count: int
    ) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
        """Battles ``first .. first + count - 1``: their columns, and for each wave from
        the second the group each battle's fight fell in (:data:`_IDLE` when the wave
        did not fight)."""
        waves, side, other = self.waves, self.waves.side, self.waves.other
        out = {name: np.zeros(count, np.int64) for name in self.columns}
        if count == 0:
            return out, [np.zeros(0, np.int64) for _ in range(waves.count - 1)]
        rows = self.openers[0].run(seed, first, count)
        fighting = np.ones(count, bool)
        against: dict[int, Mapping[str, Any]] = {}
        chained: list[np.ndarray] = []
        self._record(out, 1, np.arange(count), rows, self.openers[0])
        # A ruleset whose side tables are optional (skirmish's) may give none.
        left = self._left(self.openers[0], rows, against, waves.data.get(other, {}))
        for k in range(2, waves.count + 1):
            fighting = np.isin(out["winner"], SIDE_WON[side], invert=True) & fighting
            group = np.where(fighting, left, _IDLE)
            chained.append(group)
            if not fighting.any():
                out = self._idle(out, k)
                continue
            calls = grouped_calls(first, group, partial(self._earlier, seed, k), WAVE_BLOCK)
            following = np.full(count, _NOTHING_LEFT, np.int64)
            for g, index, positions in calls:
                if g == _IDLE:
                    continue
                if g == _NOTHING_LEFT:
                    self._unopposed(out, k, positions)
                    continue
                fight = waves.fight(k, g, against[g])
                seeded = group_seed(seed, k, g)
                result = run_group(fight, seeded, index, len(positions))
                self._record(out, k, positions, result, fight)
                following[positions] = self._left(fight, result, against, against[g])
            self._idle_rows(out, k, ~fighting)
            left = np.where(fighting, following, left)
        return out, chained

    def _left(
        self,
        fight: Prepared,
        rows: Mapping[str, np.ndarray],
        against: dict[int, Mapping[str, Any]],
        table: Mapping[str, Any],
    ) -> np.ndarray:
        """The group of the other side as each battle of ``rows`` left it, its table
        kept in ``against``."""
        index, tables = fight.survivors(rows, self.waves.other, table)
        groups = np.array([_group_of(t) for t in tables], np.int64)
        for g, t in zip(groups.tolist(), tables, strict=True):
            if t is not None and g not in against:
                against[g] = copy.deepcopy(t)
        return groups[np.asarray(index, np.int64)] if len(groups) else np.zeros(0, np.int64)

    def _record(
        self,
        out: dict[str, np.ndarray],
        wave: int,
        positions: np.ndarray,
        rows: Mapping[str, np.ndarray],
        fight: Prepared,
    ) -> None:
        """Wave ``wave``'s fight of the battles at ``positions``: its columns, and the
        whole battle's so far."""
        side, other = self.waves.side, self.waves.other
        out["winner"][positions] = rows["winner"]
        out["steps"][positions] += rows["steps"]
        out[WAVES_FOUGHT][positions] = wave
        if self.turn_limit:
            out[TURN_LIMIT][positions] = rows.get(TURN_LIMIT, 0)
        out[f"wave.{wave}.winner"][positions] = rows["winner"]
        out[f"wave.{wave}.steps"][positions] = rows["steps"]
        brought = {side: self.men[wave - 1], other: _men(fight, other)}
        for s, types in ((side, self.men[wave - 1]), (other, self.other_men)):
            for t in types:
                lost = rows.get(f"casualties.{s}.{t}")
                lost = np.zeros(len(positions), np.int64) if lost is None else lost
                out[f"casualties.{s}.{t}"][positions] += lost
                out[f"wave.{wave}.casualties.{s}.{t}"][positions] = lost
                out[f"wave.{wave}.left.{s}.{t}"][positions] = brought[s].get(t, 0) - lost

    def _unopposed(self, out: dict[str, np.ndarray], wave: int, positions: np.ndarray) -> None:
        """Wave ``wave`` finds nothing of the other side left: it wins without a fight."""
        side, other = self.waves.side, self.waves.other
        won = SIDE_WON[side][0]
        out["winner"][positions] = won
        out[WAVES_FOUGHT][positions] = wave
        if self.turn_limit:
            out[TURN_LIMIT][positions] = 0
        out[f"wave.{wave}.winner"][positions] = won
        out[f"wave.{wave}.steps"][positions] = 0
        for s, types in ((side, self.men[wave - 1]), (other, self.other_men)):
            for t, n in types.items():
                out[f"wave.{wave}.casualties.{s}.{t}"][positions] = 0
                out[f"wave.{wave}.left.{s}.{t}"][positions] = n if s == side else 0

    def _idle_rows(self, out: dict[str, np.ndarray], wave: int, idle: np.ndarray) -> None:
        for name in self.columns:
            if name.startswith(f"wave.{wave}."):
                out[name][idle] = NOT_FOUGHT

    def _idle(self, out: dict[str, np.ndarray], wave: int) -> dict[str, np.ndarray]:
        self._idle_rows(out, wave, np.ones(len(out["winner"]), bool))
        return out
