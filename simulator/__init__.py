"""battle-odds: Monte Carlo battle-outcome analysis.

>>> import simulator
>>> scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
>>> result = simulator.simulate(scenario, battles=10_000, seed=1)
>>> result.summary()          # tidy pandas frame
>>> result.battles            # one row per battle
>>> simulator.worth(scenario, side="attacker", add="1 knight", in_="soldier").frame
>>> simulator.sensitivity(scenario, battles=4_000).frame
>>> simulator.matrix("olympia", budget=20).frame   # who beats whom at equal cost
>>> simulator.best(scenario, budget=24, types="soldier,knight").frontier  # what to bring
>>> simulator.prices("olympia", budgets=[10, 20, 40]).frame   # a fair price list
>>> simulator.meta("olympia", budget=20, costs="costs.toml").frame   # what players build

The package's layers, top to bottom, are its sub-packages (docs/architecture.md): ``cli``,
``report``, ``studies``, ``running``, ``results``, ``scenario``, ``rulesets``, ``input``,
and the ground (``errors``, ``locate``, ``atomic``, ``version``).
"""

# ruff: noqa: E402  (the imports below come after the command line's first defence)

from __future__ import annotations

# First, before the heavy imports below: on the command line, Ctrl-C in the first second
# ends the process in one line, and a failure no layer expected is one line too.
from .startup import prepare_command_line

prepare_command_line()

from .errors import BattleOddsError  # isort: skip
from .results.result import Result
from .rulesets import ExactResult, InlineQuery
from .running.runner import simulate
from .scenario.scenario import Scenario, from_data, from_query, load_scenario
from .studies.best import best
from .studies.compare import compare
from .studies.exact import exact
from .studies.matrix import matrix
from .studies.meta import meta
from .studies.prices import prices
from .studies.sensitivity import sensitivity
from .studies.sweep import sweep
from .studies.worth import worth
from .version import __version__

__all__ = [
    "BattleOddsError",
    "ExactResult",
    "InlineQuery",
    "Result",
    "Scenario",
    "__version__",
    "best",
    "compare",
    "exact",
    "from_data",
    "inline_scenario",
    "load_scenario",
    "matrix",
    "meta",
    "prices",
    "sensitivity",
    "simulate",
    "sweep",
    "worth",
]


def inline_scenario(ruleset: str, attacker: str, defender: str, **options: object) -> Scenario:
    """A scenario from one-line armies, as ``battle-odds odds`` builds it."""
    return from_query(ruleset, InlineQuery(attacker, defender, options))
