"""Paired comparison of two scenarios on common random numbers.

Battle ``i`` of both scenarios is run on the same random stream (same seed, same battle
index), so the two runs see the same luck and their per-battle outcomes are strongly
correlated. The difference B - A is then estimated from per-battle differences, whose
variance is far smaller than that of two independent runs: a small rules change shows
up with a fraction of the battles.

Only the outcome-column contract is used (``winner``, ``steps``, ``casualties.*``,
extras), so any two scenarios whose ``steps`` count the same thing can be compared, of
the same ruleset or not (across rulesets the streams are still shared, but the pairing
gains little); a pair whose steps count different things (strikes, turns) is refused.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError
from ..results.result import Result
from ..results.stats import OUTCOMES, Z95, Tally
from ..running.interrupt import Interrupted, stop_requested
from ..running.plan import DEFAULT_CHUNK, Progress, StudyPlan
from ..running.progress import plain_lines_by_default
from ..running.scenarios import ScenarioBattles
from ..scenario.scenario import Scenario
from ..scenario.waves import WAVE_PREFIX
from .machinery.planned import takes_plan

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster


@dataclass(frozen=True)
class Difference:
    """An estimate of B - A and its 95% interval."""

    a: float
    b: float
    difference: float
    low: float
    high: float


@dataclass
class PairedSums:
    """Mergeable sums of the per-battle difference d = b - a of one outcome column."""

    n: int = 0
    total: int = 0
    squares: int = 0

    def add(self, d: np.ndarray) -> None:
        self.n += int(d.size)
        self.total += int(d.sum())
        self.squares += int(np.dot(d, d))


@dataclass
class Comparison:
    """Two runs on common random numbers and what their pairing says about B - A."""

    a: Result
    b: Result
    #: ``joint[i, j]``: battles that A's run ended with outcome i and B's with outcome j
    #: (``OUTCOMES``, the withdrawals among them).
    joint: np.ndarray = field(default_factory=lambda: _no_outcomes())
    #: Per-battle differences of ``steps`` and of every column both runs report.
    sums: dict[str, PairedSums] = field(default_factory=dict)
    seconds: float = 0.0
    #: True when Ctrl-C stopped the runs before every battle asked for.
    partial: bool = False

    @property
    def n(self) -> int:
        return int(self.joint.sum())

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcomes compared: those either run reports (a withdrawal where either
        scenario has a stop rule or a battle of either withdrew)."""
        both = {*self.a.outcomes, *self.b.outcomes}
        return tuple(o for o in OUTCOMES if o in both)

    def merge(self, other: Comparison) -> Comparison:
        """This comparison and ``other`` (later battles of the same seed) as one."""
        sums = {k: PairedSums(v.n, v.total, v.squares) for k, v in self.sums.items()}
        for name, s in other.sums.items():
            mine = sums.setdefault(name, PairedSums())
            mine.n, mine.total = mine.n + s.n, mine.total + s.total
            mine.squares += s.squares
        return Comparison(
            a=replace(self.a, tally=self.a.tally.merge(other.a.tally)),
            b=replace(self.b, tally=self.b.tally.merge(other.b.tally)),
            joint=self.joint + other.joint,
            sums=sums,
            seconds=self.seconds + other.seconds,
            partial=self.partial or other.partial,
        )

    def win(self, outcome: str = "attacker", z: float = Z95) -> Difference:
        """P_B - P_A of ``outcome`` with its paired 95% interval (``z``: another level).

        The interval is Agresti and Min's (2005) adjusted Wald interval for paired
        proportions (half a battle added to each cell of the 2x2 table): it keeps its
        coverage when few battles are discordant, and it is centred on 0 with width
        of order 1/n when none are (a scenario against itself).
        """
        k = OUTCOMES.index(outcome)
        n = self.n
        only_b = int(self.joint[:, k].sum() - self.joint[k, k])
        only_a = int(self.joint[k, :].sum() - self.joint[k, k])
        p_a, p_b = self.a.win(outcome)[0], self.b.win(outcome)[0]
        adj_n = n + 2
        adj_b, adj_a = (only_b + 0.5) / adj_n, (only_a + 0.5) / adj_n
        centre = adj_b - adj_a
        half = z * math.sqrt(max(adj_b + adj_a - centre * centre, 0.0) / adj_n)
        if n == 0:  # stopped before its first battle: nothing known yet
            return Difference(p_a, p_b, math.nan, -1.0, 1.0)
        return Difference(
            p_a, p_b, (only_b - only_a) / n, max(-1.0, centre - half), min(1.0, centre + half)
        )

    def win_independent(self, outcome: str = "attacker") -> Difference:
        """The same difference as if the runs were independent (Newcombe's hybrid score
        interval from the two Wilson intervals): what pairing saves, for comparison."""
        p_a, lo_a, hi_a = self.a.win(outcome)
        p_b, lo_b, hi_b = self.b.win(outcome)
        d = p_b - p_a
        return Difference(
            p_a,
            p_b,
            d,
            d - math.hypot(p_b - lo_b, hi_a - p_a),
            d + math.hypot(hi_b - p_b, p_a - lo_a),
        )

    def mean(self, column: str) -> Difference:
        """Mean of ``column`` in B minus in A, with a normal 95% interval from the
        per-battle differences (``steps`` or a column both runs report)."""
        if column not in self.sums:
            raise BattleOddsError(
                f"'{column}': not reported by both scenarios; expected one of "
                + ", ".join(self.sums)
            )
        s = self.sums[column]
        mean_a, mean_b = (
            r.tally.steps.mean() if column == "steps" else r.tally.columns[column].mean()
            for r in (self.a, self.b)
        )
        d = s.total / s.n
        var = (s.squares - s.n * d * d) / (s.n - 1) if s.n > 1 else 0.0
        half = Z95 * math.sqrt(max(var, 0.0) / s.n)
        return Difference(mean_a, mean_b, d, d - half, d + half)

    def summary(self) -> pd.DataFrame:
        """One row per compared number: A, B, B - A and its paired 95% interval; for the
        outcomes also the interval independent runs would have given."""
        import pandas as pd

        rows = []
        for outcome in self.outcomes:
            paired, independent = self.win(outcome), self.win_independent(outcome)
            rows.append(
                {
                    "group": "win",
                    "metric": outcome,
                    "a": paired.a,
                    "b": paired.b,
                    "difference": paired.difference,
                    "low": paired.low,
                    "high": paired.high,
                    "independent_low": independent.low,
                    "independent_high": independent.high,
                }
            )
        for column in self.sums:
            d = self.mean(column)
            group = (
                "steps"
                if column == "steps"
                else "casualties"
                if column.startswith("casualties.")
                else "extra"
            )
            rows.append(
                {
                    "group": group,
                    "metric": column.removeprefix("casualties."),
                    "a": d.a,
                    "b": d.b,
                    "difference": d.difference,
                    "low": d.low,
                    "high": d.high,
                    "independent_low": math.nan,
                    "independent_high": math.nan,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        summary = self.summary()

        def clean(x: Any) -> Any:
            return None if isinstance(x, float) and math.isnan(x) else float(x)

        def section(group: str, keys: tuple[str, ...]) -> dict[str, Any]:
            return {
                r["metric"]: {k: clean(r[k]) for k in keys}
                for r in summary[summary.group == group].to_dict("records")
            }

        keys = ("a", "b", "difference", "low", "high")
        ruleset = rulesets.get(self.a.scenario.ruleset)

        def labelled(group: str, prefix: str = "") -> dict[str, Any]:
            # The keys stay the columns scripts read; "label" says them in words.
            return {
                metric: {"label": ruleset.describe_column(prefix + metric), **numbers}
                for metric, numbers in section(group, keys).items()
            }

        return {
            "a": {
                "scenario": self.a.scenario.name,
                "scenario_hash": self.a.scenario.hash,
                "ruleset": self.a.scenario.ruleset,
            },
            "b": {
                "scenario": self.b.scenario.name,
                "scenario_hash": self.b.scenario.hash,
                "ruleset": self.b.scenario.ruleset,
            },
            "seed": self.a.seed,
            "battles": self.n,
            "partial": self.partial,
            "paired": True,
            "win": section("win", (*keys, "independent_low", "independent_high")),
            "steps": section("steps", keys).get("steps", {}),
            "casualties": labelled("casualties", "casualties."),
            "extras": labelled("extra"),
            "seconds": round(self.seconds, 3),
        }


def _no_outcomes() -> np.ndarray:
    """The joint table of outcomes of no battle."""
    return np.zeros((len(OUTCOMES), len(OUTCOMES)), np.int64)


def check_comparable(a: Scenario, b: Scenario) -> None:
    """Scenarios whose ``steps`` count the same thing (a difference of strikes and turns
    is no number)."""
    unit_a, unit_b = (rulesets.get(s.ruleset).step_unit for s in (a, b))
    if unit_a != unit_b:
        raise BattleOddsError(
            f"compare: A is {a.ruleset} (steps count {unit_a}) and B is {b.ruleset} (steps "
            f"count {unit_b}): their steps and casualties are different numbers; compare "
            "scenarios of one ruleset"
        )


@dataclass
class PairedChunk:
    """What a chunk of battles of both scenarios says, mergeable: each one's tally, the
    joint table of outcomes and the paired sums of every column both report."""

    a: Tally
    b: Tally
    joint: np.ndarray
    sums: dict[str, PairedSums]


def paired_chunk(columns: list[Mapping[str, np.ndarray]]) -> PairedChunk:
    """A chunk of battles of A and B (their outcome columns) as a :class:`PairedChunk`
    (it runs where the battles ran: here, or on a Dask worker)."""
    out_a, out_b = columns
    size = len(OUTCOMES)
    joint = np.bincount(
        size * np.asarray(out_a["winner"]) + out_b["winner"], minlength=size * size
    ).reshape(size, size)
    sums: dict[str, PairedSums] = {}
    for name in out_a:
        # A wave's columns (-1 where it did not fight) are not means per battle.
        if name != "winner" and name in out_b and not name.startswith(WAVE_PREFIX):
            diff = out_b[name].astype(np.int64) - out_a[name].astype(np.int64)
            sums.setdefault(name, PairedSums()).add(diff)
    return PairedChunk(Tally.of(out_a), Tally.of(out_b), joint, sums)


@takes_plan
@plain_lines_by_default("compare")
def compare(
    a: Scenario,
    b: Scenario,
    battles: int | None = None,
    seed: int | None = None,
    *,
    plan: StudyPlan | None = None,
    threads: int | None = None,
    chunk: int = DEFAULT_CHUNK,
    progress: Progress | None = None,
    first: int = 0,
    executor: Cluster | None = None,
    engine: ScenarioBattles | None = None,
) -> Comparison:
    """Run ``a`` and ``b`` on common random numbers: battle i of both uses stream i of
    ``seed``. Battles and seed default to A's scenario file. ``first``: the index of the
    first battle, to continue a comparison (see :meth:`Comparison.merge`); ``executor``:
    a Dask executor (:func:`simulator.running.distributed.executor_for`); ``engine``: a
    study's engine on the same seed (its threads and executor), whose scenarios stay
    prepared from one comparison to the next (a study comparing the same scenario again
    and again, or in growing looks, prepares each once): the caller closes it."""
    battles = a.battles if battles is None else battles
    seed = a.seed if seed is None else seed
    check_comparable(a, b)
    plan = StudyPlan.of(seed=seed, battles=battles, first=first, threads=threads, executor=executor)
    own = engine is None
    if engine is None:
        engine = ScenarioBattles(plan)
    elif engine.seed != seed:
        raise ValueError(f"compare: an engine of seed {engine.seed}, asked for seed {seed}")
    # Keyed by content: the same scenario in another comparison is the one prepared.
    keys = [engine.add(("compare", a.hash), a), engine.add(("compare", b.hash), b)]
    # Different kernels draw battle i differently: both on one kernel (two rulesets
    # share none, and each runs its own).
    try:
        kernel = engine.settle(keys, battles)
    except Interrupted:  # Ctrl-C while their tables were built: no battle fought yet
        kernel = None
    prepared = [engine.prepared(k) for k in keys]
    tally_a, tally_b = Tally(), Tally()
    joint = _no_outcomes()
    sums: dict[str, PairedSums] = {}
    started = time.perf_counter()
    done = 0
    chunks = (
        engine.tallies(keys, first, battles, paired_chunk, kernel, chunk)
        if not stop_requested()
        else iter(())
    )
    for _, count, part in chunks:
        tally_a, tally_b = tally_a.merge(part.a), tally_b.merge(part.b)
        joint += part.joint
        for name, s in part.sums.items():
            mine = sums.setdefault(name, PairedSums())
            mine.n, mine.total, mine.squares = (
                mine.n + s.n,
                mine.total + s.total,
                mine.squares + s.squares,
            )
        done += count
        if progress is not None:
            progress(done, battles)
    if own:
        engine.close()
    seconds = time.perf_counter() - started
    results = [
        Result(
            scenario=s,
            seed=seed,
            first=first,
            tally=t,
            kernel=p.kernel,
            notes=p.notes,
            flags=p.flags,
            seconds=seconds,
            stop_rules=p.has_stop_rules,
        )
        for s, t, p in ((a, tally_a, prepared[0]), (b, tally_b, prepared[1]))
    ]
    return Comparison(
        a=results[0],
        b=results[1],
        joint=joint,
        sums=sums,
        seconds=seconds,
        partial=done < battles,
    )
