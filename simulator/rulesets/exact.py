"""What a ruleset's exact solver (:meth:`Ruleset.exact`) answers: probabilities and
expectations solved rather than sampled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def exact_provenance(scenario: Any) -> dict[str, Any]:
    """What an exact answer's JSON says it is of: the scenario, its hash and ruleset."""
    return {
        "scenario": scenario.name,
        "scenario_hash": scenario.hash,
        "ruleset": scenario.ruleset,
        "method": "exact",
    }


@dataclass
class ExactResult:
    """Exact probabilities and expectations for one scenario, from any ruleset's solver.

    ``casualties`` and ``extras`` are keyed by outcome column (``casualties.attacker.army``);
    ``flags`` names the extras that are probabilities (0/1 columns)."""

    scenario: Any
    win: dict[str, float]
    expected_steps: float
    casualties: dict[str, float]
    extras: dict[str, float]
    states: int
    seconds: float
    flags: frozenset[str] = field(default_factory=frozenset)
    #: Seconds Numba spent compiling the solver (a first run only), not in ``seconds``.
    compile_seconds: float = 0.0

    @property
    def expected_strikes(self) -> float:
        """Olympia's name for :attr:`expected_steps` (its steps are strikes)."""
        return self.expected_steps

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``win`` has the Monte Carlo result's shape, with a zero-width interval."""
        return {
            **exact_provenance(self.scenario),
            "win": {o: {"p": p, "low": p, "high": p} for o, p in self.win.items()},
            "steps": {"all": {"mean": self.expected_steps}},
            "casualties": {
                name.removeprefix("casualties."): {"mean": v} for name, v in self.casualties.items()
            },
            "extras": {name: {"mean": v} for name, v in self.extras.items()},
            "states": self.states,
            "seconds": round(self.seconds, 3),
            "compile_seconds": round(self.compile_seconds, 3),
        }


@dataclass(frozen=True)
class ExactState:
    """The exact state of a battle after ``step`` steps (:meth:`Ruleset.exact_after`): the
    chance that it was decided by then, each way, and that it is still fighting; each
    side's men left of each type (``"attacker.soldier"``) as ``{men left: chance}``, a
    battle decided before counted with its final state."""

    scenario: Any
    step: int
    decided: dict[str, float]
    fighting: float
    men_left: dict[str, dict[int, float]]
    states: int

    def mean_men_left(self, key: str) -> float:
        return sum(men * p for men, p in self.men_left[key].items())

    def to_dict(self) -> dict[str, Any]:
        """JSON form, shaped as ``by_step``'s rows with zero-width intervals."""
        return {
            **exact_provenance(self.scenario),
            "after": self.step,
            "fighting": {"p": self.fighting, "low": self.fighting, "high": self.fighting},
            "decided": {o: {"p": p, "low": p, "high": p} for o, p in self.decided.items()},
            "men_left": {
                key: {"mean": self.mean_men_left(key), "p": {str(m): p for m, p in d.items()}}
                for key, d in self.men_left.items()
            },
            "states": self.states,
        }
