"""Every ruleset's kernel against its pure-Python reference: ``python benchmarks/rulesets.py``.

For one bundled scenario of each ruleset (scenarios/<ruleset>/), in one run: battles
per second of the kernel (``Prepared.run``, all threads, compile excluded, in the chunks
``simulate`` would use, so that a run's outcome rows are as many as in real use) and of
the ruleset's pure-Python reference (tests/reference/<ruleset>.py), and their ratio.
``--quick`` runs each for a fraction of a second (a smoke run, used by the tests).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import simulator  # noqa: E402
from benchmarks.common import command_line, load_average, markdown_table  # noqa: E402
from simulator import rulesets  # noqa: E402
from simulator.running.runner import DEFAULT_CHUNK, chunk_plan  # noqa: E402
from tests.reference import age_of_gods, blocks, confrontation, skirmish  # noqa: E402

#: Target of issue 15: each kernel runs at least this many times its reference's rate.
KERNEL_VS_REFERENCE = 100
SEED = 13
#: Seconds one timed run of a kernel or reference lasts at least (full run, smoke run).
BUDGET, QUICK_BUDGET = 3.0, 0.05

#: Per ruleset: the bundled scenario measured, and its reference's battles of a seed.
REFERENCES: dict[str, tuple[str, Callable[[object, int, int], object]]] = {
    "age_of_gods": ("pikemen_vs_knights.toml", lambda m, n, s: age_of_gods.simulate(m, n, s)),
    "blocks": ("field_battle.toml", lambda m, n, s: blocks.simulate(m, n, s)),
    "confrontation": ("open_field.toml", lambda m, n, s: confrontation.run(m, n, s)),
    "skirmish": ("cavalry_charge.toml", lambda m, n, s: skirmish.run(m, s, n)),
}


def rate(run: Callable[[int], object], budget: float) -> float:
    """Battles per second of ``run(count)``, growing ``count`` until one run takes
    ``budget`` seconds."""
    count = 1
    while True:
        started = time.perf_counter()
        run(count)
        seconds = time.perf_counter() - started
        if seconds >= budget or count >= 1 << 26:
            return count / seconds
        count *= 2 if seconds > budget / 8 else 8


def in_chunks(prepared: rulesets.Prepared, battles: int) -> None:
    """``battles`` battles through the kernel, chunk by chunk as ``simulate`` runs them
    (one call for all would fill, and page in, one outcome matrix of millions of rows)."""
    for first, count in chunk_plan(0, battles, DEFAULT_CHUNK):
        prepared.run(SEED, first, count)


def measure(budget: float = BUDGET) -> pd.DataFrame:
    """One row per ruleset: kernel and reference battles/s on one bundled scenario."""
    rows = []
    for name, (file, reference) in REFERENCES.items():
        path = ROOT / "scenarios" / name / file
        scenario = simulator.load_scenario(path)
        prepared = rulesets.get(name).prepare(scenario.model)
        prepared.run(SEED, 0, 1)  # compile, or load the cache, before timing
        kernel = rate(lambda n, p=prepared: in_chunks(p, n), budget)
        python = rate(lambda n, m=scenario.model, r=reference: r(m, n, SEED), budget)
        rows.append(
            {
                "ruleset": name,
                "scenario": f"scenarios/{name}/{file}",
                "seed": SEED,
                "kernel_battles_per_s": kernel,
                "reference_battles_per_s": python,
                "ratio": kernel / python,
            }
        )
    return pd.DataFrame(rows)


def report(table: pd.DataFrame) -> list[str]:
    worst = table.loc[table["ratio"].idxmin()]
    return [
        f"`{command_line()}`: all threads, compile excluded, load average {load_average()}",
        "",
        *markdown_table(
            [
                "ruleset",
                "scenario",
                "pure Python (battles/s)",
                "kernel (battles/s)",
                "kernel / Python",
            ],
            [
                [
                    row.ruleset,
                    row.scenario,
                    f"{row.reference_battles_per_s:,.1f}",
                    f"{row.kernel_battles_per_s:,.0f}",
                    f"{row.ratio:,.0f}x",
                ]
                for row in table.itertuples()
            ],
        ),
        "",
        f"- slowest against its reference: {worst.ruleset}, {worst.ratio:,.0f}x "
        f"(target at least {KERNEL_VS_REFERENCE}x each): "
        + ("met" if worst.ratio >= KERNEL_VS_REFERENCE else "NOT met"),
    ]


def section(quick: bool) -> list[str]:
    """The report of a full run, or of a smoke run of a fraction of a second per rate."""
    return report(measure(QUICK_BUDGET if quick else BUDGET))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    print("\n".join(section(args.quick)))


if __name__ == "__main__":
    main()
