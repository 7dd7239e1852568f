"""A ruleset's kernels at a git revision against the working tree's, on one thread:
``python benchmarks/kernel_versions.py REV SCENARIO... [--rounds N] [--battles N]``.

Copies the ``kernels`` package as it was at ``REV`` (``git archive``) into a folder of its
own (kept under the system's temporary folder, so that its compiled code is cached
between runs), imports it as ``kernels_then`` beside today's ``kernels``, and runs each
scenario's ``run_matrix`` (today's preparation, the same arrays) with the kernel modules it
calls taken from either package, in turn for ``--rounds`` rounds. It prints each one's
fewest CPU microseconds per battle, their ratio, and whether the two gave identical
outcome rows for the same seed and battles (a change that keeps the draws must). One
thread and CPU time, so that the comparison is of the kernels' work, not of the threads'
scheduling or the shared machine's other load; the first round compiles (or loads from
the cache) and is not timed.

    python benchmarks/kernel_versions.py main scenarios/blocks/field_battle.toml
    python benchmarks/kernel_versions.py HEAD~1 scenarios/olympia/castle_siege.toml
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Each package compiles in this process: the other revision's kernels would start a second
# compile process (kernels/_aside.py) of today's tree, whose way of starting may differ
# from theirs (it waits for a line the older code never writes). Speed and rows are the
# same either way.
os.environ["BATTLE_ODDS_COMPILE_ASIDE"] = "0"

import numba  # noqa: E402
import numpy as np  # noqa: E402

import simulator  # noqa: E402
from simulator import rulesets  # noqa: E402

THEN = "kernels_then"


def kernels_at(revision: str) -> str:
    """The ``kernels`` package at ``revision``, importable as ``kernels_then``; returns the
    commit it is of."""
    commit = subprocess.run(
        ["git", "rev-parse", revision], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    folder = Path(tempfile.gettempdir()) / f"battle-odds-kernels-{commit[:12]}"
    package = folder / THEN
    if not package.exists():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit, "kernels"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        (folder / "kernels").rename(package)
    sys.path.insert(0, str(folder))
    return commit


@contextmanager
def kernels_of(prepared: object, package: str) -> Iterator[None]:
    """Within the block, the preparation's module calls the kernel modules of
    ``package`` (``kernels`` or ``kernels_then``)."""
    module = sys.modules[type(prepared).__module__]
    saved = {}
    for name, value in vars(module).items():
        if isinstance(value, ModuleType) and value.__name__.startswith("kernels."):
            saved[name] = value
    try:
        for name, value in saved.items():
            leaf = value.__name__.split(".", 1)[1]
            setattr(module, name, importlib.import_module(f"{package}.{leaf}"))
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def compare(scenario: Path, battles: int, rounds: int) -> str:
    loaded = simulator.load_scenario(scenario)
    prepared = rulesets.get(loaded.ruleset).prepare(loaded.model)
    best = {"then": float("inf"), "now": float("inf")}
    rows: dict[str, np.ndarray] = {}
    for round_ in range(rounds + 1):
        for label, package in (("then", THEN), ("now", "kernels")):
            with kernels_of(prepared, package):
                started = time.process_time()
                out = prepared.run_matrix(7, 0, battles)
                took = time.process_time() - started
            if round_:  # the first round compiles or loads the kernels
                best[label] = min(best[label], took)
            rows[label] = out
    then_us, now_us = (best[k] / battles * 1e6 for k in ("then", "now"))
    same = "yes" if np.array_equal(rows["then"], rows["now"]) else "NO"
    return f"| {scenario} | {then_us:,.3f} | {now_us:,.3f} | {then_us / now_us:.3f}x | {same} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="a git revision, e.g. main or HEAD~1")
    parser.add_argument("scenarios", nargs="+", type=Path, help="scenario files")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--battles", type=int, default=50_000, help="battles a call")
    args = parser.parse_args()
    numba.set_num_threads(1)
    commit = kernels_at(args.revision)
    print(f"kernels at {args.revision} ({commit[:12]}) against the working tree's, one thread")
    print("\n| scenario | then (us/battle) | now (us/battle) | now / then speed | same rows |")
    print("|---|---:|---:|---:|---|")
    for scenario in args.scenarios:
        print(compare(scenario, args.battles, args.rounds), flush=True)


if __name__ == "__main__":
    main()
