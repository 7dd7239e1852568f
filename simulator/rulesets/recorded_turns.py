"""The battle as it unfolds for a ruleset of turns whose kernel records them in one pass.

Confrontation's and skirmish's kernels give their rows as one matrix (``run_matrix``,
stopped after a cut turn when asked) and record the rows after asked turns as they go
(``run_marked``); a turn limit ends a battle still going as a draw, so no cut is made
there. This is their ``run_until`` and ``run_through`` over those two calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .base import Prepared
from .outcomes import Recorded


class RecordedTurns(Prepared):
    """A prepared scenario whose kernel stops at a cut and records asked turns."""

    def run_marked(
        self, seed: int, first: int, count: int, cut: int = 0, marks: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's rows (with ``cut``, each battle still undecided after turn
        ``cut`` stops there) and, in the same pass, each battle's row after each of
        ``marks`` (turns, ascending), shape ``(count, len(marks), columns)``."""
        raise NotImplementedError

    def run_matrix(self, seed: int, first: int, count: int, cut: int = 0) -> np.ndarray:
        """The kernel's rows; with ``cut``, each battle still undecided after turn
        ``cut`` stops there (``winner`` FIGHTING, its row the state then)."""
        return self.run_marked(seed, first, count, cut)[0]

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        # At the turn limit a battle still going is a draw: no cut there.
        cut = step if self.step_limit is None or step < self.step_limit else 0
        out = self.run_matrix(seed, first, count, cut)
        return {name: out[:, col] for name, col in self.columns.items()}

    def run_through(
        self, seed: int, first: int, count: int, steps: Sequence[int]
    ) -> Mapping[str, np.ndarray]:
        """Every asked turn's rows in one pass of the battles (the kernel records them)."""
        if not len(steps):
            return {}
        _, trails = self.run_marked(seed, first, count, marks=[int(t) for t in steps])
        # Views of the one table, as run's columns are of its rows.
        return Recorded(trails, self.columns)
