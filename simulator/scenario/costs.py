"""What a unit costs: the ``cost`` of a unit type, read the same way from a ruleset's
unit table, a scenario's unit definitions and a ``--costs`` file.

None of the rule texts prices its units, so every type costs 1 per man unless a table
says otherwise; ``battle-odds matrix`` spends a budget in these units.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import Source, did_you_mean
from ..input.reader import Node
from ..input.toml import read_toml
from ..rulesets.keys import read_cost


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
