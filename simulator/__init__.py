"""battle-odds: Monte Carlo battle-outcome analysis.

>>> import simulator
>>> scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
>>> result = simulator.simulate(scenario, battles=10_000, seed=1)
>>> result.summary()          # tidy pandas frame
>>> result.battles            # one row per battle
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import BattleOddsError  # noqa: E402
from .results import Result  # noqa: E402
from .rulesets import InlineQuery  # noqa: E402
from .runner import simulate  # noqa: E402
from .scenario import Scenario, from_data, load_scenario  # noqa: E402

__all__ = [
    "BattleOddsError",
    "InlineQuery",
    "Result",
    "Scenario",
    "__version__",
    "from_data",
    "inline_scenario",
    "load_scenario",
    "simulate",
]


def inline_scenario(ruleset: str, attacker: str, defender: str, **options: object) -> Scenario:
    """A scenario from one-line armies, as ``battle-odds odds`` builds it."""
    from . import rulesets
    from .errors import Source

    data = rulesets.get(ruleset).inline(InlineQuery(attacker, defender, options))
    return from_data(data, Source("odds"))
