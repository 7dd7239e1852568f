"""Runs that stop at a precision target instead of a battle count.

Battles are added in chunks that continue the battle indices (``first`` = battles done
so far), so a run that stopped after ``n`` battles is, bit for bit, the same as
``simulate(scenario, n, seed)``: the stopping rule chooses ``n``, nothing else.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BattleOddsError
from ..results.result import Result
from ..results.stats import OUTCOMES, Z95, Histogram, Tally, wilson
from ..scenario.scenario import Scenario
from .compiling import compile_clock
from .plan import DEFAULT_CHUNK, DEFAULT_MAX_BATTLES, Progress, RunPlan
from .runner import KEEP_ROWS_LIMIT, run_chunks

if TYPE_CHECKING:
    from .distributed import Cluster

#: Battles of the first round, before the estimates say how many are needed.
FIRST_ROUND = 10_000


class Reported(dict[str, Any]):
    """A dict for ``Result.extra`` that prints as one readable line in the text report."""

    def __str__(self) -> str:
        if "target" in self:
            state = "reached" if self["reached"] else f"NOT reached (cap {self['max_battles']:,})"
            return (
                f"{state}: widest 95% half-width {self['half_width']:.5f} "
                f"(target {self['target']}) after {self['battles']:,} battles"
            )
        return ", ".join(f"{k} {v}" for k, v in self.items())

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def flag_successes(histogram: Histogram) -> int:
    """How many battles a 0/1 extra was 1 in."""
    return int(histogram.counts[histogram.values == 1].sum())


def reported_probabilities(tally: Tally, flags: frozenset[str]) -> dict[str, tuple[int, int]]:
    """Every probability the summary reports, as ``name -> (successes, trials)``: a
    withdrawal once a battle ended in it (none yet: the narrowest interval, and a
    scenario without stop rules runs as many battles as before they existed)."""
    probabilities = {
        f"win.{o}": (int(tally.wins[OUTCOMES.index(o)]), tally.battles)
        for o in tally.seen_outcomes()
    }
    for name, histogram in tally.columns.items():
        if name in flags:
            probabilities[name] = (flag_successes(histogram), histogram.n)
    return probabilities


def half_width(successes: int, trials: int) -> float:
    _, low, high = wilson(successes, trials)
    return (high - low) / 2


def widest_half_width(tally: Tally, flags: frozenset[str]) -> float:
    return max(half_width(s, n) for s, n in reported_probabilities(tally, flags).values())


def battles_needed(tally: Tally, flags: frozenset[str], precision: float) -> int:
    """Battles at which every reported interval should be narrower than ``precision``.

    The normal approximation ``z^2 p (1 - p) / h^2`` with each current estimate, p kept at
    least 1/n so that a probability not yet seen does not claim zero battles are needed.
    """
    n = tally.battles
    needed = n
    for successes, trials in reported_probabilities(tally, flags).values():
        p = min(max(successes / trials, 1 / trials), 1 - 1 / trials) if trials else 0.5
        needed = max(needed, math.ceil(Z95 * Z95 * p * (1 - p) / (precision * precision)))
    return needed


def next_round_target(tally: Tally, flags: frozenset[str], plan: RunPlan) -> int:
    """Battles a precision run should have done by the end of its next round, after the
    ``tally.battles`` done so far (at most ``plan.max_battles``)."""
    if plan.precision is None:
        raise BattleOddsError("a precision run needs a precision target")
    done = tally.battles
    # Aim 5% past the estimate (the estimate itself is noisy), and at least double
    # a small run so that a poor first estimate costs few rounds.
    wanted = math.ceil(1.05 * battles_needed(tally, flags, plan.precision))
    return min(plan.max_battles, max(wanted, done + min(done, plan.chunk)))


def precision_rounds(
    plan: RunPlan,
    said: Callable[[], tuple[Tally, frozenset[str]]],
    first_round: int = FIRST_ROUND,
) -> Iterator[tuple[int, int]]:
    """``(done, count)`` of each round of a precision run: the battles after the ``done``
    so far (from the plan's first) that the caller runs next. After each round the
    generator reads what the battles said (``said()``: the tally of every battle done and
    the ruleset's 0/1 extras) and ends once every reported probability's 95% half-width
    is below ``plan.precision`` or ``plan.max_battles`` are done. A caller whose round
    ended early (partial) stops reading. The one stopping rule of a run
    (:func:`run_to_precision`), the page's run (:mod:`simulator.running.stream`) and a
    sweep's points."""
    if plan.precision is None:
        raise BattleOddsError("a precision run needs a precision target")
    done, target = 0, min(first_round, plan.max_battles)
    while True:
        yield done, target - done
        tally, flags = said()
        done = tally.battles
        if widest_half_width(tally, flags) < plan.precision or done >= plan.max_battles:
            return
        target = next_round_target(tally, flags, plan)


def precision_report(plan: RunPlan, widest: float, done: int) -> Reported:
    """What a precision run says of itself (``Result.extra["precision"]``)."""
    assert plan.precision is not None
    return Reported(
        target=plan.precision,
        reached=bool(widest < plan.precision),
        half_width=round(widest, 6),
        battles=done,
        max_battles=plan.max_battles,
    )


def simulate_to_precision(
    scenario: Scenario,
    precision: float,
    seed: int | None = None,
    *,
    max_battles: int = DEFAULT_MAX_BATTLES,
    first_round: int = FIRST_ROUND,
    threads: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    keep_battles: bool | None = None,
    progress: Progress | None = None,
    executor: Cluster | None = None,
    interruptible: bool = False,
) -> Result:
    """Add battles until every reported probability's 95% half-width is below ``precision``.

    Probabilities are the three outcomes and the ruleset's 0/1 extras. Stops at
    ``max_battles`` if the target is not reached by then; ``result.extra["precision"]``
    says which, with the widest half-width and the number of battles it took.
    ``interruptible``: Ctrl-C ends the run after the chunk in progress, with a partial
    result (as for :func:`simulate`).
    """
    plan = RunPlan.of(
        scenario,
        seed=seed,
        chunk=chunk,
        threads=threads,
        executor=executor,
        keep_battles=keep_battles,
        precision=precision,
        max_battles=max_battles,
        interruptible=interruptible,
    )
    return run_to_precision(scenario, plan, progress, first_round)


def run_to_precision(
    scenario: Scenario,
    plan: RunPlan,
    progress: Progress | None = None,
    first_round: int = FIRST_ROUND,
) -> Result:
    """The rounds of a precision run: each a fixed-size run of the battles after those
    done (:func:`~simulator.running.runner.run_chunks`), until ``plan.precision`` is met
    or ``plan.max_battles`` spent."""
    keep_battles = plan.keep_battles
    clock = compile_clock()
    started, compiled_before = time.perf_counter(), clock.seconds
    result: Result | None = None
    kept: list[dict[str, np.ndarray]] = []
    keep = True if keep_battles is None else keep_battles
    done = target = 0

    def report(sofar: int, _total: int) -> None:
        if progress is not None:
            progress(done + sofar, max(target, done + sofar))

    def said() -> tuple[Tally, frozenset[str]]:
        assert result is not None
        return result.tally, result.flags

    for done, count in precision_rounds(plan, said, first_round):
        target = done + count
        if keep_battles is None and target > KEEP_ROWS_LIMIT:
            keep, kept = False, []  # rows only by default for runs that stay small
        part = run_chunks(scenario, plan.round(done, count, keep), report)
        if keep and part.rows is not None:
            kept.append(part.rows)
        result = (
            part
            if result is None
            else replace(result, tally=result.tally.merge(part.tally), partial=part.partial)
        )
        if result.partial:
            keep, kept = False, []  # the rows would not be every battle of the tally
            break
    assert result is not None
    done = result.n
    widest = widest_half_width(result.tally, result.flags)
    rows = None
    if keep and kept:
        rows = {name: np.concatenate([k[name] for k in kept]) for name in kept[0]}
    extra = dict(result.extra)
    extra["precision"] = precision_report(plan, widest, done)
    compiled = clock.seconds - compiled_before
    return replace(
        result,
        rows=rows,
        first=0,
        seconds=time.perf_counter() - started - compiled,
        compile_seconds=compiled,
        extra=extra,
    )
