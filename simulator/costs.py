"""What a unit costs: the ``cost`` of a unit type, read the same way from a ruleset's
unit table, a scenario's unit definitions and a ``--costs`` file.

None of the rule texts prices its units, so every type costs 1 per man unless a table
says otherwise; ``battle-odds matrix`` spends a budget in these units.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from .errors import Source, did_you_mean
from .fields import Field
from .reader import Node
from .scenario import read_toml

#: What one man of a type costs when nothing says otherwise.
DEFAULT_COST = 1.0
#: A cost is above 0 (a free type would fill any budget without end) and small enough that
#: a budget over it stays a count of men.
MIN_COST = 0.001
MAX_COST = 1_000_000
COST = Field(
    "cost",
    "number",
    "what one man of the type costs (battle-odds matrix spends budgets in it)",
    lo=MIN_COST,
    hi=MAX_COST,
    default=DEFAULT_COST,
)


def read_cost(node: Node, key: str = "cost", default: float | None = DEFAULT_COST) -> float:
    """``node[key]`` as a cost: a finite number in MIN_COST..MAX_COST."""
    return float(node.read(replace(COST, default=default), key))


def read_costs_file(path: str | Path, known: Iterable[str]) -> dict[str, float]:
    """A ``--costs`` file: a TOML table ``type = cost`` over the ``known`` unit types."""
    data, source = read_toml(Path(path), "costs file")
    return costs_from(Node(data, "", source), known)


def costs_from(node: Node, known: Iterable[str]) -> dict[str, float]:
    """``{type: cost}`` from a table, every type one of ``known``."""
    known = list(known)
    costs = {}
    for name, _ in node.items():
        if name not in known:
            raise node.fail(f"unknown unit type '{name}'" + did_you_mean(name, known), name, name)
        costs[name] = read_cost(node, name, None)
    return costs


def given_costs(costs: Mapping[str, float], known: Iterable[str], where: str) -> dict[str, float]:
    """Costs given from Python (``simulator.matrix(costs={...})``), checked as a file's."""
    return costs_from(Node(dict(costs), "", Source(where)), known)
