"""What will players build? The equal-cost matrix as a game (``battle-odds meta``,
``simulator.meta``).

Two players each pick an army type, spend the same budget on it and fight, each attacking
as often as defending. The row player's payoff is P(it wins) - P(it loses), averaged over
the two roles: ``A[i, j] = (s[i, j] - s[j, i]) / 2`` where ``s[a, d]`` is the attacker's
net score when type a attacks type d. ``A`` is antisymmetric, so the game is symmetric
and its value is 0: what matters is the **mix**, the Nash equilibrium strategy, found by
linear programming (scipy's ``linprog`` with HiGHS). A type with weight in the mix is
part of the meta; a type outside it is never worth building against a player who plays
the mix.

The matrix is estimated, so the mix is too. A parametric bootstrap redraws every cell's
win counts from its estimated probabilities (multinomial, the cell's number of battles),
solves each redrawn game and reports how often each type is in the equilibrium's
support: a weight that rests on noise has a support frequency well below 100%.

The game's solution is :mod:`simulator.studies.machinery.games`'s (:func:`solve_game`);
:func:`meta_from_counts` takes a matrix as data (no battles), for
tests and for matrices from elsewhere; :func:`meta` fights the matrix first.

Interrupted by Ctrl-C (a matrix marked ``partial``), the game is the one among the first
types whose every pair was fought, and the bootstrap keeps the games redrawn so far;
the answer is marked ``partial`` and says which types it left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BattleOddsError, ParameterError
from ..running.interrupt import stop_requested
from ..running.plan import Progress
from ..running.progress import plain_lines_by_default
from ..scenario.scenario import DEFAULT_SEED
from .machinery.games import dominated, solve_game, symmetric_payoff
from .machinery.one_type import settings_columns
from .machinery.planned import takes_plan
from .matrix import DEFAULT_BATTLES, Matrix, equal_cost_matrix

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster
    from ..running.plan import StudyPlan

#: Redrawn games unless told.
DEFAULT_BOOTSTRAP = 200
#: A weight above this is in the support (HiGHS returns vertices: the rest are 0).
SUPPORT = 1e-6


@dataclass
class Meta:
    """The equilibrium of the equal-cost game and how far the noise moves it."""

    types: tuple[str, ...]
    #: Wins of the attacker and of the defender, and battles, per (attacker, defender).
    attacker_wins: np.ndarray
    defender_wins: np.ndarray
    battles: np.ndarray
    payoff: np.ndarray
    weights: np.ndarray
    value: float
    #: How often (0..1) each type is in the support of a redrawn game's equilibrium.
    support: np.ndarray
    bootstrap: int
    seed: int
    #: Each type's strict dominator, if any, and how often it stays dominated redrawn.
    dominated_by: dict[str, str] = field(default_factory=dict)
    dominated_share: dict[str, float] = field(default_factory=dict)
    matrix: Matrix | None = None
    #: Interrupted by Ctrl-C: types left out of the game (pairs not fought), and the
    #: bootstrap cut short (``bootstrap`` counts the games redrawn).
    partial: bool = False
    left_out: tuple[str, ...] = ()

    def partial_note(self) -> str | None:
        """What a partial answer covers, in words (None: the answer is whole)."""
        if not self.partial:
            return None
        if len(self.types) < 2:
            return "no two types fought each other: no game"
        left = f", {', '.join(self.left_out)} left out" if self.left_out else ""
        return f"a game of {len(self.types)} types{left}, {self.bootstrap} redrawn games"

    @property
    def mix(self) -> dict[str, float]:
        """Types in the equilibrium with their weights, the heaviest first."""
        order = np.argsort(-self.weights, kind="stable")
        return {self.types[i]: float(self.weights[i]) for i in order if self.weights[i] > SUPPORT}

    def counter(self, kind: str) -> tuple[str, float]:
        """The type that does best against ``kind`` (over both roles) and its net score."""
        j = self.types.index(kind)
        column = self.payoff[:, j].copy()
        column[j] = -np.inf
        i = int(np.argmax(column))
        return self.types[i], float(column[i])

    def against_mix(self) -> np.ndarray:
        """Each type's net score against a player who plays the mix (the value for the
        types in it, less for the rest)."""
        return self.payoff @ self.weights

    @property
    def frame(self) -> pd.DataFrame:
        """One row per type: weight, support frequency, score against the mix, best
        counter, dominator."""
        import pandas as pd

        scores = self.against_mix()
        settings = settings_columns(self.matrix.settings) if self.matrix is not None else {}
        rows = []
        for i, t in enumerate(self.types):
            counter, by = self.counter(t) if len(self.types) > 1 else ("", 0.0)
            rows.append(
                {
                    "type": t,
                    "weight": float(self.weights[i]),
                    "in_support": float(self.support[i]),
                    "against_mix": float(scores[i]),
                    "counter": counter,
                    "counter_score": by,
                    "dominated_by": self.dominated_by.get(t),
                    **settings,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        scores = self.against_mix()
        answer: dict[str, Any] = {}
        if self.matrix is not None:
            m = self.matrix
            answer |= {
                "ruleset": m.ruleset,
                "budget": m.budget,
                "costs": {t: m.costs[t] for t in m.types},
                "men": {t: m.men[t] for t in m.types},
                "battles": m.battles,
                "seed": m.seed,
                "settings": dict(m.settings),
                "notes": list(m.notes),
            }
        answer |= {
            "partial": self.partial,
            "left_out": list(self.left_out),
            "types": list(self.types),
            "value": self.value if self.types else None,
            "mix": self.mix,
            "weights": {t: float(w) for t, w in zip(self.types, self.weights, strict=True)},
            "support": {t: float(s) for t, s in zip(self.types, self.support, strict=True)},
            "against_mix": {t: float(s) for t, s in zip(self.types, scores, strict=True)},
            "dominated": {
                t: {"by": k, "share": self.dominated_share[t]} for t, k in self.dominated_by.items()
            },
            "counters": {
                t: dict(zip(("counter", "score"), self.counter(t), strict=True)) for t in self.types
            },
            "payoff": self.payoff.tolist(),
            "bootstrap": self.bootstrap,
            "bootstrap_seed": self.seed,
        }
        return answer


def meta_from_counts(
    types: Sequence[str],
    attacker_wins: np.ndarray,
    defender_wins: np.ndarray,
    battles: np.ndarray | int,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
) -> Meta:
    """The meta of a matrix given as win counts: ``attacker_wins[a, d]`` and
    ``defender_wins[a, d]`` of ``battles`` (per cell, or one number) when type a attacks
    type d; the rest are draws."""
    n = len(types)
    wins_a = np.asarray(attacker_wins, dtype=np.int64)
    wins_d = np.asarray(defender_wins, dtype=np.int64)
    fought = np.broadcast_to(np.asarray(battles, dtype=np.int64), (n, n)).copy()
    if wins_a.shape != (n, n) or wins_d.shape != (n, n):
        raise BattleOddsError(f"win counts: expected {n} x {n} arrays, one row per type")
    if np.any(wins_a < 0) or np.any(wins_d < 0) or np.any(wins_a + wins_d > fought):
        raise BattleOddsError("win counts: expected 0 <= attacker + defender wins <= battles")
    if np.any(fought < 1):
        raise BattleOddsError("battles: expected at least 1 per pair of types")
    if bootstrap < 0:
        raise ParameterError("bootstrap", bootstrap, "expected 0 or more")
    payoff = symmetric_payoff((wins_a - wins_d) / fought)
    solved = solve_game(payoff)
    beaten = dominated(payoff)
    rng = np.random.default_rng(seed)
    in_support = np.zeros(n)
    still_beaten = dict.fromkeys(beaten, 0)
    draws = np.maximum(fought - wins_a - wins_d, 0)
    probabilities = np.stack([wins_a, wins_d, draws], axis=-1) / fought[..., None]
    for done in range(bootstrap):
        if stop_requested():  # Ctrl-C: the games redrawn so far
            bootstrap = done
            break
        redrawn = rng.multinomial(fought, probabilities)
        game = symmetric_payoff((redrawn[..., 0] - redrawn[..., 1]) / fought)
        in_support += solve_game(game).weights > SUPPORT
        for i, k in beaten.items():
            still_beaten[i] += bool(np.all(game[k] > game[i]))
    share = in_support / bootstrap if bootstrap else (solved.weights > SUPPORT).astype(float)
    return Meta(
        types=tuple(types),
        attacker_wins=wins_a,
        defender_wins=wins_d,
        battles=fought,
        payoff=payoff,
        weights=solved.weights,
        value=solved.value,
        support=share,
        bootstrap=bootstrap,
        seed=seed,
        dominated_by={types[i]: types[k] for i, k in beaten.items()},
        dominated_share={
            types[i]: (still_beaten[i] / bootstrap if bootstrap else 1.0) for i in beaten
        },
    )


def meta_of(matrix: Matrix, *, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int | None = None) -> Meta:
    """The meta of a fought :class:`~simulator.studies.matrix.Matrix` (of a partial one:
    the game of its first types whose every pair was fought)."""
    n = len(matrix.types)
    wins = np.array([c.result.tally.wins[:2] for c in matrix.cells], dtype=np.int64)
    fought = np.array([c.result.n for c in matrix.cells], dtype=np.int64).reshape(n, n)
    k = n
    while k > 0 and np.any(fought[:k, :k] == 0):
        k -= 1
    seed = matrix.seed if seed is None else seed
    if k < 2:  # no game: every type is left out
        k = 0
        empty = np.zeros((0, 0))
        answer = Meta((), empty, empty, empty, empty, np.zeros(0), 0.0, np.zeros(0), 0, seed)
    else:
        answer = meta_from_counts(
            matrix.types[:k],
            wins[:, 0].reshape(n, n)[:k, :k],
            wins[:, 1].reshape(n, n)[:k, :k],
            fought[:k, :k],
            bootstrap=bootstrap,
            seed=seed,
        )
    answer.matrix = matrix
    answer.left_out = tuple(matrix.types[k:])
    answer.partial = matrix.partial or answer.bootstrap < bootstrap
    return answer


def check_game(types: Sequence[str] | str | None, bootstrap: int) -> None:
    """Before any battle: a game needs two types, and a bootstrap no fewer than 0 games."""
    if bootstrap < 0:
        raise ParameterError("bootstrap", bootstrap, "expected 0 or more")
    names = types.split(",") if isinstance(types, str) else types
    if names is not None and len(names) < 2:
        raise ParameterError("types", None, "a game needs at least two types")


@takes_plan
@plain_lines_by_default("meta")
def meta(
    ruleset: str,
    budget: float,
    types: Sequence[str] | str | None = None,
    costs: Mapping[str, float] | str | Path | None = None,
    battles: int = DEFAULT_BATTLES,
    seed: int = DEFAULT_SEED,
    *,
    plan: StudyPlan | None = None,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    threads: int | None = None,
    progress: Progress | None = None,
    executor: Cluster | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Meta:
    """Fight the equal-cost matrix (as :func:`simulator.matrix`, ``settings`` in every
    battle's ``[battle]`` table) and solve its game."""
    check_game(types, bootstrap)
    fought = equal_cost_matrix(
        ruleset,
        budget,
        types,
        costs,
        battles,
        seed,
        threads=threads,
        progress=progress,
        executor=executor,
        settings=settings,
    )
    return meta_of(fought, bootstrap=bootstrap)
