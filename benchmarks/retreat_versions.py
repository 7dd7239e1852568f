"""A simulated retreat rule's time in two checkouts, alternating processes:
``python benchmarks/retreat_versions.py OLD [NEW] [--only TEXT] [--paths N] [--rounds R]``.

``OLD`` and ``NEW`` are folders holding a checkout of battle-odds (``git archive main |
tar -x -C /tmp/old``); ``NEW`` defaults to this one. For each bundled scenario whose path
holds ``--only`` (default: olympia's castle siege and archers_in_rain, the slowest), each
round runs one process in each tree in turn, started in that tree's folder with the
folder first on the path (each imports its own ``simulator`` and ``kernels``): a
warm-up of 500 paths, then the attacker's rule fitted on ``--paths`` battles and valued
on as many fresh ones (seed 52, types without a price at 1), timed. On a shared machine
compare the ratios of processes run one after the other, not the seconds.

    git archive main | tar -x -C /tmp/old
    python benchmarks/retreat_versions.py /tmp/old --rounds 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, ".")
import simulator
from simulator.studies.retreat import best_retreat
from benchmarks.retreat import unpriced_at_one
scenario = simulator.load_scenario(sys.argv[1])
kwargs = {"method": "simulated", "seed": 52, "costs": unpriced_at_one(scenario) or None}
best_retreat(scenario, "attacker", paths=500, battles=500, **kwargs)
started = time.perf_counter()
paths = int(sys.argv[2])
a = best_retreat(scenario, "attacker", paths=paths, battles=paths, **kwargs).answer
seconds = time.perf_counter() - started
half = (a.value.high - a.value.low) / 2
print(json.dumps({"seconds": seconds, "value": a.value.value, "half": half}))
"""


def timed(tree: Path, scenario: str, paths: int) -> dict[str, float]:
    """One process in ``tree``: its seconds and the rule's value."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, scenario, str(paths)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a checkout to compare with")
    parser.add_argument("new", type=Path, nargs="?", default=ROOT, help="default: this one")
    parser.add_argument("--only", default="", help="scenarios whose path holds this text")
    parser.add_argument("--paths", type=int, default=200_000, help="training (and fresh) battles")
    parser.add_argument("--rounds", type=int, default=1, help="processes per tree and scenario")
    args = parser.parse_args()
    print(f"# {command_line()}")
    print(f"Processor: {processor()}; load average before: {load_average()}")
    found = sorted(p.relative_to(ROOT) for p in (ROOT / "scenarios").glob("*/*.toml"))
    chosen = (
        [str(p) for p in found if args.only in str(p)]
        if args.only
        else [
            "scenarios/olympia/castle_siege.toml",
            "scenarios/olympia/archers_in_rain.toml",
        ]
    )
    rows = []
    for scenario in chosen:
        for _ in range(args.rounds):
            old = timed(args.old, scenario, args.paths)
            new = timed(args.new, scenario, args.paths)
            rows.append(
                [
                    scenario,
                    f"{old['seconds']:.1f}",
                    f"{new['seconds']:.1f}",
                    f"{new['seconds'] / old['seconds']:.2f}",
                    f"{old['value']:.4f} / {new['value']:.4f} (± {new['half']:.4f})",
                    load_average().split(",")[0],
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    print()
    headers = ["scenario", "old s", "new s", "new / old", "value old / new", "load"]
    for line in markdown_table(headers, rows):
        print(line)
    print(f"\nLoad average after: {load_average()}")


if __name__ == "__main__":
    main()
