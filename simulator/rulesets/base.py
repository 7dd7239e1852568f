"""What every ruleset provides.

A ruleset turns validated scenario data into plain arrays and runs its kernel on a
range of battle indices. Everything after that (statistics, tables, JSON, plots,
sweeps, regression) is shared and sees only named integer outcome columns:

* ``winner``: 0 attacker, 1 defender, 2 draw;
* ``steps``: the ruleset's unit of time at which the battle was decided;
* ``casualties.<side>.<type>``: men lost per unit type and side;
* anything else: ruleset extras (``nobles_killed.defender``, ``castle_fallen``, ...).
  A 0/1 extra is reported as a probability.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import BattleOddsError, Source

if TYPE_CHECKING:
    from ..exact import ExactResult
    from ..scenario import Scenario


@dataclass(frozen=True)
class InlineQuery:
    """An army pair and conditions given on the command line (``battle-odds odds``)."""

    attacker: str
    defender: str
    options: Mapping[str, Any] = field(default_factory=dict)


class Prepared(ABC):
    """A scenario compiled to arrays, ready to run any range of battles."""

    #: Name of the kernel used, reported in the summary.
    kernel: str = ""
    #: Notes for the user (rules dropped, options ignored), reported in the summary.
    notes: tuple[str, ...] = ()
    #: Outcome columns that are yes/no (0/1), reported as probabilities.
    flags: frozenset[str] = frozenset()

    @abstractmethod
    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        """Outcome columns of battles ``first .. first+count-1`` of run ``seed``."""

    def use_reference_kernel(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Run the ruleset's reference kernel from now on.

        Battle i of a seed is the same battle only within one kernel: a paired comparison
        of two scenarios whose automatic choices differ puts both on the reference kernel.
        Rulesets with a single kernel have nothing to do."""


class Ruleset(ABC):
    """A rule system: ``validate``, ``prepare``, ``inline`` and ``units`` are required,
    the other methods are optional hooks with defaults (docs/writing-a-ruleset.md)."""

    name: str = ""
    title: str = ""
    #: What ``steps`` counts for this ruleset (strikes, rounds, turns).
    step_unit: str = "steps"

    @abstractmethod
    def validate(self, data: Mapping[str, Any], source: Source) -> Any:
        """Check scenario data (everything but the common keys); return a typed model."""

    @abstractmethod
    def prepare(self, model: Any) -> Prepared:
        """Compile a validated model to arrays."""

    @abstractmethod
    def inline(self, query: InlineQuery) -> dict[str, Any]:
        """Scenario data (as a TOML file would hold it) for a one-line query."""

    @abstractmethod
    def units(self) -> pd.DataFrame:
        """The ruleset's unit types, one row each, for ``battle-odds units``."""

    def sweep_path(self, data: Mapping[str, Any], path: str) -> str:
        """The scenario data path (for ``Scenario.with_changes``) a sweep's ``--vary PATH``
        names in scenario ``data``.

        The default takes ``path`` as a data path already (``battle.terrain``,
        ``attacker.units[0].men.knight``, ``units.knight.attack``). A ruleset overrides
        this to accept shorter forms such as ``attacker.knight``; it raises
        ``BattleOddsError`` for a path that names nothing.
        """
        return path

    def exact(self, scenario: Scenario, max_states: int | None = None) -> ExactResult:
        """Optional: exact probabilities and expectations of a small ``scenario``
        (``battle-odds exact``, ``odds --exact``, :func:`simulator.exact`).

        ``max_states`` (None: the ruleset's own limit) bounds the work; a scenario above
        it raises ``BattleOddsError`` naming its size. The default has no solver."""
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the '{self.name}' ruleset; "
            "use `battle-odds run`"
        )

    @property
    def solvable(self) -> bool:
        """Whether the ruleset overrides :meth:`exact`."""
        return type(self).exact is not Ruleset.exact
