"""A command-line query loads what it needs and no more: start-up is part of what an
``odds`` query costs (docs/benchmarks.md times the whole process)."""

from __future__ import annotations

import subprocess
import sys

#: Runs ``battle-odds odds`` in a fresh interpreter, then says which modules it loaded.
QUERY = """
import runpy, sys
sys.argv = ["battle-odds", "odds", "--attacker", "noble, 5 soldier",
            "--defender", "noble, 3 soldier", "--battles", "10", "--json"]
try:
    runpy.run_module("simulator", run_name="__main__")
except SystemExit as stop:
    assert not stop.code, stop.code
print("loaded:", " ".join(sorted(m for m in sys.modules if "." not in m)), file=sys.stderr)
"""


def loaded_by_a_query() -> set[str]:
    done = subprocess.run([sys.executable, "-c", QUERY], capture_output=True, text=True, check=True)
    assert '"win"' in done.stdout  # the query ran and answered
    line = next(x for x in done.stderr.splitlines() if x.startswith("loaded:"))
    return set(line.split()[1:])


def test_an_odds_query_does_not_import_pandas() -> None:
    """pandas was a fifth of the start-up (0.2 s of 1.1 s) and builds nothing an
    ``odds`` answer needs; the modules that make frames import it when they do."""
    loaded = loaded_by_a_query()
    assert {"simulator", "numba", "numpy"} <= loaded  # the probe sees real imports
    assert "pandas" not in loaded
