"""How long a person waits: whole ``battle-odds`` processes, warm and cold, in one run.

    python benchmarks/latency.py [--repeats N] [--no-cold] [--no-serve] [--only best,serve,...]
    python benchmarks/latency.py --notices   # each first run stopped at its compile notice
    python benchmarks/latency.py --every-scenario --no-serve   # run of every bundled scenario, cold

* the floor: ``python -c "import numpy, numba, typer, rich"``, what any process of a
  typer command running Numba kernels pays before it does anything;
* warm (the kernels in Numba's cache): ``battle-odds odds --attacker "noble, 20 soldier"
  --defender "noble, 15 pikeman" -n 100000 --json`` (target: at most 1.5 times the floor),
  ``battle-odds --version`` and ``battle-odds --help`` (target: at most 0.3 s);
* cold (an empty ``NUMBA_CACHE_DIR``): the first run of every command README and docs/
  show (:data:`DOCUMENTED`: ``run`` of each ruleset's first bundled scenario and of
  castle_siege, exact, best, prices, matrix, meta, worth, sweep, sensitivity, compare,
  regress, the first notebook cell that runs battles, ``warm``), everything it runs compiled,
  its first answer (target: within 25 s on a 2-core machine; the whole run, except for a
  command that prints its answer as it goes, :data:`STREAMED`: regress's first scenario's
  verdict), how long after the start its compile notice came (target: within 1 s), and
  the same command again warm, its kernels in the cache the cold run filled;
* ``battle-odds serve``, cold and then warm: seconds until it listens (target: within 5 s
  on an empty cache), what its page says then of the rulesets still loading or compiling,
  seconds until its default ruleset (olympia) and every ruleset is ready (each compiled in
  turn after it listens), and the page's example question once olympia is ready (answered
  at once while the others compile).

Warm figures are the median of ``--repeats`` runs (after one untimed run that fills the
cache); cold ones are one run each. Wall seconds (what a person waits) and the CPU
seconds of the process (user + system, which the machine's other load inflates less),
with those of the second process that compiles olympia's skip battle beside it on a cold
cache (kernels/_aside.py): there an idle machine's wall time is below the CPU seconds,
and ``python benchmarks/compile_aside.py`` gives the critical path. The
processor, the cores and the load average are printed with them: on a shared machine
compare figures of one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor

ROOT = Path(__file__).resolve().parent.parent
ODDS = ["odds", "--attacker", "noble, 20 soldier", "--defender", "noble, 15 pikeman"]
ODDS += ["-n", "100000", "--json"]
FLOOR = [sys.executable, "-c", "import numpy, numba, typer, rich"]
#: What a first run says as it starts compiling (``warm`` says what it compiles first).
NOTICE = ("compiling the", "battle-odds warm:")


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


def _child(
    command: list[str], env: dict[str, str], cwd: Path, stdout: int = subprocess.DEVNULL
) -> subprocess.Popen[str]:
    """``command`` started, its standard error read by the caller (for the notice)."""
    return subprocess.Popen(
        command, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
    )


#: The commands whose answer streams, by their first argument: the pattern of an answer's
#: line on standard output (regress: a scenario's verdict as it is checked). The first
#: such line is the command's first answer; any other command's is its whole run.
STREAMED = {"regress": re.compile(r"^\S+: (ok|moved|undecided|changed|new|missing) \(")}


def timed(
    command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds, and wall and the process's CPU seconds at its compile
    notice (nan: none) of one process; it must succeed (regress: exit 1, a number moved,
    is an answer too)."""
    return timed_with_first(command, env, cwd)[:4]


def timed_with_first(
    command: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, float, float, float, float, float]:
    """:func:`timed`'s figures, then the wall and the process's CPU seconds at its first
    answer (:data:`STREAMED`; the whole run's for a command that does not stream)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    streams = next((STREAMED[a] for a in command if a in STREAMED), None)
    process = _child(
        command,
        CHILD_ENV if env is None else env,
        cwd,
        subprocess.DEVNULL if streams is None else subprocess.PIPE,
    )
    noticed = [float("nan"), float("nan")]  # wall seconds, the process's CPU seconds
    answered = [float("nan"), float("nan")]
    lines: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if any(n in line for n in NOTICE) and noticed[0] != noticed[0]:
                noticed[:] = [time.perf_counter() - started, _processor_seconds(process.pid)]
            answer(line)  # regress --json says its verdicts on stderr
            lines.append(line)

    def answer(line: str) -> None:
        if streams is not None and streams.match(line) and answered[0] != answered[0]:
            answered[:] = [time.perf_counter() - started, _processor_seconds(process.pid)]

    def read_answers() -> None:
        assert process.stdout is not None and streams is not None
        for line in process.stdout:
            answer(line)

    readers = [threading.Thread(target=read)]
    if streams is not None:
        readers.append(threading.Thread(target=read_answers))
    for reader in readers:
        reader.start()
    code = process.wait()
    wall = time.perf_counter() - started
    for reader in readers:
        reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code not in (0, 1) or (code == 1 and "regress" not in command):
        raise SystemExit(f"{' '.join(command)} failed ({code}):\n{''.join(lines)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    notice_wall, notice_cpu = noticed
    if streams is None:
        answered = [wall, cpu]
    return wall, cpu, notice_wall, notice_cpu, answered[0], answered[1]


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


def every_scenario() -> dict[str, list[str]]:
    """``run`` of every bundled scenario (``--every-scenario``): the kernel paths a
    ruleset's first scenario does not take (olympia's chain and skip kernels, blocks'
    sieges, a skirmish with ranges) have their first answers too."""
    found = sorted((ROOT / "scenarios").glob("*/*.toml"))
    return {f"run {p.relative_to(ROOT)}": ["run", str(p.relative_to(ROOT))] for p in found}


def first_scenarios() -> list[Path]:
    """Each ruleset's first bundled scenario (by name)."""
    return [sorted(folder.glob("*.toml"))[0] for folder in sorted((ROOT / "scenarios").iterdir())]


KNIGHTS = "scenarios/olympia/knights_vs_pikemen.toml"
#: The notebooks' first cell that runs battles (balance_pass's second cell, after the
#: first's imports), as a script run from notebooks/.
NOTEBOOK = (
    "import simulator\n"
    "scenario = simulator.load_scenario('../scenarios/olympia/knights_vs_pikemen.toml')\n"
    "result = simulator.simulate(scenario, 20000, 20261121)\n"
    "print(result.win('attacker'))\n"
)


def documented() -> dict[str, list[str]]:
    """Every command README and docs/ show a run of, by a short name: its arguments (a
    ``python`` list for the notebook cell, else ``battle-odds`` arguments)."""
    found = {
        f"run {p.relative_to(ROOT)}": ["run", str(p.relative_to(ROOT))] for p in first_scenarios()
    }
    found["run scenarios/olympia/castle_siege.toml"] = [
        "run",
        "scenarios/olympia/castle_siege.toml",
    ]
    found.update({
        "exact": ["exact", KNIGHTS],
        "best": [
            "best", KNIGHTS, "--budget", "12", "--types", "soldier,archer,swordsman,knight",
            "--max", "knight=4", "--seed", "17",
        ],
        "prices": ["prices", "--ruleset", "olympia"],
        "matrix": ["matrix", "--ruleset", "blocks", "--budget", "3", "--json"],
        "meta": ["meta", "--ruleset", "olympia", "--budget", "20"],
        "worth": ["worth", KNIGHTS, "--add", "1 knight", "--in", "soldier"],
        "sweep": [
            "sweep", KNIGHTS, "--vary", "attacker.knight=1..40", "--target", "0.5",
            "-n", "20000",
        ],
        "sensitivity": ["sensitivity", KNIGHTS],
        "compare": ["compare", KNIGHTS, "scenarios/olympia/knights_in_swamp.toml"],
        "regress": ["regress", "scenarios/", "--baseline", "balance.toml"],
        "notebook": ["python", "-c", NOTEBOOK],
        "warm": ["warm"],
    })  # fmt: skip
    return found


def command_of(command: list[str], args: list[str]) -> tuple[list[str], Path]:
    """The process of a documented command's arguments (``python``: the notebook's cell,
    run from notebooks/), and the folder it runs in."""
    if args[0] == "python":
        return [sys.executable, *args[1:]], ROOT / "notebooks"
    return [*command, *args], ROOT


def cold_and_warm(command: list[str], args: list[str]) -> list[str]:
    """A command's first run on an empty Numba cache, then its run again warm (the
    kernels in the cache the first filled): the table's row."""
    line, where = command_of(command, args)
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        env = dict(CHILD_ENV, NUMBA_CACHE_DIR=cache)
        wall, cpu, noticed, notice_cpu, first, first_cpu = timed_with_first(line, env, where)
        warm_wall, warm_cpu, _, _ = timed(line, env, where)
    notice = "none" if noticed != noticed else f"{noticed:.2f} ({notice_cpu:.2f})"
    said_in_time = noticed == noticed and noticed <= 1
    met = "met" if first <= 25 and said_in_time else "not met"
    if args == ["warm"]:
        # It answers nothing: it compiles every kernel path, minutes on an empty cache.
        met = "notice " + ("met" if said_in_time else "not met") + "; no answer to time"
    shown = " ".join(a if " " not in a and a else repr(a) for a in args[:6])
    shown += " ..." if len(args) > 6 else ""
    return [
        f"`{shown}`" if args[0] != "python" else "the first notebook cell that runs battles",
        f"{first:.1f} ({first_cpu:.1f})", f"{wall:.1f}", f"{cpu:.1f}", notice,
        f"{warm_wall:.2f}", f"{warm_cpu:.2f}", met,
    ]  # fmt: skip


#: The page's example question for its default ruleset (simulator/serve/warming.py).
SERVE_QUESTION = {
    "ruleset": "olympia",
    "attacker": "noble, 20 soldier, 10 archer@1",
    "defender": "noble, 30 pikeman",
    "battles": "20000",
}


def _processor_seconds(pid: int) -> float:
    """User and system seconds of a running process so far (Linux; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ask(base: str, token: str, path: str, timeout: float = 900) -> bytes:
    request = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return bytes(response.read())


def serve_once(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``battle-odds serve --port 0`` (every ruleset loaded after it listens): seconds to
    its address (and its processor seconds then), what its page says of the rulesets then,
    seconds until its default ruleset and until every ruleset is ready, and how long the
    page's example question (20,000 battles) takes once its ruleset is ready."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert process.stdout is not None
    try:
        line = process.stdout.readline()
        if "http://" not in line:
            raise SystemExit(f"battle-odds serve did not listen: {line!r}")
        figures: dict[str, Any] = {
            "listening": time.perf_counter() - started,
            "listening CPU": _processor_seconds(process.pid),
        }
        base, _, token = line.split()[2].partition("?token=")
        base = base.rstrip("/")
        said = ""
        while True:
            states = json.loads(_ask(base, token, "/api/ready"))["rulesets"]
            if not said:
                said = "; ".join(r["words"] for r in states if r["state"] != "ready") or "ready"
                figures["page"] = said
            now = time.perf_counter() - started
            ready = {r["name"] for r in states if r["state"] in ("ready", "failed")}
            if "olympia" in ready and "olympia ready" not in figures:
                figures["olympia ready"] = now
                asked = time.perf_counter()
                _ask(base, token, "/api/run?" + urlencode({**SERVE_QUESTION, "seed": "1"}))
                figures["question"] = time.perf_counter() - asked
            if len(ready) == len(states):
                figures["all ready"] = time.perf_counter() - started
                return figures
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_rows(command: list[str]) -> list[list[str]]:
    """``serve`` on an empty cache, then again with the cache it filled."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        env = dict(CHILD_ENV, NUMBA_CACHE_DIR=cache)
        for kind in ("cold", "warm"):
            f = serve_once(command, env)
            rows.append([
                f"`serve`, {kind}", f"{f['listening']:.2f}", f"{f['listening CPU']:.2f}",
                f"{f['olympia ready']:.1f}", f"{f['question']:.2f}", f"{f['all ready']:.1f}",
                f["page"] if kind == "cold" else "",
            ])  # fmt: skip
            print(f"# {rows[-1][0]}: {', '.join(rows[-1][1:])}", flush=True)
    return rows


def until_the_notice(args: list[str]) -> list[str]:
    """A command's first run on an empty cache, stopped at its compile notice: wall and
    processor seconds then (its compile is not waited for): the table of ``--notices``."""
    command, where = command_of(battle_odds(), args)
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        started = time.perf_counter()
        process = _child(command, dict(CHILD_ENV, NUMBA_CACHE_DIR=cache), where)
        assert process.stderr is not None
        said = ["none", "", ""]
        for line in process.stderr:
            if any(n in line for n in NOTICE):
                wall, cpu = time.perf_counter() - started, _processor_seconds(process.pid)
                said = [f"{wall:.2f}", f"{cpu:.2f}", line.strip()]
                break
        process.kill()
        process.wait()
        process.stderr.close()
    return said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each warm figure")
    parser.add_argument(
        "--no-cold", action="store_true", help="skip the cold runs (serve's start too)"
    )
    parser.add_argument("--no-serve", action="store_true", help="skip serve's start")
    parser.add_argument(
        "--notices",
        action="store_true",
        help="only each cold run's compile notice: each command stopped once it says it",
    )
    parser.add_argument(
        "--only",
        help="the cold runs of these commands only (comma-separated parts of names; "
        "serve: its start)",
    )
    parser.add_argument(
        "--every-scenario",
        action="store_true",
        help="cold runs of `run` on every bundled scenario instead of the documented commands",
    )
    options = parser.parse_args()
    chosen = every_scenario() if options.every_scenario else documented()
    if options.only:
        asked = options.only.split(",")
        options.no_serve = options.no_serve or "serve" not in asked
        unknown = [a for a in asked if a != "serve" and not any(a in name for name in chosen)]
        if unknown:
            parser.error(f"--only {','.join(unknown)}: expected part of {', '.join(chosen)}")
        chosen = {n: a for n, a in chosen.items() if any(x in n for x in asked)}
    command = battle_odds()
    print(f"# {command_line()}")
    print(
        f"# processor {processor()}, {os.cpu_count()} cores, "
        f"load average {load_average()} (at start)"
    )
    if "PYTHONDONTWRITEBYTECODE" in os.environ:
        print("# PYTHONDONTWRITEBYTECODE is set here: the commands timed run without it")
    if options.notices:
        floors = [timed(FLOOR)[:2] for _ in range(3)]
        print(
            f"# the floor: {min(w for w, _ in floors):.2f} s, CPU {min(c for _, c in floors):.2f} s"
        )
        notices = [[name, *until_the_notice(args)] for name, args in chosen.items()]
        headers = ["first run on an empty cache", "notice after s", "its CPU s", "the notice"]
        print("\n".join(markdown_table(headers, notices)))
        print(f"\n# load average {load_average()} (at end)")
        return
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
    if not options.no_serve and not options.no_cold:
        print()
        headers = [
            "`battle-odds serve`", "listening after s", "its CPU s then", "olympia ready s",
            "its example question s", "every ruleset ready s", "the page then says",
        ]  # fmt: skip
        print("\n".join(markdown_table(headers, serve_rows(command))))
    if options.no_cold or not chosen:  # --only serve
        return
    cold = []
    for args in chosen.values():
        cold.append(cold_and_warm(command, args))
        print(f"# {cold[-1][0]}: {', '.join(cold[-1][1:])}", flush=True)
    print()
    headers = [
        "`battle-odds ...`", "cold first answer s (its CPU s)", "cold wall s", "cold CPU s",
        "notice after s (its CPU s)", "warm wall s", "warm CPU s",
        "first answer in 25 s, notice in 1 s",
    ]  # fmt: skip
    print("\n".join(markdown_table(headers, cold)))
    print(f"\n# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
