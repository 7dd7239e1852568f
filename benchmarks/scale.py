"""Throughput of one process against a local Dask cluster, and the cost of a chunk.

    python benchmarks/scale.py [--battles N]

Prints a Markdown table (the figures in docs/scale.md). Compile time is
excluded: every configuration runs a small warm-up first.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import simulator
from simulator.running.distributed import Cluster, connect

SCENARIO = Path(__file__).parent.parent / "scenarios/olympia/knights_vs_pikemen.toml"


def timed(
    scenario: simulator.Scenario, battles: int, chunk: int, executor: Cluster | None
) -> float:
    simulator.simulate(scenario, 2_000, seed=1, chunk=1_000, keep_battles=False, executor=executor)
    started = time.perf_counter()
    simulator.simulate(
        scenario, battles, seed=1, chunk=chunk, keep_battles=False, executor=executor
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=4_000_000)
    args = parser.parse_args()
    scenario = simulator.load_scenario(SCENARIO)
    n = args.battles
    small_chunk, large_chunk = 2_000, 1 << 17
    rows = []
    local_large = timed(scenario, n, large_chunk, None)
    local_small = timed(scenario, n, small_chunk, None)
    rows.append(("one process (2 threads)", local_large, local_small))
    started = time.perf_counter()
    with connect("local:2") as client:
        startup = time.perf_counter() - started
        executor = Cluster(client)
        dask_large = timed(scenario, n, large_chunk, executor)
        dask_small = timed(scenario, n, small_chunk, executor)
    rows.append(("local Dask cluster, 2 workers x 1 thread", dask_large, dask_small))
    print(f"{SCENARIO.name}, {n:,} battles; chunks of {large_chunk:,} and {small_chunk:,}\n")
    print("| where | battles/s | seconds | overhead per chunk |")
    print("|---|---:|---:|---:|")
    for name, large, small in rows:
        extra_chunks = n / small_chunk - n / large_chunk
        per_chunk_ms = max(0.0, small - large) / extra_chunks * 1e3
        print(f"| {name} | {n / large:,.0f} | {large:.2f} | {per_chunk_ms:.2f} ms |")
    print(f"\nStarting the local cluster took {startup:.1f} s (once per command).")


if __name__ == "__main__":
    main()
