"""Sweeps: win probability as one or two scenario values vary, and target searches.

``--vary PATH=1..40`` (or ``30..60:5``, ``0.1..0.5:0.1``, ``land,swamp,ship``) names a
value by a user path that the scenario's ruleset resolves to a data path
(:meth:`Ruleset.sweep_path`: ``attacker.knight`` in olympia is the count of knights);
each point is ``scenario.with_changes({data_path: value})``, validated like a file.
Every point runs on the same seed and battle indices, so neighbouring points share
their luck (common random numbers) and the curve is smooth where the rules are.
"""

from __future__ import annotations

import decimal
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import product
from typing import TYPE_CHECKING, Any

from .. import rulesets
from ..errors import BattleOddsError, ParameterError, literal
from ..results.result import Result
from ..results.stats import OUTCOMES, Tally, wilson
from ..running.bounds import check_total
from ..running.interrupt import Interrupted, stop_requested
from ..running.plan import DEFAULT_MAX_BATTLES, Progress, RunPlan, StudyPlan
from ..running.precision import precision_report, precision_rounds, widest_half_width
from ..running.progress import plain_lines_by_default
from ..running.scenarios import ScenarioBattles, merged, tally, tally_each
from ..scenario.scenario import Scenario
from .machinery.planned import takes_plan
from .machinery.renamed import reads_frame, renamed_keywords
from .machinery.sequential import (
    bisection_probes,
    check_looks,
    look_z,
    run_until_sure,
    smallest_reaching,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster

Value = int | float | str | bool

#: A sweep of more points than this is refused: it is almost always a typo in the range.
MAX_POINTS = 10_000
#: A number of a range: ``40``, ``0.5``, ``1e6`` (a range written ``1..1e9`` was read as
#: one value, the string '1..1e9').
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(
    rf"^\s*(?P<lo>{_NUMBER})\s*\.\.\s*(?P<hi>{_NUMBER})\s*(?::\s*(?P<step>{_NUMBER}))?\s*$"
)


@dataclass(frozen=True)
class Vary:
    """One varied value: the path as the user wrote it, its data path, and the values."""

    path: str
    data_path: str
    values: tuple[Value, ...]


def _number(text: str, where: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise BattleOddsError(f"{where}: '{text}' is not a number") from None


def _scalar(text: str) -> Value:
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return _number(text, "")
    except BattleOddsError:
        return text


def parse_values(text: str, where: str) -> tuple[Value, ...]:
    """``1..40``, ``30..60:5``, ``0.1..0.5:0.1`` (inclusive) or a list ``land,swamp``."""
    match = _RANGE.match(text)
    if match:
        lo, hi = _number(match["lo"], where), _number(match["hi"], where)
        step = _number(match["step"], where) if match["step"] else 1
        if step <= 0:
            raise BattleOddsError(f"{where}: step {step}: expected a positive step")
        if hi < lo:
            raise BattleOddsError(f"{where}: {lo}..{hi}: expected LOW..HIGH with LOW <= HIGH")
        count = math.floor((hi - lo) / step + 1e-9) + 1
        if count > MAX_POINTS:
            raise BattleOddsError(
                f"{where}: {count:,} points: at most {MAX_POINTS:,} (a larger step?)"
            )
        if all(isinstance(x, int) for x in (lo, hi, step)):
            return tuple(int(lo + i * step) for i in range(count))
        decimals = max(
            _decimals(match["lo"]), _decimals(match["hi"]), _decimals(match["step"] or "1")
        )
        return tuple(round(lo + i * step, decimals) for i in range(count))
    items = [t for t in (p.strip() for p in text.split(",")) if t]
    if not items:
        raise BattleOddsError(f"{where}: no values: expected LOW..HIGH[:STEP] or a list A,B,C")
    return tuple(_scalar(t) for t in items)


def _decimals(text: str) -> int:
    """Decimal places of a written number: 2 for ``0.25``, 5 for ``2.5e-5``."""
    exponent = decimal.Decimal(text).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def parse_vary(scenario: Scenario, text: str) -> Vary:
    """``PATH=VALUES`` with the path resolved through the scenario's ruleset."""
    path, eq, values = text.partition("=")
    path = path.strip()
    if not eq or not path:
        raise ParameterError(
            "vary", f"'{text}'", "expected PATH=LOW..HIGH[:STEP], e.g. attacker.knight=1..40"
        )
    data_path = rulesets.get(scenario.ruleset).sweep_path(scenario.data, path)
    try:
        return Vary(path, data_path, parse_values(values, f"vary {path}"))
    except BattleOddsError as exc:
        raise ParameterError.naming("vary", exc) from None


def point(scenario: Scenario, varies: Sequence[Vary], values: Sequence[Value]) -> Scenario:
    """The scenario at one point of the sweep (validated: a bad value is a clear error)."""
    changes = {v.data_path: value for v, value in zip(varies, values, strict=True)}
    changed = scenario.with_changes(changes)
    label = ", ".join(f"{v.path}={value}" for v, value in zip(varies, values, strict=True))
    return replace(
        changed, name=f"{scenario.name} [{label}]", battles=scenario.battles, seed=scenario.seed
    )


@dataclass
class Sweep:
    """Results at every point of a one- or two-dimensional sweep (grid order)."""

    scenario: Scenario
    varies: tuple[Vary, ...]
    outcome: str
    points: list[tuple[Value, ...]]
    results: list[Result]
    #: True when Ctrl-C stopped the sweep: ``points`` are those run (the last one may
    #: have fewer battles than asked: its result says so).
    partial: bool = False

    @reads_frame
    def frame(self) -> pd.DataFrame:
        """One row per point: the varied values, P(outcome) with its 95% interval
        (``p``, ``low``, ``high``), each outcome's probability, mean steps and battles."""
        import pandas as pd

        rows = []
        # The withdrawals where a point reports them (a stop rule, or a battle withdrew).
        shown = [o for o in OUTCOMES if any(o in r.outcomes for r in self.results)]
        for values, result in zip(self.points, self.results, strict=True):
            row: dict[str, Any] = {
                v.path: value for v, value in zip(self.varies, values, strict=True)
            }
            p, low, high = result.win(self.outcome)
            row.update(p=p, low=low, high=high)
            for outcome in shown:
                row[f"p_{outcome}"] = result.win(outcome)[0]
            row["steps_mean"] = result.tally.steps.mean()
            row["battles"] = result.n
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "seed": self.results[0].seed if self.results else self.scenario.seed,
            "outcome": self.outcome,
            "partial": self.partial,
            "vary": [
                {"path": v.path, "data_path": v.data_path, "values": list(v.values)}
                for v in self.varies
            ],
            "points": self.frame.to_dict("records"),
        }


@takes_plan
@plain_lines_by_default(
    "sweep",
    lambda asked: "battles" if asked.get("precision") is None else "points of the sweep",
)
def sweep(
    scenario: Scenario,
    vary: Sequence[str | Vary],
    battles: int | None = None,
    seed: int | None = None,
    *,
    plan: StudyPlan | None = None,
    outcome: str = "attacker",
    precision: float | None = None,
    max_battles: int = DEFAULT_MAX_BATTLES,
    threads: int | None = None,
    progress: Progress | None = None,
    executor: Cluster | None = None,
    max_total: int | None = None,
) -> Sweep:
    """Run every point of the grid of ``vary`` (one or two ``PATH=VALUES``).

    With ``precision`` each point runs until its intervals are that narrow (at most
    ``max_battles``) instead of a fixed ``battles``.
    """
    varies = tuple(v if isinstance(v, Vary) else parse_vary(scenario, v) for v in vary)
    if not 1 <= len(varies) <= 2:
        raise ParameterError(
            "vary",
            None,
            f"{len(varies)} values: expected one (a curve) or two (a grid)",
        )
    if len(varies) == 2 and varies[0].data_path == varies[1].data_path:
        raise ParameterError(
            "vary", None, f"{varies[0].path} and {varies[1].path} name the same value"
        )
    if outcome not in OUTCOMES:
        raise ParameterError("outcome", outcome, f"expected one of {', '.join(OUTCOMES)}")
    seed = scenario.seed if seed is None else seed
    size = math.prod(len(v.values) for v in varies)
    shape = " x ".join(f"{len(v.values):,}" for v in varies)
    if size > MAX_POINTS:
        raise ParameterError(
            "vary",
            None,
            f"a grid of {shape} = {size:,} points: at most {MAX_POINTS:,} "
            "(a larger step, or fewer values)",
        )
    each = (max_battles if precision is not None else battles) or scenario.battles
    check_total(f"sweep: {size:,} points x {each:,} battles", size * each, max_total)
    points = list(product(*(v.values for v in varies)))
    # Build (and so validate) every point before running any: a bad value fails at once.
    scenarios = [point(scenario, varies, values) for values in points]
    if precision is None:
        results = _fixed_points(scenarios, each, seed, threads, executor, progress, max_total)
    else:
        results = []
        plan = StudyPlan.of(seed=seed, battles=max_battles, threads=threads, executor=executor)
        if progress is not None:
            progress(0, len(scenarios))  # the total, before a point that may take minutes
        with ScenarioBattles(plan) as engine:
            for done, at in enumerate(scenarios):
                results.append(_to_precision(engine, at, precision, max_battles))
                if progress is not None:
                    progress(done + 1, len(scenarios))
                if stop_requested():
                    break
    partial = len(results) < len(points) or any(r.partial for r in results)
    return Sweep(scenario, varies, outcome, points[: len(results)], results, partial)


def _fixed_points(
    scenarios: list[Scenario],
    battles: int,
    seed: int,
    threads: int | None,
    executor: Cluster | None,
    progress: Progress | None,
    max_total: int | None,
) -> list[Result]:
    """Battles 0 .. ``battles`` - 1 of each point, point after point, on the study
    engine: one kernel for every point (common random numbers), each point prepared
    once; at Ctrl-C the points done before the first unfinished one."""
    plan = StudyPlan.of(
        seed=seed, battles=battles, threads=threads, executor=executor, max_total=max_total
    )
    keys = list(range(len(scenarios)))
    tallies: dict[int, Tally] = {}
    with ScenarioBattles(plan) as engine:
        for key, at in zip(keys, scenarios, strict=True):
            engine.add(key, at)
        # The points side by side, each kernel on one thread.
        kernel = engine.settle(keys, battles)
        if progress is not None:
            report = progress
            engine.on_battles = lambda: report(engine.battles, len(keys) * battles)
        try:
            for key, point_tally in engine.each(keys, 0, battles, kernel, tally, merged):
                tallies[key] = point_tally
        except Interrupted:
            pass  # the points done are the answer so far
        results = []
        # The points done, in order, up to the first not done (a sweep's answer so far).
        for key in keys:
            if key not in tallies:
                break
            prepared = engine.prepared(key)
            results.append(
                Result(
                    scenario=scenarios[key],
                    seed=seed,
                    tally=tallies[key],
                    kernel=prepared.kernel,
                    notes=prepared.notes,
                    flags=prepared.flags,
                    stop_rules=prepared.has_stop_rules,
                )
            )
    return results


def _point_battles(engine: ScenarioBattles, at: Scenario, first: int, count: int) -> Result:
    """Battles ``first .. first + count - 1`` of the point ``at`` on the study's engine
    (prepared once however many rounds or looks ask for its battles), on the kernel it
    runs alone, as :func:`~simulator.running.runner.simulate` would run it: the same
    battles. Partial when Ctrl-C ended it early."""
    key = engine.add(("point", at.hash), at)
    kernel = engine.settle([key])
    fought = Tally()
    for _, _, part in engine.tallies([key], first, count, tally_each, kernel):
        fought = fought.merge(part[0])
    prepared = engine.prepared(key)
    return Result(
        scenario=at,
        seed=engine.seed,
        tally=fought,
        kernel=prepared.kernel,
        notes=prepared.notes,
        flags=prepared.flags,
        first=first,
        partial=fought.battles < count,
        stop_rules=prepared.has_stop_rules,
    )


def _to_precision(
    engine: ScenarioBattles, at: Scenario, precision: float, max_battles: int
) -> Result:
    """The rounds of a precision run (:func:`~simulator.running.precision.precision_rounds`)
    for one point of a sweep, on the study's engine: battles until every reported
    probability's 95% half-width is below ``precision``, at most ``max_battles``."""
    plan = RunPlan.of(at, seed=engine.seed, precision=precision, max_battles=max_battles)
    started = time.perf_counter()
    result: Result | None = None

    def said() -> tuple[Tally, frozenset[str]]:
        assert result is not None
        return result.tally, result.flags

    for done, count in precision_rounds(plan, said):
        part = _point_battles(engine, at, done, count)
        result = (
            part
            if result is None
            else replace(result, tally=result.tally.merge(part.tally), partial=part.partial)
        )
        if result.partial:
            break
    assert result is not None
    widest = widest_half_width(result.tally, result.flags)
    engine.forget(("point", at.hash))  # a point's battles are done: its tables go
    extra = {**result.extra, "precision": precision_report(plan, widest, result.n)}
    return replace(result, first=0, seconds=time.perf_counter() - started, extra=extra)


@dataclass
class Probe:
    """One point visited by a target search, with enough battles to place it."""

    value: Value
    result: Result
    reaches: bool
    #: True when the interval excluded the target; False when the cap was hit first
    #: and the side was decided by the point estimate.
    sure: bool

    @property
    def p(self) -> float:
        return float(self.result.win(self.result.extra["outcome"])[0])


@dataclass
class TargetSearch:
    """The smallest value of one varied path at which P(outcome) >= target."""

    scenario: Scenario
    vary: Vary
    outcome: str
    target: float
    #: The answer, or None when even the largest value stays below the target.
    value: Value | None
    probes: list[Probe] = field(default_factory=list)
    #: The z of each look: Bonferroni over every look of every probe, so that the
    #: whole search places every probe on the right side with 95% confidence.
    z: float = 0.0
    #: True when Ctrl-C stopped the search (``value`` is then None: not known).
    partial: bool = False

    @property
    def sure(self) -> bool:
        return all(p.sure for p in self.probes)

    @reads_frame
    def frame(self) -> pd.DataFrame:
        """One row per probe: the value tried, P(outcome) with its interval at the
        search's confidence, its battles and the side of the target it fell on."""
        import pandas as pd

        rows = []
        for probe in self.probes:
            p, low, high = wilson(
                int(probe.result.tally.wins[OUTCOMES.index(self.outcome)]), probe.result.n, self.z
            )
            rows.append(
                {
                    self.vary.path: probe.value,
                    "p": p,
                    "low": low,
                    "high": high,
                    "battles": probe.result.n,
                    "side": ("reaches" if probe.reaches else "below")
                    + ("" if probe.sure else " (undecided at cap)"),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "path": self.vary.path,
            "data_path": self.vary.data_path,
            "outcome": self.outcome,
            "target": self.target,
            "partial": self.partial,
            "value": self.value,
            "sure": self.sure,
            "z": self.z,
            "probes": self.frame.to_dict("records"),
        }


@renamed_keywords(first_battles="battles")
@takes_plan
@plain_lines_by_default("target search", "values tried", at_most=True)
def find_target(
    scenario: Scenario,
    vary: str | Vary,
    target: float,
    seed: int | None = None,
    *,
    plan: StudyPlan | None = None,
    outcome: str = "attacker",
    battles: int = 4_000,
    max_battles: int = 1_000_000,
    confidence: float = 0.95,
    threads: int | None = None,
    progress: Progress | None = None,
    executor: Cluster | None = None,
    max_total: int | None = None,
) -> TargetSearch:
    """Bisection for the smallest value of ``vary`` whose P(outcome) reaches ``target``.

    Assumes P(outcome) does not decrease along the values (more of a unit, a higher
    rating). Each probe starts with ``battles`` and doubles them (continuing the
    battle indices) until its interval excludes the target, up to ``max_battles``; if the
    cap comes first the point estimate decides and the search reports it is not sure.
    """
    found = vary if isinstance(vary, Vary) else parse_vary(scenario, vary)
    if not 0 < target < 1:
        raise ParameterError("target", target, "expected a probability between 0 and 1")
    if outcome not in OUTCOMES:
        raise ParameterError("outcome", outcome, f"expected one of {', '.join(OUTCOMES)}")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in found.values):
        raise ParameterError(
            "target",
            None,
            f"{{target}} needs numbers to search: {{vary=}}{literal(found.path)} has "
            + literal(", ".join(map(str, found.values))),
            whole=True,
        )
    check_looks(battles, max_battles)
    values = sorted(set(found.values))
    seed = scenario.seed if seed is None else seed
    probes_at_most = bisection_probes(len(values))
    check_total(
        f"{{target}} search: {probes_at_most} probes x {{max_battles=}}{max_battles:,}",
        probes_at_most * max_battles,
        max_total,
    )
    z = look_z(confidence, probes_at_most, battles, max_battles)
    k = OUTCOMES.index(outcome)
    search = TargetSearch(scenario, found, outcome, target, None, z=z)
    varied = rulesets.get(scenario.ruleset).describe_path(found.path, scenario.data)
    # One engine for the search: a probe's point prepared once for all its looks.
    engine = ScenarioBattles(
        StudyPlan.of(seed=seed, battles=battles, threads=threads, executor=executor)
    )

    def probe(value: Value) -> bool:
        at = point(scenario, (found,), (value,))

        def run(done: int, count: int) -> Result:
            if progress is not None:
                progress(
                    len(search.probes),
                    probes_at_most,
                    f"now {varied} = {value}: battles up to {done + count:,} "
                    f"of at most {max_battles:,}",
                )
            part = _point_battles(engine, at, done, count)
            if part.partial:  # Ctrl-C: the search ends with the probes done
                raise Interrupted
            return part

        def decided(result: Result) -> bool:
            _, low, high = wilson(int(result.tally.wins[k]), result.n, z)
            return low >= target or high < target

        result, sure = run_until_sure(
            run,
            lambda r, part: replace(r, tally=r.tally.merge(part.tally)),
            lambda r: r.n,
            decided,
            battles,
            max_battles,
        )
        p, low, _ = wilson(int(result.tally.wins[k]), result.n, z)
        result.extra["outcome"] = outcome
        reaches = low >= target if sure else p >= target
        engine.forget(("point", at.hash))  # its looks are done: its tables go
        search.probes.append(Probe(value, result, reaches, sure))
        if progress is not None:
            progress(len(search.probes), probes_at_most)
        return reaches

    try:
        search.value = smallest_reaching(values, probe)
    except Interrupted:
        search.partial = True
    finally:
        engine.close()
    return search
