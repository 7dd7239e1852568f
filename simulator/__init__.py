"""battle-odds: Monte Carlo battle-outcome analysis.

>>> import simulator
>>> scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
>>> result = simulator.simulate(scenario, battles=10_000, seed=1)
>>> result.summary()          # tidy pandas frame
>>> result.battles            # one row per battle
>>> simulator.worth(scenario, side="attacker", add="1 knight", in_="soldier").frame
>>> simulator.sensitivity(scenario, battles=4_000).frame
>>> simulator.matrix("olympia", budget=20).frame   # who beats whom at equal cost
>>> simulator.prices("olympia", budgets=[10, 20, 40]).frame   # a fair price list
>>> simulator.meta("olympia", budget=20, costs="costs.toml").frame   # what players build
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import BattleOddsError
from .exact import exact
from .matrix import matrix
from .meta import meta
from .prices import prices
from .results import Result
from .rulesets import InlineQuery
from .runner import simulate
from .scenario import Scenario, from_data, load_scenario
from .sensitivity import sensitivity
from .worth import worth

__all__ = [
    "BattleOddsError",
    "InlineQuery",
    "Result",
    "Scenario",
    "__version__",
    "exact",
    "from_data",
    "inline_scenario",
    "load_scenario",
    "matrix",
    "meta",
    "prices",
    "sensitivity",
    "simulate",
    "worth",
]


def inline_scenario(ruleset: str, attacker: str, defender: str, **options: object) -> Scenario:
    """A scenario from one-line armies, as ``battle-odds odds`` builds it."""
    from .scenario import from_query

    return from_query(ruleset, InlineQuery(attacker, defender, options))
