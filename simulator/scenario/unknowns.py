"""Ranges and distributions for what a player does not know (docs/unknowns.md).

Any count, rating, skill or setting of a scenario may be a distribution instead of a
value: ``"20..30"`` (every whole number from 20 to 30 alike), ``"3:1, 5:2, 7:1"`` (values
with weights), ``"rain:30%"`` (a chance; the rest of it leaves the value out, so the key
takes its default and a list loses the element), or a table ``{ values = [...], weights
= [...] }``. Each battle draws its inputs, and the answer integrates over them.

The randomness contract holds for the inputs as for the battles. Battle *i* of seed *s*
draws its inputs from a counter-based hash of (s, i, which unknown) (SplitMix64, in
vectorised NumPy), so they do not depend on chunking, threads or machine. Its battle is
then fought by the prepared kernel of its combination of inputs, on a stream of its own
that depends only on (s, i) as well: battles come in blocks of :data:`BLOCK`, and the
battle that is the r-th of its block to draw combination c is battle ``block * BLOCK +
r`` of combination c's scenario on a seed derived from (s, c). Within a chunk, the
battles of one combination in one block are consecutive battles of that scenario, so
each runs in one kernel call: the kernels are unchanged, and the calls per chunk are
the combinations present, not the battles.

Beside each outcome the run records, per unknown, the drawn value's index with the
winner (``unknown.K`` = value index x 3 + winner, :func:`unknown_code`): the tally of it
gives P(win) given each value from the same battles
(:func:`simulator.results.unknowns.effects`).
"""

from __future__ import annotations

import copy
import math
import re
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError, Source
from ..input.fields import RANGE_PATTERN, WEIGHTED_PATTERN
from ..input.reader import reusing
from ..rulesets.base import BY_STEP, Prepared
from ..rulesets.outcomes import Outcomes
from ..rulesets.stacked import Stack, StackedRuns, stack
from .groups import GroupedPrepared, grouped_calls, grouped_numbers

if TYPE_CHECKING:
    from .scenario import Scenario

#: Keys that never vary: what the scenario is, how it runs.
FIXED_TOP = ("ruleset", "name", "description", "battles", "seed")
FIXED_ANYWHERE = ("name", "description")
#: The most values one unknown may take, and the most combinations of all of them.
MAX_VALUES = 100_000
MAX_COMBINATIONS = 10**12
#: Battles of a block: a combination's battles in a block are numbered from the block's
#: first (see the module's docstring).
BLOCK = 1 << 16
#: The battles a run is taken to have when each combination's kernel is chosen (Olympia
#: builds its chain table only for a combination drawn often enough to repay it).
KERNEL_HORIZON = 1 << 18
#: Up to this many combinations, a chunk finds those its battles drew by counting them,
#: not by sorting the draws.
DENSE_COMBINATIONS = 1 << 20
#: The most combinations whose tables one stack holds (rulesets/stacked.py).
MAX_STACKED = 4096
#: The most bytes of tables a stacked kernel call may build for its combinations.
STACKED_TABLE_BYTES = 1 << 28
#: The combinations of a family validated and prepared whole that the others are filled
#: in from (Mixture._filled_in), at most.
TEMPLATES = 8
#: The chunks whose draws a scenario with ranges keeps for the next chunks' counts
#: (MixturePrepared._earlier): a block of BLOCK battles spans a few chunks.
KEPT_CHUNKS = 4
#: Winner codes of the ``unknown.K`` columns: the kernels' outcome codes, attacker 0,
#: defender 1, draw 2 (simulator.results.stats.OUTCOMES), then the withdrawals (3, 4).
N_OUTCOMES = 3
N_WITHDRAWALS = 2


def unknown_code(index: np.ndarray, winner: np.ndarray, values: int) -> np.ndarray:
    """The ``unknown.K`` value of a battle that drew value ``index`` of an unknown of
    ``values`` values and ended with ``winner``: ``index x 3 + winner`` for a battle
    fought out (as before stop rules), and past those, ``3 x values + index x 2 +
    (winner - 3)`` for a withdrawal."""
    fought = index * N_OUTCOMES + winner
    if len(winner) == 0 or int(winner.max()) < N_OUTCOMES:
        return fought  # no withdrawal: one pass, not three
    withdrew = N_OUTCOMES * values + index * N_WITHDRAWALS + (winner - N_OUTCOMES)
    return np.where(winner < N_OUTCOMES, fought, withdrew)


def unknown_decode(code: int, values: int) -> tuple[int, int]:
    """The value index and the winner of an ``unknown.K`` value (:func:`unknown_code`)."""
    if code < N_OUTCOMES * values:
        return code // N_OUTCOMES, code % N_OUTCOMES
    index, withdrawal = divmod(code - N_OUTCOMES * values, N_WITHDRAWALS)
    return index, N_OUTCOMES + withdrawal


_RANGE = re.compile(f"^{RANGE_PATTERN}$")
_WEIGHTED = re.compile(f"^{WEIGHTED_PATTERN}$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


class _Absent:
    """A value left out: the key takes its default, a list loses the element."""

    def __repr__(self) -> str:
        return "(left out)"


ABSENT = _Absent()

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
# Salts that keep the inputs' hash apart from the kernels' streams and from each other.
_INPUT_SALT = np.uint64(0x6A09E667F3BCC909)
_BATTLE_SALT = np.uint64(0xD1B54A32D192ED03)
_UNKNOWN_SALT = np.uint64(0xA0761D6478BD642F)
_COMBINATION_SALT = np.uint64(0xE7037ED1A0B428DB)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    z = x + _GOLDEN  # a new array: the rest in place (a third fewer passes)
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


#: Draws are counted by their top bits in this many buckets (:class:`_Cuts`).
_BUCKET_BITS = 12
_BUCKET_SHIFT = np.uint64(53 - _BUCKET_BITS)


@dataclass(frozen=True)
class _Cuts:
    """Which value a 53-bit draw takes: the number of ``cuts`` at or below it
    (``searchsorted(cuts, draw, side="right")``), looked up by the draw's top bits
    where no cut point falls inside its bucket of draws, searched for the others (a
    draw in one of at most ``len(cuts)`` buckets of 4,096): the same values, a tenth of
    a search for each of a chunk's draws."""

    cuts: np.ndarray
    lowest: np.ndarray  # each bucket's value at its first draw
    certain: np.ndarray  # whether every draw of the bucket takes that value

    @classmethod
    def of(cls, cuts: np.ndarray) -> _Cuts:
        first = np.arange(1 << _BUCKET_BITS, dtype=np.uint64) << _BUCKET_SHIFT
        last = first + ((np.uint64(1) << _BUCKET_SHIFT) - np.uint64(1))
        lowest = np.searchsorted(cuts, first, side="right").astype(np.int64)
        highest = np.searchsorted(cuts, last, side="right")
        return cls(cuts, lowest, lowest == highest)

    def value_index(self, draws: np.ndarray) -> np.ndarray:
        """Each draw's value (``draws`` below 2**53)."""
        bucket = (draws >> _BUCKET_SHIFT).astype(np.intp)
        values = self.lowest[bucket]
        unsure = np.flatnonzero(~self.certain[bucket])
        if len(unsure):
            values[unsure] = np.searchsorted(self.cuts, draws[unsure], side="right")
        return values


@dataclass(frozen=True)
class Unknown:
    """One key of the scenario that varies: where (a data path, as ``with_changes`` takes
    it), what it was written as, its values and their probabilities."""

    path: str
    written: str
    values: tuple[Any, ...]
    weights: tuple[float, ...]
    #: A range of whole numbers (only its ends need checking: a key's limits are a
    #: range too), or a list of values (each checked).
    is_range: bool = False

    def thresholds(self) -> np.ndarray:
        """53-bit cut points: a uniform 53-bit draw below the k-th is value k or before."""
        cumulative = np.cumsum(np.asarray(self.weights, float))
        cumulative /= cumulative[-1]
        return np.floor(cumulative[:-1] * float(1 << 53)).astype(np.uint64)

    def value_words(self, value: Any) -> str:
        return "left out" if value is ABSENT else str(value)


def _number(text: str) -> int | float | str:
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if _NUMBER.match(text):
        return float(text)
    return text


def parse_unknown(value: Any, path: str, source: Source) -> Unknown | Any | None:
    """The distribution ``value`` writes at ``path``; the plain value of a range of one
    (``"20..20"`` is 20, exactly); None when ``value`` is a plain value."""
    fail = lambda message: source.error(path, message, value)  # noqa: E731
    if isinstance(value, str):
        ranged = _RANGE.match(value)
        if ranged:
            low, high = int(ranged.group(1)), int(ranged.group(2))
            if low > high:
                raise fail(f"range {value.strip()!r}: its low end is above its high end")
            if high - low + 1 > MAX_VALUES:
                raise fail(f"range {value.strip()!r}: more than {MAX_VALUES:,} values")
            if low == high:
                return low
            count = high - low + 1
            return Unknown(path, value.strip(), tuple(range(low, high + 1)), (1.0,) * count, True)
        if _WEIGHTED.match(value):
            entries = [e.rsplit(":", 1) for e in value.split(",")]
            return _weighted(
                [_number(v) for v, _ in entries], [w.strip() for _, w in entries], value, fail
            )
        return None
    if isinstance(value, Mapping) and "values" in value and set(value) <= {"values", "weights"}:
        values = value["values"]
        if not isinstance(values, list) or not values:
            raise fail("expected 'values' to be a list of at least one value")
        weights = value.get("weights", [1] * len(values))
        if not isinstance(weights, list) or len(weights) != len(values):
            raise fail(f"expected {len(values)} weights, one for each value")
        if not all(isinstance(w, int | float) and not isinstance(w, bool) for w in weights):
            raise fail("expected the weights to be numbers")
        written = ", ".join(str(v) for v in values)
        if "weights" in value:
            written += f" (weights {', '.join(f'{w:g}' for w in weights)})"
        return _weighted(list(values), [str(w) for w in weights], written, fail)
    return None


def _weighted(
    values: list[Any], weights: list[str], written: str, fail: Callable[[str], BattleOddsError]
) -> Unknown | Any:
    percent = [w.endswith("%") for w in weights]
    if any(percent) and not all(percent):
        raise fail(f"{written!r}: give every weight in % or none")
    numbers = [float(w.rstrip("%")) for w in weights]
    if any(not math.isfinite(w) or w < 0 for w in numbers):
        raise fail(f"{written!r}: a weight is negative: weights are 0 or more")
    if len(set(map(repr, values))) != len(values):
        raise fail(f"{written!r}: a value is listed twice")
    total = sum(numbers)
    if all(percent):
        if total > 100.0 + 1e-9:
            raise fail(f"{written!r}: the chances sum to {total:g}%, over 100%")
        if total < 100.0 - 1e-9:  # the rest of the chance: the value left out
            values, numbers = [*values, ABSENT], [*numbers, 100.0 - total]
    if sum(numbers) <= 0:
        raise fail(f"{written!r}: the weights sum to zero")
    kept = [(v, w) for v, w in zip(values, numbers, strict=True) if w > 0]
    if len(kept) == 1:
        return kept[0][0]
    return Unknown("", written.strip(), tuple(v for v, _ in kept), tuple(w for _, w in kept))


def find_unknowns(data: Mapping[str, Any], source: Source) -> tuple[dict[str, Any], list[Unknown]]:
    """The scenario data with every range of one replaced by its value, and the unknowns
    (in the order they are written)."""
    found: list[Unknown] = []

    def walk(item: Any, path: str, top: bool) -> Any:
        if isinstance(item, Mapping):
            parsed = parse_unknown(item, path, source) if path else None
            if isinstance(parsed, Unknown):
                found.append(_at(parsed, path))
                return item
            if parsed is not None:
                return parsed
            return {
                k: v
                if (top and k in FIXED_TOP) or k in FIXED_ANYWHERE
                else walk(v, f"{path}.{k}" if path else str(k), False)
                for k, v in item.items()
            }
        if isinstance(item, list):
            return [walk(v, f"{path}[{i}]", False) for i, v in enumerate(item)]
        parsed = parse_unknown(item, path, source)
        if isinstance(parsed, Unknown):
            found.append(_at(parsed, path))
            return item
        return item if parsed is None else parsed

    plain = _without_absent(walk(data, "", True))
    return plain, found


def _without_absent(item: Any) -> Any:
    """``item`` without the values a chance of 0% left out ("rain:0%")."""
    if isinstance(item, dict):
        return {k: _without_absent(v) for k, v in item.items() if v is not ABSENT}
    if isinstance(item, list):
        return [_without_absent(v) for v in item if v is not ABSENT]
    return item


def _at(unknown: Unknown, path: str) -> Unknown:
    return Unknown(path, unknown.written, unknown.values, unknown.weights, unknown.is_range)


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def substituted(data: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with a value at each path (:data:`ABSENT`: the key or element left out).
    Only the tables and lists on the paths are copied (a deep copy of the whole scenario
    was a seventh of validating each combination); the rest is shared with ``data``."""
    out = dict(data)
    copied = {id(out)}
    lists: list[list[Any]] = []
    for path, value in changes.items():
        parts: list[str | int] = [int(i) if i else k for k, i in _PART.findall(path)]
        node: Any = out
        for part in parts[:-1]:
            child = node[part]
            if id(child) not in copied and isinstance(child, dict | list):
                child = copy.copy(child)
                node[part] = child
                copied.add(id(child))
            node = child
        last = parts[-1]
        if value is ABSENT and isinstance(node, dict):
            node.pop(last, None)
        else:
            node[last] = value
            if value is ABSENT:
                lists.append(node)
    for listed in lists:
        listed[:] = [v for v in listed if v is not ABSENT]
    return out


class Mixture:
    """The model of a scenario with unknowns: its plain data, its unknowns, and the
    scenarios of the combinations of their values (validated and prepared when a battle
    first draws them)."""

    def __init__(
        self,
        ruleset: str,
        data: Mapping[str, Any],
        unknowns: list[Unknown],
        source: Source,
        validate: Callable[[Mapping[str, Any], Source], Scenario],
    ) -> None:
        self.ruleset = ruleset
        self.data = data
        self.unknowns = tuple(unknowns)
        self.source = source
        self._validate = validate
        self.sizes = np.array([len(u.values) for u in unknowns], np.int64)
        combinations = math.prod(len(u.values) for u in unknowns)
        if combinations > MAX_COMBINATIONS:
            raise source.error(
                unknowns[-1].path,
                f"the unknowns make {combinations:,} combinations of inputs, more than the "
                f"{MAX_COMBINATIONS:,} a scenario may have",
            )
        self.combinations = combinations
        # Mixed radix: the first unknown varies slowest.
        self.strides = np.ones(len(unknowns), np.int64)
        for k in range(len(unknowns) - 2, -1, -1):
            self.strides[k] = self.strides[k + 1] * self.sizes[k + 1]
        # As plain numbers (indices): a combination's are worked out in Python.
        self._radix = list(zip(self.strides.tolist(), self.sizes.tolist(), strict=True))
        self._scenarios: dict[int, Scenario] = {}
        self._prepared: dict[int, Prepared] = {}
        # The parts of the data the combinations share, read once (input.reader.read_once).
        self._parts: dict[tuple[str, int, int], tuple[Any, Any, Any]] = {}
        # The stacked tables of the combinations run so far, by stack key, with each
        # combination's slot in them (rulesets/stacked.py).
        self._stacks: dict[Hashable, tuple[Stack, dict[int, int]]] = {}
        self._lock = threading.Lock()
        # How the combinations share tables (StackedRuns.sharing), made on first use.
        self._sharing: Callable[[StackedRuns], bool] | bool | None = False
        # The checked combinations prepared for it, which prepared_of then takes.
        self._fresh: dict[int, Prepared] = {}
        # Each unknown's cut points by bucket (draws), made on first use.
        self._cut_points: dict[int, _Cuts] = {}
        # The unknowns whose values the ruleset fills into a prepared combination
        # (Ruleset.fills_in: Olympia's counts and break points), and for each family of
        # combinations that agree on the others (by its number with those at their
        # first value), the first few of them validated and prepared whole: the others
        # are filled in from one of them (_filled_in), not validated and prepared each.
        rs = rulesets.get(ruleset)
        self._filled = [k for k, u in enumerate(unknowns) if rs.fills_in(u.path)]
        self._templates: dict[int, list[Prepared]] = {}
        self._unfilled: set[int] = set()
        # Every value of every list, the ends of every range, the other unknowns at their
        # first value: the values are checked where they are written (a value the key
        # cannot take, a range on a key that cannot vary) before any battle.
        checked = {0}
        for k, unknown in enumerate(unknowns):
            size = len(unknown.values)
            for v in (size - 1,) if unknown.is_range else range(1, size):
                checked.add(int(v * self.strides[k]))
        self.checked = sorted(checked)
        for combination in self.checked:
            self.scenario_of(combination)

    def indices(self, combination: int) -> list[int]:
        combination = int(combination)
        return [combination // s % n for s, n in self._radix]

    def values_of(self, combination: int) -> dict[str, Any]:
        return {
            u.path: u.values[i]
            for u, i in zip(self.unknowns, self.indices(combination), strict=True)
        }

    def scenario_of(self, combination: int) -> Scenario:
        with self._lock:
            known = self._scenarios.get(combination)
        if known is not None:
            return known
        values = self.values_of(combination)
        try:
            with reusing(self._parts):
                scenario = self._validate(substituted(self.data, values), self.source)
        except BattleOddsError as exc:
            drawn = ", ".join(
                f"{u.path} = {u.value_words(values[u.path])} (of {u.written!r})"
                for u in self.unknowns
            )
            raise BattleOddsError(f"{exc} [with {drawn}]") from None
        with self._lock:
            if len(self._scenarios) > 4096:
                self._scenarios.clear()
            self._scenarios[combination] = scenario
        return scenario

    def prepared_of(self, combination: int) -> Prepared:
        with self._lock:
            known = self._prepared.get(combination)
        if known is not None:
            return known
        sharing = self._shared_tables()
        with self._lock:
            fresh = self._fresh.pop(combination, None)
        if fresh is None:
            fresh = self._filled_in(combination) or self._prepared_whole(combination, True)
        prepared = fresh
        # The kernel worth its set-up for the battles KERNEL_HORIZON battles give this
        # combination (a table built per combination would cost more than its few
        # battles), unless it shares one with others: a pure function of the
        # combination, so every process, chunk and thread runs it with the same kernel.
        if sharing is None or not sharing(prepared):  # type: ignore[arg-type]
            expected = max(1, int(self.probability(combination) * KERNEL_HORIZON))
            prepared.use_kernel(prepared.kernel_choices(expected)[0])
        with self._lock:
            if len(self._prepared) > 4096:
                self._prepared.clear()
            self._prepared[combination] = prepared
        return prepared

    def _family(self, combination: int) -> int:
        """The combination's family: its number with each unknown the ruleset fills in
        at its first value."""
        radix = self._radix
        return combination - sum(
            combination // radix[k][0] % radix[k][1] * radix[k][0] for k in self._filled
        )

    def _prepared_whole(self, combination: int, tried: bool = False) -> Prepared:
        """The combination validated and prepared whole, kept for others of its family
        to be filled in from when none kept before could make it (``tried``: known so;
        Olympia's: one that fields a type the others do not, or leaves one out). A
        family with :data:`TEMPLATES` kept and still another that none could make is
        one the ruleset does not fill in (Olympia's side behind a structure): its
        combinations are validated and prepared whole, not tried again each."""
        prepared = rulesets.get(self.ruleset).prepare(self.scenario_of(combination).model)
        if self._filled and (tried or self._filled_in(combination) is None):
            family = self._family(combination)
            with self._lock:
                kept = self._templates.setdefault(family, [])
                if len(kept) < TEMPLATES:
                    kept.append(prepared)
                else:
                    self._unfilled.add(family)
        return prepared

    def _filled_in(self, combination: int) -> Prepared | None:
        """The combination made from one of its family's first ones by the ruleset
        filling in its values (Ruleset.fill_in: the same arrays as validating and
        preparing it whole), or None: none the ruleset can fill it in from (none yet),
        or a side too large (then validating it whole says so)."""
        if not self._filled:
            return None
        family = self._family(combination)
        with self._lock:
            if family in self._unfilled:
                return None
            templates = list(self._templates.get(family, ()))
        indices = self.indices(combination)
        values = {self.unknowns[k].path: self.unknowns[k].values[indices[k]] for k in self._filled}
        rs = rulesets.get(self.ruleset)
        for template in templates:
            made = rs.fill_in(template, values)
            if made is not None:
                if any(force.too_large for force in rs.side_sizes(made[0])):
                    return None
                return made[1]
        return None

    def _shared_tables(self) -> Callable[[StackedRuns], bool] | None:
        """The ruleset's sharing of tables among the combinations (StackedRuns.sharing),
        made once from the checked combinations prepared afresh."""
        if self._sharing is False:
            checked = {c: self._prepared_whole(c) for c in self.checked}
            first = checked[self.checked[0]]
            made = (
                first.sharing(list(checked.values()))  # type: ignore[arg-type]
                if isinstance(first, StackedRuns)
                else None
            )
            with self._lock:
                if self._sharing is False:
                    self._sharing = made
                    # Prepared once: prepared_of takes these as they are.
                    self._fresh.update(checked)
        return self._sharing  # type: ignore[return-value]

    def stack_of(self, key: Hashable, combinations: list[int]) -> tuple[Stack, dict[int, int]]:
        """The stacked tables holding ``combinations`` (of one stack key), and each
        one's slot: those run before kept, the new ones added at the end (when a chunk
        draws a combination the stack lacks, mostly in the first chunks; past
        :data:`MAX_STACKED` combinations it holds the chunk's alone)."""
        with self._lock:
            known = self._stacks.get(key)
        if known is not None and all(c in known[1] for c in combinations):
            return known
        if known is not None and len(known[1]) + len(combinations) > MAX_STACKED:
            known = None
        slots = {} if known is None else dict(known[1])
        added = [c for c in dict.fromkeys(combinations) if c not in slots]
        onto = None if known is None else known[0]
        made = stack([self.prepared_of(c) for c in added], onto)  # type: ignore[misc]
        slots.update({c: s for s, c in enumerate(added, start=len(slots))})
        with self._lock:
            self._stacks[key] = (made, slots)
        return made, slots

    def probability(self, combination: int) -> float:
        """The chance a battle draws ``combination``."""
        return math.prod(
            u.weights[i] / sum(u.weights)
            for u, i in zip(self.unknowns, self.indices(combination), strict=True)
        )

    def draws(self, seed: int, first: int, count: int) -> np.ndarray:
        """The value index of each unknown (columns) for battles ``first ..
        first+count-1`` (rows) of run ``seed``: a pure function of (seed, battle)."""
        battles = np.arange(first, first + count, dtype=np.int64).astype(np.uint64)
        base = _mix(np.array([seed], np.uint64) ^ _INPUT_SALT)
        per_battle = _mix(battles * _BATTLE_SALT) ^ base
        out = np.empty((count, len(self.unknowns)), np.int64)
        for k in range(len(self.unknowns)):
            salt = _mix(np.array([k + 1], np.uint64)) ^ _UNKNOWN_SALT
            bits = _mix(per_battle ^ salt) >> np.uint64(11)
            out[:, k] = self._cuts(k).value_index(bits)
        return out

    def _cuts(self, k: int) -> _Cuts:
        """Unknown ``k``'s cut points, and which value each bucket of draws takes."""
        made = self._cut_points.get(k)
        if made is None:
            made = self._cut_points[k] = _Cuts.of(self.unknowns[k].thresholds())
        return made

    def combination_seeds(self, seed: int, combinations: np.ndarray) -> np.ndarray:
        """The seed of each combination's battles in run ``seed`` (63 bits each)."""
        x = _mix(np.array([seed], np.uint64) ^ _COMBINATION_SALT)
        x = _mix(x ^ _mix(combinations.astype(np.uint64)))
        return (x >> np.uint64(1)).astype(np.int64)

    def prepare(self) -> MixturePrepared:
        return MixturePrepared(self)

    def label(self, rs: rulesets.Ruleset, path: str) -> str:
        """An unknown's key in words ("pikemen in the defending army"); a one-line army's
        count (``attacker.units[0].men[1].count``) is named by its type."""
        listed = re.fullmatch(r"(.*\.men)\[(\d+)\]\.count", path)
        if listed:
            try:
                node: Any = self.data
                for key, index in _PART.findall(listed.group(1)):
                    node = node[int(index)] if index else node[key]
                path = f"{listed.group(1)}.{node[int(listed.group(2))]['type']}"
            except (KeyError, IndexError, TypeError):
                pass
        path = re.sub(r"\[\d+\]$", "", path)  # an element of a list: named by the list
        try:
            said = rs.describe_path(path, self.data)
        except (BattleOddsError, KeyError, IndexError, TypeError, ValueError):
            said = path
        return said if said != path else _path_words(path)


class _Columns(dict[str, np.ndarray]):
    """A chunk's outcome columns of ``count`` battles, each made (zeros) when first
    asked for: most are views of a stacked call's rows (MixturePrepared._gather) or
    the unknowns' codes, and a column of zeros made for each beforehand was 4 ms of a
    chunk of 131,072 battles (knights_vs_pikemen's 19 columns)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def __missing__(self, name: str) -> np.ndarray:
        made = self[name] = np.zeros(self.count, np.int64)
        return made


class MixturePrepared(GroupedPrepared):
    """A scenario with unknowns, ready to run any range of battles: each battle's inputs
    drawn, the battles grouped by combination and run by that combination's prepared
    kernel (see the module's docstring), the outcome columns put back in battle order."""

    grouped_by = "unknowns"
    #: A call makes a kernel call for each combination its battles drew: the longest a
    #: call may take (running.chunking.LONGEST_CALL_SECONDS) keeps those a small share.
    call_seconds = 1.0

    def __init__(self, mixture: Mixture) -> None:
        self.mixture = mixture
        # The columns of every checked combination: each column a combination can have
        # comes from a unit type that some value fields.
        known = [mixture.prepared_of(c) for c in mixture.checked]
        names: dict[str, None] = {}
        flags: set[str] = set()
        limits = []
        for p in known:
            names.update(dict.fromkeys(p.columns))
            flags |= p.flags
            limits.append(p.step_limit)
        names.update(dict.fromkeys(f"unknown.{k}" for k in range(len(mixture.unknowns))))
        self.columns = MappingProxyType({name: i for i, name in enumerate(names)})
        self.flags = frozenset(flags)
        self.step_limit = None if None in limits else max(limits)  # type: ignore[type-var]
        self.kernel = known[0].kernel
        self.notes = tuple(dict.fromkeys(n for p in known for n in p.notes))
        # A stop rule of any combination: the answer reports withdrawals. Each
        # combination's kernel gives them and a battle in progress (what every one
        # declares), not the state after a step (this class has no run_until).
        self.stop_rules = next((p.stop_rules for p in known if p.has_stop_rules), self.stop_rules)
        self.from_step = max(p.from_step for p in known)
        self.unfolds = frozenset.intersection(*(p.unfolds for p in known)) - {BY_STEP}
        # The gather of the outcome columns from the last stack's rows (_gather).
        self._places: dict[int, tuple[Stack, np.ndarray, np.ndarray]] = {}
        self._column_places: dict[int, list[int]] = {}
        # The combinations the last chunks drew, by (seed, first battle): a chunk that
        # starts inside a block counts the block's earlier battles, mostly the chunks
        # just run (_earlier), rather than drawing them again.
        self._drawn: dict[tuple[int, int], np.ndarray] = {}
        self._drawn_lock = threading.Lock()
        # Each set of combinations' members and stacks (_plan_of), by their bytes.
        self._plans: dict[bytes, Any] = {}
        self._present: dict[tuple[bytes, int], tuple[dict[int, Prepared], set[int]]] = {}

    def memory_bytes(self, battles: int) -> int:
        # The chunk's outcome columns, the input draws, and the widest combination's rows.
        own = 8 * (3 * len(self.columns) + 2 * len(self.mixture.unknowns) + 4) * battles
        # A stacked call's rows are as wide as the widest combination's.
        widest = max(
            self.mixture.prepared_of(c).memory_bytes(battles) for c in self.mixture.checked
        )
        return own + widest  # and a stacked call's tables, STACKED_TABLE_BYTES at most

    def run(self, seed: int, first: int, count: int) -> Mapping[str, np.ndarray]:
        m = self.mixture
        if count == 0:
            return {name: np.zeros(0, np.int64) for name in self.columns}
        out = _Columns(count)
        drawn = m.draws(seed, first, count)
        combos = drawn @ m.strides
        with self._drawn_lock:
            if len(self._drawn) >= KEPT_CHUNKS:
                del self._drawn[next(iter(self._drawn))]
            self._drawn[(seed, first)] = combos
        if m.combinations <= DENSE_COMBINATIONS:
            # A count a combination: faster than sorting the chunk's draws.
            tally = np.bincount(combos, minlength=m.combinations)
            drawn_here = np.flatnonzero(tally)
        else:
            drawn_here = np.unique(combos)
        present, stacking = self._stacking_of(drawn_here)
        earlier = lambda start, n: self._earlier(seed, start, n)  # noqa: E731
        if len(stacking) == len(present):
            # Every battle on a stacked kernel: numbered and seeded in arrays.
            numbers = grouped_numbers(first, combos, earlier, BLOCK)
            if m.combinations <= DENSE_COMBINATIONS:
                place = np.zeros(m.combinations, np.int64)
                place[drawn_here] = np.arange(len(drawn_here))
                slot = place[combos]
            else:
                slot = np.searchsorted(drawn_here, combos)
            seeds = m.combination_seeds(seed, drawn_here).astype(np.uint64)
            viewed = self._run_stacked(drawn_here, slot, numbers, seeds[slot], out)
        else:
            viewed = None
            calls = list(grouped_calls(first, combos, earlier, BLOCK))
            # Each call's seed, for all of them at once (a hash a call cost as much as a
            # small group's battles).
            seeds = m.combination_seeds(seed, np.array([c for c, _, _ in calls], np.int64))
            # The combinations the stacked kernel does not run (olympia's chain kernel,
            # say) run by calls of their own.
            together = [j for j, (c, _, _) in enumerate(calls) if c in stacking]
            apart = [j for j, (c, _, _) in enumerate(calls) if c not in stacking]
            if together:
                self._run_stacked(
                    *self._numbered([calls[j] for j in together], seeds[together], count), out
                )
            if apart:
                self._run_calls([calls[j] for j in apart], seeds[apart], out)
        for k in range(len(m.unknowns)):
            out[f"unknown.{k}"] = unknown_code(drawn[:, k], out["winner"], int(m.sizes[k]))
        columns = {name: out[name] for name in self.columns}  # in order, zeros where none
        if viewed is not None:
            rows, places = viewed
            names = list(columns)
            if names[: len(places)] == list(places):
                # The rows as a plain run gives them (the same columns in the same
                # order): the statistics count them in one pass, not a pass a column.
                return Outcomes(rows, places, {n: columns[n] for n in names[len(places) :]})
        return columns

    def _stacking_of(self, drawn_here: np.ndarray) -> tuple[dict[int, Prepared], set[int]]:
        """The prepared combinations ``drawn_here`` and those of them a stacked call
        runs, made once for a set of combinations (as :meth:`_plan_of`)."""
        key = (drawn_here.tobytes(), STACKED_TABLE_BYTES)
        known_set = self._present.get(key)
        if known_set is not None:
            return known_set
        m = self.mixture
        known = m._prepared  # read without the lock: a combination once prepared stays
        present = {c: known.get(c) or m.prepared_of(c) for c in drawn_here.tolist()}
        stacking = {c for c, p in present.items() if isinstance(p, StackedRuns) and p.stacks()}
        # A stacked call builds every member's tables at once (skirmish's expected damage,
        # a participant against each other): past a bound, a call a combination.
        built = sum(present[c].stacked_table_bytes() for c in stacking)  # type: ignore[attr-defined]
        if built > STACKED_TABLE_BYTES:
            stacking = set()
        if len(self._present) >= KEPT_CHUNKS:
            self._present.clear()
        self._present[key] = (present, stacking)
        return present, stacking

    def _earlier(self, seed: int, start: int, count: int) -> np.ndarray:
        """The combinations battles ``start .. start + count - 1`` of run ``seed`` drew:
        from the chunks kept (:attr:`_drawn`) where they hold every one, else drawn (the
        same numbers either way: the draws are a pure function of seed and battle)."""
        with self._drawn_lock:
            kept = sorted((f, c) for (s, f), c in self._drawn.items() if s == seed)
        parts = []
        at = start
        for first, combos in kept:
            if first <= at < first + len(combos):
                part = combos[at - first : start + count - first]
                parts.append(part)
                at += len(part)
            if at == start + count:
                return np.concatenate(parts) if len(parts) > 1 else parts[0]
        m = self.mixture
        return m.draws(seed, start, count) @ m.strides

    @staticmethod
    def _numbered(
        calls: list[tuple[int, int, np.ndarray]], seeds: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The calls' combinations (ascending) and, for each of the chunk's ``count``
        battles, its combination's place among them (-1: a battle of no call here), its
        number and its seed: what :meth:`_run_stacked` takes."""
        combinations = np.unique(np.array([c for c, _, _ in calls], np.int64))
        lengths = np.array([len(at) for _, _, at in calls], np.int64)
        positions = np.concatenate([at for _, _, at in calls])
        starts = np.cumsum(lengths) - lengths
        numbers = np.zeros(count, np.int64)
        numbers[positions] = np.repeat(np.array([i for _, i, _ in calls], np.int64), lengths) + (
            np.arange(len(positions), dtype=np.int64) - np.repeat(starts, lengths)
        )
        slot = np.full(count, -1, np.int64)
        slot[positions] = np.repeat(
            np.searchsorted(combinations, [c for c, _, _ in calls]), lengths
        )
        battle_seeds = np.zeros(count, np.uint64)
        battle_seeds[positions] = np.repeat(seeds.astype(np.uint64), lengths)
        return combinations, slot, numbers, battle_seeds

    def _run_stacked(
        self,
        combinations: np.ndarray,
        slot: np.ndarray,
        numbers: np.ndarray,
        battle_seeds: np.ndarray,
        out: _Columns,
    ) -> tuple[np.ndarray, dict[str, int]] | None:
        """The battles of ``combinations`` (ascending) in one kernel call a stack key
        (rulesets/stacked.py), in battle order: battle j of the chunk, of combination
        ``combinations[slot[j]]`` (-1: a battle run apart, left as it is), battle
        ``numbers[j]`` of it on seed ``battle_seeds[j]``, the one its combination's own
        call would fight; the columns then gathered from the rows at once. Returns the
        rows and each column's place in them where every battle ran in one call and
        each column of ``out`` placed (not derived) is a view of them (:meth:`_gather`)."""
        m = self.mixture
        count = out.count
        members, stacks = self._plan_of(combinations)
        for key, of_key, own, kept in stacks:
            tables, slot_of = m.stack_of(key, of_key)
            made = kept.get("stack")
            if made is None or made[0] is not tables:
                stack_slot = np.array([slot_of.get(c, -1) for c in members], np.int64)
                made = kept["stack"] = (tables, stack_slot)
            stack_slot = made[1]
            slots = np.where(slot >= 0, stack_slot[slot], -1)
            # With one key for every battle, all of them; else this key's battles only.
            every = len(stacks) == 1 and bool((slot >= 0).all())
            here = np.arange(count) if every else np.flatnonzero(slots >= 0)
            rows = np.zeros((len(here), tables.width + 1), np.int64)  # the last: zeros
            first: StackedRuns = members[of_key[0]]  # type: ignore[assignment]
            at: Any = slice(None) if every else here  # every battle: no copies
            first.run_stacked(tables, slots[at], battle_seeds[at], numbers[at], rows)
            placed = self._gather(tables, slot_of, slots[at], rows, here, out, own, kept)
            if len(stacks) == 1 and len(here) == count and placed is not None:
                return rows, placed
        return None

    def _plan_of(
        self, combinations: np.ndarray
    ) -> tuple[
        dict[int, Prepared], list[tuple[Hashable, list[int], dict[int, Prepared], dict[str, Any]]]
    ]:
        """The prepared ``combinations`` and, for each stack key among them, its
        combinations, their prepared and what :meth:`_run_stacked` and :meth:`_gather`
        keep for them: made once for a set of combinations (past the first chunks, each
        chunk draws all of them), not a Python step a combination a chunk."""
        key = combinations.tobytes()
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        m = self.mixture
        known = m._prepared  # as run reads it
        members = {c: known.get(c) or m.prepared_of(c) for c in combinations.tolist()}
        keys: dict[Hashable, list[int]] = {}
        for combination, prepared in members.items():
            keys.setdefault(prepared.stack_key(), []).append(combination)  # type: ignore[attr-defined]
        stacks: list[tuple[Hashable, list[int], dict[int, Prepared], dict[str, Any]]] = [
            (k, of_key, {c: members[c] for c in of_key}, {}) for k, of_key in keys.items()
        ]
        plan = (members, stacks)
        if len(self._plans) >= KEPT_CHUNKS:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def _gather(
        self,
        tables: Stack,
        slot_of: dict[int, int],
        slots: np.ndarray,
        rows: np.ndarray,
        here: np.ndarray,
        out: _Columns,
        members: Mapping[int, Prepared],
        kept: dict[str, Any],
    ) -> dict[str, int] | None:
        """Each outcome column of the stacked ``rows`` (battles ``here`` of the chunk)
        into ``out``: a column at one place in every member's row is a view of it (as a
        plain run's columns are), another gathered at once (a member without it reads
        the rows' last column, zeros); the derived ones a derivation at a time. Returns
        each column's place in the rows where every column but the derived ones is such
        a view and ``here`` is every battle, else None. ``kept``: what it keeps for
        ``members`` (their derivations), from the plan (:meth:`_plan_of`)."""
        names = [n for n in self.columns if not n.startswith("unknown.")]
        places = self._places.get(id(tables))
        if places is None or places[0] is not tables:
            # Each combination's places kept (-1: none), read again for every stack.
            index = np.empty((len(slot_of), len(names)), np.int64)
            for c, s in slot_of.items():
                index[s] = self._column_places.get(c) or self._places_of(c, names)
            index[index < 0] = tables.width
            places = (tables, index, (index == index[0]).all(axis=0))
            if len(self._places) >= 8:  # most of them for stacks grown since
                self._places.clear()
            self._places[id(tables)] = places
        _, index, alike = places
        every = len(here) == out.count
        placed = {n: int(index[0, j]) for j, n in enumerate(names)} if alike.all() else None
        battles = np.arange(len(here))
        for j, name in enumerate(names):
            column = rows[:, index[0, j]] if alike[j] else rows[battles, index[slots, j]]
            if every:
                out[name] = column
            else:
                out[name][here] = column
        by_derivation: dict[Hashable, list[int]] | None = kept.get("derivations")
        if by_derivation is None:
            by_derivation = {}
            for combination, prepared in members.items():
                key = prepared.derived_key()  # type: ignore[attr-defined]
                by_derivation.setdefault(key, []).append(combination)
            kept["derivations"] = by_derivation
        for combinations in by_derivation.values():
            derived: StackedRuns = members[combinations[0]]  # type: ignore[assignment]
            if len(by_derivation) == 1:
                chosen, part = here, rows
            else:
                mask = np.isin(slots, [slot_of[c] for c in combinations])
                chosen, part = here[mask], rows[mask]
            for name, column in derived.derived_columns(part).items():
                target = out.get(name)
                if target is not None:  # as a call's: the mixture's columns only
                    target[chosen] = column
                    if placed is not None:
                        placed.pop(name, None)
        return placed if every else None

    def _places_of(self, combination: int, names: list[str]) -> list[int]:
        """Where each of ``names`` is in the combination's rows (-1: none)."""
        own = self.mixture.prepared_of(combination).columns
        places = [own.get(n, -1) for n in names]
        self._column_places[combination] = places
        return places

    def _run_calls(
        self,
        calls: list[tuple[int, int, np.ndarray]],
        seeds: np.ndarray,
        out: _Columns,
    ) -> None:
        """The calls' battles, a kernel call each (a ruleset without stacked runs)."""
        m = self.mixture
        results = run_groups(
            [
                (m.prepared_of(combination), int(c_seed), index, len(positions))
                for (combination, index, positions), c_seed in zip(calls, seeds, strict=True)
            ]
        )
        positions = np.concatenate([at for _, _, at in calls])
        for name in self.columns:
            if not name.startswith("unknown."):
                parts = [r.get(name) for r in results]
                if all(part is None for part in parts):
                    continue
                out[name][positions] = np.concatenate(
                    [
                        np.zeros(len(at), np.int64) if part is None else part
                        for part, (_, _, at) in zip(parts, calls, strict=True)
                    ]
                )


_SIDE_WORDS = {"attacker": "the attacking army", "defender": "the defending army"}


def _path_words(path: str) -> str:
    """A data path no ruleset words: its last key first, then where it is, counted from 1
    ("attacker.units[0].noble.control_battle": "control battle: the attacking army,
    unit 1, noble")."""
    parts = [(k, i) for k, i in _PART.findall(path)]
    keys = [k for k, _ in parts if k]
    where: list[str] = []
    for key, index in parts[:-1]:
        if index:
            where[-1] = f"{where[-1].rstrip('s')} {int(index) + 1}" if where else index
        elif key:
            where.append(_SIDE_WORDS.get(key, key.replace("_", " ")))
    last = keys[-1].replace("_", " ") if keys else path
    return f"{last}: {', '.join(where)}" if where else last


#: Groups of fewer battles run on the calling thread alone: waking the kernel's thread
#: pool costs more than such a group's battles (the battles are the same on any number
#: of threads).
SERIAL_BATTLES = 512


def run_group(prepared: Prepared, seed: int, first: int, count: int) -> Mapping[str, np.ndarray]:
    return run_groups([(prepared, seed, first, count)])[0]


def run_groups(
    groups: list[tuple[Prepared, int, int, int]],
) -> list[Mapping[str, np.ndarray]]:
    """``prepared.run(seed, first, count)`` of each group, in their order: the groups of
    fewer than :data:`SERIAL_BATTLES` battles all on the calling thread alone (the
    thread count set once for them, not twice a group), the others on every thread."""
    import numba

    results: list[Mapping[str, np.ndarray]] = [{} for _ in groups]
    small = [i for i, (_, _, _, count) in enumerate(groups) if count < SERIAL_BATTLES]
    if small:
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            for i in small:
                prepared, seed, first, count = groups[i]
                results[i] = prepared.run(seed, first, count)
        finally:
            numba.set_num_threads(threads)
    for i, (prepared, seed, first, count) in enumerate(groups):
        if count >= SERIAL_BATTLES:
            results[i] = prepared.run(seed, first, count)
    return results
