"""How fast ``retreat`` finds a best retreat rule: ``python benchmarks/retreat.py``.

Issue 52's targets, warm (the kernels compiled and the first call made): the exact best
rule of knights_vs_pikemen's defender in at most 5 s; a simulated (Longstaff-Schwartz)
rule fitted on 200,000 battles (and valued on 200,000 fresh ones) of each bundled
scenario's attacker in at most 30 s on 2 cores. Types the scenario leaves unpriced
(blocks' blocks, a dragon) cost 1 each here. ``--paths N`` for a quicker look,
``--only TEXT`` for the scenarios whose path holds TEXT.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402
from benchmarks import common  # noqa: E402
from simulator.results.steps import men_brought  # noqa: E402
from simulator.scenario.scenario import prepare  # noqa: E402
from simulator.studies.retreat import best_retreat  # noqa: E402

EXACT_LIMIT = 5.0
SIMULATED_LIMIT = 30.0
PATHS = 200_000
SEED = 52


def unpriced_at_one(scenario: simulator.Scenario) -> dict[str, float]:
    """A price of 1 for each type or block the ruleset counts casualties of and the
    scenario leaves without a cost."""
    from simulator import rulesets
    from simulator.studies.machinery.armies import side_costs

    table = side_costs(rulesets.get(scenario.ruleset), scenario.data, None)
    counted = {name.split(".", 1)[1] for name in men_brought(prepare(scenario).column_bounds)}
    return {name: 1.0 for name in sorted(counted) if table.get(name) is None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=PATHS, help="training (and fresh) battles")
    parser.add_argument("--only", default="", help="scenarios whose path holds this text")
    args = parser.parse_args()
    print(f"# {common.command_line()}")
    print(f"Processor: {common.processor()}; load average before: {common.load_average()}")
    knights = simulator.load_scenario(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
    best_retreat(knights, "defender", method="exact")  # warm-up
    started = time.perf_counter()
    best_retreat(knights, "defender", method="exact")
    exact = time.perf_counter() - started
    verdict = "ok" if exact <= EXACT_LIMIT else "OVER"
    print(f"\nExact, knights_vs_pikemen (defender): {exact:.2f} s ({verdict}, target 5 s)\n")
    rows = []
    for path in sorted((ROOT / "scenarios").glob("*/*.toml")):
        if args.only not in str(path):
            continue
        scenario = simulator.load_scenario(path)
        costs = unpriced_at_one(scenario) or None
        kwargs = {"method": "simulated", "seed": SEED, "costs": costs}
        best_retreat(scenario, "attacker", paths=500, battles=500, **kwargs)  # type: ignore[arg-type]
        started = time.perf_counter()
        result = best_retreat(scenario, "attacker", paths=args.paths, battles=args.paths, **kwargs)  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
        a = result.answer  # type: ignore[union-attr]
        rows.append(
            [
                f"{path.parent.name}/{path.name}",
                f"{len(a.rule.dates)}",
                f"{a.value.value:.3f} ± {(a.value.high - a.value.low) / 2:.3f}",
                f"{a.gain_over_never.value:.3f} ± "
                f"{(a.gain_over_never.high - a.gain_over_never.low) / 2:.3f}",
                f"{seconds:.1f}",
                "ok" if seconds <= SIMULATED_LIMIT else "OVER",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    print()
    headers = ["scenario", "steps looked at", "value", "gain over never", "seconds", "30 s"]
    for line in common.markdown_table(headers, rows):
        print(line)
    print(f"\nLoad average after: {common.load_average()}")


if __name__ == "__main__":
    main()
