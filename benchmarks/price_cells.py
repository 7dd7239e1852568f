"""What making a price search's cells costs: validated and prepared whole, or filled in
from the first cell of their two types (simulator/studies/machinery/one_type_cells.py).

    python benchmarks/price_cells.py [--quick]

Records the cells ``battle-odds prices --ruleset olympia`` fights (``--quick``: three
types, budgets 10 and 20), then makes each of them both ways, in the search's order, on
one thread: CPU seconds, fastest of three runs, the two ways in turn so that the shared
machine's load moves both alike; the processor and the load average are printed. The
battles and chain tables, the same either way, are left out.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import load_average, processor  # noqa: E402
from simulator.rulesets import Army, get  # noqa: E402
from simulator.scenario.scenario import prepare  # noqa: E402
from simulator.studies.machinery import price_cells  # noqa: E402
from simulator.studies.machinery.one_type import one_type_scenario  # noqa: E402
from simulator.studies.machinery.one_type_cells import OneTypeCells  # noqa: E402
from simulator.studies.prices import fair_prices  # noqa: E402

Cell = tuple[str, int, str, int]


def searched_cells(quick: bool) -> list[Cell]:
    """The cells a price search makes, in its order."""
    cells: list[Cell] = []
    make = price_cells.CellBank._cell

    def recorded(bank: price_cells.CellBank, *cell: str | int) -> price_cells.Built:
        cells.append(cell)  # type: ignore[arg-type]
        return make(bank, *cell)  # type: ignore[arg-type]

    price_cells.CellBank._cell = recorded  # type: ignore[method-assign]
    try:
        if quick:
            fair_prices("olympia", "soldier,archer,knight", budgets=(10, 20), threads=1)
        else:
            fair_prices("olympia", threads=1)
    finally:
        price_cells.CellBank._cell = make  # type: ignore[method-assign]
    return cells


def whole(cells: list[Cell]) -> int:
    rs = get("olympia")
    for a, a_men, d, d_men in cells:
        prepare(one_type_scenario(rs, Army(a, a_men), Army(d, d_men), {}))
    return 0


def filled_in(cells: list[Cell]) -> int:
    """The cells made as a search makes them; how many were filled in."""
    made = OneTypeCells(get("olympia"), {})
    filled = 0
    for a, a_men, d, d_men in cells:
        built = made.cell(Army(a, a_men), Army(d, d_men))
        if isinstance(built, tuple):
            filled += 1
        else:
            prepare(built)
    return filled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three types, budgets 10 and 20")
    quick = parser.parse_args().quick
    cells = searched_cells(quick)
    best = {"whole": float("inf"), "filled in": float("inf")}
    filled = 0
    ways: dict[str, Callable[[list[Cell]], int]] = {"whole": whole, "filled in": filled_in}
    for _ in range(3):
        for name, way in ways.items():
            started = time.process_time()
            filled = way(cells) or filled
            best[name] = min(best[name], time.process_time() - started)
    print(f"{processor()}, load average {load_average()}")
    print(f"{len(cells):,} cells, {filled:,} of them filled in")
    print("| cells made | CPU s | per cell (ms) |")
    print("| --- | --- | --- |")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.3f} | {seconds / len(cells) * 1e3:.3f} |")
    print(f"filled in / whole: {best['filled in'] / best['whole']:.2f}")


if __name__ == "__main__":
    main()
