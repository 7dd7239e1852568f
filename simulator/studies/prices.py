"""What should each unit cost? A fair price list (``battle-odds prices``, ``simulator.prices``).

Prices are in units of a base type (the base costs 1) and a budget of B buys B / price men
of a type. A price list is **fair** when every type wins as often as it loses over its
equal-cost matchups: its net score, P(it wins) - P(it loses), averaged over every other
type, both roles (attacking and defending) and every budget asked for, is 0. That is one
equation per type but the base (the base's follows: every battle is one type's win and
the other's loss, so the scores of all types sum to 0).

How it is solved:

- every matchup is read from a
  :class:`~simulator.studies.machinery.price_cells.CellBank`: each count of men against
  each count is fought once, on the same seed and battle indices, and kept (common
  random numbers across iterations), so the equations are the same functions
  at every iteration and their roots do not move with the noise;
- counts are whole, so a price between two counts is read by linear interpolation
  between the neighbouring counts (on both sides);
- one sweep puts each type's price at the root of its own equation, the others held, by a
  bracketing root finder (Brent's method on the price): it cannot step past a root, and a
  type that no price within the budgets makes fair is found here;
- the types pull on each other (each score averages over all the others' prices), so
  repeated sweeps creep along the prices' common direction; the whole system is then
  solved by MINPACK's hybrid method (``scipy.optimize.root``, a trust region, so its steps
  are damped), falling back to damped sweeps if it stalls. It has converged when every
  type's score is within ``SCORE_TOLERANCE`` of 0, and says so when it has not.

A naive multiplicative update (price *= wins / losses) oscillates on steep win curves
(40 men against 40 is decided by a few percent of strength); a bracket cannot.

The interval of a price holds the other prices at their fair values and is the range of
prices at which the type's average score is within noise of 0 (batch means of the
cells, Student's t). The pairwise break-even prices are the finding a designer reads:
against each other type at its fair price, at each budget and in each role, the price at
which the two win equally often. A type whose pairwise prices spread widely is a counter
to some types and prey to others, not a mispriced unit.

Interrupted by Ctrl-C, the answer is ``partial``: the prices of the search's last step,
without intervals or break-even prices where they were not found.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import ParameterError, did_you_mean
from ..running.bounds import check_total
from ..running.imports_ahead import import_ahead
from ..running.interrupt import Interrupted, stop_reason
from ..running.plan import Progress
from ..running.progress import called_as_it_is_written, or_plain_lines
from ..scenario.costs import given_costs, read_costs_file
from ..scenario.scenario import DEFAULT_SEED
from .machinery.one_type import check_budget, offered_types, ruleset_named
from .machinery.planned import takes_plan
from .machinery.price_cells import ROLES, CellBank, Estimate, block_z
from .machinery.price_list import Pairwise, Prices, TypePrice

if TYPE_CHECKING:
    from ..running.distributed import Cluster
    from ..running.plan import StudyPlan


DEFAULT_BUDGETS = (10.0, 20.0, 40.0)
#: Battles per pair of counts: about +-3 points on one matchup, far less on a type's average.
DEFAULT_BATTLES = 1_000
#: The search ends when the prices are this close (relative) to the root ...
TOLERANCE = 1e-4
#: ... and every type's score is this close to 0 (far inside its noise).
SCORE_TOLERANCE = 1e-4
MAX_SWEEPS = 15
#: The most men of one type a search fields (a price below budget / MAX_MEN is not sought).
MAX_MEN = 400
#: A pairwise search looks up to this many times a type's count at its fair price.
PAIRWISE_REACH = 8
#: Pairs of counts a search fights per matchup (ordered pair of types, budget) at most,
#: for the bound checked before it starts: about three times what searches of 2 to 10
#: olympia types fought (19 to 34), so the bound is not met in practice; the bank holds
#: the whole to ``--max-total`` all the same.
CELLS_PER_MATCHUP = 100

T = TypeVar("T")
#: A cell: (attacker type, men, defender type, men).
Cell = tuple[str, int, str, int]
#: A computation over the bank's cells that yields the cells it reads next before it
#: reads them, so that many run side by side (:meth:`_Search._together`); its value is
#: what it returns.
Reading = Generator[list[Cell], None, T]


def cell_words(battles: int) -> str:
    """What a price search's progress counts, in words: its pairs of counts."""
    return f"each {battles:,} battles of so many men of one type against so many of another"


@takes_plan
def fair_prices(
    ruleset: str,
    types: Sequence[str] | str | None = None,
    base: str | None = None,
    budgets: Sequence[float] | str = DEFAULT_BUDGETS,
    costs: Mapping[str, float] | str | Path | None = None,
    battles: int = DEFAULT_BATTLES,
    seed: int = DEFAULT_SEED,
    *,
    plan: StudyPlan | None = None,
    confidence: float = 0.95,
    threads: int | None = None,
    progress: Progress | None = None,
    settings: Mapping[str, Any] | None = None,
    max_total: int | None = None,
    executor: Cluster | None = None,
) -> Prices:
    """The fair price list of ``types`` (default: every type that can fight alone) in units
    of ``base`` (default: the first type), over ``budgets``; ``costs`` (a mapping or a
    ``--costs`` file) are the starting prices (default: the unit table's); ``settings``
    (``{"rules": "engine"}``) go into every battle's ``[battle]`` table; ``max_total``:
    the most battles in all (default
    :data:`simulator.running.bounds.DEFAULT_MAX_TOTAL`); ``executor``: a Dask executor
    (:func:`simulator.running.distributed.executor_for`)."""
    rs = ruleset_named(ruleset)
    table = rs.unit_costs()
    if costs is not None:
        table = {
            **table,
            **(
                given_costs(costs, table, "costs")
                if isinstance(costs, Mapping)
                else read_costs_file(costs, table)
            ),
        }
    chosen, notes = offered_types(rs, table, types)
    if len(chosen) < 2:
        raise ParameterError("types", None, "a price list needs at least two types")
    base = chosen[0] if base is None else base.strip()
    if base not in chosen:
        where = "of the types offered" if base in table else f"of {rs.name}"
        raise ParameterError(
            "base",
            base,
            f"not one {where} ({', '.join(chosen)})" + did_you_mean(base, chosen, list_valid=False),
        )
    spend = _budgets(budgets)
    if not 0 < confidence < 1:
        raise ParameterError("confidence", confidence, "expected a probability, e.g. 0.95")
    start = {t: table[t] / table[base] for t in chosen}
    check_budget("budgets", spend[-1], start)
    smallest = spend[0]
    dear = [t for t in chosen if start[t] > smallest + 1e-9]
    if dear:
        raise ParameterError(
            "budgets",
            None,
            f"{{budgets=}}{smallest:g} buys no "
            + ", ".join(f"{t} (cost {start[t]:g} {base})" for t in dear)
            + f": raise the smallest budget to at least {max(start[t] for t in dear):g} "
            "or leave them out of {types}",
            whole=True,
        )
    matchups = len(chosen) * (len(chosen) - 1) * len(spend)
    check_total(
        f"prices: {len(chosen)} x {len(chosen) - 1} types x {len(spend)} budgets x "
        f"{CELLS_PER_MATCHUP} pairs of counts x {{battles=}}{battles:,}",
        matchups * CELLS_PER_MATCHUP * battles,
        max_total,
    )
    said = ExitStack()
    # The Python API without a progress: plain lines on stderr if the search is long.
    report = said.enter_context(or_plain_lines(progress, "prices", "pairs of counts fought", True))
    if progress is not None:
        report = called_as_it_is_written(progress)  # lambda cells: ..., as in 0.1

    def cells_fought(cells: int) -> None:
        report(cells, 0, cell_words(battles))

    # The root finders and the intervals' quantile, imported while the first cells fight.
    import_ahead("scipy.optimize", "scipy.special")
    bank = CellBank(
        rs.name,
        battles,
        seed,
        threads=threads,
        progress=cells_fought,
        max_total=max_total,
        settings=settings,
        executor=executor,
    )
    search = _Search(bank, chosen, spend, base, start)
    found: dict[str, TypePrice] = {}
    solved = None
    try:
        solved = search.solve()
        z = block_z(confidence)
        for t in chosen:
            found[t] = search.price_of(t, z)
    except Interrupted:
        pass
    finally:
        bank.engine.close()
        said.close()
    partial = len(found) < len(chosen)
    answer = {t: found.get(t) or _without_interval(t, search.prices[t]) for t in chosen}
    converged, sweeps, evaluations, residual = solved or (False, 0, 0, math.nan)
    notes = [
        *notes,
        "counts are whole: a price between two counts is read by linear interpolation of "
        "the scores at the neighbouring counts",
    ]
    if partial:
        notes.append(
            f"{stop_reason()} "
            + (
                "during the search: the prices are its last step's, not fair prices"
                if solved is None
                else f"after the prices: {len(chosen) - len(found)} types have no interval"
            )
        )
    elif not converged:
        notes.append(
            f"not converged: after {sweeps} sweeps and {evaluations} Newton evaluations a "
            f"type's score is still {residual:.2g} from 0 (tolerance {SCORE_TOLERANCE:g}); "
            "the prices are the last step's"
        )
    return Prices(
        ruleset=rs.name,
        base=base,
        types=tuple(chosen),
        budgets=spend,
        battles=battles,
        seed=seed,
        confidence=confidence,
        prices=answer,
        converged=converged,
        sweeps=sweeps,
        evaluations=evaluations,
        residual=residual,
        cells=bank.cells,
        notes=notes,
        settings=bank.settings,
        partial=partial,
        solved=solved is not None,
    )


def _without_interval(kind: str, price: float) -> TypePrice:
    """A price the interrupted search did not finish: no interval, score or pairs."""
    return TypePrice(kind, price, math.nan, math.nan, math.nan, math.nan, [])


def _budgets(budgets: Sequence[float] | str) -> tuple[float, ...]:
    texts = budgets.split(",") if isinstance(budgets, str) else list(budgets)
    values = []
    for text in texts:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise ParameterError(
                "budgets", f"'{text}'", "expected numbers separated by commas, e.g. 10,20,40"
            ) from None
        if not (math.isfinite(value) and value > 0):
            raise ParameterError("budgets", text, "expected a finite number > 0")
        values.append(value)
    if not values:
        raise ParameterError("budgets", None, "expected at least one budget, e.g. 10,20,40")
    return tuple(sorted(set(values)))


class _Search:
    """The fair-price equations of ``types`` over one bank of cells, and their roots."""

    def __init__(
        self,
        bank: CellBank,
        types: list[str],
        budgets: tuple[float, ...],
        base: str,
        start: dict[str, float],
    ) -> None:
        self.bank = bank
        self.types = types
        self.budgets = budgets
        self.base = base
        self.prices = dict(start)
        # A type's price buys at least one man at the smallest budget and at most
        # MAX_MEN at the largest.
        self.highest = budgets[0]
        self.lowest = budgets[-1] / MAX_MEN

    def score(self, kind: str, price: float) -> Estimate:
        """``kind``'s net score at ``price``, the others at theirs, over every other type,
        budget and role (each context weighing the same)."""
        contexts = [
            (kind, b / price, other, b / self.prices[other], role)
            for other in self.types
            if other != kind
            for b in self.budgets
            for role in ROLES
        ]
        # The cells this score reads, fought side by side before it reads them.
        self.bank.fight(cell for c in contexts for cell in self.bank.cells_of(*c))
        blocks = [self.bank.side_score(*c) for c in contexts]
        return self.bank.estimate(np.mean(blocks, axis=0))

    def solve(self) -> tuple[bool, int, int, float]:
        """(converged, sweeps, evaluations of the whole system, largest |score| left)."""
        # One sweep of bracketed roots, type by type: a start near the answer, and a
        # type out of the budgets' reach is found here, as an error.
        self._sweep(1.5, 1.0)
        free = [t for t in self.types if t != self.base]
        start = np.log([self.prices[t] for t in free])
        # The types' prices pull on each other (each score averages over all the others'
        # prices), so sweeps creep along their common direction; a damped Newton step on
        # the whole system (MINPACK's hybrid method: a trust region, so steps are
        # damped) does not. The cells are kept, so the system is the same function at
        # every step.
        from scipy.optimize import root

        solved = root(self._residual, start, method="hybr", options={"xtol": TOLERANCE / 10})
        left = np.abs(self._residual(solved.x))
        evaluations = int(solved.nfev) + 1
        if solved.success and left.max() <= SCORE_TOLERANCE:
            return True, 1, evaluations, float(left.max())
        # Where the trust region stalls (a kink between whole counts), fall back to damped
        # sweeps from the best point found.
        self._residual(solved.x if left.max() < np.abs(self._residual(start)).max() else start)
        damping, last = 1.0, math.inf
        for sweep in range(2, MAX_SWEEPS + 1):
            change = self._sweep(1.1, damping)
            left = np.abs(self._residual(np.log([self.prices[t] for t in free])))
            if change < TOLERANCE and left.max() <= SCORE_TOLERANCE:
                return True, sweep, evaluations, float(left.max())
            if change > last:
                damping = max(damping / 2, 0.125)
            last = change
        return False, MAX_SWEEPS, evaluations, float(left.max())

    def _sweep(self, step: float, damping: float) -> float:
        """Each type's price to the root of its own equation, the others held (a damped
        step towards it); the largest relative change."""
        change = 0.0
        for kind in self.types:
            if kind == self.base:
                continue
            old = self.prices[kind]
            target = self._root(kind, old, 0.0, step, strict=True)
            new = old ** (1 - damping) * target**damping
            self.prices[kind] = new
            change = max(change, abs(math.log(new / old)))
        return change

    def _residual(self, log_prices: np.ndarray) -> np.ndarray:
        """Every type's score but the base's at these prices (held inside the search's
        reach), which become the search's prices."""
        free = [t for t in self.types if t != self.base]
        edges = math.log(self.lowest), math.log(self.highest)
        for kind, value in zip(free, log_prices, strict=True):
            self.prices[kind] = math.exp(min(max(float(value), edges[0]), edges[1]))
        return np.array([self.score(kind, self.prices[kind]).value for kind in free])

    def _root(self, kind: str, start: float, z: float, step: float, strict: bool) -> float:
        """The price at which ``kind``'s score (+ ``z`` errors) is 0, from ``start``.
        The score falls as the price rises. At the search's edges: an error when
        ``strict``, else the edge."""

        def f(log_price: float) -> float:
            return self.score(kind, math.exp(log_price)).shifted(z)

        here = math.log(min(max(start, self.lowest), self.highest))
        value = f(here)
        sign = 1 if value > 0 else -1
        edge = math.log(self.highest if sign > 0 else self.lowest)
        while value * sign > 0:
            if here == edge:
                if strict:
                    raise self._out_of_reach(kind, sign)
                return math.exp(edge)
            previous = here
            here = (
                min(here + math.log(step), edge) if sign > 0 else max(here - math.log(step), edge)
            )
            value = f(here)
        if value == 0:
            return math.exp(here)
        from scipy.optimize import brentq  # at use: scipy takes a while to import

        low, high = sorted((previous, here))
        return math.exp(brentq(f, low, high, xtol=1e-6))

    def _out_of_reach(self, kind: str, sign: int) -> ParameterError:
        if sign > 0:
            return ParameterError(
                "budgets",
                None,
                f"{{budgets=}}{self.budgets[0]:g} is too small for {kind}: one man of it wins "
                f"more than it loses at that price (in {self.base}); raise the smallest "
                "budget or leave it out of {types}",
                whole=True,
            )
        return ParameterError(
            "types",
            kind,
            f"loses more than it wins even at a price of {self.lowest:.3g} "
            f"{self.base} ({MAX_MEN} men at budget {self.budgets[-1]:g}); leave it out",
        )

    def price_of(self, kind: str, z: float) -> TypePrice:
        price = self.prices[kind]
        estimate = self.score(kind, price)
        if kind == self.base:
            low = high = price
        else:
            low = self._root(kind, price, -z, 1.05, strict=False)
            high = self._root(kind, price, z, 1.05, strict=False)
        pairwise = self._together(
            [
                self._pairwise(kind, other, b, role, z)
                for other in self.types
                if other != kind
                for b in self.budgets
                for role in ROLES
            ]
        )
        return TypePrice(kind, price, low, high, estimate.value, estimate.error, pairwise)

    def _together(self, searches: list[Reading[T]]) -> list[T]:
        """The answers of ``searches`` run side by side: each yields the cells it reads
        next, and the cells all of them ask for are fought together (on the plan's
        threads) before each reads its own. A type's pairwise searches (54 in
        docs/designer.md's example), each a chain of readings of one or two new cells,
        had their cells fought a pair at a time, a core idle. Each search reads what it
        read alone, so its answer and the cells fought are the same."""
        answers: list[Any] = [None] * len(searches)
        asked: dict[int, list[Cell]] = {}

        def step(i: int) -> None:
            try:
                asked[i] = next(searches[i])
            except StopIteration as done:
                asked.pop(i, None)
                answers[i] = done.value

        for i in range(len(searches)):
            step(i)
        while asked:
            self.bank.fight(cell for cells in asked.values() for cell in cells)
            for i in list(asked):
                step(i)
        return answers

    def _pairwise(
        self, kind: str, other: str, budget: float, role: str, z: float
    ) -> Reading[Pairwise]:
        theirs = budget / self.prices[other]
        fair = budget / self.prices[kind]
        top = max(2, min(MAX_MEN, math.ceil(PAIRWISE_REACH * fair)))

        def at(shift: float) -> Callable[[int], Reading[float]]:
            def reading(men: int) -> Reading[float]:
                yield self.bank.cells_of(kind, men, other, theirs, role)
                return self.bank.estimate(
                    self.bank.side_score(kind, men, other, theirs, role)
                ).shifted(shift)

            return reading

        men, beyond = yield from _rising_root(at(0.0), fair, top)
        # Fewer men at the score's upper edge, more at its lower edge.
        fewest, _ = yield from _rising_root(at(z), men, top)
        most, _ = yield from _rising_root(at(-z), men, top)
        return Pairwise(
            kind,
            other,
            budget,
            role,
            budget / men,
            budget / most,
            budget / fewest,
            None if beyond is None else ("above" if beyond < 0 else "below"),
            theirs,
        )


def _rising_root(
    f: Callable[[int], Reading[float]], start: float, top: int
) -> Reading[tuple[float, int | None]]:
    """Where ``f`` (rising with the count of men) crosses 0 in 1..top: whole counts are
    galloped and bisected to neighbours, then the line between them is solved. At an edge
    (``f(1) >= 0`` or ``f(top) < 0``): the edge and -1 or +1. ``f`` is a reading
    (:meth:`_Search._together`), and so is this."""
    n = min(max(round(start), 1), top)
    if (yield from f(n)) >= 0:
        high, step = n, 1
        while True:
            low = max(high - step, 1)
            if (yield from f(low)) < 0:
                break
            if low == 1:
                return 1.0, -1
            high, step = low, step * 2
    else:
        low, step = n, 1
        while True:
            high = min(low + step, top)
            if (yield from f(high)) >= 0:
                break
            if high == top:
                return float(top), 1
            low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if (yield from f(middle)) < 0:
            low = middle
        else:
            high = middle
    below, above = (yield from f(low)), (yield from f(high))
    return low + (0 - below) / (above - below), None


#: ``simulator.prices``: the name the package exports.
prices = fair_prices
