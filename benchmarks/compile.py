"""Where a cold run's compile time goes: each function's compile seconds and count.

For every bundled ruleset and kernel path (olympia's chain and skip kernels and the walk
of the chain tables a scenario with ranges shares, age_of_gods, blocks, confrontation,
skirmish) it runs ``battle-odds run SCENARIO`` in a fresh
interpreter with an empty ``NUMBA_CACHE_DIR``, so everything the run calls is compiled,
and records Numba's compile events (``numba.core.event``, kind ``numba:compile``). A
function compiled inside another's compile (an inlined or called helper) is timed apart:
the seconds shown are each function's own, its callees' compiles subtracted, so the column
adds up to the run's compile time. ``count`` is how many signatures of the function were
compiled: more than one is a duplicate to look at (a literal argument, another layout).

    python benchmarks/compile.py                    # every kernel path
    python benchmarks/compile.py olympia-chain -n 30  # one path, 30 rows
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, processor

ROOT = Path(__file__).resolve().parent.parent

#: Kernel path -> the bundled scenario whose run takes it.
PATHS = {
    "olympia-chain": "scenarios/olympia/knights_vs_pikemen.toml",
    "olympia-skip": "scenarios/olympia/castle_siege.toml",
    # Ranges on counts, break points and the weather: the shared chain tables' walk.
    "olympia-ranges": "examples/unknowns/scouted_pike_wall.toml",
    "age_of_gods": "scenarios/age_of_gods/archers_in_rain.toml",
    "blocks": "scenarios/blocks/field_battle.toml",
    "confrontation": "scenarios/confrontation/attack.toml",
    "skirmish": "scenarios/skirmish/archers_and_healer.toml",
}

#: The child: run the command in this interpreter, recording compile events (CPU seconds
#: of the compiling thread, so that other processes' load does not count).
CHILD = """
import json, sys, threading, time
from collections import defaultdict
import numba.core.event as event

spans = []  # (qualified name, seconds inclusive, seconds of callees' compiles)
stacks = defaultdict(list)

class Recorder(event.Listener):
    def on_start(self, ev):
        stacks[threading.get_ident()].append([time.thread_time(), 0.0])
    def on_end(self, ev):
        stack = stacks[threading.get_ident()]
        began, inner = stack.pop()
        spent = time.thread_time() - began
        if stack:
            stack[-1][1] += spent
        func = ev.data["dispatcher"].py_func
        name = f"{func.__module__}.{func.__qualname__}"
        spans.append((name, spent, inner, str(ev.data["args"])))

event.register("numba:compile", Recorder())
sys.argv = ["battle-odds", *json.loads(sys.argv[1])]
from simulator.cli import app  # not main(), which ends the process at once
try:
    app()
except SystemExit as stop:
    assert not stop.code, stop.code
print("COMPILE-EVENTS " + json.dumps(spans), file=sys.stderr)
"""


def profile(scenario: str, battles: int) -> dict[str, Any]:
    """One cold run of ``scenario``: wall and CPU seconds, and the compile events."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        # Every function compiled in the run's own process, none aside (kernels/_aside.py),
        # so that each one's compile is timed here.
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, BATTLE_ODDS_COMPILE_ASIDE="0")
        args = ["run", str(ROOT / scenario), "--json", "--battles", str(battles)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{scenario}: the run failed:\n{done.stderr}")
    line = next(x for x in done.stderr.splitlines() if x.startswith("COMPILE-EVENTS "))
    spans = json.loads(line.split(" ", 1)[1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "spans": spans}


def by_function(spans: list[list[Any]]) -> list[tuple[str, float, int]]:
    """(function, own compile seconds, signatures compiled), most seconds first."""
    own: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for name, spent, inner, _signature in spans:
        own[name] += spent - inner
        count[name] += 1
    return sorted(((n, own[n], count[n]) for n in own), key=lambda row: -row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help=f"kernel paths: {', '.join(PATHS)} (all)")
    parser.add_argument("-n", "--rows", type=int, default=12, help="functions shown per path")
    parser.add_argument("--battles", type=int, default=1000, help="battles of each run")
    parser.add_argument("--json", type=Path, help="also write every event to this file")
    options = parser.parse_args()
    for path in options.paths:
        if path not in PATHS:
            parser.error(f"unknown kernel path {path!r}: expected one of {', '.join(PATHS)}")
    print(f"# {command_line()}")
    print(f"# processor {processor()}, load average {load_average()} (at start)")
    everything = {}
    for path in options.paths or list(PATHS):
        run = profile(PATHS[path], options.battles)
        everything[path] = run
        rows = by_function(run["spans"])
        compiling = sum(seconds for _, seconds, _ in rows)
        signatures = sum(n for _, _, n in rows)
        print(
            f"\n{path} ({PATHS[path]}): wall {run['wall']:.1f} s, CPU {run['cpu']:.1f} s, "
            f"compiling {compiling:.1f} s: {signatures} signatures of {len(rows)} functions"
        )
        for name, seconds, n in rows[: options.rows]:
            print(f"  {seconds:7.2f} s  {n:3d}  {name}")
    print(f"\n# load average {load_average()} (at end)")
    if options.json is not None:
        options.json.write_text(json.dumps(everything, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
