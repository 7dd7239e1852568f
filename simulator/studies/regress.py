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
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import tomli_w

from ..atomic import write_atomically
from ..errors import BattleOddsError, Source
from ..input.reader import Node
from ..results.result import Result
from ..results.stats import OUTCOMES
from ..running.runner import simulate
from ..scenario.scenario import Scenario, load_scenario
from ..version import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_LEVEL = 0.01
KINDS = ("proportion", "mean", "median")
Runner = Callable[..., Result]


@dataclass(frozen=True)
class Number:
    """One reported number and what its test needs."""

    kind: str  # proportion, mean or median
    value: float
    n: int
    successes: int = 0  # proportion: battles with the outcome
    std: float = 0.0  # mean: standard deviation of the column
    at_or_below: int = 0  # median: battles decided at or before the median
    tolerance: float | None = None

    def to_toml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "value": self.value, "n": self.n}
        if self.kind == "proportion":
            out["successes"] = self.successes
        elif self.kind == "mean":
            out["std"] = self.std
        else:
            out["at_or_below"] = self.at_or_below
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        return out


def numbers_of(result: Result) -> dict[str, Number]:
    """The numbers regression watches, from a run's exact statistics."""
    tally = result.tally
    n = tally.battles
    numbers: dict[str, Number] = {}
    for k, outcome in enumerate(OUTCOMES):
        wins = int(tally.wins[k])
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


def holm(p_values: list[float], level: float) -> list[tuple[bool, float]]:
    """Holm's step-down test: (rejected, threshold) per p-value, in the input order.

    Rejecting ``p_(k) <= level / (m - k)`` until the first that is not keeps the
    family-wise false-alarm rate at ``level`` whatever the dependence between tests."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [(False, level / m if m else level)] * m
    still_rejecting = True
    for rank, i in enumerate(order):
        threshold = level / (m - rank)
        still_rejecting = still_rejecting and p_values[i] <= threshold
        out[i] = (still_rejecting, threshold)
    return out


@dataclass
class Entry:
    """A scenario in the baseline."""

    path: str
    ruleset: str
    scenario_hash: str
    seed: int
    battles: int
    version: str
    numbers: dict[str, Number]
    tolerance: float | None = None

    def to_toml(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ruleset": self.ruleset,
            "scenario_hash": self.scenario_hash,
            "seed": self.seed,
            "battles": self.battles,
            "version": self.version,
        }
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        out["numbers"] = {name: number.to_toml() for name, number in self.numbers.items()}
        return out


@dataclass
class Baseline:
    level: float = DEFAULT_LEVEL
    tolerance: float | None = None
    entries: dict[str, Entry] = field(default_factory=dict)

    def to_toml(self) -> str:
        settings: dict[str, Any] = {"level": self.level}
        if self.tolerance is not None:
            settings["tolerance"] = self.tolerance
        body = tomli_w.dumps(
            {
                "settings": settings,
                "scenarios": {p: e.to_toml() for p, e in sorted(self.entries.items())},
            }
        )
        return (
            "# Balance baseline written by `battle-odds regress --update`.\n"
            "# Add `tolerance = 0.01` to a number, a scenario or [settings] to ignore\n"
            "# changes smaller than that (absolute) even when they are beyond noise.\n\n" + body
        )


def read_baseline(path: Path) -> Baseline:
    """Parse and check a baseline file; a corrupt one is a clear error, not a traceback."""
    label = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BattleOddsError(f"{label}: no such baseline file (create it with --update)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BattleOddsError(f"{label}: cannot read the baseline ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BattleOddsError(f"{label}: corrupt baseline, not valid TOML: {exc}") from None
    source = Source(label, text, path)
    top = Node(data, "", source)
    top.only(("settings", "scenarios"))
    settings = top.child("settings", {})
    settings.only(("level", "tolerance"))
    baseline = Baseline(
        level=settings.number("level", DEFAULT_LEVEL, lo=1e-9, hi=0.5),
        tolerance=_tolerance(settings),
    )
    for scenario_path, node in top.child("scenarios", {}).items():
        node.only(
            ("ruleset", "scenario_hash", "seed", "battles", "version", "tolerance", "numbers")
        )
        numbers = {}
        for name, num in node.child("numbers", {}).items():
            num.only(("kind", "value", "n", "successes", "std", "at_or_below", "tolerance"))
            kind = num.choice("kind", KINDS)
            count = num.integer("n", lo=1)
            numbers[name] = Number(
                kind=kind,
                value=num.number("value"),
                n=count,
                successes=num.integer(
                    "successes", 0 if kind != "proportion" else None, lo=0, hi=count
                ),
                std=num.number("std", 0.0 if kind != "mean" else None, lo=0.0),
                at_or_below=num.integer(
                    "at_or_below", 0 if kind != "median" else None, lo=0, hi=count
                ),
                tolerance=_tolerance(num),
            )
        baseline.entries[scenario_path] = Entry(
            path=scenario_path,
            ruleset=node.text("ruleset"),
            scenario_hash=node.text("scenario_hash"),
            seed=node.integer("seed", lo=0),
            battles=node.integer("battles", lo=1),
            version=node.text("version", "?"),
            numbers=numbers,
            tolerance=_tolerance(node),
        )
    return baseline


def _tolerance(node: Node) -> float | None:
    return node.number("tolerance", lo=0.0) if node.has("tolerance") else None


def scenario_files(paths: Iterable[str | Path], baseline_path: Path) -> list[Path]:
    """Every ``*.toml`` under the given folders (and the files given), sorted, except the
    baseline itself (a designer may keep it beside the scenarios)."""
    found: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.update(p for p in path.rglob("*.toml") if p.is_file())
        elif path.is_file():
            found.add(path)
        else:
            raise BattleOddsError(f"{given}: no such file or folder")
    found = {p for p in found if p.resolve() != baseline_path.resolve()}
    if not found:
        raise BattleOddsError(f"{', '.join(map(str, paths))}: no *.toml scenario files found")
    return sorted(found)


def key_of(path: str | Path, baseline_path: Path) -> str:
    """A scenario's name in the baseline: its path relative to the baseline's folder, so a
    check gives the same names from any working directory."""
    folder = baseline_path.resolve().parent
    return Path(os.path.relpath(Path(path).resolve(), folder)).as_posix()


def _under(key: str, roots: list[str]) -> bool:
    return any(key == root or key.startswith(root.rstrip("/") + "/") for root in roots)


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
    statuses: dict[str, str]  # scenario -> ok, moved, changed, new, missing
    comparisons: list[Comparison]

    @property
    def moved(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.moved]

    @property
    def passed(self) -> bool:
        return all(status == "ok" for status in self.statuses.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
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
    }.get(status, status)


def check(
    paths: list[str | Path] | list[Path],
    baseline: Baseline,
    baseline_path: Path,
    *,
    seed: int | None = None,
    run: Runner = simulate,
) -> Report:
    """Re-run the baseline's scenarios and test every number against it.

    ``seed`` replaces the baseline's seeds (for studying the false-alarm rate); by
    default each scenario runs with the seed and battle count recorded with it."""
    files = {key_of(p, baseline_path): p for p in scenario_files(paths, baseline_path)}
    roots = [key_of(p, baseline_path) for p in paths]
    statuses: dict[str, str] = {}
    comparisons: list[Comparison] = []
    for key, path in files.items():
        entry = baseline.entries.get(key)
        scenario = load_scenario(path)
        if entry is None:
            statuses[key] = "new"
            continue
        if scenario.hash != entry.scenario_hash:
            statuses[key] = "changed"
            continue
        statuses[key] = "ok"
        result = run(
            scenario, entry.battles, entry.seed if seed is None else seed, keep_battles=False
        )
        now = numbers_of(result)
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
            tolerance = next(
                (t for t in (base.tolerance, entry.tolerance, baseline.tolerance) if t is not None),
                None,
            )
            comparisons.append(
                Comparison(
                    key,
                    name,
                    base.value,
                    current.value,
                    p_value(base, current),
                    tolerance=tolerance,
                )
            )
    for key in baseline.entries:
        if key not in files and _under(key, roots):
            statuses[key] = "missing"
    for comparison, (rejected, threshold) in zip(
        comparisons, holm([c.p for c in comparisons], baseline.level), strict=True
    ):
        comparison.threshold = threshold
        beyond_tolerance = (
            comparison.tolerance is None or abs(comparison.change) > comparison.tolerance
        )
        comparison.moved = rejected and beyond_tolerance
        if comparison.moved:
            statuses[comparison.scenario] = "moved"
    return Report(baseline.level, dict(sorted(statuses.items())), comparisons)


def update(
    paths: list[str | Path] | list[Path],
    baseline_path: Path,
    *,
    battles: int | None = None,
    level: float | None = None,
    run: Runner = simulate,
) -> Baseline:
    """Run every scenario and rewrite the baseline atomically.

    Tolerances set by hand in the old baseline are kept. Nothing is written until every
    scenario has run, and the write replaces the file in one rename."""
    old = read_baseline(baseline_path) if baseline_path.exists() else Baseline()
    new = Baseline(level=old.level if level is None else level, tolerance=old.tolerance)
    roots = [key_of(p, baseline_path) for p in paths]
    for path in scenario_files(paths, baseline_path):
        key = key_of(path, baseline_path)
        scenario: Scenario = load_scenario(path)
        previous = old.entries.get(key)
        count = battles or (
            previous.battles
            if previous and previous.scenario_hash == scenario.hash
            else scenario.battles
        )
        result = run(scenario, count, scenario.seed, keep_battles=False)
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
        if key not in new.entries and not _under(key, roots):
            new.entries[key] = entry  # scenarios outside this run's folders stay as they were
    write_atomically(baseline_path, new.to_toml())
    return new


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
