"""What the battle as it unfolds costs: ``python benchmarks/unfolding_cost.py [--battles N]``.

For one bundled scenario of each ruleset, on one thread: the processor seconds of the
run itself (``simulate``), of every step recorded (``--by-round``: a run stopped after
each step until every battle is decided) and of the state after step 3 alone
(``--after 3``), the best of ``--rounds`` each after an untimed warm-up, as a markdown
table of the run's time and the others' ratios to it (docs/unfolding.md). The three are
timed in turn within each round, so that a shared machine's load weighs on them alike;
``--scenarios`` picks some of them (``--scenarios blocks skirmish``).
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


def best_seconds(works: list[Callable[[], object]], rounds: int) -> list[float]:
    """Each work's fewest processor seconds over ``rounds`` rounds, the works timed in
    turn within each round."""
    best = [float("inf")] * len(works)
    for _ in range(rounds):
        for w, work in enumerate(works):
            started = time.process_time()
            work()
            best[w] = min(best[w], time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=20_000, help="battles a run (20,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (3)")
    parser.add_argument(
        "--scenarios", nargs="*", default=[], help="the scenarios whose name holds one of these"
    )
    args = parser.parse_args()
    print(f"# {command_line()}")
    print(f"# processor {processor()}, one thread, load average {load_average()} (at start)")
    rows = []
    for name, times in SCENARIOS.items():
        if args.scenarios and not any(part in name for part in args.scenarios):
            continue
        scenario = load_scenario(ROOT / "scenarios" / f"{name}.toml")
        n = args.battles * times
        simulate(scenario, 2_000, 1, threads=1)  # warm: compiled or loaded kernels
        run_steps(scenario, None, 1, 0, 200, threads=1)
        steps = run_steps(scenario, None, 1, 0, n, threads=1)
        run, every, after = best_seconds(
            [
                partial(simulate, scenario, n, 1, threads=1, keep_battles=False),
                partial(run_steps, scenario, None, 1, 0, n, threads=1),
                partial(run_steps, scenario, [], 1, 0, n, after=3, threads=1),
            ],
            args.rounds,
        )
        rows.append(
            [
                f"{name} ({n:,})",
                f"{run:.3f} s",
                f"{every / run:.2f}x ({len(steps.tally.steps)})",
                f"{after / run:.2f}x",
            ]
        )
    headers = ["scenario (battles)", "run", "`--by-round` (steps)", "`--after 3`"]
    print("\n".join(markdown_table(headers, rows)))
    print(f"# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
