"""What a ruleset's exact solver (:meth:`Ruleset.exact`) answers: probabilities and
expectations solved rather than sampled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "method": "exact",
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
