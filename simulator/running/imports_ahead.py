"""Modules a study will need later, imported on a thread of their own while it fights.

SciPy's root finders and special functions take 0.3 to 0.6 s each to import (Intel Xeon,
2 cores), and a study imports them at first use, on the thread every other step of it
waits for: ``prices`` after its first cells are fought, ``best`` at its race's first
look. Imported on a thread as the battles start, they cost next to nothing: the battles'
kernels run without the interpreter's lock, and on a cold cache the first battles wait
for their kernels to compile for seconds. A study's own ``import`` of the module then
finds it in ``sys.modules``, or waits on the module's import lock for the thread to
finish it: never a half-imported module.
"""

from __future__ import annotations

import importlib
import sys
import threading
from contextlib import suppress


def import_ahead(*names: str) -> None:
    """Import the modules ``names`` that are not imported yet, on a daemon thread (one
    that does not keep the process alive when the command has answered)."""
    wanted = [name for name in names if name not in sys.modules]
    if wanted:
        threading.Thread(
            target=_import_all, args=(wanted,), name="battle-odds imports", daemon=True
        ).start()


def _import_all(names: list[str]) -> None:
    for name in names:
        # A module that fails to import here fails again, with its own error, where the
        # study imports it: nothing to report from this thread.
        with suppress(Exception):
            importlib.import_module(name)
