"""simulator/running/imports_ahead.py: modules imported on a thread while a study fights,
whole when the study's own import finds them, and the studies that ask for them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: A fresh interpreter (this one has SciPy imported already): import_ahead of a module not
#: imported yet, then the study's own import of it at once, as prices' first root finder.
CHILD = textwrap.dedent(
    """
    import sys, threading
    from simulator.running.imports_ahead import import_ahead
    assert "scipy.optimize" not in sys.modules
    import_ahead("scipy.optimize", "no_such_module_of_battle_odds")
    ahead = [t for t in threading.enumerate() if t.name == "battle-odds imports"]
    assert len(ahead) == 1 and ahead[0].daemon, ahead
    from scipy.optimize import brentq  # waits for the thread's import, never half a module
    assert brentq(lambda x: x - 0.25, 0.0, 1.0) == 0.25
    ahead[0].join(30)
    assert not ahead[0].is_alive()
    import_ahead("scipy.optimize")  # imported: no thread
    assert not [t for t in threading.enumerate() if t.name == "battle-odds imports"]
    print("ok")
    """
)


def test_a_module_imported_ahead_is_whole_when_the_study_imports_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_prices_and_races_import_scipy_ahead(monkeypatch) -> None:
    """The two studies that import SciPy at first use ask for it as their battles start."""
    from simulator.studies import prices
    from simulator.studies.machinery import racing

    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(racing, "import_ahead", lambda *names: asked.append(names))
    racing.Race([0, 1], lambda armies, first, count: None, [10])
    assert asked == [("scipy.special",)]

    asked.clear()
    monkeypatch.setattr(prices, "import_ahead", lambda *names: asked.append(names))
    prices.fair_prices("olympia", "soldier,archer", budgets="10", battles=200)
    assert asked == [("scipy.optimize", "scipy.special")]
