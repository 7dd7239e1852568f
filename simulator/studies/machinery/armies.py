"""The armies ``battle-odds best`` chooses among: whole compositions of offered unit types
whose cost is within a budget, counted without listing them, listed when few, and their
neighbours (one man added, taken away or swapped) for the local search when many.

An army is a tuple of counts, one per offered type, in the order of ``Offer.types``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ... import rulesets
from ...errors import ParameterError, Source, did_you_mean
from ...scenario.costs import given_costs, read_costs_file
from ...scenario.scenario import Scenario, from_data
from .one_type import check_budget, offered_types

Army = tuple[int, ...]
#: Costs are compared in thousandths (MIN_COST is 0.001), so sums of costs are exact.
_SCALE = 1000


@dataclass(frozen=True)
class Offer:
    """What may be bought: the types, what one man of each costs, the budget, the most
    men of each type (``caps``) and of all types together (``room``: None, no limit)."""

    types: tuple[str, ...]
    costs: tuple[float, ...]
    budget: float
    caps: tuple[int, ...]
    room: int | None = None

    @property
    def units(self) -> tuple[int, ...]:
        """Costs in thousandths."""
        return tuple(round(c * _SCALE) for c in self.costs)

    @property
    def purse(self) -> int:
        """The budget in thousandths (a hair over, so that 0.3 buys three men of 0.1)."""
        return math.floor(self.budget * _SCALE + 1e-6)

    def cost(self, army: Army) -> float:
        return sum(n * u for n, u in zip(army, self.units, strict=True)) / _SCALE

    def fits(self, army: Army) -> bool:
        units = sum(n * u for n, u in zip(army, self.units, strict=True))
        return (
            all(0 <= n <= cap for n, cap in zip(army, self.caps, strict=True))
            and units <= self.purse
            and (self.room is None or sum(army) <= self.room)
        )

    def label(self, army: Army) -> str:
        """``4 archer + 6 knight``; ``nothing`` for the empty army."""
        parts = [f"{n} {t}" for n, t in zip(army, self.types, strict=True) if n]
        return " + ".join(parts) if parts else "nothing"

    def as_dict(self, army: Army) -> dict[str, int]:
        return {t: n for t, n in zip(self.types, army, strict=True) if n}


def side_costs(
    ruleset: rulesets.Ruleset,
    data: Mapping[str, Any],
    costs: Mapping[str, float] | str | Path | None,
) -> dict[str, float]:
    """What a man of each type costs: the unit table, under the scenario's own unit
    definitions (a ``cost`` key), under ``costs`` (a mapping or a ``--costs`` file)."""
    table = dict(ruleset.unit_costs())
    for name, fields in (data.get(ruleset.types_key) or {}).items():
        if isinstance(fields, Mapping) and "cost" in fields:
            table[name] = float(fields["cost"])
    if costs is not None:
        known = dict.fromkeys([*table, *ruleset.unit_types(data)])
        override = (
            given_costs(costs, known, "costs")
            if isinstance(costs, Mapping)
            else read_costs_file(costs, known)
        )
        table.update(override)
    return table


def parse_caps(text: str | Mapping[str, int] | None, types: Sequence[str]) -> dict[str, int]:
    """``knight=8,archer=3`` (or a mapping) as the most men of each offered type."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        pairs: list[tuple[str, Any]] = [(str(k), v) for k, v in text.items()]
    else:
        pairs = []
        for item in (p.strip() for p in text.split(",")):
            name, eq, value = item.partition("=")
            if not eq or not name.strip():
                raise ParameterError("caps", f"'{item}'", "expected TYPE=COUNT, e.g. knight=8")
            try:
                pairs.append((name.strip(), int(value)))
            except ValueError:
                raise ParameterError(
                    "caps", f"{name.strip()}={value.strip()}", "expected a whole number of men"
                ) from None
    caps: dict[str, int] = {}
    for name, value in pairs:
        if name not in types:
            raise ParameterError(
                "caps",
                name,
                f"not a type offered ({{types=}}{','.join(types)})" + did_you_mean(name, types),
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ParameterError("caps", f"{name}={value}", "expected a whole number >= 0")
        caps[name] = value
    return caps


def make_offer(
    ruleset: rulesets.Ruleset,
    data: Mapping[str, Any],
    budget: float,
    types: Sequence[str] | str | None,
    costs: Mapping[str, float] | str | Path | None,
    caps: str | Mapping[str, int] | None,
    room: int | None,
) -> tuple[Offer, list[str]]:
    """The offer of a ``best`` question, checked; and notes on the types left out."""
    table = side_costs(ruleset, data, costs)
    chosen, notes = offered_types(ruleset, table, types)
    budget = check_budget("budget", budget, {t: table[t] for t in chosen})
    limits = parse_caps(caps, chosen)
    cheapest = min(chosen, key=lambda t: table[t])
    if table[cheapest] > budget + 1e-9:
        raise ParameterError(
            "budget",
            None,
            f"{{budget=}}{budget:g} buys no man of any type offered: the cheapest, "
            f"{cheapest}, costs {table[cheapest]:g}",
            whole=True,
        )
    most = [math.floor(budget / table[t] + 1e-9) for t in chosen]
    offer = Offer(
        types=tuple(chosen),
        costs=tuple(table[t] for t in chosen),
        budget=float(budget),
        caps=tuple(min(m, limits.get(t, m)) for t, m in zip(chosen, most, strict=True)),
        room=room,
    )
    return offer, notes


def count_armies(offer: Offer) -> int:
    """How many armies the offer holds, counted by costs (and men, under a room limit)
    without listing them: a dynamic programme over what has been spent."""
    units, purse = offer.units, offer.purse
    step = math.gcd(*units)
    size = purse // step + 1
    if offer.room is None:
        return _count_by_spending(units, offer.caps, step, size)
    men = offer.room + 1
    ways = np.zeros((size, men), dtype=object)
    ways[0, 0] = 1
    for unit, cap in zip(units, offer.caps, strict=True):
        stride = unit // step
        after = np.zeros_like(ways)
        for n in range(cap + 1):
            spent, taken = n * stride, n if offer.room is not None else 0
            if spent >= size or taken >= men:
                break
            after[spent:, taken:] += ways[: size - spent, : men - taken]
        ways = after
    return int(ways.sum())


def _count_by_spending(units: tuple[int, ...], caps: tuple[int, ...], step: int, size: int) -> int:
    """count_armies without a room limit, in time linear in the purse: the ways to have
    spent ``s`` after a type of stride ``k`` and cap ``c`` are the sum of the ways before
    it at ``s, s - k, ..., s - c k``, a difference of two running sums along each
    residue of ``k`` (adding the ``c + 1`` terms one by one took hours for a budget of
    100,000 men)."""
    ways = np.zeros(size, dtype=object)
    ways[0] = 1
    for unit, cap in zip(units, caps, strict=True):
        stride = unit // step
        rows = -(-size // stride)
        padded = np.zeros(rows * stride, dtype=object)
        padded[:size] = ways
        running = np.cumsum(padded.reshape(rows, stride), axis=0)
        if cap + 1 < rows:
            running[cap + 1 :] -= running[: rows - cap - 1].copy()
        ways = running.reshape(-1)[:size]
    return int(ways.sum())


def all_armies(offer: Offer) -> Iterator[Army]:
    """Every army of the offer, in lexicographic order of the counts."""
    units, purse = offer.units, offer.purse

    def extend(prefix: Army, left: int, men: int) -> Iterator[Army]:
        i = len(prefix)
        if i == len(units):
            yield prefix
            return
        most = min(offer.caps[i], left // units[i])
        if offer.room is not None:
            most = min(most, offer.room - men)
        for n in range(most + 1):
            yield from extend((*prefix, n), left - n * units[i], men + n)

    yield from extend((), purse, 0)


def neighbours(offer: Offer, army: Army) -> list[Army]:
    """Armies one move away: a man added or taken away; one man, or half of a type's men,
    exchanged for as many men of another type, or for all the men of it the money left
    buys (so that a knight may become two soldiers, and a search crosses a large army in
    a few steps). Only armies of the offer, each once, in a fixed order."""
    found: dict[Army, None] = {}
    k = len(army)
    for i in range(k):
        for delta in (1, -1):
            found[_moved(army, {i: delta})] = None
        for j in range(k):
            if i == j or army[i] == 0:
                continue
            for size in dict.fromkeys((1, (army[i] + 1) // 2)):
                fewer = _moved(army, {i: -size})
                found[_moved(fewer, {j: size})] = None
                found[_moved(fewer, {j: _most(offer, fewer, j)})] = None
    return [a for a in found if a != army and offer.fits(a)]


def _moved(army: Army, changes: Mapping[int, int]) -> Army:
    return tuple(n + changes.get(i, 0) for i, n in enumerate(army))


def _most(offer: Offer, army: Army, j: int) -> int:
    """The most men of type j that can join ``army`` within the offer."""
    units = offer.units
    left = offer.purse - sum(n * u for n, u in zip(army, units, strict=True))
    most = min(offer.caps[j] - army[j], left // units[j])
    if offer.room is not None:
        most = min(most, offer.room - sum(army))
    return max(most, 0)


def starts(offer: Offer, seed: int, random_starts: int) -> list[Army]:
    """Where the local search starts: each type alone, as many men as the money buys;
    the money shared evenly among the types; and ``random_starts`` random armies that
    spend the budget (drawn from ``seed``)."""
    found: dict[Army, None] = {}
    for i in range(len(offer.types)):
        army = [0] * len(offer.types)
        army[i] = min(offer.caps[i], offer.room if offer.room is not None else offer.caps[i])
        found[tuple(army)] = None
    found[_fill(offer, [0] * len(offer.types), list(range(len(offer.types))))] = None
    rng = np.random.default_rng(seed)
    for _ in range(random_starts):
        order = [int(i) for i in rng.permutation(len(offer.types))]
        army = [0] * len(offer.types)
        found[_fill(offer, army, order, rng)] = None
    return [a for a in found if offer.fits(a)]


def _fill(
    offer: Offer, army: list[int], order: list[int], rng: np.random.Generator | None = None
) -> Army:
    """``army`` with men added, round the ``order`` of types (or at random), while the
    budget, caps and room allow."""
    while True:
        open_ = [i for i in order if offer.fits(tuple(a + (j == i) for j, a in enumerate(army)))]
        if not open_:
            return tuple(army)
        if rng is None:
            for i in open_:
                if offer.fits(tuple(a + (j == i) for j, a in enumerate(army))):
                    army[i] += 1
        else:
            army[open_[int(rng.integers(len(open_)))]] += 1


def reinforced(scenario: Scenario, side: str, kind: str, count: int, label: str) -> Scenario:
    """The scenario with ``count`` men of ``kind`` added to ``side`` where its ruleset puts
    them (negative: taken away), validated, keeping the scenario's battles and seed."""
    data = rulesets.get(scenario.ruleset).add_men(scenario, side, kind, count)
    changed = from_data(data, Source(f"{scenario.source.label} with {label}"))
    return replace(
        changed, name=f"{scenario.name} [{label}]", battles=scenario.battles, seed=scenario.seed
    )
