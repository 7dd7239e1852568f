"""Results of a run: the merged statistics, optional per-battle rows, and the summary."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rulesets.base import TURN_LIMIT
from ..scenario.waves import WAVE_PREFIX
from ..version import __version__
from .stats import OUTCOMES, Histogram, Tally, wilson

if TYPE_CHECKING:
    import pandas as pd

    from ..scenario.scenario import Scenario

QUANTILES = (0.1, 0.5, 0.9)
#: Outcome columns of a scenario with unknowns that record a drawn input with the winner.
UNKNOWN_PREFIX = "unknown."


@dataclass
class Result:
    """The answer of one run of one scenario: the merged statistics of its battles and
    what is known about how they were run.

    ``tally`` holds every number reported (``summary``, ``to_dict``, the tables and
    plots); ``rows``, when kept, are the outcome columns battle by battle; ``first`` is
    the index of the run's first battle, so that with ``seed`` each battle can be run
    again alone. ``flags`` names the 0/1 columns reported as probabilities, ``notes``
    the sentences the reader should see under the numbers (the ruleset's, a resumed
    checkpoint, a failed cluster). ``partial`` is true when the run stopped before all
    its battles (Ctrl-C, a lost cluster): the tally then holds the battles that
    finished. ``seconds`` is the battles' time, ``compile_seconds`` a first run's
    compiling, apart.

    Invariants: ``n`` is ``tally.battles``, and the battles behind the tally are those
    ``seed`` and the battle indices fix, whatever the threads, chunks or workers that
    ran them; ``rows``, when present, are battles ``first`` .. ``first + len - 1`` in
    order, with no gap, and are the battles of the tally (they are dropped, never left
    stale, when a run adds battles it keeps no rows of, or resumes from a checkpoint).

    Merging: a Result has no merge of its own; its tally merges. A run in parts (the
    rounds of a precision run, or of a precision sweep's point) keeps the first part's
    Result and replaces its tally with the merge of the parts' tallies
    (``replace(result, tally=result.tally.merge(part.tally), partial=part.partial)``),
    which gives the numbers one run of all those battles would; the rows are the parts'
    rows end to end when every part kept them, else none.
    """

    scenario: Scenario
    seed: int
    tally: Tally
    rows: dict[str, np.ndarray] | None = None
    kernel: str = ""
    notes: tuple[str, ...] = ()
    #: Extras that are yes/no (0/1) and are reported as probabilities.
    flags: frozenset[str] = frozenset()
    #: Seconds the battles took, and (apart) seconds Numba compiled kernels for on a
    #: first run (0 once they are in its cache).
    seconds: float = 0.0
    compile_seconds: float = 0.0
    first: int = 0
    partial: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    #: Whether a side of the scenario has a stop rule (``Prepared.stop_rules``): its
    #: answer reports the withdrawals, however few battles ended in one.
    stop_rules: bool = False

    @property
    def n(self) -> int:
        return self.tally.battles

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcomes reported: attacker, defender, draw, and the withdrawals where a
        side has a stop rule or a battle withdrew (a scenario without stop rules reports
        what it did before they existed)."""
        return OUTCOMES if self.stop_rules else self.tally.seen_outcomes()

    def win(self, outcome: str = "attacker") -> tuple[float, float, float]:
        """``(p, low, high)``: the estimate and its 95% Wilson interval."""
        return self.tally.win(outcome)

    @property
    def battles(self) -> pd.DataFrame:
        """One row per battle (Mesa style: with the seed and scenario, ready for pandas)."""
        import pandas as pd

        if self.rows is None:
            raise ValueError(
                "per-battle rows were not kept for this run "
                "(run with keep_battles=True, or fewer battles)"
            )
        frame = pd.DataFrame(self.rows)
        frame.insert(0, "battle", np.arange(self.first, self.first + len(frame)))
        frame.insert(1, "seed", self.seed)
        frame.insert(2, "scenario", self.scenario.name)
        frame["winner"] = pd.Categorical.from_codes(
            frame["winner"].to_numpy(), categories=pd.Index(OUTCOMES)
        )
        return frame

    @property
    def turn_limit_battles(self) -> int | None:
        """How many battles the ruleset's turn limit ended as draws (None: no such limit)."""
        h = self.tally.columns.get(TURN_LIMIT)
        return None if h is None else int(h.counts[h.values == 1].sum())

    def summary_rows(self) -> list[SummaryRow]:
        """The reported numbers, one record each (what tables, JSON and CI read)."""
        rows = [
            SummaryRow.probability("win", outcome, *self.win(outcome)) for outcome in self.outcomes
        ]
        if self.tally.steps.n:  # a run stopped before its first battle has no steps
            rows.append(SummaryRow.distribution("steps", "all", self.tally.steps))
        for outcome, h in zip(OUTCOMES, self.tally.steps_by_outcome, strict=True):
            if h.n:
                rows.append(SummaryRow.distribution("steps", outcome, h))
        for name, h in self.tally.columns.items():
            if name.startswith((UNKNOWN_PREFIX, WAVE_PREFIX)):
                continue  # a drawn input with the winner, a wave's: reported on their own
            group = "casualties" if name.startswith("casualties.") else "extra"
            metric = name.removeprefix("casualties.")
            if name in self.flags:
                successes = int(h.counts[h.values == 1].sum())
                rows.append(SummaryRow.probability(group, metric, *wilson(successes, h.n)))
            else:
                rows.append(SummaryRow.distribution(group, metric, h))
        return rows

    def summary(self) -> pd.DataFrame:
        """Tidy summary, one row per reported number.

        ``group`` is win / steps / casualties / extra; ``metric`` names it; ``mean`` is the
        probability or mean; ``low`` / ``high`` the 95% interval (Wilson for
        probabilities, normal for means); ``q10`` / ``q50`` / ``q90`` the quantiles.
        """
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.summary_rows()])

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: ``win`` holds ``{outcome: {p, low, high}}``, for attacker,
        defender, draw and, where reported, ``attacker_withdrew`` and
        ``defender_withdrew`` (:attr:`outcomes`)."""
        from .. import rulesets

        rows = self.summary_rows()
        ruleset = rulesets.get(self.scenario.ruleset)

        def section(group: str) -> dict[str, Any]:
            return {r.metric: r.numbers() for r in rows if r.group == group}

        def labelled(group: str, prefix: str = "") -> dict[str, Any]:
            # The keys stay the columns scripts read; "label" says them in words.
            return {
                r.metric: {"label": ruleset.describe_column(prefix + r.metric), **r.numbers()}
                for r in rows
                if r.group == group
            }

        # A run stopped before its first battle knows no probability yet: "p" is null
        # (the interval of no battles is 0..1).
        win = {
            o: {"p": v.get("mean"), "low": v["low"], "high": v["high"]}
            for o, v in section("win").items()
        }
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "seed": self.seed,
            "battles": self.n,
            "first_battle": self.first,
            "partial": self.partial,
            "kernel": self.kernel,
            "version": __version__,
            "step_unit": rulesets.get(self.scenario.ruleset).step_unit,
            "win": win,
            "steps": section("steps"),
            "casualties": labelled("casualties", "casualties."),
            "extras": labelled("extra"),
            "turn_limit_battles": self.turn_limit_battles,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
            "compile_seconds": round(self.compile_seconds, 3),
            **({"unknowns": unknowns} if (unknowns := self.unknown_effects()) else {}),
            **({"waves": waves} if (waves := self.wave_summaries()) else {}),
            **self.extra,
        }

    def unknown_effects(self) -> list[dict[str, Any]]:
        """For a scenario with unknowns (ranges), P(each outcome) given each value of each
        unknown, the one that moves P(attacker wins) most first; empty otherwise."""
        from ..scenario.scenario import unknowns_of
        from .unknowns import effects

        return effects(self.scenario.model, self.tally) if unknowns_of(self.scenario) else []

    def wave_summaries(self) -> list[dict[str, Any]]:
        """For a scenario with waves, each wave's odds, losses and what remains
        (:func:`simulator.results.waves.wave_summaries`); empty otherwise."""
        from .waves import wave_summaries

        return wave_summaries(self)

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (what ``battle-odds run --json`` prints)."""
        from .answer_json import answer_json

        return answer_json(self.to_dict(), default=float)


@dataclass(frozen=True)
class SummaryRow:
    group: str
    metric: str
    mean: float
    low: float
    high: float
    q10: float = math.nan
    q50: float = math.nan
    q90: float = math.nan

    @classmethod
    def probability(cls, group: str, metric: str, p: float, low: float, high: float) -> SummaryRow:
        return cls(group, metric, p, low, high)

    @classmethod
    def distribution(cls, group: str, metric: str, h: Histogram) -> SummaryRow:
        mean = h.mean()
        half = 1.959963984540054 * h.std() / math.sqrt(h.n) if h.n > 1 else math.nan
        return cls(
            group, metric, mean, mean - half, mean + half, *(h.quantile(q) for q in QUANTILES)
        )

    def numbers(self) -> dict[str, float]:
        """The row's numbers for JSON: NaN (not applicable) left out."""
        values = {
            "mean": self.mean,
            "low": self.low,
            "high": self.high,
            "q10": self.q10,
            "q50": self.q50,
            "q90": self.q90,
        }
        return {k: float(v) for k, v in values.items() if not math.isnan(v)}
