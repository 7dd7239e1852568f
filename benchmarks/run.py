"""Olympia throughput benchmarks (issue 3): ``python benchmarks/run.py [--quick] [--write]``.

Measures, in one run:

* battles per second on the small / medium / large scenarios of benchmarks/scenarios/
  for the pure-Python reference (tests/reference/olympia.py), the strike kernel and the
  kill-skipping kernel, all threads; compile time measured separately (the kernels are
  compiled into a fresh, empty Numba cache first), and the ratio to the reference;
* a scaling table: seconds per battle against men per side, 10 .. 100,000;
* the cold start of ``battle-odds run`` on the medium scenario (10,000 battles): first
  with an empty Numba cache (compiles), then a second time (loads the cache).

``--write`` puts the tables, the command and the machine's load into docs/benchmarks.md.
The machine is shared: the load average is printed with the results, read it with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "benchmarks" / "scenarios"
DOC = ROOT / "docs" / "benchmarks.md"

# Compile into an empty cache so that compile time is measured, not a cache load.
_CACHE = tempfile.mkdtemp(prefix="battle-odds-bench-cache-")
os.environ["NUMBA_CACHE_DIR"] = _CACHE
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import simulator  # noqa: E402
from benchmarks import more_tables  # noqa: E402
from simulator.rulesets.olympia.prepare import OlympiaPrepared  # noqa: E402
from tests.reference import olympia as reference  # noqa: E402

KERNELS = ("strike", "skip")
#: Targets of issue 3 (2-core machine).
MEDIUM_VS_REFERENCE = 300
MEDIUM_BATTLES_PER_S = 1_000_000
LARGE_BATTLES_PER_S = 5_000
COLD_START_LIMIT_S = 2.0


def rate(run: Callable[[int], object], first: int, budget: float) -> tuple[float, int]:
    """Battles per second of ``run(count)``, doubling ``count`` until a run takes
    ``budget`` seconds (at least one battle)."""
    count = first
    while True:
        started = time.perf_counter()
        run(count)
        seconds = time.perf_counter() - started
        if seconds >= budget or count >= 1 << 26:
            return count / seconds, count
        count *= 2 if seconds > budget / 8 else 8


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def throughput(quick: bool, python_large: bool) -> tuple[list[str], dict[str, dict[str, float]]]:
    budget = 1.0 if quick else 3.0
    ref_budget = 2.0 if quick else 10.0
    rows = [
        "| scenario | men (att. / def.) | pure Python | strike kernel | skip kernel "
        "| auto picks | best / Python | compile strike | compile skip |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    found: dict[str, dict[str, float]] = {}
    for name in ("small", "medium", "large"):
        scenario = simulator.load_scenario(SCENARIOS / f"{name}.toml")
        battle = scenario.model
        prepared = OlympiaPrepared(battle)
        men = [
            sum(m.count for u in side.units for m in u.men) + len(side.units)
            for side in battle.sides
        ]
        compile_s = {}
        for kernel in KERNELS:
            started = time.perf_counter()
            prepared.run_matrix(1, 0, 1, kernel)
            compile_s[kernel] = time.perf_counter() - started
        speeds = {}
        for kernel in KERNELS:
            speeds[kernel], _ = rate(
                lambda n, k=kernel, p=prepared: p.run_matrix(7, 0, n, k), 64, budget
            )
        if name == "large" and not python_large:
            # One pure-Python battle of 19,000 men takes minutes: off unless asked for.
            speeds["python"] = float("nan")
        else:
            speeds["python"], _ = rate(
                lambda n, b=battle: reference.simulate(b, n, 7), 1, ref_budget
            )
        best = max(speeds["strike"], speeds["skip"])
        found[name] = {**speeds, "best": best, **{f"compile_{k}": v for k, v in compile_s.items()}}
        ratio = best / speeds["python"] if speeds["python"] == speeds["python"] else float("nan")
        rows.append(
            f"| {name} | {men[0]:,} / {men[1]:,} | {speeds['python']:,.1f} "
            f"| {speeds['strike']:,.0f} | {speeds['skip']:,.0f} | {prepared.kernel} "
            f"| {ratio:,.0f}x "
            f"| {compile_s['strike']:.1f} s | {compile_s['skip']:.1f} s |"
        )
        print(rows[-1], flush=True)
    return rows, found


def scaling(quick: bool) -> list[str]:
    rows = [
        "| men per side | strike kernel (s/battle) | skip kernel (s/battle) "
        "| strikes per battle | changes per battle |",
        "|---:|---:|---:|---:|---:|",
    ]
    sizes = (10, 100, 1_000, 10_000, 100_000)
    for men in sizes:
        half = men // 2
        army = f"noble, {half} soldier, {men - half - half // 5} pikeman, {half // 5} archer@1"
        scenario = simulator.inline_scenario("olympia", army, army)
        prepared = OlympiaPrepared(scenario.model)
        cells = []
        steps = 0.0
        for kernel in KERNELS:
            speed, _ = rate(
                lambda n, k=kernel, p=prepared: p.run_matrix(9, 0, n, k), 2, 0.5 if quick else 2.0
            )
            cells.append(f"{1 / speed:.3g}")
        out = prepared.run_matrix(9, 0, 4 if men >= 10_000 else 200, "skip")
        steps = float(out[:, prepared.columns["steps"]].mean())
        changes = float(
            sum(
                out[:, c].mean()
                for n, c in prepared.columns.items()
                if n.startswith(("casualties.", "nobles_wounded", "nobles_killed"))
            )
        )
        rows.append(f"| {men:,} | {cells[0]} | {cells[1]} | {steps:,.0f} | {changes:,.0f} |")
        print(rows[-1], flush=True)
    return rows


def cold_start() -> tuple[list[str], float, float]:
    exe = shutil.which("battle-odds") or f"{sys.executable} -m simulator.cli"
    cache = tempfile.mkdtemp(prefix="battle-odds-cold-")
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    command = [*exe.split(), "run", str(SCENARIOS / "medium.toml"), "-n", "10000", "--json"]
    times = []
    for _ in range(2):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    shutil.rmtree(cache, ignore_errors=True)
    rows = [
        "| `battle-odds run benchmarks/scenarios/medium.toml -n 10000` | wall time |",
        "|---|---:|",
        f"| first run (empty Numba cache: compiles) | {times[0]:.1f} s |",
        f"| second run (cache) | {times[1]:.1f} s |",
    ]
    for r in rows[2:]:
        print(r, flush=True)
    return rows, times[0], times[1]


def verdicts(found: dict[str, dict[str, float]], second: float) -> list[str]:
    med, large = found["medium"], found["large"]
    lines = []
    ratio = med["best"] / med["python"]
    lines.append(
        f"- medium vs pure Python: {ratio:,.0f}x (target {MEDIUM_VS_REFERENCE}x): "
        + ("met" if ratio >= MEDIUM_VS_REFERENCE else "NOT met")
    )
    lines.append(
        f"- medium: {med['best']:,.0f} battles/s (target {MEDIUM_BATTLES_PER_S:,}): "
        + (
            "met"
            if med["best"] >= MEDIUM_BATTLES_PER_S
            else f"NOT met, {MEDIUM_BATTLES_PER_S / med['best']:.1f}x short"
        )
    )
    lines.append(
        f"- large: {large['best']:,.0f} battles/s (target {LARGE_BATTLES_PER_S:,}): "
        + (
            "met"
            if large["best"] >= LARGE_BATTLES_PER_S
            else f"NOT met, {LARGE_BATTLES_PER_S / large['best']:.1f}x short"
        )
    )
    lines.append(
        f"- cold start, second run: {second:.1f} s "
        f"(target under {COLD_START_LIMIT_S:.0f} s): "
        + ("met" if second < COLD_START_LIMIT_S else "NOT met")
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Shorter timings.")
    parser.add_argument("--write", action="store_true", help=f"Write the results to {DOC}.")
    parser.add_argument("--skip-cold", action="store_true", help="Do not measure the cold start.")
    parser.add_argument(
        "--python-large",
        action="store_true",
        help="Also time the pure-Python reference on the large scenario (slow).",
    )
    args = parser.parse_args()
    import numba

    header = (
        f"{os.cpu_count()} cores, Numba {numba.__version__} with {numba.get_num_threads()} "
        f"threads, NumPy {np.__version__}, Python {sys.version.split()[0]}; "
        f"load average before: {load_average()}"
    )
    print(header, flush=True)
    table, found = throughput(args.quick, args.python_large)
    scale = scaling(args.quick)
    cold, _first, second = ([], float("nan"), float("nan")) if args.skip_cold else cold_start()
    verdict = verdicts(found, second)
    for line in verdict:
        print(line)
    print(f"load average after: {load_average()}")
    shutil.rmtree(_CACHE, ignore_errors=True)
    if args.write:
        command = "python benchmarks/run.py " + " ".join(sys.argv[1:])
        text = [
            "# Olympia benchmarks",
            "",
            f"Produced by `{command.strip()}` on {time.strftime('%Y-%m-%d')}.",
            "",
            f"Machine: {header}; after: {load_average()}.",
            "",
            "## Battles per second (all threads; compile time excluded, shown apart)",
            "",
            *table,
            "",
            "## Scaling: seconds per battle against men per side",
            "",
            "Each side: a noble, half soldiers, the rest pikemen with a fifth as many archers in "
            "the rear.",
            "",
            *scale,
            "",
        ]
        if cold:
            text += ["## Cold start", "", *cold, ""]
        text += ["## Targets", "", *verdict, ""]
        DOC.parent.mkdir(exist_ok=True)
        existing = DOC.read_text() if DOC.exists() else ""
        notes = existing.split("<!-- notes -->", 1)[1] if "<!-- notes -->" in existing else "\n"
        DOC.write_text("\n".join(text) + "\n<!-- notes -->" + notes)
        print(f"wrote {DOC}")
    more_tables.print_and_write(args.quick, DOC if args.write else None)


if __name__ == "__main__":
    main()
