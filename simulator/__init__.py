"""battle-odds: Monte Carlo battle-outcome analysis.

>>> import simulator
>>> scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
>>> result = simulator.simulate(scenario, battles=10_000, seed=1)
>>> result.summary()          # tidy pandas frame
>>> result.battles            # one row per battle
>>> simulator.unfold(scenario, 10_000, after=2).to_dict()["by_step"]  # round by round
>>> simulator.wave_rows(simulator.simulate(with_waves, 10_000))  # wave by wave, per battle
>>> simulator.worth(scenario, side="attacker", add="1 knight", in_="soldier").frame
>>> simulator.sensitivity(scenario, battles=4_000).frame
>>> simulator.matrix("olympia", budget=20).frame   # who beats whom at equal cost
>>> simulator.best(scenario, budget=24, types="soldier,knight").frontier  # what to bring
>>> simulator.prices("olympia", budgets=[10, 20, 40]).frame   # a fair price list
>>> simulator.meta("olympia", budget=20, costs="costs.toml").frame   # what players build
>>> simulator.best_retreat(scenario, side="defender").frame   # when to stop (small, exact)

The package's floors, top to bottom, are its sub-packages (docs/architecture.md): ``cli``,
``serve``, ``report``, ``studies``, ``running``, ``results``, ``scenario``, ``rulesets``,
``input``, and the ground (``errors``, ``locate``, ``atomic``, ``version``, ``startup``).
"""

# ruff: noqa: E402  (the imports below come after the command line's first defence)

from __future__ import annotations

# First, before anything heavy: on the command line, Ctrl-C in the first second ends the
# process in one line, and a failure no layer expected is one line too.
from .startup import prepare_command_line

prepare_command_line()

from typing import TYPE_CHECKING, Any  # isort: skip

from .version import __version__

if TYPE_CHECKING:
    from .errors import BattleOddsError, ParameterError
    from .results.result import Result
    from .results.waves import wave_rows
    from .rulesets import ExactResult, InlineQuery
    from .running.runner import simulate
    from .running.unfolding import unfold
    from .scenario.scenario import Scenario, from_data, load_scenario
    from .studies.best import best
    from .studies.compare import compare
    from .studies.exact import exact
    from .studies.matrix import matrix
    from .studies.meta import meta
    from .studies.prices import prices
    from .studies.retreat import best_retreat
    from .studies.sensitivity import sensitivity
    from .studies.sweep import sweep
    from .studies.worth import worth

#: Public name -> the module defining it, imported on first use (PEP 562): ``import
#: simulator`` (which ``battle-odds`` does for every command, ``--version`` included) then
#: costs nothing, where importing them all loaded Numba, the kernels and SciPy.
_LAZY = {
    "BattleOddsError": "errors",
    "ParameterError": "errors",
    "Result": "results.result",
    "ExactResult": "rulesets",
    "InlineQuery": "rulesets",
    "simulate": "running.runner",
    "unfold": "running.unfolding",
    "wave_rows": "results.waves",
    "Scenario": "scenario.scenario",
    "from_data": "scenario.scenario",
    "from_query": "scenario.scenario",
    "load_scenario": "scenario.scenario",
    "best": "studies.best",
    "compare": "studies.compare",
    "exact": "studies.exact",
    "matrix": "studies.matrix",
    "meta": "studies.meta",
    "prices": "studies.prices",
    "best_retreat": "studies.retreat",
    "sensitivity": "studies.sensitivity",
    "sweep": "studies.sweep",
    "worth": "studies.worth",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'simulator' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value  # the next look-up finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BattleOddsError",
    "ExactResult",
    "InlineQuery",
    "ParameterError",
    "Result",
    "Scenario",
    "__version__",
    "best",
    "best_retreat",
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
    "unfold",
    "wave_rows",
    "worth",
]


def inline_scenario(ruleset: str, attacker: str, defender: str, **options: object) -> Scenario:
    """A scenario from one-line armies, as ``battle-odds odds`` builds it."""
    from .rulesets import InlineQuery
    from .scenario.scenario import from_query

    return from_query(ruleset, InlineQuery(attacker, defender, options))
