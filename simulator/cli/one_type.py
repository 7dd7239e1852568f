"""What ``matrix``, ``meta`` and ``prices`` share on the command line: the equal-cost
matrix fought with a progress bar, and a unit type's name as words for a table."""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import BattleOddsError
from ..running.progress import progress_bar
from ..studies.matrix import Matrix, equal_cost_matrix
from .options import battle_settings, err


def fight_matrix(
    command: str,
    budget: str,
    ruleset: str,
    types: str | None,
    costs: Path | None,
    battles: int,
    seed: int,
    output: Path | None,
    threads: int | None,
    scheduler: str | None,
    setting: list[str] | None,
    max_total: int | None = None,
) -> Matrix:
    """The equal-cost matrix a command (``matrix``, ``meta``) asks for, its ``--set``
    settings in every battle's ``[battle]`` table, with a progress bar; a plot's path is
    checked before the battles, not after."""
    from ..running.distributed import executor_for

    spend = _budget(budget)
    settings = battle_settings(setting)
    if output is not None:
        from ..report import plots

        plots.check_output(output)
    with executor_for(scheduler) as executor, progress_bar(err, command) as progress:
        return equal_cost_matrix(
            ruleset,
            spend,
            types,
            costs,
            battles,
            seed,
            threads=threads,
            progress=progress,
            executor=executor,
            max_total=max_total,
            settings=settings,
        )


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BattleOddsError(f"--budget '{text}': expected a number, e.g. 20") from None
    if not (math.isfinite(value) and value > 0):
        raise BattleOddsError(f"--budget {text}: expected a finite number > 0")
    return value


def type_words(name: str) -> str:
    """A unit type's name as words for a header that may wrap ("blessed soldier")."""
    return name.replace("_", " ")
