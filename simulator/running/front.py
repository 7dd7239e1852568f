"""The front of a single run: what ``run``, ``odds``, ``plot`` and ``balance`` do with a
:class:`~simulator.running.plan.RunPlan` once the command line has built it (its cluster,
its progress bar, a fixed number of battles or precision rounds).

Above the runner, the precision rounds and the progress display, which it puts
together; the studies never reach it (they run battles through the engine,
:mod:`simulator.running.scenarios`).
"""

from __future__ import annotations

from contextlib import ExitStack

from rich.console import Console

from ..results.result import Result
from ..scenario.scenario import Scenario
from .plan import RunPlan
from .progress import progress_bar
from .runner import run_chunks


def run_battles(
    scenario: Scenario,
    plan: RunPlan,
    *,
    console: Console | None = None,
    scheduler: str | None = None,
) -> Result:
    """What ``run``, ``odds`` and ``plot`` do: the run of ``plan`` (a fixed number of
    battles, or with ``plan.precision`` as many as it takes), with a progress bar on a
    terminal, on this machine or on the Dask cluster at ``scheduler``."""
    from .distributed import executor_for
    from .precision import run_to_precision

    console = console if console is not None else Console(stderr=True)
    with ExitStack() as stack:
        executor = stack.enter_context(executor_for(scheduler))
        progress = stack.enter_context(progress_bar(console, scenario.name))
        if executor is not None:
            plan = plan.on(executor)
        if plan.precision is None:
            return run_chunks(scenario, plan, progress)
        return run_to_precision(scenario, plan, progress)
