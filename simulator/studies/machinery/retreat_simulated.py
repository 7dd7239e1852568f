"""The simulated best retreat rule (Longstaff-Schwartz), for every ruleset (docs/retreat.md).

Training: battles ``0 .. paths - 1`` of the run's seed, each recorded after every
decision step (``Prepared.run_through``, the side's own rule left out so each battle is
followed to its end, the other side's rule kept). Backwards over the decision steps, the
value of fighting on from a step (what the battle was worth under the rule from there
on) is regressed by least squares on a small polynomial of the state there (each type's
men left of both sides, the step); the rule withdraws where withdrawing now is worth
more than that fitted value, and a step's withdrawals are kept only where they raise
the training battles' mean value there (noise in the fit never makes a rule that only
loses).

Valuing: fresh battles of another seed, recorded the same way; on each the rule's first
withdrawal is found vectorised, and its outcome is the kernel's own: the battles that
withdraw after step t are run again with the rule ``after = t`` (the same battles draw
the same numbers), so what a withdrawal costs (blocks' field blocks without a road) is
the ruleset's. "Never retreat" and the side's own rule are the same fresh battles run
to their end: every difference is paired battle by battle.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kernels import least_squares

from ... import rulesets
from ...errors import ParameterError
from ...results.steps import men_brought
from ...rulesets.base import FIGHTING, Prepared
from ...running.capabilities import check_capabilities, check_unfolds
from ...running.chunking import GROWTH, ChunkSizes, sized_chunks
from ...running.interrupt import stop_requested
from ...running.memory import battles_per_call
from ...running.runner import thread_count
from ...scenario.scenario import Scenario, from_data, prepare
from .retreat_words import stop_now_or_go_on
from .sides import SIDES

#: The most steps the rule is looked at: every step where battles last at most this
#: many, else every k-th step (a battle of olympia's castle siege lasts 600 strikes).
MOST_DATES = 100
#: Fewer steps (down to FEWEST_DATES) where training battles times MOST_DATES would
#: pass this many recorded rows: the recording and the fit cost a row each (200,000
#: paths of castle siege took 1.4x the time on 100 steps as on 50, archers_in_rain
#: 1.8x, for the same value within noise: 24.523 and 24.521 +- 0.090).
DATES_BUDGET = 5_000_000
FEWEST_DATES = 50
#: The fewest training battles still fighting at a step to fit its regression; with
#: fewer the rule fights on there.
MIN_FIT = 50
#: Training battles (paths) and fresh battles by default.
DEFAULT_PATHS = 20_000
DEFAULT_FRESH = 20_000
#: The most battles of one kernel call (its rows: one a decision step a battle).
BLOCK = 20_000
#: The retreat map's bands of steps (-o, --json ``bands``).
MAP_BANDS = 3
#: Fresh battles valuing a rule whose training Ctrl-C stopped: as many as the training
#: battles' measured time says fit in STOPPED_SECONDS, at least STOPPED_FEWEST (an
#: interval needs a few), at most STOPPED_BLOCK.
STOPPED_BLOCK = 2_000
STOPPED_FEWEST = 100
STOPPED_SECONDS = 0.25
#: After Ctrl-C the fit goes on this long (seconds; backwards, the latest steps first),
#: then the steps not yet fitted fight on: the rule so far.
FIT_AFTER_STOP = 0.3
#: Fresh battles recorded after every decision step for the hindsight bound (the
#: first ones); the rest are recorded only as far as the rule's battles reach.
BOUND_BATTLES = 20_000
#: A winner code of a side's win (kernels: 0 attacker, 1 defender, 2 draw, 3/4 withdrew).
WON = (0, 1)
#: Rulesets where a withdrawal may cost men (blocks' field blocks with no road): the
#: battles that withdraw after step t are run again by the kernel with ``after = t``.
#: Elsewhere the text's withdrawal simply ends the battle as it stands after the step.
KERNEL_WITHDRAWAL = frozenset({"blocks"})
#: Far past any battle's end: run_until to it gives each battle's final row.
TO_THE_END = 10**9
Z95 = 1.959963984540054
T = TypeVar("T")


@dataclass(frozen=True)
class Estimate:
    """A mean over fresh battles and its 95% interval."""

    value: float
    low: float
    high: float

    @classmethod
    def of(cls, per_battle: np.ndarray) -> Estimate:
        n = len(per_battle)
        mean = float(per_battle.mean()) if n else math.nan
        half = Z95 * float(per_battle.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        return cls(mean, mean - half, mean + half)

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Features:
    """The state a rule looks at, from a step's rows: each type's men left of the side
    (``own``) and of the other (``enemy``), and the price of the side's men lost."""

    own: list[str]
    enemy: list[str]
    brought: dict[str, int]
    prices: np.ndarray  # by own type

    def dtype(self, names: list[str]) -> type[np.signedinteger[Any]]:
        """Men left fit in 16 bits where no type brings 32,768 men (half the memory)."""
        small = max((self.brought[n] for n in names), default=0) < 2**15
        return np.int16 if small else np.int32

    def men(self, rows: Mapping[str, np.ndarray], names: list[str]) -> np.ndarray:
        """Men left of each type, shape (..., len(names))."""
        first = rows["winner"]
        left = np.empty((*first.shape, len(names)), self.dtype(names))
        for i, n in enumerate(names):
            np.subtract(
                self.brought[n], rows[f"casualties.{n}"], out=left[..., i], casting="unsafe"
            )
        return left

    def left(self, lost: np.ndarray, names: list[str]) -> np.ndarray:
        """Men left of each type from the casualties of ``names`` (last axis), in one
        pass."""
        brought = np.array([self.brought[n] for n in names], np.int64)
        return np.subtract(brought, lost, dtype=self.dtype(names), casting="unsafe")

    def price_lost(self, own_left: np.ndarray) -> np.ndarray:
        """The price of the side's men lost, from its men left of each type (a column
        at a time: a product of the int16 rows by the prices took numpy's slow path)."""
        brought = np.array([self.brought[n] for n in self.own], np.float64)
        lost = np.full(own_left.shape[:-1], float(brought @ self.prices))
        for i, price in enumerate(self.prices.tolist()):
            if price:
                lost -= price * own_left[..., i]
        return lost

    def basis(self, own_left: np.ndarray, enemy_left: np.ndarray) -> np.ndarray:
        """The regression's columns, one row each (shape (columns, battles)): 1, both
        sides' shares of all men left, their squares, cubes and products, and each
        type's share of its men left. Filled row by row in place: stacking columns of
        200,000 battles took most of a fit's time."""
        n = len(own_left)
        x = np.empty((10 + len(self.own) + len(self.enemy), n))
        x[0] = 1.0
        o, e = x[1], x[2]
        for total, left, names in ((o, own_left, self.own), (e, enemy_left, self.enemy)):
            total[:] = 0.0
            for i in range(len(names)):
                total += left[:, i]
            total /= max(1, sum(self.brought[name] for name in names))
        np.multiply(o, o, out=x[3])
        np.multiply(e, e, out=x[4])
        np.multiply(o, e, out=x[5])
        np.multiply(x[3], o, out=x[6])
        np.multiply(x[4], e, out=x[7])
        np.multiply(x[3], e, out=x[8])
        np.multiply(x[4], o, out=x[9])
        row = 10
        for left, names in ((own_left, self.own), (enemy_left, self.enemy)):
            for i, name in enumerate(names):
                np.divide(left[:, i], max(1, self.brought[name]), out=x[row])
                row += 1
        return x


@dataclass(frozen=True)
class SimulatedRule:
    """Withdraw after decision step ``dates[k]`` (the battle undecided) when withdrawing
    is worth more than ``basis @ coefficients[k]`` (no coefficients: fight on there)."""

    dates: tuple[int, ...]
    coefficients: tuple[np.ndarray | None, ...]
    features: Features

    def withdraws(self, k: int, own_left: np.ndarray, enemy_left: np.ndarray) -> np.ndarray:
        beta = self.coefficients[k]
        if beta is None or len(own_left) == 0:
            return np.zeros(len(own_left), bool)
        fit = combine(beta, self.features.basis(own_left, enemy_left))
        return -self.features.price_lost(own_left) > fit

    @property
    def never(self) -> bool:
        return all(c is None for c in self.coefficients)


@dataclass
class Paths:
    """Battles recorded after each decision step: ``fighting`` (dates, n), the men
    left of each side's types (dates, n, types), and each battle's final row."""

    fighting: np.ndarray
    own: np.ndarray
    enemy: np.ndarray
    final: dict[str, np.ndarray]


@dataclass
class SimulatedAnswer:
    """The rule, its value over fresh battles, "never retreat"'s and the side's own
    rule's on the same battles, and the differences, each with its 95% interval."""

    rule: SimulatedRule
    value: Estimate
    never: Estimate
    own: Estimate | None
    gain_over_never: Estimate
    gain_over_own: Estimate | None
    outcomes: dict[str, float]
    paths: int
    fresh: int
    seed: int
    fresh_seed: int
    partial: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: How often the rule fought on and withdrew on the fresh battles, by decision
    #: step, the side's men left and the other's (shape (dates, own + 1, enemy + 1, 2)):
    #: the retreat map.
    asked: np.ndarray | None = None
    #: What a side knowing each fresh battle's future would get (withdrawing at the
    #: best of the decision steps, or fighting to the end): an upper bound on every
    #: rule's value, whatever steps it looks at (casualties only grow: the best
    #: withdrawal is at the first step, the battle's first) (None for blocks, whose
    #: withdrawal's cost is only known by running it).
    upper: Estimate | None = None
    #: The Andersen-Broadie upper bound on every rule's value (retreat_dual.py), on
    #: ``dual`` outer battles, each continuation from ``inner`` nested battles of its
    #: outer battle's own (None: not asked).
    dual: Estimate | None = None
    dual_battles: int = 0
    inner_battles: int = 0


def without_rule(scenario: Scenario, side: str, after: int | None = None) -> Scenario:
    """``scenario`` with ``side``'s stop rule left out, or replaced by ``after``."""
    data = copy.deepcopy(dict(scenario.data))
    table = data.get(side)
    if isinstance(table, dict):
        table.pop("retreat", None)
        if after is not None:
            table["retreat"] = {"after": int(after)}
    return from_data(data, scenario.source)


def fresh_seed(seed: int) -> int:
    """The seed of the fresh battles: another stream than the training battles'."""
    return int(np.random.SeedSequence([int(seed), 52]).generate_state(1, np.uint64)[0] >> 2)


def most_dates(paths: int) -> int:
    """How many steps at most the rule of ``paths`` training battles is looked at."""
    return max(FEWEST_DATES, min(MOST_DATES, DATES_BUDGET // max(1, paths)))


def decision_dates(
    from_step: int, longest: int, limit: int | None, most: int = MOST_DATES
) -> list[int]:
    """The steps the rule is looked at: after each step from ``from_step + 1`` to the
    longest training battle (or the turn limit), every k-th where they are more than
    ``most``."""
    last = longest if limit is None else min(longest, limit)
    span = max(0, last - from_step)
    every = max(1, math.ceil(span / most))
    return list(range(from_step + 1, last + 1, every))


def value_of_rows(rows: Mapping[str, np.ndarray], side: int, win: float, f: Features) -> np.ndarray:
    won = rows["winner"] == WON[side]
    return win * won - f.price_lost(f.men(rows, f.own))


def record(
    prepared: Prepared,
    seed: int,
    first: int,
    count: int,
    dates: Sequence[int],
    f: Features,
    lock: AbstractContextManager[object] | None = None,
) -> Paths:
    """Battles ``first .. first + count - 1`` after each of ``dates`` and at their end,
    in one recording (its last step far past any battle's end: each battle's final
    row, as run_until gives it), holding ``lock`` (the page's questions take turns)."""
    names = ["winner", *(f"casualties.{n}" for n in (*f.own, *f.enemy))]
    with lock or nullcontext():
        got = prepared.record_columns(seed, first, count, [*dates, TO_THE_END], names)
    final = {name: got[-1, :, i] for i, name in enumerate(names)}
    mine = len(f.own)
    return Paths(
        got[:-1, :, 0] == FIGHTING,
        f.left(got[:-1, :, 1 : 1 + mine], f.own),
        f.left(got[:-1, :, 1 + mine :], f.enemy),
        final,
    )


def decision_steps(
    prepared: Prepared,
    seed: int,
    paths: int,
    lock: AbstractContextManager[object] | None,
    stopped: Callable[[], bool],
) -> tuple[list[int], int, ChunkSizes]:
    """The decision steps (from the longest of the first block of training battles),
    the most battles of one kernel call (its rows: one a decision step a battle), and
    the sizes of the calls that searched the longest battle.

    Every kernel call is sized by time (running/chunking.py), so that Ctrl-C is
    answered within about a second whatever the battle; battle i is the same battle
    whatever the sizes, so they change no figure."""
    block = max(
        1, min(BLOCK, battles_per_call(prepared, BLOCK * (MOST_DATES + 1)) // (MOST_DATES + 1))
    )
    longest = 0
    searched = ChunkSizes(block)
    for _, _, rows in sized_chunks(
        [(0, min(paths, block))],
        searched,
        lambda at, n: held(lock, prepared.run_until, seed, at, n, TO_THE_END),
    ):
        longest = max(longest, int(rows["steps"].max()) if len(rows["steps"]) else 0)
        if stopped():
            break
    dates = decision_dates(
        prepared.from_step,
        max(longest, prepared.from_step + 1),
        prepared.step_limit,
        most_dates(paths),
    )
    return dates, block, searched


def fit_rule(
    paths: Paths,
    worth: np.ndarray,
    dates: Sequence[int],
    f: Features,
    stopped: Callable[[], bool] | None = None,
) -> SimulatedRule:
    """Longstaff-Schwartz backwards over ``dates`` on the training ``paths``, each
    worth ``worth`` fought to its end. Once ``stopped()`` (Ctrl-C) it goes on for
    FIT_AFTER_STOP seconds, then the steps not yet fitted, the earliest, fight on: the
    rule so far."""
    worth = worth.astype(np.float64)  # a copy: each step's withdrawals change it
    coefficients: list[np.ndarray | None] = [None] * len(dates)
    stopped = stopped or stop_requested
    stopped_at = None
    for k in range(len(dates) - 1, -1, -1):
        if stopped():
            stopped_at = stopped_at or time.perf_counter()
            if time.perf_counter() - stopped_at > FIT_AFTER_STOP:
                break
        idx = np.flatnonzero(paths.fighting[k])
        if len(idx) < MIN_FIT:
            continue
        own, enemy = rows_of(paths.own[k], idx), rows_of(paths.enemy[k], idx)
        x = f.basis(own, enemy)
        y = worth[idx]
        # The normal equations (K x K, K about a dozen): the same least squares as an
        # SVD of the n x K matrix at a tenth of the time; lstsq of the small system
        # takes a basis column that is constant on these battles in its stride.
        beta = np.linalg.lstsq(*normal_equations(x, y), rcond=None)[0]
        now = -f.price_lost(own)
        out = now > combine(beta, x)
        if out.any() and np.where(out, now, y).mean() > y.mean():
            coefficients[k] = beta
            worth[idx[out]] = now[out]
    return SimulatedRule(tuple(dates), tuple(coefficients), f)


def normal_equations(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x @ x.T`` and ``x @ y`` (``x`` a basis a row a column) by a kernel of our own
    (kernels/least_squares.py), not OpenBLAS: on two cores shared with the kernels'
    threads (and other programs), its threads waited on each other, and a fit step of
    50,000 battles took 48 ms (0.5 s at worst) for a few million multiplications
    (castle siege: 4.5 of 14.8 s); einsum's generic loops took twice the kernel's time."""
    k = x.shape[0]
    gram, xy = np.empty((k, k)), np.empty(k)
    least_squares.normal_equations(
        np.ascontiguousarray(x, np.float64), np.ascontiguousarray(y, np.float64), gram, xy
    )
    return gram, xy


def combine(beta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``beta @ x`` (the fitted value of each battle, ``x`` a basis a row a column) by
    einsum's own loop (see :func:`normal_equations`)."""
    return np.einsum("k,kn->n", beta, x, optimize=False)


def first_withdrawal(rule: SimulatedRule, paths: Paths) -> np.ndarray:
    """Each battle's index into the dates at which the rule withdraws, -1 for none
    (among the dates ``paths`` recorded: the first ones)."""
    n = paths.fighting.shape[1]
    at = np.full(n, -1, np.int64)
    for k in range(min(len(rule.dates), len(paths.fighting))):
        if rule.coefficients[k] is None:  # it fights on at this step
            continue
        idx = np.flatnonzero(paths.fighting[k] & (at < 0))
        out = rule.withdraws(k, rows_of(paths.own[k], idx), rows_of(paths.enemy[k], idx))
        at[idx[out]] = k
    return at


def reach_of(rule: SimulatedRule, paths: Paths) -> int:
    """How many of the decision steps the rule's battles reach on ``paths``: one past
    the last step at which a battle is still fighting, not withdrawn before (at least
    one where there is a step)."""
    if not len(rule.dates):
        return 0
    at = first_withdrawal(rule, paths)
    last = -1
    for k in range(len(rule.dates) - 1, -1, -1):
        if (paths.fighting[k] & ((at < 0) | (at >= k))).any():
            last = k
            break
    return max(1, last + 1)


def rows_of(men: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The rows ``idx`` of a step's men left (battles, types): ``take``, thirty times
    as fast as fancy indexing on these small int16 rows."""
    return np.take(men, idx, axis=0)


def total_men(men: np.ndarray) -> np.ndarray:
    """Each row's men of all types (the last axis), as int64 (adding the columns:
    ``sum`` over two or three types is several times slower)."""
    if not men.shape[-1]:
        return np.zeros(men.shape[:-1], np.int64)
    total = men[..., 0].astype(np.int64)
    for i in range(1, men.shape[-1]):
        total += men[..., i]
    return total


def prices_for(
    scenario: Scenario,
    side: int,
    kinds: list[str],
    costs: Mapping[str, float] | str | Path | None,
    counted: Sequence[str] = (),
) -> dict[str, float]:
    """The price of each of ``kinds`` (``attacker.knight``): the unit table's cost, the
    scenario's, or ``costs`` (a ``--costs`` file or mapping, which may also price what
    the ruleset counts casualties of: ``counted``, blocks by name)."""
    from ...scenario.costs import given_costs, read_costs_file
    from .armies import side_costs

    ruleset = rulesets.get(scenario.ruleset)
    table = side_costs(ruleset, scenario.data, None)
    if costs is not None:
        known = dict.fromkeys([*table, *ruleset.unit_types(scenario.data), *counted])
        table.update(
            given_costs(costs, known, "costs")
            if isinstance(costs, Mapping)
            else read_costs_file(costs, known)
        )
    prices = {}
    for name in kinds:
        kind = name.split(".", 1)[1]
        if table.get(kind) is None:
            raise ParameterError(
                "costs",
                None,
                f"no price for the {SIDES[side]}'s '{kind}': give one in a costs file "
                f"({{costs=}}FILE, {kind} = PRICE) or a cost in the scenario",
            )
        prices[name] = float(table[kind])
    return prices


@dataclass(frozen=True)
class Simulation:
    """How a simulated rule is fitted and valued: training battles (``paths``) and
    fresh ones, the seed (None: the scenario's), threads, the prices of types the
    scenario does not price (``costs``), a progress callback, ``stop()`` (None: Ctrl-C)
    ending the work with the rule so far, marked partial, and a lock each kernel call
    holds (the page's questions take turns)."""

    paths: int = DEFAULT_PATHS
    fresh: int = DEFAULT_FRESH
    seed: int | None = None
    threads: int | None = None
    costs: Mapping[str, float] | str | Path | None = None
    progress: Callable[[int, int], None] | None = None
    stop: Callable[[], bool] | None = None
    lock: AbstractContextManager[object] | None = None


def simulated_retreat(
    scenario: Scenario, side: int, win: float | None, how: Simulation | None = None
) -> tuple[SimulatedAnswer, dict[str, float], float]:
    """The simulated best rule of ``side`` (0, 1) and its value on fresh battles; with
    the prices of the side's men and the win value used (default: the other side's
    army's price)."""
    how = how or Simulation()
    paths, fresh, seed, threads = how.paths, how.fresh, how.seed, how.threads
    costs, progress, stop, lock = how.costs, how.progress, how.stop, how.lock
    stopped = stop or (lambda: stop_requested())
    started = time.perf_counter()
    name = SIDES[side]
    never_scenario = without_rule(scenario, name)
    prepared = prepare(never_scenario)
    check_unfolds(prepared, scenario.ruleset)
    check_capabilities(prepared, scenario.ruleset)
    own_prepared = prepare(scenario)
    brought = men_brought(prepared.column_bounds)
    own = [n for n in brought if n.startswith(f"{name}.")]
    enemy = [n for n in brought if n.startswith(f"{SIDES[1 - side]}.")]
    counted = [n.split(".", 1)[1] for n in brought]
    prices = prices_for(scenario, side, own, costs, counted)
    if win is None:
        enemy_prices = prices_for(scenario, 1 - side, enemy, costs, counted)
        win = sum(enemy_prices[n] * brought[n] for n in enemy)
    f = Features(own, enemy, brought, np.array([prices[n] for n in own], np.float64))
    seed = scenario.seed if seed is None else seed
    seed2 = fresh_seed(seed)
    total = paths + fresh
    done = 0
    partial = False
    with thread_count(threads):
        dates, block, searched = decision_steps(prepared, seed, paths, lock, stopped)
        # One array each, filled call by call (no copies of a list of blocks).
        training = Paths(
            np.zeros((len(dates), paths), bool),
            np.zeros((len(dates), paths, len(own)), f.dtype(own)),
            np.zeros((len(dates), paths, len(enemy)), f.dtype(enemy)),
            {},
        )
        worth = np.zeros(paths)
        fitted = 0
        sizes = ChunkSizes(block)
        if not stopped():
            for first, n, part in sized_chunks(
                [(0, paths)], sizes, lambda at, n: record(prepared, seed, at, n, dates, f, lock)
            ):
                training.fighting[:, first : first + n] = part.fighting
                training.own[:, first : first + n] = part.own
                training.enemy[:, first : first + n] = part.enemy
                worth[first : first + n] = value_of_rows(part.final, side, win, f)
                fitted = first + n
                done += n
                if progress is not None:
                    progress(done, total)
                if stopped():
                    break
        rule = fit_rule(_first(training, fitted), worth[:fitted], dates, f, stopped)
        reach = reach_of(rule, _first(training, fitted))
        del training, worth
        partial = stopped()
        valued = _value(
            rule,
            prepared,
            own_prepared,
            never_scenario,
            scenario,
            name,
            seed2,
            fresh,
            reach,
            ChunkSizes(block, max(1, sizes.size // GROWTH)),
            _stopped_block(sizes, searched),
            side,
            win,
            f,
            progress,
            done,
            total,
            stopped,
            lock,
        )
    best, never, own_values, foresight, outcome, asked, count = valued
    partial = partial or count < fresh
    has_own = not own_prepared.stop_rules[side].never
    answer = SimulatedAnswer(
        rule=rule,
        value=Estimate.of(best),
        never=Estimate.of(never),
        own=Estimate.of(own_values) if has_own else None,
        gain_over_never=Estimate.of(best - never),
        gain_over_own=Estimate.of(best - own_values) if has_own else None,
        outcomes=outcome,
        paths=fitted,
        fresh=count,
        seed=seed,
        fresh_seed=seed2,
        partial=partial,
        seconds=time.perf_counter() - started,
        asked=asked,
        upper=None if foresight is None else Estimate.of(foresight),
    )
    return answer, prices, float(win)


def held(lock: AbstractContextManager[object] | None, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` holding ``lock`` (None: no lock)."""
    with lock or nullcontext():
        return call(*args)


def _stopped_block(training: ChunkSizes, searched: ChunkSizes) -> int:
    """Fresh battles valuing the rule so far after Ctrl-C: as many as STOPPED_SECONDS
    fit at the training calls' time per battle (or twice a plain run's, when Ctrl-C
    came before any training call was timed)."""
    for sizes, slower in ((training, 1.0), (searched, 2.0)):
        times = sizes.times
        if times.battles and times.seconds > 0:
            return int(
                min(
                    STOPPED_BLOCK,
                    max(STOPPED_FEWEST, STOPPED_SECONDS * times.battles / (slower * times.seconds)),
                )
            )
    return STOPPED_FEWEST


def _first(paths: Paths, n: int) -> Paths:
    """The first ``n`` battles of ``paths``."""
    return Paths(paths.fighting[:, :n], paths.own[:, :n], paths.enemy[:, :n], {})


def _value(
    rule: SimulatedRule,
    prepared: Prepared,
    own_prepared: Prepared,
    never_scenario: Scenario,
    scenario: Scenario,
    name: str,
    seed: int,
    fresh: int,
    reach: int,
    sizes: ChunkSizes,
    stopped_block: int,
    side: int,
    win: float,
    f: Features,
    progress: Callable[[int, int], None] | None,
    done: int,
    total: int,
    stopped: Callable[[], bool],
    lock: AbstractContextManager[object] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, dict[str, float], Any, int]:
    """The rule, never retreating and the side's own rule on fresh battles: the first
    BOUND_BATTLES recorded after every decision step (the hindsight bound is theirs),
    the rest after the first ``reach`` only (as far as the training battles went under
    the rule: castle siege's attacker withdraws after the first strike, so its fresh
    battles cost a plain run to their end and one step recorded), a block where a
    battle still fighting there needs more recorded again after every step."""
    best, never, own, foresight = [], [], [], []
    codes = np.zeros(6, np.int64)
    counts = np.zeros(
        (len(rule.dates), *(1 + sum(f.brought[n] for n in names) for names in (f.own, f.enemy)), 2),
        np.int64,
    )
    at_date: dict[int, Prepared] = {}
    count = 0
    first = 0
    while first < fresh:
        # After Ctrl-C (in training or fitting), one small block values the rule so far.
        n = sizes.next(fresh - first)
        if stopped():
            n = min(stopped_block, fresh - first)
        bounding = first < BOUND_BATTLES and scenario.ruleset not in KERNEL_WITHDRAWAL
        if bounding:
            n = min(n, BOUND_BATTLES - first)
        began = time.perf_counter()
        dates = rule.dates if bounding else rule.dates[:reach]
        paths = record(prepared, seed, first, n, dates, f, lock)
        at = first_withdrawal(rule, paths)
        if len(dates) < len(rule.dates) and (paths.fighting[-1] & (at < 0)).any():
            reach = len(rule.dates)  # a battle goes further: every step from now on
            paths = record(prepared, seed, first, n, rule.dates, f, lock)
            at = first_withdrawal(rule, paths)
        never_v = value_of_rows(paths.final, side, win, f)
        best_v = never_v.copy()
        winner = paths.final["winner"].copy()
        for k in np.unique(at[at >= 0]).tolist():
            pick = np.flatnonzero(at == k)
            if scenario.ruleset in KERNEL_WITHDRAWAL:
                date = rule.dates[k]
                if date not in at_date:
                    at_date[date] = prepare(without_rule(scenario, name, after=date))
                rows = held(lock, at_date[date].run_until, seed, first, n, TO_THE_END)
                best_v[pick] = value_of_rows(rows, side, win, f)[pick]
                winner[pick] = rows["winner"][pick]
            else:  # the battle simply ends: its state after the step
                best_v[pick] = -f.price_lost(paths.own[k, pick])
                winner[pick] = 3 + side
        counts += asked_counts(rule, paths, at, counts.shape)
        best.append(best_v)
        never.append(never_v)
        if bounding:
            foresight.append(hindsight(paths, never_v, f))
        if own_prepared.stop_rules[side].never:  # no rule of its own: never retreating
            own.append(never_v)
        else:
            own_rows = held(lock, own_prepared.run_until, seed, first, n, TO_THE_END)
            own.append(value_of_rows(own_rows, side, win, f))
        codes += np.bincount(winner, minlength=6)[:6]
        sizes.timed(n, time.perf_counter() - began)
        count += n
        done += n
        first += n
        if progress is not None:
            progress(done, total)
        if stopped():
            break
    outcome = {
        "win": codes[WON[side]] / max(1, count),
        "lose": codes[WON[1 - side]] / max(1, count),
        "draw": codes[2] / max(1, count),
        "withdrew": codes[3 + side] / max(1, count),
        "they_withdrew": codes[3 + (1 - side)] / max(1, count),
    }
    empty = np.zeros(0)
    return (
        np.concatenate(best) if best else empty,
        np.concatenate(never) if never else empty,
        np.concatenate(own) if own else empty,
        np.concatenate(foresight) if foresight else None,
        outcome,
        counts,
        count,
    )


def hindsight(paths: Paths, end: np.ndarray, f: Features) -> np.ndarray:
    """Each battle's best value with hindsight: the larger of fighting to the end
    (``end``) and withdrawing after the best of the decision steps it was still fought
    at (the price of the men lost by then). No rule can do better on a battle, so its
    mean bounds every rule's value from above (the dual bound with no martingale:
    loose, but it costs nothing more)."""
    if not len(paths.fighting):
        return end.astype(np.float64)
    withdrawing = np.where(paths.fighting, -f.price_lost(paths.own), -np.inf)
    return np.maximum(end, withdrawing.max(axis=0))


def asked_counts(
    rule: SimulatedRule, paths: Paths, at: np.ndarray, shape: tuple[int, ...]
) -> np.ndarray:
    """How often the rule fought on (``[..., 0]``) and withdrew (``[..., 1]``) after
    each decision step, by the side's men left and the other's, on these battles."""
    counts = np.zeros(shape, np.int64)
    recorded = len(paths.fighting)
    if not recorded:
        return counts
    step = np.arange(recorded)[:, np.newaxis]
    going = paths.fighting & ((at < 0) | (at >= step))
    key = step * shape[1] + total_men(paths.own)
    key *= shape[2]
    key += total_men(paths.enemy)
    key *= 2
    key += at == step
    size = recorded * shape[1] * shape[2] * 2
    counts[:recorded] = np.bincount(key[going], minlength=size).reshape(recorded, *shape[1:])
    return counts


@dataclass(frozen=True)
class SimulatedRetreatResult:
    """The simulated best retreat rule of ``side`` (``answer``: the rule and its
    estimated values), with what a win is worth and each man's price."""

    scenario: Scenario
    side: str
    win_value: float
    win_value_said: str
    prices: dict[str, float]
    answer: SimulatedAnswer
    own_words: str | None
    #: The step the battle has reached (``[battle] from_step``; 0: not begun).
    from_step: int = 0

    method = "simulated"

    def stop_now(self) -> dict[str, Any] | None:
        """For a battle in progress: stopping now (0) against going on (estimated)."""
        v = self.answer.value
        return stop_now_or_go_on(self.from_step, self.scenario.ruleset, v.value, v.low, v.high)

    @property
    def value(self) -> float:
        return self.answer.value.value

    @property
    def never(self) -> float:
        return self.answer.never.value

    @property
    def own(self) -> float | None:
        return None if self.answer.own is None else self.answer.own.value

    @property
    def partial(self) -> bool:
        return self.answer.partial

    def cells(self) -> np.ndarray:
        """Fresh battles the rule fought on (``[..., 0]``) and withdrew (``[..., 1]``)
        at, by the side's men left and the other's, over every decision step."""
        asked = self.answer.asked
        return np.zeros((1, 1, 2), np.int64) if asked is None else asked.sum(axis=0)

    def bands(self, most: int = MAP_BANDS) -> list[tuple[int, int, np.ndarray]]:
        """The map per band of steps: up to ``most`` bands of the decision steps at
        which fresh battles were still fighting, each ``(first step, last step,
        cells)`` with its cells as :meth:`cells`."""
        asked = self.answer.asked
        if asked is None:
            return []
        dates = self.answer.rule.dates
        used = [k for k in range(len(dates)) if asked[k].any()]
        chunks = [c.tolist() for c in np.array_split(np.array(used, int), most) if len(c)]
        return [(dates[c[0]], dates[c[-1]], asked[c].sum(axis=0)) for c in chunks]

    def words(self) -> str:
        """The rule in words where the fresh battles' decisions are a threshold on the
        men left (a cell's decision: the one taken in most of its battles)."""
        return cells_words(self.cells(), self.answer.rule.never)

    def to_dict(self) -> dict[str, Any]:
        a = self.answer
        cells = self.cells()
        return {
            "scenario": self.scenario.source.label,
            "side": self.side,
            "method": "simulated",
            "win_value": self.win_value,
            "prices": self.prices,
            "value": a.value.to_dict(),
            "never": a.never.to_dict(),
            "own": None if a.own is None else a.own.to_dict(),
            "own_rule": self.own_words,
            "gain_over_never": a.gain_over_never.to_dict(),
            "gain_over_own": None if a.gain_over_own is None else a.gain_over_own.to_dict(),
            "upper_bound": None if a.upper is None else a.upper.to_dict(),
            "dual_bound": None
            if a.dual is None
            else {**a.dual.to_dict(), "battles": a.dual_battles, "inner": a.inner_battles},
            **{k: float(v) for k, v in a.outcomes.items()},
            "rule": self.words(),
            "stop_now_or_go_on": self.stop_now(),
            "decision_steps": list(a.rule.dates),
            "paths": a.paths,
            "battles": a.fresh,
            "seed": a.seed,
            "fresh_seed": a.fresh_seed,
            "partial": a.partial,
            "seconds": a.seconds,
            "bands": [
                {"steps": [first, last], "cells": cell_rows(cells)}
                for first, last, cells in self.bands()
            ],
            "cells": cell_rows(cells),
        }


def cells_words(cells: np.ndarray, never: bool = False) -> str:
    """A simulated rule in words from its decisions on fresh battles by the side's men
    left and the other's (``cells`` as :meth:`SimulatedRetreatResult.cells`): each
    cell's decision the one taken in most of its battles."""
    from .retreat_words import threshold_words

    if never or not cells[..., 1].any():
        return "never withdraw"
    choices = {}
    mixed = False
    for o, e in zip(*np.nonzero(cells.sum(axis=2)), strict=True):
        fight, out = cells[o, e]
        mixed = mixed or (fight > 0 and out > 0)
        choices[(int(o), int(e))] = {"withdraw" if out > fight else "fight"}
    said = threshold_words(choices) or "no simple shape on the men left (see the map: -o)"
    if mixed:
        said += (
            " (in most battles reaching those men: the rule also weighs the step "
            "and each type's men)"
        )
    return said


def cell_rows(cells: np.ndarray) -> list[dict[str, int]]:
    """The map's cells that fresh battles reached, one row each."""
    return [
        {
            "own": int(o),
            "enemy": int(e),
            "fight": int(cells[o, e, 0]),
            "withdraw": int(cells[o, e, 1]),
        }
        for o, e in zip(*np.nonzero(cells.sum(axis=2)), strict=True)
    ]
