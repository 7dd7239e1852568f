"""What ranges cost: ``python benchmarks/unknowns_speed.py [--battles N] [--rounds R]``.

For one bundled scenario of each ruleset (olympia two), a version whose inputs are ranges making
hundreds of combinations (docs/unknowns.md, "Speed") against the same scenario with each
unknown at its middle value. The two are run alternately, ``--rounds`` times each, on
all the kernel's threads as ``battle-odds run`` runs them; each round loads the scenario
afresh, so every combination's validation and preparation is counted, as in a fresh
``battle-odds run`` process (the kernels themselves are cached, compiled beforehand).
Prints a markdown table of battles per second (the median of the rounds, wall clock;
``--cpu``: on one thread, by the process's CPU seconds, which a busy machine disturbs
least) and the ranges' speed against fixed inputs, with the processor and the load.
``--stages`` instead times each stage of one run with ranges (a timer around each:
validating and preparing each combination, or filling one in from another of its family
(Ruleset.fill_in), drawing the inputs, stacking the tables,
the kernel calls, gathering the columns), to say where the time goes. ``--kernels-only``
times the battles alone, every combination prepared beforehand (the best of the rounds,
in one process, alternately): the run with ranges against fixed inputs (what the
mixture's battles cost against the middle one's), and the fixed scenario's battles in
a stacked call of their own against its plain call (what stacking costs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import command_line, load_average, markdown_table, processor  # noqa: E402

from simulator import rulesets  # noqa: E402
from simulator.errors import Source  # noqa: E402
from simulator.rulesets.stacked import StackedRuns, stack  # noqa: E402
from simulator.running.runner import simulate  # noqa: E402
from simulator.scenario.scenario import Scenario, from_data, prepare, set_path  # noqa: E402
from simulator.scenario.unknowns import (  # noqa: E402
    Mixture,
    MixturePrepared,
    Unknown,
    parse_unknown,
)

#: Issue 53: a scenario with ranges runs at least half as fast as with fixed values.
TARGET = 0.5
#: Scenario, its keys written as ranges, and how many of the battles asked it runs. Olympia
#: twice: in the open field its fixed run walks the chain kernel's table, which no
#: combination is drawn often enough to repay (its battles run on ``skip``); at a castle
#: both run on ``skip``.
CASES: dict[str, tuple[str, dict[str, str], float]] = {
    "olympia": (
        "olympia/knights_vs_pikemen",
        {"defender.units[0].men.pikeman": "35..45", "defender.break_point": "0..50"},
        1,
    ),
    "olympia_castle": (
        "olympia/castle_siege",
        {"defender.units[0].men.soldier": "50..70", "attacker.break_point": "40..60"},
        0.1,
    ),
    "age_of_gods": (
        "age_of_gods/pikemen_vs_knights",
        {"defender.units[0].men.pikeman": "35..45", "attacker.break_point": "0..50"},
        0.25,
    ),
    "blocks": (
        "blocks/field_battle",
        {
            "attacker.blocks[0].steps": "1..4",
            "attacker.blocks[2].steps": "1..3",
            "defender.blocks[1].steps": "1..3",
            "defender.blocks[2].steps": "1..3",
        },
        1,
    ),
    "confrontation": (
        "confrontation/attack",
        {
            "attacker.stacks[0].advantages": "0..3",
            "attacker.stacks[1].advantages": "0..3",
            "defender.stacks[0].advantages": "0..3",
            "defender.stacks[1].advantages": "0..3",
        },
        0.25,
    ),
    "skirmish": (
        "skirmish/cavalry_charge",
        {
            "stacks[0].units[0]": "{ type = 'cavalry', count = '1..8', health = '4..8' }",
            "stacks[1].units[0]": "{ type = 'swordsman', count = '1..8' }",
        },
        0.5,
    ),
}


def value(text: str) -> Any:
    """A range as written, or an inline TOML table of them."""
    return tomllib.loads(f"v = {text}")["v"] if text.startswith("{") else text


def ruleset_of(case: str) -> str:
    return CASES[case][0].split("/")[0]


def middle(item: Any, path: str) -> Any:
    """``item`` with each range at its middle value."""
    if isinstance(item, dict):
        return {k: middle(v, f"{path}.{k}") for k, v in item.items()}
    found = parse_unknown(item, path, Source("benchmark"))
    if isinstance(found, Unknown):
        return found.values[len(found.values) // 2]
    return item


def scenario(name: str, ranges: dict[str, str], fixed: bool) -> Scenario:
    data = tomllib.loads((ROOT / "scenarios" / f"{name}.toml").read_text(encoding="utf-8"))
    for path, text in ranges.items():
        written = value(text)
        set_path(data, path, middle(written, path) if fixed else written)
    return from_data(data, Source(f"{name} (benchmark)"))


#: What :func:`seconds` reads: the wall clock, or with ``--cpu`` the process's CPU time
#: (on one thread: what other jobs on the machine disturb least).
CLOCK: list[Callable[[], float]] = [time.perf_counter]


def seconds(name: str, ranges: dict[str, str], fixed: bool, battles: int) -> tuple[float, int]:
    """Seconds (:data:`CLOCK`) of a run of ``battles`` from a freshly loaded scenario,
    and its combinations of inputs."""
    loaded = scenario(name, ranges, fixed)
    clock = CLOCK[0]
    started = clock()
    simulate(loaded, battles, 1, keep_battles=False)
    return clock() - started, getattr(loaded.model, "combinations", 1)


#: The stages ``--stages`` times: (words, class, method). Validation is timed inside
#: preparing; the stacked kernel's call inside stacking's caller, not inside stack_of.
STAGES: list[tuple[str, Any, str]] = [
    ("validating each combination's scenario", Mixture, "scenario_of"),
    ("preparing each combination's arrays", None, "prepare"),
    ("filling in a combination's counts and break points", Mixture, "_filled_in"),
    ("drawing the inputs (hashes, in NumPy)", Mixture, "draws"),
    ("stacking the combinations' tables", Mixture, "stack_of"),
    ("the stacked kernel calls", StackedRuns, "run_stacked"),
    ("gathering the columns", MixturePrepared, "_gather"),
    ("the kernel calls, one a combination (no stacked kernel)", MixturePrepared, "_run_calls"),
]


@contextmanager
def stage_timers(ruleset: str) -> Iterator[dict[str, list[float]]]:
    """Each of :data:`STAGES` timed (seconds and calls) while the block runs."""
    spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    patched: list[tuple[Any, str, Callable[..., Any]]] = []
    for words, owner, name in STAGES:
        owner = owner or type(rulesets.get(ruleset))
        original = getattr(owner, name)

        def timed(*args: Any, _f: Any = original, _w: str = words, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_w][0] += time.perf_counter() - started
                spent[_w][1] += 1

        setattr(owner, name, timed)
        patched.append((owner, name, original))
    try:
        yield spent
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


def stages(chosen: list[str], battles: int) -> None:
    """Where one run with ranges of each ruleset spends its time."""
    for case in chosen:
        name, ranges, share = CASES[case]
        n = max(1, int(battles * share))
        seconds(name, ranges, False, 2_000)  # warm: compiled or loaded kernels
        fixed = seconds(name, ranges, True, n)[0]
        with stage_timers(ruleset_of(case)) as spent:
            took, combinations = seconds(name, ranges, False, n)
        rows = [[w, f"{spent[w][0]:.3f}", f"{spent[w][1]:,}"] for w, _, _ in STAGES if w in spent]
        rows.append(["the whole run with ranges", f"{took:.3f}", "1"])
        rows.append(["the same battles with fixed inputs", f"{fixed:.3f}", "1"])
        print(f"# {name} ({combinations:,} combinations), {n:,} battles")
        print("\n".join(markdown_table(["stage", "seconds", "calls"], rows)), flush=True)


def kernels_only(chosen: list[str], battles: int, rounds: int) -> None:
    """What the battles cost once every combination is validated, prepared and stacked
    (a first, untimed run of the same battles did it), in one process, alternately, the
    best of ``rounds``: the run with ranges against fixed inputs, and the fixed
    scenario's battles stacked alone against its own kernel call (what a stacked call
    costs over a plain one)."""
    headers = ["scenario", "battles", "ranges' battles against fixed", "stacked alone"]
    rows = [battles_alone(case, battles, rounds) for case in chosen]
    print("\n".join(markdown_table(headers, rows)), flush=True)


def battles_alone(case: str, battles: int, rounds: int) -> list[str]:
    """:func:`kernels_only`'s row of one case."""
    name, ranges, share = CASES[case]
    n = max(1, int(battles * share))
    fixed = prepare(scenario(name, ranges, True))
    mixed = prepare(scenario(name, ranges, False))
    runs: dict[str, Callable[[], object]] = {
        "fixed": lambda: fixed.run(7, 0, n),
        "ranges": lambda: mixed.run(7, 0, n),
    }
    if isinstance(fixed, StackedRuns) and fixed.stacks():
        tables = stack([fixed])
        slots, numbers = np.zeros(n, np.int64), np.arange(n, dtype=np.int64)
        seeds = np.full(n, 7, np.uint64)

        def alone() -> None:
            rows = np.zeros((n, tables.width + 1), np.int64)
            fixed.run_stacked(tables, slots, seeds, numbers, rows)

        runs["stacked alone"] = alone
    timed: dict[str, list[float]] = defaultdict(list)
    for r in range(rounds + 1):  # the first: untimed, loads and prepares
        for what, run in runs.items():
            started = time.perf_counter()
            run()
            if r:
                timed[what].append(time.perf_counter() - started)
    best = {what: min(times) for what, times in timed.items()}
    own = f"{best['stacked alone'] / best['fixed']:.2f}x" if "stacked alone" in best else "-"
    return [name, f"{n:,}", f"{best['ranges'] / best['fixed']:.2f}x", own]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=400_000, help="battles a run (400,000)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each (3)")
    parser.add_argument(
        "--only",
        default="",
        help="rulesets (or cases: olympia_castle) to run, comma-separated (default: all)",
    )
    parser.add_argument(
        "--stages", action="store_true", help="time each stage of one run with ranges instead"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="one thread, the process's CPU seconds rather than the wall clock's",
    )
    parser.add_argument(
        "--kernels-only",
        action="store_true",
        help="time the battles alone (every combination prepared beforehand) instead",
    )
    args = parser.parse_args()
    only = args.only.split(",")
    chosen = [c for c in CASES if not args.only or c in only or ruleset_of(c) in only]
    threads = "all threads"
    if args.cpu:
        import numba

        numba.set_num_threads(1)
        CLOCK[0] = time.process_time
        threads = "one thread, CPU seconds"
    print(f"# {command_line()}")
    print(f"# processor {processor()}, {threads}, load average {load_average()} (at start)")
    if args.stages or args.kernels_only:
        if args.stages:
            stages(chosen, args.battles)
        else:
            kernels_only(chosen, args.battles, args.rounds)
        print(f"# load average {load_average()} (at end)")
        return
    rows = []
    for case in chosen:
        name, ranges, share = CASES[case]
        n = max(1, int(args.battles * share))
        seconds(name, ranges, True, 2_000)  # warm: compiled or loaded kernels
        seconds(name, ranges, False, 2_000)
        fixed_times, ranged_times, combinations = [], [], 1
        for _ in range(args.rounds):
            fixed_times.append(seconds(name, ranges, True, n)[0])
            took, combinations = seconds(name, ranges, False, n)
            ranged_times.append(took)
        fixed_rate = n / statistics.median(fixed_times)
        ranged_rate = n / statistics.median(ranged_times)
        rows.append(
            [
                f"{name}",
                f"{combinations:,}",
                f"{n:,}",
                f"{fixed_rate:,.0f}",
                f"{ranged_rate:,.0f}",
                f"{ranged_rate / fixed_rate:.2f}x",
            ]
        )
        print(f"# {name}: {'; '.join(f'{k} = {v}' for k, v in ranges.items())}", flush=True)
        print(f"#   seconds: fixed {fixed_times}, ranges {ranged_times}", flush=True)
    headers = [
        "scenario (ranges above)",
        "combinations",
        "battles",
        "fixed, battles/s",
        "ranges, battles/s",
        "ranges against fixed",
    ]
    print("\n".join(markdown_table(headers, rows)))
    slowest = min(rows, key=lambda row: float(row[-1].rstrip("x")))
    speed = float(slowest[-1].rstrip("x"))
    verdict = "met" if speed >= TARGET else "NOT met"
    print(f"# slowest against fixed: {slowest[0]}, {slowest[-1]}; at least {TARGET}x: {verdict}")
    print(f"# load average {load_average()} (at end)")


if __name__ == "__main__":
    main()
