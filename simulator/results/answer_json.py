"""The one writer of an answer as JSON text: ``--json`` of every command and
:meth:`simulator.results.result.Result.to_json` print through it, so that every answer
is indented alike and none writes the non-standard NaN unless it says so."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any


def answer_json(
    data: Mapping[str, Any],
    *,
    default: Callable[[Any], Any] | None = None,
    allow_nan: bool = False,
) -> str:
    """``data`` as indented JSON text (no final newline). ``default``: how a value JSON
    has no type for is written (``float`` for NumPy numbers, ``str`` for the values a
    sweep varies); ``allow_nan``: NaN written as ``NaN`` (the sweeps' and the baseline
    report's answers, as they always were) rather than refused."""
    return json.dumps(data, indent=2, allow_nan=allow_nan, default=default)
