"""What the battle as it unfolds costs: ``python benchmarks/unfolding_cost.py [--battles N]``.

For one bundled scenario of each ruleset, on one thread: the processor seconds of the
run itself (``simulate``), of every step recorded (``--by-round``: a run stopped after
each step until every battle is decided) and of the state after step 3 alone
(``--after 3``), the best of ``--rounds`` each after an untimed warm-up, as a markdown
table of the run's time and the others' ratios to it (docs/unfolding.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor  # noqa: E402

from simulator import load_scenario  # noqa: E402
from simulator.running.runner import simulate  # noqa: E402
from simulator.running.unfolding import run_steps  # noqa: E402

#: One scenario a ruleset, and how many of the battles asked it runs (blocks' are short).
SCENARIOS = {
    "confrontation/attack": 1,
    "skirmish/cavalry_charge": 1,
    "blocks/relief": 5,
    "age_of_gods/pikemen_vs_knights": 1,
    "olympia/knights_vs_pikemen": 1,
}


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=20_000, help="battles a run (20,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (3)")
    args = parser.parse_args()
    print(f"# {command_line()}")
    print(f"# processor {processor()}, one thread, load average {load_average()} (at start)")
    rows = []
    for name, times in SCENARIOS.items():
        scenario = load_scenario(ROOT / "scenarios" / f"{name}.toml")
        n = args.battles * times
        simulate(scenario, 2_000, 1, threads=1)  # warm: compiled or loaded kernels
        run_steps(scenario, None, 1, 0, 200, threads=1)
        run = best_seconds(
            partial(simulate, scenario, n, 1, threads=1, keep_battles=False), args.rounds
        )
        steps = run_steps(scenario, None, 1, 0, n, threads=1)
        every = best_seconds(partial(run_steps, scenario, None, 1, 0, n, threads=1), args.rounds)
        after = best_seconds(
            partial(run_steps, scenario, [], 1, 0, n, after=3, threads=1), args.rounds
        )
        rows.append(
            [
                f"{name} ({n:,})",
                f"{run:.3f} s",
                f"{every / run:.1f}x ({len(steps.tally.steps)})",
                f"{after / run:.2f}x",
            ]
        )
    headers = ["scenario (battles)", "run", "`--by-round` (steps)", "`--after 3`"]
    print("\n".join(markdown_table(headers, rows)))
    print(f"# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
