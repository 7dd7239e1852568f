"""Where an ``odds`` query's time goes, stage by stage, in CPU time on one thread.

    python benchmarks/stages.py [--battles N]

The yardstick battle ("noble, 100 soldier" against "noble, 20 knight"), per kernel
(``skip`` and ``chain``): the start-up of ``battle-odds odds ... --battles 1`` (a fresh
process, cache warm; its user + system time), the chain table's build, the kernel and
the tally per battle on a chunk of the runner's size, and what those add up to for N
battles, beside the plain per-strike kernel's (benchmarks/baseline.py). CPU time on one
thread, fastest of several runs, so that the shared machine's other load moves the
figures less than wall time would; the processor is printed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import baseline  # noqa: E402
import numba  # noqa: E402

import simulator  # noqa: E402
from benchmarks.common import load_average, processor  # noqa: E402
from simulator.results.stats import Tally  # noqa: E402
from simulator.rulesets.olympia.prepare import OlympiaPrepared, build_chain  # noqa: E402
from simulator.running.plan import DEFAULT_CHUNK  # noqa: E402

ATTACKER, DEFENDER = "noble, 100 soldier", "noble, 20 knight"


def cpu(run: Callable[[], object], repeats: int = 5) -> float:
    """Fewest CPU seconds of ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def startup(kernel: str) -> float:
    """User + system seconds of a one-battle query in a fresh process (fewest of three)."""
    command = [sys.executable, "-m", "simulator", "odds", "--attacker", ATTACKER]
    command += ["--defender", DEFENDER, "--battles", "1", "--json", "--set", f"kernel={kernel}"]
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, cwd=ROOT, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = min(best, used)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=20_000_000)
    args = parser.parse_args()
    numba.set_num_threads(1)
    prepared = OlympiaPrepared(simulator.inline_scenario("olympia", ATTACKER, DEFENDER).model)
    chunk = DEFAULT_CHUNK
    print(f"{processor()}; one thread, CPU time; load average {load_average()}")
    print(
        f"{'kernel':8} {'start-up s':>10} {'table ms':>9} {'kernel ns':>10} {'tally ns':>9} "
        f"{args.battles:,} battles, CPU s"
    )
    for kernel in ("skip", "chain"):
        prepared.run_matrix(7, 0, 64, kernel)  # compile or load, untimed
        build = cpu(lambda: build_chain(prepared.arrays)) if kernel == "chain" else 0.0
        per_battle = cpu(lambda k=kernel: prepared.run_matrix(7, 0, chunk, k)) / chunk
        matrix = prepared.run_matrix(7, 0, chunk, kernel)
        outcomes = {name: matrix[:, column] for name, column in prepared.columns.items()}
        Tally.of(outcomes)
        tally = cpu(lambda o=outcomes: Tally.of(o)) / chunk
        start = startup(kernel)
        total = start + build + args.battles * (per_battle + tally)
        print(
            f"{kernel:8} {start:10.2f} {build * 1e3:9.2f} {per_battle * 1e9:10.0f} "
            f"{tally * 1e9:9.0f} {total:13.2f}"
        )
    baseline.run(64)
    plain = cpu(lambda: baseline.run(chunk)) / chunk
    print(
        f"plain kernel (benchmarks/baseline.py): {plain * 1e9:.0f} ns a battle, "
        f"{args.battles * plain:.2f} CPU s for {args.battles:,} battles"
    )


if __name__ == "__main__":
    main()
