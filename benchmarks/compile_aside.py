"""A cold first run with its battle compiled aside (kernels/_aside.py) and without, in turn:
``python benchmarks/compile_aside.py [--only castle_siege,best,worth] [--rounds N]``.

Each documented command that runs battles (benchmarks/latency.py's list, the notebook
cell and ``warm`` left out) runs on an empty ``NUMBA_CACHE_DIR`` twice a round: with the
second process (``BATTLE_ODDS_COMPILE_ASIDE=1``, as a user's run on two cores) and
without (``=0``, everything compiled in the run's process). Printed for each: wall
seconds, CPU seconds of the run and its second process, and the critical path in CPU
seconds: the run's CPU until it waited for the second process or the second process's
CPU from its start, whichever is longer, plus the run's CPU after the wait. On a shared
machine wall time grows with the other load; the critical path is what an idle 2-core
machine's wall time comes to (each process on a core of its own), so compare those.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor
from latency import documented

ROOT = Path(__file__).resolve().parent.parent

#: The child: the command in this interpreter, the CPU seconds at the aside's start and
#: wait and the second process's (RUSAGE_CHILDREN once it is waited for) reported.
CHILD = """
import json, resource, sys, time
import kernels._aside as aside
marks = {}
start, wait = aside.start, aside.Aside.wait
def started(*args, **kwargs):
    found = start(*args, **kwargs)
    if found is not None and "start" not in marks:
        marks["start"] = time.process_time()
    return found
def waited(self, *args, **kwargs):
    marks.setdefault("wait", time.process_time())
    try:
        return wait(self, *args, **kwargs)
    finally:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        marks["second"] = used.ru_utime + used.ru_stime
        marks["after"] = time.process_time()
aside.start, aside.Aside.wait = started, waited
sys.argv = ["battle-odds", *json.loads(sys.argv[1])]
from simulator.cli import app  # not main(), which ends the process at once
try:
    app()
except SystemExit as stop:
    assert stop.code in (None, 0, 1), stop.code
marks["end"] = time.process_time()
print("ASIDE-MARKS " + json.dumps(marks), file=sys.stderr)
"""


def cold(args: list[str], aside: bool) -> dict[str, float]:
    """One run of ``args`` on an empty cache: wall, CPU in all and the critical path."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, BATTLE_ODDS_COMPILE_ASIDE=str(int(aside)))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(args)],
            capture_output=True, text=True, env=env, cwd=ROOT, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - began
    line = [x for x in done.stderr.splitlines() if x.startswith("ASIDE-MARKS ")]
    if not line:
        raise SystemExit(f"{args}: failed ({done.returncode}):\n{done.stderr[-2000:]}")
    m = json.loads(line[0].split(" ", 1)[1])
    if "wait" in m:
        path = max(m["wait"], m.get("start", 0.0) + m["second"]) + m["end"] - m["after"]
        cpu = m["end"] + m["second"]
    else:
        path = cpu = m["end"]
    return {"wall": wall, "cpu": cpu, "path": path, "aside": float("wait" in m)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="commands whose names contain these")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each, in turn")
    options = parser.parse_args()
    wanted = [w for w in options.only.split(",") if w]
    commands = {
        name: args
        for name, args in documented().items()
        if name not in ("notebook", "warm") and (not wanted or any(w in name for w in wanted))
    }
    print(f"# {command_line()}")
    print(f"# processor {processor()}, load average {load_average()} (at start)")
    rows = []
    for name, args in commands.items():
        best: dict[bool, dict[str, float]] = {}
        for _ in range(options.rounds):
            for aside in (True, False):
                got = cold(args, aside)
                if aside not in best or got["path"] < best[aside]["path"]:
                    best[aside] = got
        on, off = best[True], best[False]
        second = "yes" if on["aside"] else "no (nothing to compile aside)"
        rows.append([
            name, second, f"{on['wall']:.1f}", f"{on['cpu']:.1f}", f"{on['path']:.1f}",
            f"{off['wall']:.1f}", f"{off['cpu']:.1f}",
        ])  # fmt: skip
        print(f"{name}: {rows[-1][1:]}", flush=True)
    header = [
        "first run on an empty cache", "compiled aside", "wall s", "CPU s",
        "critical path, CPU s", "alone: wall s", "alone: CPU s (its critical path)",
    ]  # fmt: skip
    print("\n".join(markdown_table(header, rows)))
    print(f"# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
