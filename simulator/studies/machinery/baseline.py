"""The balance baseline file (``balance.toml``): the numbers it records, reading it with
every value checked, writing it, and which scenario files it names."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from ...errors import BattleOddsError
from ...input.reader import Node
from ...input.toml import read_toml
from ...running.plan import MAX_BATTLES, MAX_SEED

DEFAULT_LEVEL = 0.01
KINDS = ("proportion", "mean", "median")


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


#: The largest baseline read (bytes): a few kilobytes a scenario.
MAX_BASELINE_BYTES = 16 << 20


def read_baseline(path: Path) -> Baseline:
    """Parse and check a baseline file; a corrupt one is a clear error, not a traceback."""
    data, source = read_toml(
        path, "baseline", "no such baseline file (create it with --update)", MAX_BASELINE_BYTES
    )
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
            seed=node.integer("seed", lo=0, hi=MAX_SEED),
            battles=node.integer("battles", lo=1, hi=MAX_BATTLES),
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


def under(key: str, roots: list[str]) -> bool:
    return any(key == root or key.startswith(root.rstrip("/") + "/") for root in roots)
