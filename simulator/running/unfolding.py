"""The battle as it unfolds: the state after each step asked, over a run's battles.

The state after step t is the same battles (the same seed and battle indices) stopped
after step t, counted into a mergeable :class:`~simulator.results.steps.StepTally`; a
battle decided by step t counts with its final state. Each block of battles is one
call of ``Prepared.run_through`` with every step recorded: a kernel that records them
in one pass fights each battle once, the default fights them again for each step
(``Prepared.run_until``). Nothing is recorded when nothing is asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import rulesets
from ..errors import ParameterError
from ..results.stats import Histogram
from ..results.steps import STATES, StepCounts, StepTally, men_brought
from ..rulesets.base import Prepared
from ..scenario.scenario import Scenario
from .capabilities import check_capabilities, check_unfolds
from .chunking import ChunkSizes
from .interrupt import stop_on_interrupt, stop_requested
from .memory import battles_per_call
from .plan import RunPlan
from .runner import thread_count

#: ``--by-round`` shows at most this many steps (each costs a run of the battles).
MOST_STEPS = 100
#: The most battles a block of the steps runs (each step one kernel call of them): calls
#: are sized by time below it (running/chunking.py), and Ctrl-C is answered between calls.
STEP_CALL = 20_000


@dataclass
class StepResult:
    """The state after each step of ``steps`` over battles ``first .. first + n - 1`` of
    run ``seed`` (``tally``), and the step whose joint distribution is shown (``after``)."""

    scenario: Scenario
    seed: int
    first: int
    tally: StepTally
    after: int | None = None
    partial: bool = False
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    #: Whether a side of the scenario has a stop rule (the withdrawals are shown).
    stop_rules: bool = False

    @property
    def decided(self) -> tuple[str, ...]:
        """The outcomes a battle can have been decided by, shown after each step: the
        withdrawals where a side has a stop rule or a battle withdrew."""
        withdrew = any(c.states[3:5].any() for c in self.tally.steps.values())
        return STATES[:5] if self.stop_rules or withdrew else STATES[:3]

    def to_dict(self) -> dict[str, Any]:
        """``by_step``: for each step ``{step, fighting, decided, men_left}``; ``after``:
        the joint distribution of both sides' men left after the chosen step."""
        rows = []
        decided = self.decided
        for step, counts in self.tally.steps.items():
            rows.append(
                {
                    "step": step,
                    "battles": counts.battles,
                    "fighting": _probability(counts, "fighting"),
                    "decided": {s: _probability(counts, s) for s in decided},
                    "men_left": {
                        key: _spread(h) for key, h in counts.men_left.items() if "." in key
                    },
                    "men_left_total": {
                        side: _spread(counts.men_left[side]) for side in ("attacker", "defender")
                    },
                }
            )
        out: dict[str, Any] = {"by_step": rows, "by_step_partial": self.partial}
        if self.after is not None and self.after in self.tally.steps:
            attacker, defender, p = self.tally.joint(self.after)
            out["after"] = {
                "step": self.after,
                "attacker_men_left": attacker.tolist(),
                "defender_men_left": defender.tolist(),
                "p": p.tolist(),
            }
        return out


def _spread(h: Histogram) -> dict[str, float]:
    return {
        "mean": h.mean(),
        "q10": h.quantile(0.1),
        "q50": h.quantile(0.5),
        "q90": h.quantile(0.9),
    }


def _probability(counts: StepCounts, state: str) -> dict[str, float]:
    p, low, high = counts.p(state)
    return {"p": p, "low": low, "high": high}


def check_step(prepared: Prepared, step: int, name: str = "after") -> None:
    """A step after the battle's start (1, or the step after ``from_step``) .. the
    scenario's turn limit (any without one), or one line. Steps count from the
    battle's start, the steps of a battle given in progress included."""
    limit, least = prepared.step_limit, prepared.from_step + 1
    if step < least or (limit is not None and step > limit):
        most = f"..{limit}" if limit is not None else " or more" if least > 1 else ""
        given = f" (the battle is given after step {least - 1})" if least > 1 else ""
        raise ParameterError(name, step, f"expected a step {least}{most}{given}")


def steps_to_record(
    asked: Sequence[int], every: bool, from_step: int = 0, limit: int | None = None
) -> list[int]:
    """The steps a block of battles is asked for: ``asked``, and with ``every`` each of
    the :data:`MOST_STEPS` after ``from_step`` up to the turn limit ``limit`` (where every
    battle is decided), counted to the block's longest battle (:func:`_record_block`)."""
    wanted = set(asked)
    if every:
        last = from_step + MOST_STEPS if limit is None else min(limit, from_step + MOST_STEPS)
        wanted.update(range(from_step + 1, last + 1))
    return sorted(wanted)


def block_cap(prepared: Prepared, rows: int) -> int:
    """The most battles a block of ``rows`` steps recorded runs: :data:`STEP_CALL`, or
    fewer so that its rows (one a step a battle) fit the runner's bound for a call."""
    return max(1, battles_per_call(prepared, STEP_CALL * rows) // rows)


def one_pass(prepared: Prepared) -> bool:
    """Whether the ruleset's kernel records every step in one pass (it overrides
    ``Prepared.run_through``); the default fights the battles again for each step."""
    return type(prepared).run_through is not Prepared.run_through


#: The steps ``--by-round``'s first block records in its first call; later blocks record
#: a quarter more than the longest battle seen (:func:`_next_horizon`).
FIRST_HORIZON = 16


def _next_horizon(chunk: StepTally, from_step: int) -> int:
    """A quarter more steps than the block's longest battle took (the last step it
    recorded with a battle still fighting, plus one)."""
    fighting = [t for t, counts in chunk.steps.items() if counts.states[-1] > 0]
    longest = (max(fighting) + 1 if fighting else from_step + 1) - from_step
    return from_step + longest + (longest + 3) // 4


def _one_pass(
    prepared: Prepared,
    seed: int,
    first: int,
    count: int,
    wanted: list[int],
    asked: list[int],
    horizon: int | None,
    lock: AbstractContextManager[object] | None,
    brought: dict[str, int],
) -> dict[int, StepCounts] | None:
    """The counts after each of ``wanted`` steps (by step), recorded in one pass a call:
    first the steps up to ``horizon`` and those asked, then, only while a battle still
    fights at the last of them, the next steps (as many, twice as many, ...). A
    battle's row is written once a step recorded, so recording the hundred steps of
    ``--by-round`` when battles last ten would cost ten times the writes; the horizon,
    the longest battle of the blocks before, makes most blocks one call of about the
    steps their battles last. Steps left out come after every battle is decided (their
    state is the final one, which StepTally.merge counts so). None when Ctrl-C stopped
    it between the calls."""
    near = wanted if horizon is None else [t for t in wanted if t <= horizon or t in asked]
    with lock or nullcontext():
        recorded = prepared.run_through(seed, first, count, near)
    by_step = StepCounts.by_step(recorded, near, brought) if near else {}
    rest = [t for t in wanted if t not in by_step]
    size = max(1, len(near))
    while rest and not (near and by_step[max(by_step)].states[-1] == 0):
        if stop_requested():
            return None
        later, rest = rest[:size], rest[size:]
        with lock or nullcontext():
            recorded = prepared.run_through(seed, first, count, later)
        by_step.update(StepCounts.by_step(recorded, later, brought))
        size *= 2
    return by_step


def _record_block(
    prepared: Prepared,
    seed: int,
    first: int,
    count: int,
    asked: list[int],
    every: bool,
    brought: dict[str, int],
    stopped: Callable[[], bool] = stop_requested,
    lock: AbstractContextManager[object] | None = None,
    horizon: int | None = None,
) -> StepTally | None:
    """The state of battles ``first .. first + count - 1`` after each step asked (with
    ``every``: each step until they are all decided), or None when Ctrl-C stopped it.
    A kernel that records in one pass is called once with every step; the default
    run_through is called a step at a time, to the block's longest battle, as each
    call fights the battles again. Each call holds ``lock``; ``stopped()`` is asked
    after each."""
    chunk = StepTally(brought)
    wanted = steps_to_record(asked, every, prepared.from_step, prepared.step_limit)
    recorded = None
    if one_pass(prepared):
        recorded = _one_pass(prepared, seed, first, count, wanted, asked, horizon, lock, brought)
        if recorded is None or stopped():
            return None
    # Past the first step at which every battle is decided, only the steps asked: a
    # battle decided by then has its final state at every later step, and
    # StepTally.merge counts it so.
    ended = False
    for step in wanted:
        if ended and step not in asked:
            continue
        if recorded is None:
            with lock or nullcontext():
                outcomes = prepared.run_through(seed, first, count, [step])
            counts = StepCounts.of({n: c[0] for n, c in outcomes.items()}, brought)
        else:
            counts = recorded[step]
        chunk.steps[step] = counts
        ended = ended or counts.states[-1] == 0
        if recorded is None and stopped():
            return None
    return chunk


def run_steps(
    scenario: Scenario,
    steps: Sequence[int] | None,
    seed: int,
    first: int,
    battles: int,
    *,
    after: int | None = None,
    threads: int | None = None,
    interruptible: bool = False,
    stop: Callable[[], bool] | None = None,
    lock: AbstractContextManager[object] | None = None,
) -> StepResult:
    """The state after each of ``steps`` (None: every step until each battle is decided,
    at most :data:`MOST_STEPS`), and after ``after``, over battles ``first .. first +
    battles - 1`` of run ``seed``. Ctrl-C (when ``interruptible``), or ``stop()``
    turning true, stops between kernel calls; the result then counts the blocks of
    battles done (``partial``). Each kernel call holds ``lock`` (the page's questions
    take turns)."""
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    check_unfolds(prepared, scenario.ruleset)
    check_capabilities(prepared, scenario.ruleset)
    asked = sorted({*(steps or ()), *(() if after is None else (after,))})
    for asked_step in asked:
        check_step(prepared, asked_step, "after" if asked_step == after else "steps")
    every = steps is None
    brought = men_brought(prepared.column_bounds)
    # A kernel that counts its battles by state (Prepared.count_through) adds each
    # block's to one table of counts, tallied once at the end: every step of the
    # blocks at once, no rows written.
    wanted = steps_to_record(asked, every, prepared.from_step, prepared.step_limit)
    states = prepared.state_columns(wanted)
    counts = None if states is None else np.zeros((len(states["winner"]), len(wanted)), np.int64)
    # Blocks of battles sized by time, as the runner's calls are; a battle of a block
    # holds a row per step recorded in one pass, so a block holds as many fewer (one
    # that is counted holds its row, as a run's does).
    rows = len(wanted) if one_pass(prepared) and counts is None else 1
    sizes = ChunkSizes(block_cap(prepared, max(1, rows)))
    chunks: list[StepTally] = []
    started = time.perf_counter()
    stopped = False
    # With every step, the steps a block records in its first call (_one_pass).
    horizon = prepared.from_step + FIRST_HORIZON if every and one_pass(prepared) else None

    def stopped_by() -> bool:
        return stop_requested() or (stop is not None and stop())

    with thread_count(threads), stop_on_interrupt(interruptible):
        done = 0
        while done < battles:
            count = sizes.next(battles - done)
            began = time.perf_counter()
            if counts is not None:
                with lock or nullcontext():
                    prepared.count_through(seed, first + done, count, wanted, counts)
                sizes.timed(count, time.perf_counter() - began)
                done += count
                if stopped_by() and done < battles:  # the blocks counted so far
                    stopped = True
                    break
                continue
            chunk = _record_block(
                prepared,
                seed,
                first + done,
                count,
                asked,
                every,
                brought,
                stopped_by,
                lock,
                horizon,
            )
            if chunk is None:  # a block counts whole or not at all: each step its battles
                stopped = True
                break
            if horizon is not None:
                # The longest battle seen so far (the first call's guess left behind).
                longest = _next_horizon(chunk, prepared.from_step)
                horizon = longest if done == 0 else max(horizon, longest)
            sizes.timed(count, time.perf_counter() - began)
            chunks.append(chunk)
            done += count
    if counts is not None and states is not None and done:
        tally = StepTally.of_counts(brought, wanted, asked, counts, states)
    else:
        tally = StepTally.merged(brought, chunks)
    notes: list[str] = []
    if every and tally.steps and tally.steps[max(tally.steps)].states[-1] > 0:
        notes.append(
            f"battles still fighting after {MOST_STEPS} steps: the state is shown for "
            f"the first {MOST_STEPS} only"
        )
    return StepResult(
        scenario=scenario,
        seed=seed,
        first=first,
        tally=tally,
        after=after,
        partial=stopped,
        notes=tuple(notes),
        seconds=time.perf_counter() - started,
        stop_rules=prepared.has_stop_rules,
    )


def unfold(
    scenario: Scenario,
    battles: int | None = None,
    seed: int | None = None,
    *,
    steps: Sequence[int] | None = None,
    after: int | None = None,
    first: int = 0,
    threads: int | None = None,
) -> StepResult:
    """The battle as it unfolds, from Python: the state after each step (``steps``;
    None: every step until each battle is decided) and the joint distribution of both
    sides' men left after ``after``, over the battles ``simulate(scenario, battles,
    seed)`` runs (defaults from the scenario).

    >>> answer = simulator.unfold(scenario, 10_000, after=2)
    >>> answer.to_dict()["by_step"][1]["men_left"]["attacker.soldier"]["mean"]
    """
    plan = RunPlan.of(scenario, battles, seed, first=first, threads=threads)
    return run_steps(
        scenario, steps, plan.seed, plan.first, plan.battles, after=after, threads=threads
    )
