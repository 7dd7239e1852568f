"""Every bundled scenario's kernel in two checkouts, one thread, alternating processes:
``python benchmarks/tree_versions.py OLD [NEW] [--scenarios GLOB] [--processes N]``.

``OLD`` and ``NEW`` are folders holding a checkout of battle-odds (``git worktree add
/tmp/old 111fde0``); ``NEW`` defaults to this one. Each scenario runs in a process of its
own tree, started in that tree's folder with the folder first on the path, so that each
imports its own ``simulator`` and ``kernels`` (a script run from elsewhere would import
the installed package for both). Unlike benchmarks/kernel_versions.py, the two trees'
kernels need not share their signatures: each tree prepares its own arrays and runs its
own ``run_matrix``. The trees' processes run in turn, ``--processes`` times each; every
process runs each scenario's first ``--battles`` battles ``--rounds`` times after an
untimed first call (which compiles or loads the kernels) and keeps its fewest CPU
seconds. The table gives each tree's best and median of those per battle, their ratio,
and whether the two trees' outcome rows for the same seed and battles are identical (a
change that keeps the draws must keep them).

With ``--answer``, the Python side of a run instead: each round turns one kernel call's
rows (made once, untimed) into the run's answer, ``Tally.of(prepared.run(...))`` (the
outcome columns by name and their tally, what every chunk of ``battle-odds run`` costs
beside its kernel), and "same rows" compares the two trees' tallies.

    git worktree add /tmp/old 111fde0
    python benchmarks/tree_versions.py /tmp/old --processes 3 --rounds 3
    python benchmarks/tree_versions.py /tmp/old --answer --battles 131072 --rounds 20
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, processor  # noqa: E402


def child(pattern: str, rounds: int, count: int, answer: bool) -> None:
    """In a tree's folder: each scenario's fewest CPU seconds a battle and rows' digest
    (``answer``: of the answer made of the kernel's rows, and the tally's digest), one
    JSON line each."""
    sys.path.insert(0, os.getcwd())
    import numba

    numba.set_num_threads(1)
    import simulator
    from simulator.results.stats import Tally

    for path in sorted(Path().glob(pattern)):
        loaded = simulator.load_scenario(path)
        prepared = simulator.rulesets.get(loaded.ruleset).prepare(loaded.model)
        prepared.run_matrix(7, 0, 1000)  # compiles or loads the kernels
        if answer:
            rows = prepared.run_matrix(7, 0, count)
            prepared.run_matrix = lambda *_, rows=rows, **__: rows  # its rows, no kernel
            Tally.of(prepared.run(7, 0, count))  # compiles or loads the tally's kernel
        best = float("inf")
        for _ in range(rounds):
            started = time.process_time()
            if answer:
                tally = Tally.of(prepared.run(7, 0, count))
            else:
                out = prepared.run_matrix(7, 0, count)
            best = min(best, time.process_time() - started)
        made = json.dumps(tally.to_dict()).encode() if answer else out.tobytes()
        digest = hashlib.sha1(made).hexdigest()[:12]
        print(json.dumps({"scenario": str(path), "ns": best / count * 1e9, "rows": digest}))
        sys.stdout.flush()


def run_tree(
    tree: Path, pattern: str, rounds: int, count: int, answer: bool
) -> dict[str, dict[str, object]]:
    here = str(Path(__file__).resolve())
    done = subprocess.run(
        [sys.executable, here, "--child", pattern, str(rounds), str(count), str(int(answer))],
        cwd=tree, capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {line["scenario"]: line for line in lines}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="folder of the older checkout")
    parser.add_argument("new", type=Path, nargs="?", default=ROOT, help="(default: this one)")
    parser.add_argument("--scenarios", default="scenarios/*/*.toml", help="a glob in each tree")
    parser.add_argument("--processes", type=int, default=3, help="processes a tree (3)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds a process (3)")
    parser.add_argument("--battles", type=int, default=200_000, help="battles a round")
    parser.add_argument(
        "--answer", action="store_true", help="time the answer made of the rows, not the kernel"
    )
    args = parser.parse_args()
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for label, tree in trees.items():
        if not (tree / "simulator").is_dir():
            parser.error(f"{tree} ({label}) holds no battle-odds checkout (no simulator/)")
    print(f"# {command_line()}")
    print(f"# old {trees['old']}, new {trees['new']}")
    print(f"# processor {processor()}, one thread, load average {load_average()} (at start)")
    if args.answer:
        print("# the answer made of a kernel call's rows (Tally.of(prepared.run(...))), per battle")
    times: dict[tuple[str, str], list[float]] = {}
    digests: dict[str, set[object]] = {}  # a scenario's rows, both trees'
    interrupted = False
    try:
        for _ in range(args.processes):
            for label, tree in trees.items():
                found = run_tree(tree, args.scenarios, args.rounds, args.battles, args.answer)
                for scenario, line in found.items():
                    times.setdefault((label, scenario), []).append(float(line["ns"]))  # type: ignore[arg-type]
                    digests.setdefault(scenario, set()).add(line["rows"])
    except KeyboardInterrupt:  # the table of the processes that ended, marked partial
        interrupted = True
    print(f"# load average {load_average()} (at end)\n")
    print("| scenario | old ns/battle (best, median) | new | new/old, best | median | same rows |")
    print("|---|---:|---:|---:|---:|---|")
    for scenario, found_rows in sorted(digests.items()):
        old, new = times.get(("old", scenario)), times.get(("new", scenario))
        if not old or not new:
            print(f"| {scenario} | {'-' if not old else ''} | {'-' if not new else ''} | | | |")
            continue
        best = min(new) / min(old)
        median = statistics.median(new) / statistics.median(old)
        same = "yes" if len(found_rows) == 1 else "NO"
        print(
            f"| {scenario} | {min(old):,.1f}, {statistics.median(old):,.1f} "
            f"| {min(new):,.1f}, {statistics.median(new):,.1f} "
            f"| {best:.3f}x | {median:.3f}x | {same} |"
        )
    if interrupted:
        print("\ninterrupted (Ctrl-C): partial, the processes that ended only", flush=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
