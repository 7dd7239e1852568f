"""How long a person waits: whole ``battle-odds`` processes, warm and cold, in one run.

    python benchmarks/latency.py [--repeats N] [--no-cold]

* the floor: ``python -c "import numpy, numba, typer, rich"``, what any process of a
  typer command running Numba kernels pays before it does anything;
* warm (the kernels in Numba's cache): ``battle-odds odds --attacker "noble, 20 soldier"
  --defender "noble, 15 pikeman" -n 100000 --json`` (target: at most 1.5 times the floor),
  ``battle-odds --version`` and ``battle-odds --help`` (target: at most 0.3 s);
* cold (an empty ``NUMBA_CACHE_DIR``): ``battle-odds run`` of each ruleset's first bundled
  scenario, everything it runs compiled (target: at most 25 s on a 2-core machine), and
  how long after the start its compile notice came (target: within 1 s).

Warm figures are the median of ``--repeats`` runs (after one untimed run that fills the
cache); cold ones are one run each. Wall seconds (what a person waits) and the CPU
seconds of the process (user + system, which the machine's other load inflates less). The
processor, the cores and the load average are printed with them: on a shared machine
compare figures of one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor

ROOT = Path(__file__).resolve().parent.parent
ODDS = ["odds", "--attacker", "noble, 20 soldier", "--defender", "noble, 15 pikeman"]
ODDS += ["-n", "100000", "--json"]
FLOOR = [sys.executable, "-c", "import numpy, numba, typer, rich"]
NOTICE = "compiling the"


def battle_odds() -> list[str]:
    """The installed ``battle-odds`` command (this interpreter's), as a person runs it."""
    beside = Path(sys.executable).parent / "battle-odds"
    found = str(beside) if beside.exists() else shutil.which("battle-odds")
    if found is None:
        raise SystemExit("battle-odds is not installed: pip install -e . first")
    return [found]


#: The children's environment: a person's Python writes its modules' bytecode once and
#: reads it after; a machine that sets PYTHONDONTWRITEBYTECODE (this project's CI sandbox
#: does) compiles every module of the package from source in every process, about 0.07 s
#: of a warm query that no user pays. main() says when it took the setting out.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and seconds to the compile notice (nan: none) of one
    process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=CHILD_ENV if env is None else env,
    )
    noticed = [float("nan")]
    lines: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if NOTICE in line and noticed[0] != noticed[0]:
                noticed[0] = time.perf_counter() - started
            lines.append(line)

    reader = threading.Thread(target=read)
    reader.start()
    code = process.wait()
    wall = time.perf_counter() - started
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed ({code}):\n{''.join(lines)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, noticed[0]


def median_of(command: list[str], repeats: int) -> tuple[float, float]:
    runs = [timed(command)[:2] for _ in range(repeats)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def medians_in_turn(commands: list[list[str]], repeats: int) -> list[tuple[float, float]]:
    """Each command's median wall and CPU seconds, the commands run in turn (a, b, a, b,
    ...) so that a change in the machine's load falls on all of them alike."""
    runs: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(repeats):
        for mine, command in zip(runs, commands, strict=True):
            mine.append(timed(command)[:2])
    return [
        (statistics.median(w for w, _ in mine), statistics.median(c for _, c in mine))
        for mine in runs
    ]


def first_scenarios() -> list[Path]:
    """Each ruleset's first bundled scenario (by name)."""
    return [sorted(folder.glob("*.toml"))[0] for folder in sorted((ROOT / "scenarios").iterdir())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each warm figure")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold runs")
    options = parser.parse_args()
    command = battle_odds()
    print(f"# {command_line()}")
    print(
        f"# processor {processor()}, {os.cpu_count()} cores, "
        f"load average {load_average()} (at start)"
    )
    if "PYTHONDONTWRITEBYTECODE" in os.environ:
        print("# PYTHONDONTWRITEBYTECODE is set here: the commands timed run without it")
    timed([*command, *ODDS])  # fills the cache (and the bytecode), untimed
    floor, odds = medians_in_turn([FLOOR, [*command, *ODDS]], options.repeats)
    rows = []

    def row(what: str, figures: tuple[float, float], target: str) -> None:
        wall, cpu = figures
        ratios = [f"{wall / floor[0]:.2f}x", f"{cpu / floor[1]:.2f}x"]
        rows.append([what, f"{wall:.2f}", f"{cpu:.2f}", *ratios, target])

    row('`python -c "import numpy, numba, typer, rich"` (the floor)', floor, "")
    row("`battle-odds odds ... -n 100000 --json`, warm", odds, "at most 1.5x")
    row(
        "`battle-odds --version`",
        median_of([*command, "--version"], options.repeats),
        "at most 0.3 s",
    )
    row("`battle-odds --help`", median_of([*command, "--help"], options.repeats), "at most 0.3 s")
    print()
    headers = ["warm", "wall s", "CPU s", "wall / floor", "CPU / floor", "target"]
    print("\n".join(markdown_table(headers, rows)))
    if options.no_cold:
        return
    cold = []
    for scenario in first_scenarios():
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            env = dict(CHILD_ENV, NUMBA_CACHE_DIR=cache)
            wall, cpu, noticed = timed([*command, "run", str(scenario.relative_to(ROOT))], env)
        notice = "none" if noticed != noticed else f"{noticed:.2f}"
        cold.append([f"`{scenario.relative_to(ROOT)}`", f"{wall:.1f}", f"{cpu:.1f}", notice])
    print()
    headers = ["cold: `battle-odds run`", "wall s", "CPU s", "notice after s"]
    print("\n".join(markdown_table(headers, cold)))
    print(f"\n# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
