"""The battle as it unfolds on the command line: ``--by-round`` and ``--after N`` of
``run``, ``odds`` and ``plot``, checked before any battle and run over a run's battles."""

from __future__ import annotations

from typing import Any

from .. import rulesets


def unfolding(scenario: Any, result: Any, by_round: bool, after: int | None) -> Any:
    """The state after each step asked (``--by-round``: every step to the last battle's
    end; ``--after``) over the run's battles, or None when none is asked."""
    if not by_round and after is None:
        return None
    from ..running.unfolding import run_steps

    steps: list[int] | None = None if by_round else []
    return run_steps(
        scenario, steps, result.seed, result.first, result.n, after=after, interruptible=True
    )


def check_unfolding(scenario: Any, by_round: bool, after: int | None) -> None:
    """Bad ``--after`` or a ruleset without the battle as it unfolds: one line before
    any battle."""
    if not by_round and after is None:
        return
    from ..running.unfolding import check_step, check_unfolds

    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    check_unfolds(prepared, scenario.ruleset)
    if after is not None:
        check_step(prepared, after)
