"""Small rule mutants, each run against the tests that should catch it:
``python benchmarks/mutants.py [name ...] [--list]``.

Each mutant changes one rule of one ruleset by a little (a ``<`` written ``<=``, a bound
moved by one, a chance moved by a point): the kind of bug that shifts some output by
about one point or less. For each, the working tree is copied to a temporary folder
(never changed in place), the one edit is made there, and the ruleset's relevant test
files run in the copy, stopping at the first failure. A mutant is *killed* when a test
fails, *survived* when all pass. The script ends with a table and exits 1 if any
survived (or an edit no longer applies: the mutant list must follow the code).

Each copy compiles the kernels afresh (a compiled-code cache of its own): Numba's cache
of a kernel does not notice a change to a function it inlined from another module, so a
copied cache could run the unmutated rule. docs/testing.md records the last run and its
command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The test files of each kind of rule, the likeliest to fail first (``-x`` stops there).
PRISONERS_TESTS = ("tests/test_prisoners.py",)
OLYMPIA_TESTS = (
    "tests/test_olympia_rules.py",
    "tests/test_olympia_exact.py",
    "tests/test_olympia_skip.py",
)
OLYMPIA_EXACT_FIRST = (
    "tests/test_olympia_exact.py",
    "tests/test_olympia_rules.py",
    "tests/test_olympia_skip.py",
)
OLYMPIA_SKIP_FIRST = (
    "tests/test_olympia_skip.py",
    "tests/test_olympia_rules.py",
    "tests/test_olympia_exact.py",
)
AGE_OF_GODS_TESTS = ("tests/test_age_of_gods.py",)
BLOCKS_TESTS = ("tests/test_blocks.py",)
CONFRONTATION_TESTS = ("tests/test_confrontation.py",)
SKIRMISH_TESTS = ("tests/test_skirmish.py",)


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str


MUTANTS = (
    # --- olympia (kernels/olympia/strike.py is age_of_gods' base as well) ---------------
    Mutant(
        "olympia-capture-le",
        "kernels/olympia/strike.py",
        "below(state, 100) < percent:",
        "below(state, 100) <= percent:",
        PRISONERS_TESTS,
        "the capture roll: one point more chance to take each noble",
    ),
    Mutant(
        "olympia-capture-floor-26",
        "kernels/olympia/strike.py",
        "percent = min(75, max(25, 25 * alive[winner] // alive[loser]))",
        "percent = min(75, max(26, 25 * alive[winner] // alive[loser]))",
        PRISONERS_TESTS,
        "the capture chance's lower bound 26% instead of 25%",
    ),
    Mutant(
        "olympia-capture-cap-74",
        "kernels/olympia/strike.py",
        "percent = min(75, max(25, 25 * alive[winner] // alive[loser]))",
        "percent = min(74, max(25, 25 * alive[winner] // alive[loser]))",
        PRISONERS_TESTS,
        "the capture chance's upper bound 74% instead of 75%",
    ),
    Mutant(
        "olympia-capture-rounded",
        "kernels/olympia/strike.py",
        "percent = min(75, max(25, 25 * alive[winner] // alive[loser]))",
        "percent = min(75, max(25, (25 * alive[winner] + alive[loser] // 2) // alive[loser]))",
        PRISONERS_TESTS,
        "the capture chance rounded instead of floored",
    ),
    Mutant(
        "olympia-strike-break-lt",
        "kernels/olympia/strike.py",
        "or value[0] * 100 <= sides[0, layout.S_START] * sides[0, layout.S_BREAK]",
        "or value[0] * 100 < sides[0, layout.S_START] * sides[0, layout.S_BREAK]",
        OLYMPIA_EXACT_FIRST,
        "strike kernel: the attacker breaks under its threshold, not at it",
    ),
    Mutant(
        "olympia-break-lt",
        "kernels/olympia/strike.py",
        "or value[s] * 100 <= sides[s, layout.S_START] * sides[s, layout.S_BREAK]",
        "or value[s] * 100 < sides[s, layout.S_START] * sides[s, layout.S_BREAK]",
        OLYMPIA_TESTS,
        "skip kernel and age_of_gods: a side breaks under its threshold, not at it",
    ),
    Mutant(
        "olympia-noble-wound-101",
        "kernels/olympia/strike.py",
        "health[target] -= 1 + below(state, 100)",
        "health[target] -= 1 + below(state, 101)",
        OLYMPIA_EXACT_FIRST,
        "a noble's wound 1-101 instead of 1-100: one point more of nobles killed",
    ),
    Mutant(
        "olympia-engine-points",
        "kernels/olympia/strike.py",
        "points = 5 + below(state, 6)",
        "points = 5 + below(state, 5)",
        OLYMPIA_EXACT_FIRST,
        "a siege engine's hit 5-9 points instead of 5-10",
    ),
    Mutant(
        "olympia-survive-plus-point",
        "kernels/olympia/strike.py",
        "if survive[target] > 0.0 and uniform(state) < survive[target]:",
        "if survive[target] > 0.0 and uniform(state) < survive[target] + 0.01:",
        OLYMPIA_EXACT_FIRST,
        "strike kernel: a blessed man survives a hit one point more often",
    ),
    Mutant(
        "olympia-skip-survive-plus-point",
        "kernels/olympia/skip.py",
        "keep[g] = 1.0 - survive[g]",
        "keep[g] = 1.0 - survive[g] - (0.01 if survive[g] > 0.0 else 0.0)",
        OLYMPIA_SKIP_FIRST,
        "skip kernel: a blessed man survives a hit one point more often",
    ),
    # --- age_of_gods ---------------------------------------------------------------------
    Mutant(
        "age_of_gods-melee-cap-rounded-up",
        "kernels/age_of_gods.py",
        "defenders = every // 2 if every - front > front else front",
        "defenders = (every + 1) // 2 if every - front > front else front",
        AGE_OF_GODS_TESTS,
        "hiding behind a thin front: half the targets rounded up, not down",
    ),
    Mutant(
        "age_of_gods-flee-plus-point",
        "kernels/age_of_gods.py",
        "if uniform(state) < flee[g]:",
        "if uniform(state) < flee[g] + 0.01:",
        AGE_OF_GODS_TESTS,
        "fleeing men flee one point more often",
    ),
    Mutant(
        "age_of_gods-melee-cap-plus-one",
        "kernels/age_of_gods.py",
        "melee_cap[1 - s] = MELEE_STRIKES_PER_DEFENDER * defenders",
        "melee_cap[1 - s] = MELEE_STRIKES_PER_DEFENDER * defenders + 1",
        AGE_OF_GODS_TESTS,
        "one melee strike a round more than 4 per enemy defender",
    ),
    # --- blocks --------------------------------------------------------------------------
    Mutant(
        "blocks-tie-of-two-listed",
        "kernels/blocks.py",
        "if tied <= 1 or tie_break == TIE_LISTED:",
        "if tied <= 2 or tie_break == TIE_LISTED:",
        BLOCKS_TESTS,
        "a tie of two strongest blocks goes to the first listed, not to a die",
    ),
    Mutant(
        "blocks-charge-without-bonus",
        "kernels/blocks.py",
        "firepower = blocks[b, B_FIRE] + (1 if charging else 0)",
        "firepower = blocks[b, B_FIRE] + (0 if charging else 0)",
        BLOCKS_TESTS,
        "a charge fires without its +1",
    ),
    Mutant(
        "blocks-engine-harry-charges",
        "kernels/blocks.py",
        "and not (hit_and_run and params[P_HARRY_FIRE] == HARRY_FIRE_PLAIN)",
        "and True",
        BLOCKS_TESTS,
        "under the engine's reading a knights block that harries charges (as the text's)",
    ),
    Mutant(
        "blocks-attrition-lt",
        "kernels/blocks.py",
        "and below(state, 6) + 1 <= params[P_ATTRITION]",
        "and below(state, 6) + 1 < params[P_ATTRITION]",
        BLOCKS_TESTS,
        "siege attrition: a step lost on a roll under the figure, not at or under it",
    ),
    # --- confrontation -------------------------------------------------------------------
    Mutant(
        "confrontation-morale-recovers-to-1.5",
        "kernels/confrontation.py",
        # Both lines: resolve is kept in whole half points, so with the test left at
        # "below 1" the sum never passes 1 and a looser cap alone changes nothing.
        "if resolve2[u] < 2:\n                    resolve2[u] = min(2, resolve2[u] + 1)",
        "if resolve2[u] < 3:\n                    resolve2[u] = min(3, resolve2[u] + 1)",
        CONFRONTATION_TESTS,
        "morale trending back from below 1 stops at 1.5 instead of 1 (a unit at 1 rises)",
    ),
    Mutant(
        "confrontation-morale-falls-to-3.5",
        "kernels/confrontation.py",
        "resolve2[u] = max(6, resolve2[u] - 1)",
        "resolve2[u] = max(7, resolve2[u] - 1)",
        CONFRONTATION_TESTS,
        "morale trending back from above 3 stops at 3.5 instead of 3",
    ),
    Mutant(
        "confrontation-destroyed-below-zero",
        "kernels/confrontation.py",
        "    if integrity[y] <= 0:\n        destroy(",
        "    if integrity[y] < 0:\n        destroy(",
        CONFRONTATION_TESTS,
        "a unit left at exactly 0 integrity is not destroyed",
    ),
    Mutant(
        "confrontation-flat1-on-ties-only",
        "kernels/confrontation.py",
        "if params[P_RULE] == FLAT1 and sx <= sy:",
        "if params[P_RULE] == FLAT1 and sx < sy:",
        CONFRONTATION_TESTS,
        "flat1: a unit as strong as its target rolls 2dN instead of dealing 1",
    ),
    # --- skirmish ------------------------------------------------------------------------
    Mutant(
        "skirmish-tie-wins",
        "kernels/skirmish.py",
        "if attack_value > defence_value:",
        "if attack_value >= defence_value:",
        SKIRMISH_TESTS,
        "an attack roll equal to the defence roll hits",
    ),
    Mutant(
        "skirmish-riposte-damage-kept",
        "kernels/skirmish.py",
        "        attack -= RIPOSTE_PENALTY\n        damage -= RIPOSTE_PENALTY",
        "        attack -= RIPOSTE_PENALTY",
        SKIRMISH_TESTS,
        "a riposte keeps its full damage",
    ),
    Mutant(
        "skirmish-heal-over-max",
        "kernels/skirmish.py",
        "health[j] = min(before + effect, table[j, P_MAX_HEALTH])",
        "health[j] = min(before + effect, table[j, P_MAX_HEALTH] + 1)",
        SKIRMISH_TESTS,
        "healing may lift a unit one point over its maximum",
    ),
)


def copy_tree(into: Path) -> Path:
    """The working tree in ``into``, without git's data, caches or compiled code."""
    target = into / "tree"
    shutil.copytree(
        ROOT,
        target,
        ignore=shutil.ignore_patterns(
            ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache", "__pycache__", "*.nbi", "*.nbc"
        ),
        symlinks=True,
    )
    return target


def apply(tree: Path, mutant: Mutant) -> None:
    path = tree / mutant.path
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(
            f"{mutant.name}: {mutant.old!r} occurs {text.count(mutant.old)} times in "
            f"{mutant.path}; update the mutant list"
        )
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


#: Both tiers of the tests (README, "Set up"): many mutants die only in the agreement
#: tests, which are marked slow.
PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
PYTEST += ["-m", "slow or not slow"]
#: One process a mutant (pyproject's addopts run a worker a core): --jobs shares the cores.
PYTEST += ["-n", "0"]


def run(mutant: Mutant) -> tuple[str, float, str]:
    """``killed`` or ``survived``, the seconds taken and the first failing test."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as folder:
        tree = copy_tree(Path(folder))
        apply(tree, mutant)
        env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(tree / ".numba")}
        started = time.perf_counter()
        done = subprocess.run(
            [*PYTEST, *mutant.tests],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    if done.returncode == 0:
        return "survived", seconds, ""
    if done.returncode != 1:
        return f"error (pytest exit {done.returncode})", seconds, done.stdout[-300:]
    return "killed", seconds, failed[0].removeprefix("FAILED ") if failed else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="run only the mutants named")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    if args.list:
        for m in chosen:
            print(f"{m.name:40s} {m.path:28s} {m.what}")
        return
    results = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for m, (verdict, seconds, test) in zip(chosen, pool.map(run, chosen), strict=True):
            results.append((m, verdict))
            print(f"{m.name:40s} {verdict:9s} {seconds:6.0f} s  {test}", flush=True)
    killed = sum(1 for _, v in results if v == "killed")
    print(f"\n{killed} of {len(results)} mutants killed")
    sys.exit(0 if killed == len(results) else 1)


if __name__ == "__main__":
    main()
