"""The battle as it unfolds: the state after each step asked, over a run's battles.

Each step t is a run of the same battles (the same seed and battle indices) stopped
after step t (``Prepared.run_until``), counted into a mergeable
:class:`~simulator.results.steps.StepTally`. A battle decided by step t counts with its
final state. Recording costs a run per step and nothing when not asked: the kernels'
ordinary runs are untouched but for a comparison a step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError
from ..results.stats import Histogram
from ..results.steps import STATES, StepCounts, StepTally, men_brought
from ..rulesets.base import BY_STEP, Prepared
from ..scenario.scenario import Scenario
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

    def to_dict(self) -> dict[str, Any]:
        """``by_step``: for each step ``{step, fighting, decided, men_left}``; ``after``:
        the joint distribution of both sides' men left after the chosen step."""
        rows = []
        for step, counts in self.tally.steps.items():
            rows.append(
                {
                    "step": step,
                    "battles": counts.battles,
                    "fighting": _probability(counts, "fighting"),
                    "decided": {s: _probability(counts, s) for s in STATES[:3]},
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


def check_unfolds(prepared: Prepared, ruleset: str, what: str = BY_STEP) -> None:
    """One line when the scenario's ruleset does not give ``what`` of the battle as it
    unfolds (a plugin that declares no :attr:`Prepared.unfolds`)."""
    if what not in prepared.unfolds:
        raise BattleOddsError(
            f"ruleset {ruleset!r} does not give {what} (its prepared scenario declares "
            "no such capability: docs/writing-a-ruleset.md, 'The battle as it unfolds')"
        )


def check_step(prepared: Prepared, step: int, name: str = "--after") -> None:
    """A step 1 .. the scenario's turn limit (any from 1 without one), or one line."""
    limit = prepared.step_limit
    if step < 1 or (limit is not None and step > limit):
        most = "" if limit is None else f"..{limit}"
        raise BattleOddsError(f"{name} {step}: expected a step 1{most}")


def _next_step(step: int, asked: list[int], every: bool, chunk: StepTally) -> int | None:
    """The step after ``step`` to record in ``chunk``, or None when done: with ``every``
    the next while a battle is still fighting (to :data:`MOST_STEPS`), else the next
    asked."""
    if every and step < MOST_STEPS and (step == 0 or chunk.steps[step].states[-1] > 0):
        return step + 1
    later = [t for t in asked if t > step]
    return later[0] if later else None


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
    turning true, stops between kernel calls; the result then counts the chunks of
    battles done (``partial``). Each kernel call holds ``lock`` (the page's questions
    take turns)."""
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    check_unfolds(prepared, scenario.ruleset)
    asked = sorted({*(steps or ()), *(() if after is None else (after,))})
    for asked_step in asked:
        check_step(prepared, asked_step, "--after" if asked_step == after else "step")
    every = steps is None
    brought = men_brought(prepared.column_bounds)
    # Blocks of battles sized by time, as the runner's calls are; a wide scenario's
    # fewer, its rows within the runner's bound.
    sizes = ChunkSizes(battles_per_call(prepared, STEP_CALL))
    tally = StepTally(brought)
    started = time.perf_counter()
    stopped = False
    longest = 0
    with thread_count(threads), stop_on_interrupt(interruptible):
        done = 0
        while done < battles and not stopped:
            count = sizes.next(battles - done)
            began = time.perf_counter()
            chunk = StepTally(brought)
            step = 0
            while not stopped:
                following = _next_step(step, asked, every, chunk)
                if following is None:
                    break
                step = following
                with lock or nullcontext():
                    outcomes = prepared.run_until(seed, first + done, count, step)
                chunk.steps[step] = StepCounts.of(outcomes, brought)
                longest = max(longest, step)
                stopped = stop_requested() or (stop is not None and stop())
            if stopped:
                break  # a chunk counts whole or not at all: every step the same battles
            sizes.timed(count, time.perf_counter() - began)
            tally = tally.merge(chunk)
            done += count
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
