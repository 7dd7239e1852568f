"""The battle as it unfolds: the state after each step asked, over a run's battles.

Each step t is a run of the same battles (the same seed and battle indices) stopped
after step t (``Prepared.run_until``), counted into a mergeable
:class:`~simulator.results.steps.StepTally`. A battle decided by step t counts with its
final state. Recording costs a run per step and nothing when not asked: the kernels'
ordinary runs are untouched but for a comparison a step.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError
from ..results.steps import STATES, StepCounts, StepTally, men_brought
from ..rulesets.base import BY_STEP, Prepared
from ..scenario.scenario import Scenario
from .interrupt import stop_on_interrupt, stop_requested
from .runner import thread_count

#: ``--by-round`` shows at most this many steps (each costs a run of the battles).
MOST_STEPS = 100
#: Battles a kernel call of the step runs: Ctrl-C is answered between calls.
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
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def step_unit(self) -> str:
        return rulesets.get(self.scenario.ruleset).step_unit

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
                    "decided": {s: _probability(counts, s) for s in STATES[:-1]},
                    "men_left": {
                        key: {
                            "mean": h.mean(),
                            "q10": h.quantile(0.1),
                            "q50": h.quantile(0.5),
                            "q90": h.quantile(0.9),
                        }
                        for key, h in counts.men_left.items()
                        if "." in key
                    },
                    "men_left_total": {
                        side: {
                            "mean": counts.men_left[side].mean(),
                            "q10": counts.men_left[side].quantile(0.1),
                            "q50": counts.men_left[side].quantile(0.5),
                            "q90": counts.men_left[side].quantile(0.9),
                        }
                        for side in ("attacker", "defender")
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


def steps_to_show(prepared: Prepared, by_round: bool, after: int | None, longest: int) -> list[int]:
    """The steps to record: every step to the longest battle of the run (``longest``,
    at most :data:`MOST_STEPS`) with ``by_round``, and ``after``."""
    steps = set()
    if after is not None:
        limit = prepared.step_limit
        if after < 1 or (limit is not None and after > limit):
            most = "" if limit is None else f"..{limit}"
            raise BattleOddsError(f"--after {after}: expected a step 1{most}")
        steps.add(after)
    if by_round:
        steps.update(range(1, max(1, min(longest, MOST_STEPS)) + 1))
    return sorted(steps)


def run_steps(
    scenario: Scenario,
    steps: Sequence[int],
    seed: int,
    first: int,
    battles: int,
    *,
    after: int | None = None,
    threads: int | None = None,
    interruptible: bool = False,
) -> StepResult:
    """The state after each of ``steps`` over battles ``first .. first + battles - 1``
    of run ``seed``; Ctrl-C (when ``interruptible``) stops between kernel calls, and the
    result then counts the battles done (``partial``)."""
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    check_unfolds(prepared, scenario.ruleset)
    brought = men_brought(prepared.column_bounds)
    tally = StepTally(brought)
    started = time.perf_counter()
    stopped = False
    with thread_count(threads), stop_on_interrupt(interruptible):
        done = 0
        while done < battles and not stopped:
            count = min(STEP_CALL, battles - done)
            chunk = StepTally(brought)
            for step in steps:
                outcomes = prepared.run_until(seed, first + done, count, step)
                chunk.steps[step] = StepCounts.of(outcomes, brought)
                if stop_requested():
                    stopped = True
                    break
            if stopped:
                break  # a chunk counts whole or not at all: every step the same battles
            tally = tally.merge(chunk)
            done += count
    notes: list[str] = []
    if steps and len(steps) >= MOST_STEPS and after is None:
        notes.append(f"the state is shown for the first {MOST_STEPS} steps at most")
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
