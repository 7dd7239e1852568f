"""What the state after every step costs a kernel that records it in one pass:
``python benchmarks/record_cost.py [SCENARIO ...] [--battles N] [--rounds R]``.

For each scenario (default: four of blocks'), on one thread: the processor seconds of a
plain run (``Prepared.run``), of every step by a run stopped after each
(``run_until`` per step, each fighting the battles again) and of every step in one pass
(``run_through``), the best of ``--rounds`` each after an untimed warm-up, as a markdown
table of the run's time and the others' ratios to it (docs/blocks.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor  # noqa: E402
from unfolding_cost import best_seconds  # noqa: E402

from simulator import load_scenario, rulesets  # noqa: E402

SCENARIOS = [
    f"scenarios/blocks/{name}.toml"
    for name in ("relief", "storm", "field_reserves", "siege_attrition")
]


def _every_step(run_until: Callable[..., object], n: int, steps: list[int]) -> None:
    for step in steps:
        run_until(1, 0, n, step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=SCENARIOS, help="scenario files")
    parser.add_argument("--battles", type=int, default=100_000, help="battles a run (100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (3)")
    args = parser.parse_args()
    numba.set_num_threads(1)
    print(f"# {command_line()}")
    print(f"# processor {processor()}, one thread, load average {load_average()} (at start)")
    rows = []
    for path in args.scenarios:
        scenario = load_scenario(ROOT / path)
        prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
        steps = list(range(1, (prepared.step_limit or 10) + 1))
        n = args.battles
        prepared.run(1, 0, 1000)  # compiled or loaded kernels, untimed
        prepared.run_through(1, 0, 1000, steps)
        run = best_seconds(partial(prepared.run, 1, 0, n), args.rounds)
        per_step = best_seconds(partial(_every_step, prepared.run_until, n, steps), args.rounds)
        one_pass = best_seconds(partial(prepared.run_through, 1, 0, n, steps), args.rounds)
        ratios = [f"{seconds / run:.2f}x" for seconds in (per_step, one_pass)]
        rows.append([f"{path} ({n:,}; {len(steps)} steps)", f"{run:.3f} s", *ratios])
    headers = ["scenario (battles; steps)", "run", "a run per step", "one pass"]
    print("\n".join(markdown_table(headers, rows)))
    print(f"# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
