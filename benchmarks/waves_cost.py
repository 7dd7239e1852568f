"""What waves cost: ``python benchmarks/waves_cost.py [--battles N] [--rounds R]``.

On one thread, the processor seconds of a run of examples/waves/raids_on_a_gate.toml (or
``--example``: examples/waves/tower_in_three_assaults.toml, olympia's) and
of the same scenario without its waves (its first wave's fights alone), the best of
``--rounds`` each after an untimed warm-up, measured alternately; with the fights a
battle fought on average, the time of one fight in the chain against one plain battle's
(docs/unfolding.md, "Waves").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, processor  # noqa: E402

from simulator import load_scenario  # noqa: E402
from simulator.errors import Source  # noqa: E402
from simulator.running.runner import simulate  # noqa: E402
from simulator.scenario.scenario import from_data  # noqa: E402

EXAMPLE = ROOT / "examples" / "waves" / "raids_on_a_gate.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=100_000, help="battles a run (100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (3)")
    parser.add_argument(
        "--example", type=Path, default=EXAMPLE, help="a scenario with waves (raids_on_a_gate)"
    )
    args = parser.parse_args()
    print(f"# {command_line()}")
    print(f"# processor {processor()}, one thread, load average {load_average()} (at start)")
    waves = load_scenario(args.example)
    data = tomllib.loads(args.example.read_text(encoding="utf-8"))
    for side in ("attacker", "defender"):
        data.get(side, {}).pop("waves", None)
    plain = from_data(data, Source("the first wave alone"))
    best = {"plain": float("inf"), "waves": float("inf")}
    fights = 0.0
    for scenario in (plain, waves):
        simulate(scenario, 2_000, 1, threads=1)  # warm: compiled or loaded kernels
    for _ in range(args.rounds):
        for name, scenario in (("plain", plain), ("waves", waves)):
            started = time.process_time()
            result = simulate(scenario, args.battles, 1, threads=1, keep_battles=False)
            best[name] = min(best[name], time.process_time() - started)
            if name == "waves":
                fights = result.tally.columns["waves_fought"].mean()
    ratio = best["waves"] / best["plain"]
    print(
        f"battles {args.battles:,}: without waves {best['plain']:.3f} s, with waves "
        f"{best['waves']:.3f} s ({ratio:.2f}x), {fights:.3f} fights a battle: "
        f"a fight in the chain costs {ratio / fights:.2f}x a plain battle"
    )


if __name__ == "__main__":
    main()
