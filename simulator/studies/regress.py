"""CI regression of balance numbers (``battle-odds regress``).

A baseline file records, per scenario, the numbers a designer cares about (win
probabilities, mean casualties per type, median break timing) with what is needed to
test them: counts for proportions, standard deviations for means, and for the median
the share of battles decided at or before it. A check re-runs every scenario with the
baseline's seed and battle count and tests each number against the baseline; Holm's
step-down procedure keeps the chance of any false alarm in one run at the stated
level across all numbers compared. Unchanged code reproduces the baseline exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ..atomic import write_atomically
from ..results.result import Result
from ..results.stats import OUTCOMES
from ..running.bounds import check_total
from ..running.interrupt import Interrupted, stop_requested
from ..running.plan import Progress
from ..running.runner import simulate
from ..scenario.scenario import Scenario, load_scenario
from ..version import __version__
from .machinery.baseline import (
    Baseline,
    Entry,
    Number,
    key_of,
    read_baseline,
    scenario_files,
    under,
)
from .machinery.inference import holm
from .machinery.progress import battles_of

Runner = Callable[..., Result]


def numbers_of(result: Result) -> dict[str, Number]:
    """The numbers regression watches, from a run's exact statistics."""
    tally = result.tally
    n = tally.battles
    numbers: dict[str, Number] = {}
    for outcome in result.outcomes:  # the withdrawals where the scenario reports them
        wins = int(tally.wins[OUTCOMES.index(outcome)])
        numbers[f"win.{outcome}"] = Number("proportion", wins / n, n, successes=wins)
    steps = tally.steps
    median = steps.quantile(0.5)
    numbers["steps.median"] = Number(
        "median", median, n, at_or_below=int(steps.counts[steps.values <= median].sum())
    )
    for name, histogram in tally.columns.items():
        if name.startswith("casualties."):
            numbers[name] = Number("mean", histogram.mean(), n, std=histogram.std())
    return numbers


def share_at_or_below(result: Result, value: float) -> int:
    steps = result.tally.steps
    return int(steps.counts[steps.values <= value].sum())


def p_value(base: Number, now: Number) -> float:
    """Two-sided p-value of "no change" between the baseline and the new run."""
    if base.kind == "mean":
        se = math.sqrt(base.std**2 / base.n + now.std**2 / now.n)
        if se == 0:
            return 1.0 if base.value == now.value else 0.0
        return math.erfc(abs(now.value - base.value) / se / math.sqrt(2))
    if base.kind == "proportion":
        x0, x1 = base.successes, now.successes
    else:  # the share of battles decided by the baseline's median: a median test
        x0, x1 = base.at_or_below, now.at_or_below
    pooled = (x0 + x1) / (base.n + now.n)
    if pooled in (0.0, 1.0):
        return 1.0
    se = math.sqrt(pooled * (1 - pooled) * (1 / base.n + 1 / now.n))
    return math.erfc(abs(x1 / now.n - x0 / base.n) / se / math.sqrt(2))


@dataclass
class Comparison:
    scenario: str
    number: str
    baseline: float
    now: float
    p: float
    threshold: float = 0.0
    moved: bool = False
    tolerance: float | None = None

    @property
    def change(self) -> float:
        return self.now - self.baseline


@dataclass
class Report:
    level: float
    statuses: dict[str, str]  # scenario -> ok, moved, changed, new, missing, interrupted
    comparisons: list[Comparison]
    #: True when Ctrl-C stopped the check: the scenarios after the interrupted one are
    #: not in ``statuses``.
    partial: bool = False

    @property
    def moved(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.moved]

    @property
    def passed(self) -> bool:
        return all(status == "ok" for status in self.statuses.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "partial": self.partial,
            "level": self.level,
            "version": __version__,
            "scenarios": self.statuses,
            "moved": [_comparison_dict(c) for c in self.moved],
            "compared": len(self.comparisons),
        }

    def junit(self) -> str:
        suite = ElementTree.Element(
            "testsuite",
            name="battle-odds regress",
            tests=str(len(self.statuses)),
            failures=str(sum(s != "ok" for s in self.statuses.values())),
        )
        if self.partial:
            properties = ElementTree.SubElement(suite, "properties")
            ElementTree.SubElement(properties, "property", name="partial", value="true")
        for scenario, status in self.statuses.items():
            case = ElementTree.SubElement(suite, "testcase", classname="balance", name=scenario)
            if status == "ok":
                continue
            lines = [
                f"{c.number}: {c.baseline:.6g} -> {c.now:.6g} (p={c.p:.3g}, Holm threshold "
                f"{c.threshold:.3g})"
                for c in self.moved
                if c.scenario == scenario
            ]
            failure = ElementTree.SubElement(case, "failure", message=f"balance {status}")
            failure.text = "\n".join(lines) or _status_text(status)
        return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)


def _comparison_dict(c: Comparison) -> dict[str, Any]:
    return {
        "scenario": c.scenario,
        "number": c.number,
        "baseline": c.baseline,
        "now": c.now,
        "change": c.change,
        "p": c.p,
        "threshold": c.threshold,
        "tolerance": c.tolerance,
    }


def _status_text(status: str) -> str:
    return {
        "changed": "the scenario file changed since the baseline: review and run --update",
        "new": "not in the baseline: run --update to add it",
        "missing": "in the baseline but its file is gone",
        "interrupted": "Ctrl-C stopped the check while this scenario ran",
    }.get(status, status)


#: A scenario's place in the run: the scenarios to run (each key's loaded file), and
#: the keys in the order to run them (:func:`check`'s ``order``).
Order = Callable[[dict[str, Scenario]], list[str]]


@dataclass(frozen=True)
class Verdict:
    """A scenario's verdict as soon as it is checked (:func:`check`'s ``told``), before
    the scenarios after it run. ``status`` is the report's where this scenario's numbers
    already settle it: ``ok`` when none of them can be found moved (each within its
    tolerance or with a p-value above the family's level, the largest Holm threshold),
    ``moved`` when one beyond its tolerance has a p-value at or below the smallest
    (level / numbers compared: Holm rejects it whatever the others'), ``changed``,
    ``new``, ``missing``, ``interrupted``; ``undecided`` when a number lies between the
    two thresholds (its verdict comes with the last scenario's). ``seconds``: how long
    its run took (0 for a scenario not run)."""

    scenario: str
    status: str
    comparisons: tuple[Comparison, ...] = ()
    seconds: float = 0.0

    @property
    def closest(self) -> Comparison | None:
        """The comparison of smallest p-value (None: no number compared)."""
        return min(self.comparisons, key=lambda c: c.p, default=None)


def check(
    paths: list[str | Path] | list[Path],
    baseline: Baseline,
    baseline_path: Path,
    *,
    seed: int | None = None,
    run: Runner = simulate,
    max_total: int | None = None,
    progress: Progress | None = None,
    load: Callable[[Path], Scenario] = load_scenario,
    order: Order | None = None,
    ready: Callable[[str], None] | None = None,
    told: Callable[[Verdict], None] | None = None,
) -> Report:
    """Re-run the baseline's scenarios and test every number against it.

    ``seed`` replaces the baseline's seeds (for studying the false-alarm rate); by
    default each scenario runs with the seed and battle count recorded with it. Every
    scenario file is read (``load``) before any runs; ``order`` chooses the order of the
    runs (default: by name); ``ready`` is called with each key before its run (regress
    waits there for a kernel compiled elsewhere; Ctrl-C then stops the check before the
    run); ``told`` hears each scenario's :class:`Verdict` as it is known (a changed,
    new or missing one first, before any run). The report is the same in any order: its
    comparisons are in the scenarios' order by name."""
    files = {key_of(p, baseline_path): p for p in scenario_files(paths, baseline_path)}
    roots = [key_of(p, baseline_path) for p in paths]
    asked = [baseline.entries[key].battles for key in files if key in baseline.entries]
    check_total(
        f"regress: {len(asked)} scenarios of the baseline ({baseline_path})", sum(asked), max_total
    )
    statuses: dict[str, str] = {}
    to_run: dict[str, Scenario] = {}
    for key, path in files.items():
        entry = baseline.entries.get(key)
        scenario = load(path)
        if entry is None:
            statuses[key] = "new"
        elif scenario.hash != entry.scenario_hash:
            statuses[key] = "changed"
        else:
            to_run[key] = scenario
    for key in baseline.entries:
        if key not in files and under(key, roots):
            statuses[key] = "missing"
    for key, status in statuses.items():
        if told is not None:
            told(Verdict(key, status))
    compared = sum(len(baseline.entries[key].numbers) for key in to_run)
    keys = list(to_run) if order is None else order(dict(to_run))
    found: dict[str, list[Comparison]] = {}
    partial = False
    before = 0
    total = sum(asked)
    for key in keys:
        if ready is not None and not stop_requested():
            ready(key)
        if stop_requested():
            partial = True
            break
        entry, scenario = baseline.entries[key], to_run[key]
        began = time.perf_counter()
        result = run(
            scenario,
            entry.battles,
            entry.seed if seed is None else seed,
            keep_battles=False,
            **_reporting(progress, before, total),
        )
        before += entry.battles
        if result.partial:
            statuses[key], partial = "interrupted", True
            if told is not None:
                told(Verdict(key, "interrupted", seconds=time.perf_counter() - began))
            break
        found[key] = _compare(key, entry, result, baseline.tolerance)
        statuses[key] = "ok"
        if told is not None:
            verdict = _verdict_now(found[key], baseline.level, compared)
            told(Verdict(key, verdict, tuple(found[key]), time.perf_counter() - began))
    comparisons = [c for key in to_run if key in found for c in found[key]]
    return _judged(baseline.level, statuses, comparisons, partial)


def _judged(
    level: float, statuses: dict[str, str], comparisons: list[Comparison], partial: bool
) -> Report:
    """The report of the scenarios ``statuses`` (a run one ``ok`` so far) and their
    numbers' ``comparisons`` (in the scenarios' order by name): Holm's test over those
    numbers, a scenario with a number moved ``moved``."""
    for comparison, (rejected, threshold) in zip(
        comparisons, holm([c.p for c in comparisons], level), strict=True
    ):
        comparison.threshold = threshold
        comparison.moved = rejected and _beyond_tolerance(comparison)
        if comparison.moved:
            statuses[comparison.scenario] = "moved"
    return Report(level, dict(sorted(statuses.items())), comparisons, partial)


def report_so_far(level: float, verdicts: list[Verdict]) -> Report:
    """The partial report of a check stopped after the scenarios ``verdicts`` tell of
    (:func:`check`'s ``told``), as :func:`check` returns it when Ctrl-C stops it between
    runs: for a Ctrl-C that ends the process at once (while a kernel compiles), the
    scenarios checked so far are still answered."""
    statuses = {v.scenario: v.status if not v.comparisons else "ok" for v in verdicts}
    ran = sorted((v for v in verdicts if v.comparisons), key=lambda v: v.scenario)
    comparisons = [c for v in ran for c in v.comparisons]
    return _judged(level, statuses, comparisons, partial=True)


def _compare(key: str, entry: Entry, result: Result, tolerance: float | None) -> list[Comparison]:
    """Each of the baseline's numbers of ``key`` against this run's (``tolerance``: the
    baseline's own, for numbers and scenarios that set none)."""
    now = numbers_of(result)
    comparisons = []
    for name, base in entry.numbers.items():
        if base.kind == "median":
            current = Number(
                "median",
                now[name].value,
                result.n,
                at_or_below=share_at_or_below(result, base.value),
            )
        else:
            current = now.get(name, Number(base.kind, 0.0, result.n))
        comparisons.append(
            Comparison(
                key,
                name,
                base.value,
                current.value,
                p_value(base, current),
                tolerance=next(
                    (t for t in (base.tolerance, entry.tolerance, tolerance) if t is not None),
                    None,
                ),
            )
        )
    return comparisons


def _beyond_tolerance(comparison: Comparison) -> bool:
    return comparison.tolerance is None or abs(comparison.change) > comparison.tolerance


def _verdict_now(comparisons: list[Comparison], level: float, compared: int) -> str:
    """A scenario's status from its own numbers, before the others' are known: Holm's
    thresholds lie between ``level / compared`` and ``level`` (:class:`Verdict`)."""
    beyond = [c for c in comparisons if _beyond_tolerance(c)]
    if any(c.p <= level / max(compared, 1) for c in beyond):
        return "moved"
    if all(c.p > level for c in beyond):
        return "ok"
    return "undecided"


def update(
    paths: list[str | Path] | list[Path],
    baseline_path: Path,
    *,
    battles: int | None = None,
    level: float | None = None,
    run: Runner = simulate,
    max_total: int | None = None,
    progress: Progress | None = None,
) -> Baseline:
    """Run every scenario and rewrite the baseline atomically.

    Tolerances set by hand in the old baseline are kept. Nothing is written until every
    scenario has run, and the write replaces the file in one rename."""
    old = read_baseline(baseline_path) if baseline_path.exists() else Baseline()
    new = Baseline(level=old.level if level is None else level, tolerance=old.tolerance)
    roots = [key_of(p, baseline_path) for p in paths]
    planned = []
    for path in scenario_files(paths, baseline_path):
        key = key_of(path, baseline_path)
        scenario: Scenario = load_scenario(path)
        previous = old.entries.get(key)
        count = battles or (
            previous.battles
            if previous and previous.scenario_hash == scenario.hash
            else scenario.battles
        )
        planned.append((key, scenario, previous, count))
    check_total(
        f"regress --update: {len(planned)} scenarios",
        sum(count for *_, count in planned),
        max_total,
    )
    total = sum(count for *_, count in planned)
    before = 0
    for key, scenario, previous, count in planned:
        result = run(
            scenario,
            count,
            scenario.seed,
            keep_battles=False,
            **_reporting(progress, before, total),
        )
        before += count
        if result.partial:
            raise Interrupted  # nothing is written: a baseline is every scenario or none
        numbers = numbers_of(result)
        if previous is not None:
            numbers = {
                name: _keep_tolerance(number, previous.numbers.get(name))
                for name, number in numbers.items()
            }
        new.entries[key] = Entry(
            key,
            scenario.ruleset,
            scenario.hash,
            scenario.seed,
            count,
            __version__,
            numbers,
            previous.tolerance if previous else None,
        )
    for key, entry in old.entries.items():
        if key not in new.entries and not under(key, roots):
            new.entries[key] = entry  # scenarios outside this run's folders stay as they were
    write_atomically(baseline_path, new.to_toml())
    return new


def _reporting(progress: Progress | None, before: int, total: int) -> dict[str, Any]:
    """The run's ``progress`` argument reporting the whole check's battles (none asked:
    no argument, for runners that take none)."""
    return {} if progress is None else {"progress": battles_of(progress, before, total)}


def _keep_tolerance(number: Number, previous: Number | None) -> Number:
    if previous is None or previous.tolerance is None:
        return number
    return Number(
        number.kind,
        number.value,
        number.n,
        number.successes,
        number.std,
        number.at_or_below,
        previous.tolerance,
    )
