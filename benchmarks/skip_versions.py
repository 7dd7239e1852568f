"""The skip kernel at a git revision against the working tree's, on one thread:
``python benchmarks/skip_versions.py REV [--rounds N]``.

Loads kernels/olympia/skip.py as it was at ``REV`` (``git show``) beside the current one,
runs both on the yardstick battle ("noble, 100 soldier" against "noble, 20 knight"), the
three benchmark scenarios and scenarios/olympia/castle_siege.toml, in turn for
``--rounds`` rounds, and prints each one's fewest CPU microseconds per battle, their
ratio, and whether the two gave identical outcome rows for the same seed and battles (a
change that keeps the draws must). One thread and CPU time, so that the comparison is of
the kernel's work, not of the threads' scheduling or the shared machine's other load; the
first round compiles and is not timed.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402

import simulator  # noqa: E402
from kernels.olympia import skip as olympia_skip  # noqa: E402
from kernels.stops import no_stops  # noqa: E402
from simulator.rulesets.olympia.prepare import OlympiaPrepared  # noqa: E402

#: Battles per timed call: each call lasts a fraction of a second on one thread.
BATTLES = {
    "yardstick": 400_000,
    "small": 400_000,
    "medium": 100_000,
    "large": 640,
    "castle_siege": 40_000,
}


def kernel_at(revision: str, folder: Path) -> ModuleType:
    """kernels/olympia/skip.py at ``revision`` (one since olympia's kernels became a
    package), imported as a module of ``kernels.olympia``."""
    source = subprocess.run(
        ["git", "show", f"{revision}:kernels/olympia/skip.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = folder / "olympia_skip_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("kernels.olympia.skip_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "kernels.olympia"  # its relative imports are of today's kernels
    spec.loader.exec_module(module)
    return module


def battles() -> dict[str, OlympiaPrepared]:
    yardstick = simulator.inline_scenario("olympia", "noble, 100 soldier", "noble, 20 knight")
    found = {"yardstick": OlympiaPrepared(yardstick.model)}
    for name in ("small", "medium", "large"):
        scenario = simulator.load_scenario(ROOT / "benchmarks" / "scenarios" / f"{name}.toml")
        found[name] = OlympiaPrepared(scenario.model)
    castle = simulator.load_scenario(ROOT / "scenarios" / "olympia" / "castle_siege.toml")
    found["castle_siege"] = OlympiaPrepared(castle.model)
    return found


def compare(then: ModuleType, rounds: int) -> list[str]:
    lines = ["| battle | then (us/battle) | now (us/battle) | now / then speed | same rows |"]
    lines.append("|---|---:|---:|---:|---|")
    for name, prepared in battles().items():
        a = prepared.arrays
        n = BATTLES[name]
        best = {"then": float("inf"), "now": float("inf")}
        rows = {}
        for round_ in range(rounds + 1):
            for label, module in (("then", then), ("now", olympia_skip)):
                out = np.zeros((n, a.n_columns), np.int64)
                started = time.process_time()
                # A kernel per army size since issue 50: the caller says which.
                sized = getattr(module, "batch_rows_for", None)
                rows_arg = () if sized is None else (sized(a.groups),)
                args = (a.groups, a.survive, a.sides, a.order, np.uint64(7), 0, out)
                # Stop rules and steps recorded since issue 51: none here.
                # A jitted kernel, or (since issue 50) a function calling one.
                kernel = module.skip_battles
                code = getattr(kernel, "py_func", kernel).__code__
                if "stops" in code.co_varnames[: code.co_argcount]:
                    args += (
                        no_stops(),
                        np.zeros(0, np.int64),
                        np.zeros((n, 0, out.shape[1]), np.int64),
                    )
                module.skip_battles(*args, *rows_arg)
                took = time.process_time() - started
                if round_:  # the first round compiles or loads the kernels
                    best[label] = min(best[label], took)
                rows[label] = out
        then_us, now_us = (best[k] / n * 1e6 for k in ("then", "now"))
        same = "yes" if np.array_equal(rows["then"], rows["now"]) else "NO"
        lines.append(
            f"| {name} | {then_us:,.3f} | {now_us:,.3f} | {then_us / now_us:.2f}x | {same} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="a git revision, e.g. HEAD~3 or a commit")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds (default 4)")
    args = parser.parse_args()
    numba.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        then = kernel_at(args.revision, Path(folder))
        print("\n".join(compare(then, args.rounds)))


if __name__ == "__main__":
    main()
