"""Who beats whom at equal cost (``battle-odds matrix``, ``simulator.matrix``).

For a budget B, each unit type i fields floor(B / cost_i) men with the ruleset's least
leader or setting (:meth:`Ruleset.one_type_battle`); every ordered pair of types fights,
the diagonal too as a sanity value, and the answer is the attacker's win probability of
each pair with its 95% Wilson interval. Every cell runs on the same seed and battle
indices (common random numbers) and one kernel, on the study engine
(:mod:`simulator.running.scenarios`). ``settings`` go into
every battle's ``[battle]`` table (:mod:`simulator.studies.machinery.one_type`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError
from ..results.result import Result
from ..results.stats import Tally
from ..rulesets import Army
from ..running.interrupt import Interrupted
from ..running.plan import Progress, StudyPlan
from ..running.progress import plain_lines_by_default
from ..running.scenarios import ScenarioBattles, merged, tally
from ..scenario.costs import given_costs, read_costs_file
from ..scenario.scenario import DEFAULT_SEED
from .machinery.one_type import (
    check_budget,
    checked_settings,
    offered_types,
    one_type_scenario,
    ruleset_named,
    settings_columns,
)
from .machinery.planned import takes_plan

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster

#: Battles per cell unless told: about +-2 points of interval at p = 0.5.
DEFAULT_BATTLES = 2_000


@dataclass(frozen=True)
class Cell:
    """One ordered pair: ``attacker`` men of one type attack ``defender`` men of another."""

    attacker: Army
    defender: Army
    result: Result

    @property
    def win(self) -> tuple[float, float, float]:
        """The attacker's win probability with its 95% interval (p, low, high); nan for
        a cell an interrupted matrix did not run."""
        if self.result.n == 0:
            return math.nan, math.nan, math.nan
        return self.result.win("attacker")


@dataclass
class Matrix:
    """Attacker-win probabilities of every ordered pair of unit types at equal cost."""

    ruleset: str
    budget: float
    types: tuple[str, ...]
    costs: dict[str, float]
    men: dict[str, int]
    seed: int
    battles: int
    #: Row-major: attacker types down, defender types across, in ``types`` order.
    cells: list[Cell]
    #: What was left out and why (types that cannot fight alone).
    notes: tuple[str, ...] = ()
    #: True when Ctrl-C stopped the matrix: the cells not run have no battles (nan).
    partial: bool = False
    #: The ``[battle]`` settings every battle was fought under (``--set``).
    settings: dict[str, Any] = field(default_factory=dict)

    def cell(self, attacker: str, defender: str) -> Cell:
        return self.cells[self.types.index(attacker) * len(self.types) + self.types.index(defender)]

    def grid(self, column: str = "p") -> np.ndarray:
        """``p``, ``low`` or ``high`` as a square array: rows attacker, columns defender."""
        index = ("p", "low", "high").index(column)
        values = [cell.win[index] for cell in self.cells]
        return np.array(values, dtype=float).reshape(len(self.types), len(self.types))

    @property
    def frame(self) -> pd.DataFrame:
        """One tidy row per ordered pair, with the parameters that reproduce it."""
        import pandas as pd

        rows = []
        for cell in self.cells:
            p, low, high = cell.win
            rows.append(
                {
                    "attacker_type": cell.attacker.type,
                    "defender_type": cell.defender.type,
                    "attacker_men": cell.attacker.men,
                    "defender_men": cell.defender.men,
                    "p": p,
                    "low": low,
                    "high": high,
                    "battles": cell.result.n,
                    "seed": self.seed,
                    "budget": self.budget,
                    "ruleset": self.ruleset,
                    **settings_columns(self.settings),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "budget": self.budget,
            "seed": self.seed,
            "battles": self.battles,
            "partial": self.partial,
            "types": list(self.types),
            "costs": {t: self.costs[t] for t in self.types},
            "men": {t: self.men[t] for t in self.types},
            "settings": dict(self.settings),
            "notes": list(self.notes),
            "cells": [
                {
                    "attacker": cell.attacker.type,
                    "defender": cell.defender.type,
                    "attacker_men": cell.attacker.men,
                    "defender_men": cell.defender.men,
                    "scenario_hash": cell.result.scenario.hash,
                    # A cell an interrupted matrix did not run has no numbers (null).
                    "p": _number(cell.win[0]),
                    "low": _number(cell.win[1]),
                    "high": _number(cell.win[2]),
                }
                for cell in self.cells
            ],
        }


@takes_plan
@plain_lines_by_default("matrix")
def equal_cost_matrix(
    ruleset: str,
    budget: float,
    types: Sequence[str] | str | None = None,
    costs: Mapping[str, float] | str | Path | None = None,
    battles: int = DEFAULT_BATTLES,
    seed: int = DEFAULT_SEED,
    *,
    plan: StudyPlan | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
    executor: Cluster | None = None,
    max_total: int | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Matrix:
    """Fight every ordered pair of ``types`` (default: every type of the ruleset that can
    fight alone) at ``budget`` each; ``costs`` (a mapping or a TOML file of ``type =
    cost``) override the unit table's costs; ``settings`` (``{"rules": "engine"}``) go
    into every battle's ``[battle]`` table."""
    rs = ruleset_named(ruleset)
    given = checked_settings(settings)
    table = rs.unit_costs()
    if costs is not None:
        override = (
            given_costs(costs, table, "costs")
            if isinstance(costs, Mapping)
            else read_costs_file(costs, table)
        )
        table = {**table, **override}
    if battles < 1:
        raise ParameterError("battles", battles, "expected at least 1")
    chosen, notes = offered_types(rs, table, types)
    budget = check_budget("budget", budget, {t: table[t] for t in chosen})
    men = {t: _men(budget, table[t]) for t in chosen}
    unaffordable = [t for t in chosen if men[t] == 0]
    if unaffordable:
        cheapest = min(table[t] for t in unaffordable)
        raise ParameterError(
            "budget",
            None,
            f"{{budget=}}{budget:g} buys no "
            + ", ".join(f"{t} (cost {table[t]:g})" for t in unaffordable)
            + f": raise it to at least {cheapest:g}"
            + ("" if types is None else " or leave them out of {types}"),
            whole=True,
        )
    plan = StudyPlan.of(
        seed=seed, battles=battles, threads=threads, executor=executor, max_total=max_total
    )
    plan.check_total(
        f"matrix: {len(chosen)} x {len(chosen)} pairs x {{battles=}}{battles:,}",
        len(chosen) ** 2 * battles,
    )
    # Build (and so validate) every cell's battle before running any.
    pairs = [(Army(a, men[a]), Army(d, men[d])) for a in chosen for d in chosen]
    engine = ScenarioBattles(plan)
    for pair in pairs:
        engine.add(pair, one_type_scenario(rs, *pair, given, budget))
    tallies: dict[int, Tally] = {}
    try:
        # Every cell on one kernel and the same battles (common random numbers), the
        # cells side by side, each kernel on one thread.
        kernel = engine.settle(pairs, battles)
        if progress is not None:
            report = progress
            engine.on_battles = lambda: report(
                engine.battles,
                len(pairs) * battles,
                f"{len(tallies):,} of {len(pairs):,} matchups done",
            )
        for i, cell_tally in engine.each(pairs, 0, battles, kernel, tally, merged):
            tallies[i] = cell_tally
    except Interrupted:
        pass  # the cells done are the answer so far
    finally:
        engine.close()
    cells = []
    for i, (attacker, defender) in enumerate(pairs):
        prepared = engine.prepared((attacker, defender))
        result = Result(
            scenario=engine.scenario((attacker, defender)),
            seed=seed,
            tally=tallies.get(i, Tally()),
            kernel=prepared.kernel,
            notes=prepared.notes,
            flags=prepared.flags,
            stop_rules=prepared.has_stop_rules,
        )
        cells.append(Cell(attacker, defender, result))
    partial = len(tallies) < len(pairs)
    return Matrix(
        ruleset=rs.name,
        budget=budget,
        types=tuple(chosen),
        costs={t: table[t] for t in chosen},
        men=men,
        seed=seed,
        battles=battles,
        cells=cells,
        notes=tuple(notes),
        partial=partial,
        settings=given,
    )


def _number(x: float) -> float | None:
    return None if math.isnan(x) else x


def _men(budget: float, cost: float) -> int:
    # A hair of tolerance so that 0.3 / 0.1 buys 3 men, not 2.999... -> 2.
    return math.floor(budget / cost + 1e-9)


#: ``simulator.matrix``: the name the package exports.
matrix = equal_cost_matrix
