"""Write the stored reference samples: ``python -m tests.reference.generate [filter ...]``.

For every agreement case (tests/reference/cases.py) the pure-Python reference runs
:data:`BATTLES` battles, in chunks spread over the cores, and the outcome columns are kept
as an exact :class:`simulator.results.stats.Tally` in ``tests/reference/samples/<case>.json``.
The file records what it was made from: a hash of the reference module's source and one
of the scenario (its canonical data and the validated model it resolves to). The agreement
tests recompute both and fail, naming this command, when either has changed.

Each sample is sized so that the test sees one point of probability moved in any column
(the winner and every other) with power TARGET (:func:`battles_needed`). A filter keeps
the cases whose file stem contains it (``olympia``, ``blocks--storm``); ``--stale`` keeps
the cases whose sample is missing or out of date; ``--grow`` keeps the current samples
smaller than they should be and runs only the battles they lack, added to the stored ones
(chunk i of a case always has the seed ``case_seed(case) * 1000 + i``, so a grown sample
is the sample a fresh run of that size would write). ``--battles N`` sets the size
instead. The slowest references run 60-150 battles/s a core (confrontation, skirmish);
regenerating every sample takes about three hours of one core, so run it niced.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import inspect
import json
import multiprocessing
import os
import sys
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

import simulator
from simulator.atomic import write_atomically
from simulator.results.stats import Tally
from simulator.testing import agreement_power
from tests.reference.cases import (
    CASES,
    KERNEL_BATTLES,
    Case,
    reference_module_name,
    reference_runner,
)

SAMPLES = Path(__file__).resolve().parent / "samples"
#: Reference battles per case: at least SMALLEST, and more (up to LARGEST) until the
#: agreement test sees a one-point shift of P(attacker wins), and one point moved between
#: neighbouring values of every other column, with power TARGET (a little over the tests'
#: MIN_POWER, so that a sample whose distribution comes out a little different from the
#: one it was sized on still passes), judged from the stored sample when it is current and
#: otherwise from the kernel's own outcome probabilities on PILOT battles (the same up to
#: noise; the test checks the power it states from the stored sample).
SMALLEST = 20_000
LARGEST = 150_000
TARGET = 0.81
PILOT = 200_000
#: The cheapest references first, so most samples are written early.
ORDER = ("blocks", "olympia", "skirmish", "age_of_gods", "confrontation")
#: Battles per task handed to a worker process (each with a seed of its own).
CHUNK = 5_000
COMMAND = "python -m tests.reference.generate"


def reference_hash(ruleset: str) -> str:
    """A hash of the reference module's source text."""
    module = sys.modules.get(reference_module_name(ruleset))
    if module is None:
        reference_runner(ruleset)
        module = sys.modules[reference_module_name(ruleset)]
    return hashlib.sha256(inspect.getsource(module).encode()).hexdigest()[:16]


def _plain(value: Any) -> Any:
    """JSON for what a model holds that JSON does not: sets in sorted order (their repr
    follows the process's string hashing), anything else by its repr."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def scenario_hash(case: Case) -> str:
    """A hash of the scenario's canonical data and of the model it validates to (so a
    change to a package unit table an inline scenario uses counts as well)."""
    scenario = case.build()
    model = scenario.model
    resolved = dataclasses.asdict(model) if dataclasses.is_dataclass(model) else model
    text = scenario.canonical + "\n" + json.dumps(resolved, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_path(case: Case) -> Path:
    return SAMPLES / f"{case.key}.json"


def stale_reason(case: Case) -> str | None:
    """Why the stored sample of ``case`` cannot be used (None: it can)."""
    path = sample_path(case)
    if not path.exists():
        return f"no stored reference sample {path.name}"
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored["reference_hash"] != reference_hash(case.ruleset):
        return f"tests/reference/{case.ruleset}.py changed since {path.name} was generated"
    if stored["scenario_hash"] != scenario_hash(case):
        return f"the scenario of {case.name!r} changed since {path.name} was generated"
    return None


def load_sample(case: Case) -> Tally:
    """The stored reference tally of ``case``; AssertionError naming the command to
    regenerate it when it is missing or out of date."""
    reason = stale_reason(case)
    if reason is not None:
        raise AssertionError(f"{reason}: regenerate it with `{COMMAND} {case.key}`")
    stored = json.loads(sample_path(case).read_text(encoding="utf-8"))
    return Tally.from_dict(stored["tally"])


def case_seed(case: Case) -> int:
    return zlib.crc32(case.key.encode())


def _run_chunk(case_key: str, first_chunk: int, battles: int) -> tuple[str, dict[str, Any]]:
    case = next(c for c in CASES if c.key == case_key)
    scenario = case.build()
    columns = reference_runner(case.ruleset)(
        scenario.model, battles, case_seed(case) * 1_000 + first_chunk
    )
    arrays = {name: np.asarray(values, np.int64) for name, values in columns.items()}
    return case_key, Tally.of(arrays).to_dict()


def sizing_tally(case: Case) -> Tally:
    """The distribution a case's sample is sized on: its stored sample when current,
    else PILOT kernel battles."""
    if stale_reason(case) is None:
        return load_sample(case)
    return simulator.simulate(case.build(), PILOT, 1, keep_battles=False).tally


def weakest_power(case: Case, battles: int | None = None, tally: Tally | None = None) -> float:
    """The smallest power over the columns of the case's agreement test (the winner's
    and every other's, :func:`simulator.testing.agreement_power`) with a reference
    sample of ``battles`` battles (default: the sizing tally's own)."""
    tally = tally if tally is not None else sizing_tally(case)
    kernel = KERNEL_BATTLES[case.ruleset]
    return min(agreement_power(tally, kernel, reference_battles=battles).values())


def battles_needed(case: Case, tally: Tally | None = None) -> int:
    """The reference battles (a multiple of CHUNK, SMALLEST to LARGEST) that give every
    column's comparison the power TARGET against the case's kernel battles."""
    tally = tally if tally is not None else sizing_tally(case)
    for battles in range(SMALLEST, LARGEST + 1, CHUNK):
        if weakest_power(case, battles, tally) >= TARGET:
            return battles
    return LARGEST


def _chunks(
    cases: list[Case], sizes: dict[str, int], kept: dict[str, Tally]
) -> Iterator[tuple[str, int, int]]:
    for case in cases:
        total = sizes[case.key]
        for index, start in enumerate(range(0, total, CHUNK)):
            if start >= kept[case.key].battles:
                yield case.key, index, min(CHUNK, total - start)


def generate(
    cases: list[Case], workers: int, grow: bool = False, battles: int | None = None
) -> None:
    """Write the samples of ``cases`` with the battles they need (or ``battles``); with
    ``grow``, run only the battles a current sample lacks and add them to it (a sample
    that has enough is left alone)."""
    SAMPLES.mkdir(exist_ok=True)
    sizes, kept = {}, {}
    for case in cases:
        tally = sizing_tally(case)
        sizes[case.key] = battles or battles_needed(case, tally)
        current = grow and stale_reason(case) is None
        kept[case.key] = tally if current else Tally()
        if kept[case.key].battles % CHUNK:
            raise SystemExit(f"{case.key}: {kept[case.key].battles} battles, not whole chunks")
    cases = [c for c in cases if sizes[c.key] > kept[c.key].battles]
    for case in cases:
        key = case.key
        added = sizes[key] - kept[key].battles
        print(f"{key}: {added:,} reference battles to run, {sizes[key]:,} in all", flush=True)
    tallies = {c.key: kept[c.key] for c in cases}
    left = {c.key: sum(1 for _ in _chunks([c], sizes, kept)) for c in cases}
    started = time.perf_counter()
    # Spawned, not forked: the parent ran the (OpenMP-threaded) kernel for the pilots.
    with ProcessPoolExecutor(workers, multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_run_chunk, *chunk) for chunk in _chunks(cases, sizes, kept)]
        for future in as_completed(futures):
            key, data = future.result()
            tallies[key] = tallies[key].merge(Tally.from_dict(data))
            left[key] -= 1
            if left[key] == 0:
                case = next(c for c in cases if c.key == key)
                _write(case, tallies[key])
                seconds = time.perf_counter() - started
                print(f"{key}: {tallies[key].battles:,} battles ({seconds:.0f} s)", flush=True)


def _write(case: Case, tally: Tally) -> None:
    stored = {
        "ruleset": case.ruleset,
        "case": case.name,
        "reference_hash": reference_hash(case.ruleset),
        "scenario_hash": scenario_hash(case),
        "seed": case_seed(case),
        "chunk": CHUNK,
        "tally": tally.to_dict(),
    }
    write_atomically(sample_path(case), json.dumps(stored, separators=(",", ":")) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("filters", nargs="*", help="keep cases whose file stem contains one")
    parser.add_argument("--stale", action="store_true", help="only missing or outdated samples")
    parser.add_argument(
        "--grow",
        action="store_true",
        help="only current samples smaller than needed, grown by the battles they lack",
    )
    parser.add_argument("--battles", type=int, help="this many battles a case (whole chunks)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.battles is not None and (args.battles <= 0 or args.battles % CHUNK):
        parser.error(f"--battles: a positive multiple of {CHUNK}, not {args.battles}")
    cases = [c for c in CASES if not args.filters or any(f in c.key for f in args.filters)]
    if args.stale:
        cases = [c for c in cases if stale_reason(c) is not None]
    if args.grow:
        # The weakest first: a run stopped early has written the samples that gained most.
        cases = [c for c in cases if stale_reason(c) is None]
        cases.sort(key=weakest_power)
    else:
        cases.sort(key=lambda c: ORDER.index(c.ruleset))
    generate(cases, args.workers, grow=args.grow, battles=args.battles)


if __name__ == "__main__":
    main()
