"""One writer of answers as JSON (simulator.results.answer_json): every command's
``--json`` and ``Result.to_json`` go through it."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from simulator.results.answer_json import answer_json
from tests import ROOT


def test_no_command_writes_json_of_its_own() -> None:
    """The command line's JSON text comes from the one writer (print_json); only the
    schema command writes JSON that is not an answer (a schema file)."""
    own = re.compile(r"\bjson(lib)?\.dumps\(")
    writers = {
        p.relative_to(ROOT).as_posix()
        for p in [*(ROOT / "simulator" / "cli").glob("*.py"), ROOT / "simulator/results/result.py"]
        if own.search(p.read_text())
    }
    assert writers == {"simulator/cli/schema.py"}


def test_the_writer_refuses_nan_unless_told() -> None:
    with pytest.raises(ValueError):
        answer_json({"p": math.nan})
    assert answer_json({"p": math.nan}, allow_nan=True) == '{\n  "p": NaN\n}'
    assert answer_json({"n": np.int64(3)}, default=float) == '{\n  "n": 3.0\n}'
    assert answer_json({"v": np.int64(3)}, default=str) == '{\n  "v": "3"\n}'
