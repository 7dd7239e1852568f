"""The studies as a designer runs them, timed as whole processes against an older commit:
``python benchmarks/studies.py --base PATH [--quick] [--rounds N]``.

``PATH`` is a checkout of the commit to compare with (e.g. 111fde0, the commit before the
study engine: ``git worktree add /tmp/base 111fde0``); it runs with this interpreter and
``PYTHONPATH=PATH``, so the same packages serve both trees, and each tree keeps its own
Numba cache beside its sources. Small versions of the commands run once untimed in each
tree first (the kernels compiled or loaded into the cache), then the two trees in turn,
``--rounds`` times; the best time of each is kept (the least disturbed by other work on a shared
machine), and the ratio of the two is the speed-up. Measured:

* designer.md's ``best`` example (knights_vs_pikemen, budget 12, soldier, archer,
  swordsman and knight, at most 4 knights, seed 17);
* its ``prices`` example (olympia, the ten types that fight alone, budgets 10/20/40);
* ``matrix --ruleset blocks --budget 3``;
* the ``balance_pass`` notebook, executed headless (jupyter nbconvert), in this tree.

Each answer is checked against the older tree's: the same chosen army, every price
inside the other's interval, the same matrix. The processor and the load average are
printed with the times: read the ratios, which are measured in the same run.
``--quick`` runs small versions of the same commands (seconds, for the test suite).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import command_line, load_average, processor  # noqa: E402


@dataclass(frozen=True)
class Study:
    name: str
    args: list[str]
    #: The least speed-up the issue asked for (None: not a target).
    target: float | None
    #: Same answer in both trees? -> (same, what differs in words).
    same: Callable[[dict[str, Any], dict[str, Any]], tuple[bool, str]]


def same_best(new: dict[str, Any], old: dict[str, Any]) -> tuple[bool, str]:
    said = f"{new['best']['army']} against {old['best']['army']}"
    return new["best"]["army"] == old["best"]["army"], said


def same_prices(new: dict[str, Any], old: dict[str, Any]) -> tuple[bool, str]:
    def inside(price: float, interval: dict[str, Any]) -> bool:
        if interval["low"] is None:  # the base type: 1 exactly
            return abs(price - interval["price"]) < 1e-9
        return bool(interval["low"] <= price <= interval["high"])

    outside = [
        t
        for t, p in new["prices"].items()
        if not (inside(p["price"], old["prices"][t]) and inside(old["prices"][t]["price"], p))
    ]
    if outside:
        return False, "outside the other's interval: " + ", ".join(outside)
    return True, "every price inside the other's interval"


def same_matrix(new: dict[str, Any], old: dict[str, Any]) -> tuple[bool, str]:
    cells = lambda d: [(c["attacker"], c["defender"], c["p"]) for c in d["cells"]]  # noqa: E731
    equal = cells(new) == cells(old)
    return equal, "the same cells" if equal else "cells differ"


def studies(quick: bool) -> list[Study]:
    if quick:
        return [
            Study(
                "best (quick)",
                [
                    "best",
                    "scenarios/olympia/knights_vs_pikemen.toml",
                    "--budget",
                    "4",
                    "--types",
                    "soldier,knight",
                    "--seed",
                    "17",
                    "--battles",
                    "200",
                    "--max-battles",
                    "1600",
                    "--json",
                ],
                None,
                same_best,
            ),
            Study(
                "prices (quick)",
                [
                    "prices",
                    "--ruleset",
                    "olympia",
                    "--types",
                    "soldier,pikeman,knight",
                    "--budgets",
                    "10",
                    "-n",
                    "100",
                    "--json",
                ],
                None,
                same_prices,
            ),
            Study(
                "matrix blocks (quick)",
                ["matrix", "--ruleset", "blocks", "--budget", "3", "-n", "200", "--json"],
                None,
                same_matrix,
            ),
        ]
    return [
        Study(
            "best: knights_vs_pikemen, budget 12",
            [
                "best",
                "scenarios/olympia/knights_vs_pikemen.toml",
                "--budget",
                "12",
                "--types",
                "soldier,archer,swordsman,knight",
                "--max",
                "knight=4",
                "--seed",
                "17",
                "--json",
            ],
            5.0,
            same_best,
        ),
        Study(
            "prices: olympia, budgets 10/20/40",
            ["prices", "--ruleset", "olympia", "--json"],
            5.0,
            same_prices,
        ),
        Study(
            "matrix --ruleset blocks --budget 3",
            ["matrix", "--ruleset", "blocks", "--budget", "3", "--json"],
            3.0,
            same_matrix,
        ),
    ]


@dataclass(frozen=True)
class Timing:
    """A whole process: wall-clock seconds, and CPU seconds (user + system, all its
    threads): on a shared machine the CPU seconds are the work done, whatever share of
    the processors the process got."""

    wall: float
    cpu: float


def start(tree: Path, args: list[str]) -> tuple[subprocess.Popen[bytes], Any, Any]:
    """``battle-odds ARGS`` of ``tree`` started, its output into temporary files (a
    pipe could fill while the process is waited for)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # Closed when the process is waited for (wait).
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", *args], cwd=tree, env=env, stdout=out, stderr=err
    )
    return process, out, err


def wait(
    tree: Path, args: list[str], started: tuple[subprocess.Popen[bytes], Any, Any], began: float
) -> tuple[Timing, Any]:
    """The timing of a started process (its CPU seconds from its resource usage) and its
    JSON answer."""
    process, out, err = started
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = status  # reaped here, not by Popen
    wall = time.perf_counter() - began
    out.seek(0)
    err.seek(0)
    said, answer = err.read().decode().strip(), out.read()
    out.close()
    err.close()
    if status != 0:
        raise SystemExit(f"{tree}: battle-odds {' '.join(args)}: {said}")
    return Timing(wall, usage.ru_utime + usage.ru_stime), json.loads(answer)


def run_pair(args: list[str], base: Path, together: bool) -> tuple[Timing, Any, Timing, Any]:
    """``battle-odds ARGS`` in this tree and in ``base``: one after the other, or both at
    once (``together``: half the wall-clock time; compare CPU seconds then)."""
    timings = []
    answers = []
    order = [ROOT, base]
    if together:
        began = time.perf_counter()
        started = [start(tree, args) for tree in order]
        for tree, process in zip(order, started, strict=True):
            timing, answer = wait(tree, args, process, began)
            timings.append(timing)
            answers.append(answer)
    else:
        for tree in order:
            began = time.perf_counter()
            timing, answer = wait(tree, args, start(tree, args), began)
            timings.append(timing)
            answers.append(answer)
    return timings[0], answers[0], timings[1], answers[1]


def notebook_seconds(tree: Path) -> float:
    """Seconds to execute ``notebooks/balance_pass.ipynb`` of ``tree`` headless."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "jupyter",
                "nbconvert",
                "--to",
                "notebook",
                "--execute",
                "--ExecutePreprocessor.timeout=1800",
                "--output-dir",
                scratch,
                str(tree / "notebooks" / "balance_pass.ipynb"),
            ],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the balance_pass notebook failed: {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="checkout of the older commit")
    parser.add_argument("--rounds", type=int, default=1, help="timed runs of each (best kept)")
    parser.add_argument("--quick", action="store_true", help="small runs (for the tests)")
    parser.add_argument("--no-notebook", action="store_true", help="leave the notebook out")
    parser.add_argument("--only", help="the studies whose name starts with this")
    parser.add_argument("--no-warm", action="store_true", help="caches warm: no small runs")
    parser.add_argument(
        "--together",
        action="store_true",
        help="run the two trees' processes at once (a busy machine: compare CPU seconds)",
    )
    options = parser.parse_args()
    base = options.base.resolve()
    print(f"# {command_line()}")
    print(f"processor: {processor()}; {os.cpu_count()} logical processors")
    print(f"load average before: {load_average()}", flush=True)
    print(f"this tree: {ROOT}; older tree: {base}")
    # Untimed: the kernels compiled or loaded into each tree's cache, by the small runs.
    chosen = [s for s in studies(options.quick) if s.name.startswith(options.only or "")]
    for study in [] if options.no_warm else studies(quick=True):
        run_pair(study.args, base, together=False)
    for study in chosen:
        new_times, old_times = [], []
        for _ in range(options.rounds):
            new_time, new, old_time, old = run_pair(study.args, base, options.together)
            new_times.append(new_time)
            old_times.append(old_time)
        same, said = study.same(new, old)
        new_cpu, old_cpu = min(t.cpu for t in new_times), min(t.cpu for t in old_times)
        new_wall, old_wall = min(t.wall for t in new_times), min(t.wall for t in old_times)
        ratio = old_cpu / new_cpu
        verdict = (
            ""
            if study.target is None
            else f"; target {study.target:g}x: {'met' if ratio >= study.target else 'NOT met'}"
        )
        print(
            f"{study.name}: CPU {old_cpu:.1f} s -> {new_cpu:.1f} s, {ratio:.2f}x{verdict}; "
            f"wall {old_wall:.1f} s -> {new_wall:.1f} s, {old_wall / new_wall:.2f}x; "
            f"answers: {'same' if same else 'DIFFER'} ({said}); load {load_average()}",
            flush=True,
        )
    if not (options.quick or options.no_notebook):
        seconds = notebook_seconds(ROOT)
        old_seconds = notebook_seconds(base)
        print(
            f"balance_pass notebook: {old_seconds:.1f} s -> {seconds:.1f} s, "
            f"{old_seconds / seconds:.2f}x; target under 45 s on a quiet 2-core machine: "
            f"{'met' if seconds < 45 else 'NOT met'} here; load {load_average()}"
        )
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
