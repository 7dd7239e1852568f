"""The same battles with Numba's private parts used and with Numba left wholly its own.

kernels/_warm.py and kernels/_jit.py use parts of Numba that are not its public API (a
faster loading of cached kernels, the reference-count switch, LLVM's forced inlining,
blocks' loops kept scalar); ``BATTLE_ODDS_NUMBA_SHORTCUTS=0`` turns every one of them off.
They change how a kernel is compiled and loaded, never what it computes, so every command
must print the same answer and keep the same rows either way. This check proves it on
every kernel path (``battle-odds warm``'s jobs), every bundled scenario (its rows, battle
by battle) and every ruleset's battle as it unfolds and in waves:

    python -m tests.shortcuts_agree            # compiles every kernel anew (minutes)

The kernels without the shortcuts compile into a Numba cache of their own (a temporary
folder, or ``--cache DIR`` to keep it between runs); the others load from the tree's
cache. It exits 1 listing every command whose answer or rows differ, 0 when all agree.
``.ci/run`` runs it after the test tiers: cheaper than the whole suite a second time,
and stricter, since it compares battles rather than intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import ROOT

#: How many battles each bundled scenario keeps, row by row.
BATTLES = "3000"
SEED = "20261207"


@dataclass(frozen=True)
class Case:
    """One command, run once each way: its arguments, and a ``{rows}`` placeholder where
    it keeps its battles (replaced by a file of its own for each way)."""

    name: str
    args: tuple[str, ...]


def cases(folder: Path) -> Iterator[Case]:
    """Every case, each ruleset's starter scenario written into ``folder``."""
    from simulator import rulesets
    from simulator.cli.warm import jobs

    names = list(rulesets.available())
    for name in names:
        (folder / f"{name}.toml").write_text(rulesets.get(name).starter(), encoding="utf-8")

    def starter_path(name: str) -> Path:
        return folder / f"{name}.toml"

    for job in jobs(names):
        starter = str(starter_path(job.ruleset))
        yield Case(job.name, tuple(a.replace("{starter}", starter) for a in job.args))
    for scenario in sorted((ROOT / "scenarios").glob("*/*.toml")):
        yield Case(
            str(scenario.relative_to(ROOT)),
            ("run", str(scenario), "-n", BATTLES, "--seed", SEED, "--json",
             "--keep-battles", "{rows}"),
        )  # fmt: skip
    for name in names:
        yield Case(
            f"{name}, round by round",
            ("run", str(starter_path(name)), "-n", "1000", "--seed", SEED, "--by-round", "--json"),
        )
    for waves in sorted((ROOT / "examples" / "waves").glob("*.toml")):
        yield Case(
            str(waves.relative_to(ROOT)),
            ("run", str(waves), "-n", "1000", "--seed", SEED, "--json"),
        )


def _timeless(value: Any) -> Any:
    """An answer without what differs from run to run (its seconds, its compile time)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _run(case: Case, rows: Path, env: dict[str, str]) -> tuple[Any, bytes]:
    args = [a.replace("{rows}", str(rows)) for a in case.args]
    done = subprocess.run(
        [sys.executable, "-m", "simulator", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-400:]}")
    kept = rows.read_bytes() if "{rows}" in case.args else b""
    return _timeless(json.loads(done.stdout)), kept


def compare(case: Case, folder: Path, cache: Path) -> str | None:
    """None when both ways agree, else what differs."""
    base = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    ways = {
        "with": base,
        "without": {**base, "BATTLE_ODDS_NUMBA_SHORTCUTS": "0", "NUMBA_CACHE_DIR": str(cache)},
    }
    slug = "".join(c if c.isalnum() else "_" for c in case.name)
    try:
        (answer_on, rows_on), (answer_off, rows_off) = (
            _run(case, folder / f"{slug}.{way}.csv", env) for way, env in ways.items()
        )
    except RuntimeError as error:
        return str(error)
    if rows_on != rows_off:
        return "the kept battles differ"
    if answer_on != answer_off:
        differing = sorted(k for k in answer_on if answer_on.get(k) != answer_off.get(k))
        return f"the answers differ in {', '.join(differing) or 'their keys'}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="Numba cache for the kernels without shortcuts")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="shortcuts-") as scratch:
        cache = options.cache or Path(scratch) / "cache"
        env = {**os.environ, "BATTLE_ODDS_NUMBA_SHORTCUTS": "0", "NUMBA_CACHE_DIR": str(cache)}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "simulator", "warm"], cwd=ROOT, env=env, check=True)
        todo = list(cases(Path(scratch)))
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            found = list(pool.map(lambda c: compare(c, Path(scratch), cache), todo))
        failed = [(case, why) for case, why in zip(todo, found, strict=True) if why]
        for case, why in failed:
            print(f"DIFFERS  {case.name}: {why}")
        seconds = time.perf_counter() - started
        print(
            f"shortcuts_agree: {len(todo) - len(failed)} of {len(todo)} commands the same "
            f"with and without Numba's private parts ({seconds:.0f} s)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
