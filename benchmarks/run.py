"""Benchmarks: ``python benchmarks/run.py [--quick] [--write [PATH]]``.

Measures, in one run, on all threads, every kernel compiled (or loaded from Numba's
cache) by an untimed first call:

* the yardstick: a plain per-strike Numba kernel (benchmarks/baseline.py) of "noble, 100
  soldier" against "noble, 20 knight", and ``battle-odds odds`` of that battle for
  20,000,000 battles as a whole process (start-up, cache load and statistics included,
  after a first run that warms the cache); its answer is checked against the exact
  solver's;
* olympia's kernels, ``strike``, ``skip`` and ``chain`` (where its table fits), on the
  benchmark scenarios (benchmarks/scenarios/), that battle and the bundled olympia
  scenarios, with the kernel ``auto`` picks;
* ``battle-odds run`` of knights_vs_pikemen for 100,000 battles as a whole process, as
  ``auto`` runs it (the chain kernel, its table built in the process) and on the skip
  kernel;
* a scaling table: seconds per battle against men per side, 10 .. 100,000.

Every rate is battles per second over at least a time budget (doubling the count until
a run lasts that long), in kernel calls of at most 131,072 battles, the runner's chunk.
The machine is shared: compare the figures of one run, not absolute rates across runs;
the processor and the load average are printed with them.
``--quick`` runs the same code with small budgets and counts (seconds, for the test
suite). ``--write`` puts the tables into docs/benchmarks.md (or PATH), keeping the notes
below its ``<!-- notes -->`` line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "benchmarks" / "scenarios"
BUNDLED = ROOT / "scenarios" / "olympia"
DOC = ROOT / "docs" / "benchmarks.md"
NOTES = "<!-- notes -->"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import baseline  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402

import simulator  # noqa: E402
from benchmarks import more_tables  # noqa: E402
from benchmarks.common import processor  # noqa: E402
from simulator.atomic import write_atomically  # noqa: E402
from simulator.rulesets.olympia.prepare import KERNELS, OlympiaPrepared  # noqa: E402
from simulator.running.plan import DEFAULT_CHUNK  # noqa: E402

#: The yardstick battle and the command a user would type for it.
ATTACKER, DEFENDER = "noble, 100 soldier", "noble, 20 knight"
ODDS_BATTLES, ODDS_BATTLES_QUICK = 20_000_000, 200_000
#: Targets of issues 15 and 27 (2 cores).
ODDS_VS_BASELINE, ODDS_VS_BASELINE_AIM = 2.0, 3.0
MEDIUM_BATTLES_PER_S = 500_000
LARGE_BATTLES_PER_S = 5_000
#: The chain kernel against the skip kernel on knights_vs_pikemen, in one run.
CHAIN_VS_SKIP = 2.0
#: The whole-process run of that scenario, and its battles.
WHOLE_RUN = BUNDLED / "knights_vs_pikemen.toml"
WHOLE_RUN_BATTLES, WHOLE_RUN_BATTLES_QUICK = 100_000, 10_000
#: ``auto`` may pick a kernel at most this much slower than the faster one.
AUTO_SLACK = 0.10
#: Two-sided z of the 99.9% interval the sampled answer must hold the exact one in.
Z_999 = 3.29


@dataclass
class Section:
    """One part of the report: a heading, its Markdown lines, and target verdicts."""

    title: str
    lines: list[str]
    verdicts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Budget:
    """Seconds per kernel measurement, battles of the odds command, and the men per side
    and seconds per measurement of the scaling table."""

    kernel: float
    odds_battles: int
    scaling_sizes: tuple[int, ...]
    scaling: float

    @classmethod
    def of(cls, quick: bool) -> Budget:
        if quick:
            return cls(0.05, ODDS_BATTLES_QUICK, (10, 100), 0.05)
        return cls(2.0, ODDS_BATTLES, (10, 100, 1_000, 10_000, 100_000), 2.0)


def in_calls(run: Callable[[int], object], count: int) -> None:
    """``count`` battles in calls of at most DEFAULT_CHUNK, as the runner makes them.

    One call of millions of battles would time the allocation of its outcome rows (a
    fresh array of hundreds of MB whose pages the kernel faults in) more than the
    kernel, and a faster kernel, timed on more battles, would pay more of it
    (knights_vs_pikemen's chain kernel on 4,194,304 battles in one call: 0.97 million
    a second, against 1.6 million in calls of 131,072; one thread, AMD EPYC; see
    docs/benchmarks.md)."""
    for done in range(0, count, DEFAULT_CHUNK):
        run(min(DEFAULT_CHUNK, count - done))


def rates(runs: dict[str, Callable[[int], object]], first: int, budget: float) -> dict[str, float]:
    """Battles per second of each ``run(count)``, run in calls the runner's size
    (:func:`in_calls`). Each count grows from ``first`` until one run takes a quarter
    of ``budget`` seconds; then three rounds run them in turn, and each keeps its
    fastest run (the machine is shared: the fastest is the one least slowed by others,
    and taking turns exposes all of them to the same load)."""
    counts = {}
    seconds = {}
    for name, run in runs.items():
        count = first
        while True:
            started = time.perf_counter()
            in_calls(run, count)
            took = time.perf_counter() - started
            if took >= budget / 4 or count >= 1 << 30:
                break
            count *= 2 if took > budget / 32 else 8
        counts[name], seconds[name] = count, took
    for _ in range(3):
        for name, run in runs.items():
            started = time.perf_counter()
            in_calls(run, counts[name])
            seconds[name] = min(seconds[name], time.perf_counter() - started)
    return {name: counts[name] / seconds[name] for name in runs}


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def verdict(name: str, value: float, target: float, unit: str = "") -> str:
    met = "met" if value >= target else f"NOT met, {target / value:.2f}x short"
    return f"- {name}: {value:,.2f}{unit} (target {target:,.2f}{unit}): {met}"


def kernel_rates(prepared: OlympiaPrepared, budget: float, first: int = 64) -> dict[str, float]:
    """Battles per second of every kernel that can run the battle (``chain`` only where
    its table fits the budget)."""
    runs: dict[str, Callable[[int], object]] = {}
    for kernel in KERNELS:
        if kernel == "chain" and prepared.chain_table() is None:
            continue
        prepared.run_matrix(1, 0, 1, kernel)  # compile or load, untimed
        runs[kernel] = lambda n, k=kernel: prepared.run_matrix(7, 0, n, k)
    return rates(runs, first, budget)


def odds_command() -> list[str]:
    # `battle-odds` is `python -m simulator`; run from the repository, this interpreter
    # runs this checkout's package whichever `battle-odds` is first on PATH.
    return [
        sys.executable,
        "-m",
        "simulator",
        "odds",
        "--attacker",
        ATTACKER,
        "--defender",
        DEFENDER,
    ]


def timed_odds(battles: int) -> tuple[float, dict[str, object]]:
    """Wall seconds of ``battle-odds odds ... --battles N --json`` and its answer."""
    started = time.perf_counter()
    done = subprocess.run(
        [*odds_command(), "--battles", str(battles), "--json"],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started, json.loads(done.stdout)


def yardstick(budget: Budget) -> Section:
    """The plain per-strike kernel against the product, on the yardstick battle."""
    baseline.run(64)  # compile or load, untimed
    prepared = OlympiaPrepared(simulator.inline_scenario("olympia", ATTACKER, DEFENDER).model)
    runs: dict[str, Callable[[int], object]] = {"baseline": baseline.run}
    for name in ("skip", "chain"):
        prepared.run_matrix(1, 0, 1, name)
        runs[name] = lambda n, name=name: prepared.run_matrix(7, 0, n, name)
    kernel = rates(runs, 1 << 12, budget.kernel)
    exact = float(
        simulator.exact(simulator.inline_scenario("olympia", ATTACKER, DEFENDER)).win["attacker"]
    )
    timed_odds(1_000)  # warms the cache
    startup, _ = timed_odds(1)
    seconds, answer = timed_odds(budget.odds_battles)
    odds = budget.odds_battles / seconds
    # The baseline again, after: the faster of its two rates makes the ratio a lower bound.
    after = rates({"baseline": baseline.run}, 1 << 12, budget.kernel)["baseline"]
    base = max(kernel["baseline"], after)
    win = answer["win"]["attacker"]  # type: ignore[index]
    p = float(win["p"])
    tolerance = Z_999 * math.sqrt(exact * (1 - exact) / budget.odds_battles)
    right = abs(p - exact) <= tolerance
    command = " ".join(f'"{a}"' if " " in a else a for a in odds_command()[3:])
    lines = [
        f'"{ATTACKER}" against "{DEFENDER}" (olympia, random order), exact attacker win '
        f"chance {exact:.6f}.",
        "",
        "| what | battles/s | vs plain kernel |",
        "|---|---:|---:|",
        f"| plain per-strike Numba kernel (benchmarks/baseline.py) | {kernel['baseline']:,.0f} "
        "| 1.00x |",
        f"| olympia's skip kernel alone (`run_matrix`, timed in turn with the plain kernel) "
        f"| {kernel['skip']:,.0f} | {kernel['skip'] / kernel['baseline']:.2f}x |",
        f"| olympia's chain kernel alone (`run_matrix`, the same) "
        f"| {kernel['chain']:,.0f} | {kernel['chain'] / kernel['baseline']:.2f}x |",
        f"| `battle-odds {command} --battles {budget.odds_battles} --json`, whole process "
        f"({seconds:.1f} s, kernel `{answer['kernel']}`) | {odds:,.0f} | {odds / base:.2f}x |",
        "",
        f"Processor: {processor()}. The whole process is compared with the faster of the "
        f"plain kernel's rates before it and after it ({after:,.0f}/s after). "
        f"Start-up of that command (`--battles 1`, cache warm): {startup:.2f} s. Its answer: "
        f"attacker wins {p:.6f} ({win['low']:.6f} - {win['high']:.6f}), "
        f"{abs(p - exact):.1e} from the exact {exact:.6f}, "
        + ("inside" if right else "OUTSIDE")
        + f" the 99.9% sampling tolerance {tolerance:.1e}.",
    ]
    verdicts = [
        verdict("odds as a process against the plain kernel", odds / base, ODDS_VS_BASELINE, "x")
        + f" (aim {ODDS_VS_BASELINE_AIM:.0f}x)",
        f"- odds answer within the 99.9% tolerance of the exact {exact:.6f}: "
        + ("met" if right else "NOT met"),
    ]
    return Section("The yardstick: a plain per-strike kernel", lines, verdicts)


def olympia_battles() -> list[tuple[str, str, simulator.Scenario]]:
    """(table name, men, scenario) of every battle the kernels are timed on."""
    found = []
    for path in (SCENARIOS / f"{n}.toml" for n in ("small", "medium", "large")):
        found.append((f"benchmark {path.stem}", simulator.load_scenario(path)))
    found.append(("yardstick", simulator.inline_scenario("olympia", ATTACKER, DEFENDER)))
    for path in sorted(BUNDLED.glob("*.toml")):
        found.append((f"scenarios/olympia/{path.name}", simulator.load_scenario(path)))
    battles = []
    for name, scenario in found:
        men = [
            sum(m.count for u in side.units for m in u.men) + len(side.units)
            for side in scenario.model.sides
        ]
        battles.append((name, f"{men[0]:,} / {men[1]:,}", scenario))
    return battles


def kernels(budget: Budget) -> Section:
    """olympia's two kernels on each battle, and whether ``auto`` picks the faster."""
    lines = [
        f"Processor: {processor()}. Chain: the table's kernel, where its table fits the budget "
        "(simulator/rulesets/olympia/prepare.py); its table is built once per scenario, "
        "before the timing.",
        "",
        "| battle | men (att. / def.) | strike | skip | chain | auto picks | picked / faster |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    verdicts = []
    found: dict[str, dict[str, float]] = {}
    slow_picks = []
    for name, men, scenario in olympia_battles():
        prepared = OlympiaPrepared(scenario.model)
        rates = kernel_rates(prepared, budget.kernel)
        picked = rates[prepared.kernel] / max(rates.values())
        if picked < 1 - AUTO_SLACK:
            slow_picks.append(name)
        found[name] = rates
        chain = f"{rates['chain']:,.0f}" if "chain" in rates else "-"
        lines.append(
            f"| {name} | {men} | {rates['strike']:,.0f} | {rates['skip']:,.0f} | {chain} "
            f"| {prepared.kernel} | {picked:.2f} |"
        )
        print(lines[-1], flush=True)
    verdicts.append(
        verdict(
            "medium, skip kernel", found["benchmark medium"]["skip"], MEDIUM_BATTLES_PER_S, " /s"
        )
    )
    verdicts.append(
        verdict("large, skip kernel", found["benchmark large"]["skip"], LARGE_BATTLES_PER_S, " /s")
    )
    knights = found[f"scenarios/olympia/{WHOLE_RUN.name}"]
    verdicts.append(
        verdict(
            "knights_vs_pikemen, chain kernel against skip", knights["chain"] / knights["skip"],
            CHAIN_VS_SKIP, "x",
        )
    )  # fmt: skip
    verdicts.append(
        f"- auto picks a kernel at most {AUTO_SLACK:.0%} slower than the faster, on every "
        "battle: " + ("met" if not slow_picks else "NOT met on " + ", ".join(slow_picks))
    )
    return Section("olympia kernels, battles per second", lines, verdicts)


def scaling(budget: Budget) -> Section:
    """Seconds per battle against men per side, with strikes and changes per battle."""
    lines = [
        "Each side: a noble, half soldiers, the rest pikemen with a fifth as many archers "
        "in the rear.",
        "",
        "| men per side | strike (s/battle) | skip (s/battle) | strikes per battle "
        "| changes per battle | skip, ns per change |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for men in budget.scaling_sizes:
        half = men // 2
        army = f"noble, {half} soldier, {men - half - half // 5} pikeman, {half // 5} archer@1"
        prepared = OlympiaPrepared(simulator.inline_scenario("olympia", army, army).model)
        seconds = {k: 1 / r for k, r in kernel_rates(prepared, budget.scaling, 2).items()}
        out = prepared.run_matrix(9, 0, 4 if men >= 10_000 else 200, "skip")
        steps = float(out[:, prepared.columns["steps"]].mean())
        changes = float(
            sum(
                out[:, c].mean()
                for n, c in prepared.columns.items()
                if n.startswith(("casualties.", "nobles_wounded", "nobles_killed"))
            )
        )
        lines.append(
            f"| {men:,} | {seconds['strike']:.3g} | {seconds['skip']:.3g} | {steps:,.0f} "
            f"| {changes:,.0f} | {seconds['skip'] / changes * 1e9:,.0f} |"
        )
        print(lines[-1], flush=True)
    return Section("Scaling: seconds per battle against men per side", lines)


def whole_run(budget: Budget) -> Section:
    """``battle-odds run`` of knights_vs_pikemen as a whole process: as ``auto`` runs it
    (the chain kernel, its table built in the process) against the skip kernel (a copy
    of the scenario naming it), in turn, three rounds, the fastest of each."""
    battles = WHOLE_RUN_BATTLES_QUICK if budget.kernel < 1 else WHOLE_RUN_BATTLES
    text = WHOLE_RUN.read_text()
    with tempfile.TemporaryDirectory() as folder:
        skip = Path(folder) / WHOLE_RUN.name
        skip.write_text(text.replace("[battle]\n", '[battle]\nkernel = "skip"\n', 1))
        files = {"auto": WHOLE_RUN, "skip": skip}
        seconds = {name: math.inf for name in files}
        kernel = {}
        for round_ in range(4):  # the first round warms the cache and is not counted
            for name, path in files.items():
                command = [sys.executable, "-m", "simulator", "run", str(path)]
                started = time.perf_counter()
                done = subprocess.run(
                    [*command, "--battles", str(battles), "--json"],
                    check=True,
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                )
                took = time.perf_counter() - started
                kernel[name] = json.loads(done.stdout)["kernel"]
                if round_ > 0:
                    seconds[name] = min(seconds[name], took)
    ratio = seconds["skip"] / seconds["auto"]
    lines = [
        f"Processor: {processor()}. `battle-odds run scenarios/olympia/{WHOLE_RUN.name} "
        f"--battles {battles} --json`, the fastest of three runs each, in turn:",
        "",
        "| kernel | seconds, whole process | skip / this |",
        "|---|---:|---:|",
        f"| auto (`{kernel['auto']}`, its table built in the process) | {seconds['auto']:.2f} "
        f"| {ratio:.2f}x |",
        f"| skip | {seconds['skip']:.2f} | 1.00x |",
    ]
    verdicts = [
        f"- knights_vs_pikemen, {battles:,}-battle run as a whole process, auto not slower "
        f"than the skip kernel: {ratio:.2f}x: " + ("met" if ratio >= 1.0 else "NOT met")
    ]
    return Section("A whole run of knights_vs_pikemen", lines, verdicts)


def report(sections: Sequence[Section], header: str, command: str) -> str:
    text = [
        "# Benchmarks",
        "",
        f"Produced by `{command}` on {time.strftime('%Y-%m-%d')}.",
        "",
        f"Machine: {header}; load average after: {load_average()}.",
        "",
    ]
    for section in sections:
        text += [f"## {section.title}", "", *section.lines, ""]
    text += ["## Targets", "", *(v for s in sections for v in s.verdicts), ""]
    return "\n".join(text)


def main(argv: Sequence[str] | None = None) -> list[Section]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small budgets: seconds.")
    parser.add_argument(
        "--write",
        nargs="?",
        const=DOC,
        type=Path,
        metavar="PATH",
        help=f"Write the tables to PATH (default {DOC.relative_to(ROOT)}).",
    )
    args = parser.parse_args(argv)
    budget = Budget.of(args.quick)
    header = (
        f"{processor()}, {os.cpu_count()} cores, Numba {numba.__version__} with "
        f"{numba.get_num_threads()} threads, NumPy {np.__version__}, "
        f"Python {sys.version.split()[0]}; load average before: {load_average()}"
    )
    print(header, flush=True)
    sections = [yardstick(budget)]
    print("\n".join(sections[-1].lines), flush=True)
    sections.append(kernels(budget))
    sections.append(whole_run(budget))
    print("\n".join(sections[-1].lines), flush=True)
    sections.append(scaling(budget))
    for line in (v for s in sections for v in s.verdicts):
        print(line)
    if args.write is not None:
        command = "python benchmarks/run.py" + (" --quick" if args.quick else "") + " --write"
        path: Path = args.write
        existing = path.read_text() if path.exists() else ""
        notes = existing.split(NOTES, 1)[1] if NOTES in existing else "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, report(sections, header, command) + NOTES + notes)
        print(f"wrote {path}")
    more_tables.print_and_write(args.quick, args.write)
    return sections


if __name__ == "__main__":
    main()
