"""Property-based fuzzing of scenario files, per ruleset.

Each case mutates a bundled scenario (a key deleted, a value replaced by a wrong type,
an out-of-range, non-finite or huge number or a junk string, an unknown key added, the
TOML text truncated or garbled) and runs ``battle-odds run FILE --battles 200``. It must
either run (exit 0) or fail with exit status 2 and exactly one error line: never a
traceback, never a hang. A case slower than ``CASE_SECONDS`` fails; a real hang (a
kernel that never returns cannot be interrupted from Python) is ended by a watchdog
that dumps the stacks and exits the test process with an error.
"""

from __future__ import annotations

import copy
import faulthandler
import json
import math
import re
import sys
import time
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st
from typer.testing import CliRunner

from simulator import rulesets
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.input.fields import Field, rows
from simulator.rulesets import keys
from simulator.scenario.scenario import set_path
from tests import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Mutants a ruleset meets in the first tier, and more, other ones, in the slow tier
#: (each a validation and a run of 200 battles: about 0.1 s, 0.3 s on a busy machine):
#: 300 a ruleset in all, 15 of them in the first tier's second or two.
CASES = 15
MORE_CASES = 285
BATTLES = "200"
#: A case (validation and 200 battles) slower than this is a failure.
CASE_SECONDS = 20.0
#: Whole-process watchdog: far above any sound case, it turns a hang into a failure.
HANG_SECONDS = 120.0
runner = CliRunner()

NON_FINITE = [math.nan, math.inf, -math.inf, 1e300]
#: Replacement values: wrong types, edges, out-of-range, non-finite and huge numbers,
#: junk strings. Numbers in range stay small so that a valid mutant runs quickly.
JUNK: list[Any] = [
    None,  # deletes the key
    -1,
    0,
    1,
    2,
    3,
    -(2**63),
    2**63,
    2**70,
    10**19,
    99999999999999999999,
    1_000_001,
    100_001,
    10_001,
    0.5,
    0.1,
    -0.0,
    1e-300,
    1e19,
    1e300,
    -1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    "",
    "x",
    "knigt",
    "10",
    "nan",
    "a.b c",
    "0 swordsman",
    "999999999999 swordsman",
    "knight(health=99999999999999999999)",
    "\u00e9\u2603",
    "y" * 300,
    [],
    [1, 2],
    ["attack", "attack"],
    [0, 0, 0],
    {},
    {"type": "x"},
]


def scenarios(ruleset: str) -> list[tuple[str, dict[str, Any]]]:
    paths = sorted((ROOT / "scenarios" / ruleset).glob("*.toml"))
    out = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        out.append((text, tomllib.loads(text)))
    return out


@cache
def numeric_keys(ruleset: str) -> list[tuple[str, Field]]:
    """Every numeric key the ruleset defines, as a data path (lists at their first
    element, a table's other keys as the ruleset's first unit type), with its field."""
    some_type = str(rulesets.get(ruleset).units()["type"].iloc[0])
    found = {}
    for path, f in rows(keys.file_format(ruleset)):
        if f.numeric:
            found[re.sub(r"<[a-z]+>", some_type, path.replace("[]", "[0]"))] = f
    return sorted(found.items())


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and list index in ``data``, as tuples of steps."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((*prefix, key))
            found.extend(paths(value, (*prefix, key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found.append((*prefix, i))
            found.extend(paths(value, (*prefix, i)))
    return found


def tables(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return [p for p in [prefix, *paths(data, prefix)] if isinstance(_get(data, p), dict)]


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def toml_value(value: Any) -> str:
    """TOML for a value, tables inline: enough to write any mutant back to a file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else {math.inf: "inf", -math.inf: "-inf"}.get(value, repr(value))
        )
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_text(data: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in data.items())


@st.composite
def mutants(draw: st.DrawFn, ruleset: str) -> tuple[str, str]:
    """(what was done, the mutant's TOML text)."""
    text, data = draw(st.sampled_from(scenarios(ruleset)))
    kind = draw(
        st.sampled_from(
            ["value", "value", "known key", "known key", "unknown key", "truncate", "garble"]
        )
    )
    if kind == "truncate":
        cut = draw(st.integers(0, len(text) - 1))
        return f"truncated at {cut}", text[:cut]
    if kind == "garble":
        at = draw(st.integers(0, len(text) - 1))
        junk = draw(st.sampled_from(["=", "[", "]", '"', "{", "\n[[x]]\n", "#", "\x00", "9e999"]))
        return f"garbled at {at} with {junk!r}", text[:at] + junk + text[at + 1 :]
    mutant = copy.deepcopy(data)
    if kind == "known key":
        # Any numeric key the ruleset defines, present in the file or not.
        key, f = draw(st.sampled_from(numeric_keys(ruleset)))
        edges = [f.lo - 1, f.hi + 1, f.lo] if f.kind != "number" else [f.lo - 0.5, f.hi + 0.5, f.lo]
        if f.kind == "point":
            edges = [[0, f.hi + 1], [f.lo - 1, 0], [0, 0]]
        value = draw(
            st.one_of(st.sampled_from(NON_FINITE), st.sampled_from([*edges, 2**70, "x", 0.5]))
        )
        try:
            set_path(mutant, key, value)
        except BattleOddsError:  # a list the scenario does not have
            set_path(mutant, "seed", value)
        return f"{key} = {value!r}"[:200], toml_text(mutant)
    if kind == "unknown key":
        where = draw(st.sampled_from(tables(mutant)))
        _get(mutant, where)["colour"] = "red"
        return f"unknown key at {where}", toml_text(mutant)
    where = draw(st.sampled_from([p for p in paths(mutant) if p != ("ruleset",)]))
    value = draw(st.sampled_from(JUNK))
    parent = _get(mutant, where[:-1])
    if value is None:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return f"{where} = {value!r}"[:200], toml_text(mutant)


def unusable_numbers(data: Any) -> list[Any]:
    values = [_get(data, p) for p in paths(data)]
    return [
        v
        for v in values
        if (isinstance(v, float) and not math.isfinite(v))
        or (isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53)
    ]


TALLY: dict[str, Counter[str]] = {}


@pytest.fixture(autouse=True, scope="module")
def watchdog() -> Any:
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.mark.parametrize("ruleset", rulesets.builtin_names())
def test_mutated_scenarios_run_or_fail_cleanly(ruleset: str, tmp_path: Path) -> None:
    mutants_run_or_fail_cleanly(ruleset, tmp_path, CASES, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", rulesets.builtin_names())
def test_many_more_mutated_scenarios_run_or_fail_cleanly(ruleset: str, tmp_path: Path) -> None:
    mutants_run_or_fail_cleanly(ruleset, tmp_path, MORE_CASES, seed=1)


def mutants_run_or_fail_cleanly(ruleset: str, tmp_path: Path, cases: int, seed: int) -> None:
    """``cases`` mutants of the ruleset's scenarios, drawn from hypothesis's stream
    ``seed`` (the same ones every run), each run as a user would: it runs, or it is
    refused in one line with status 2."""
    tally: Counter[str] = Counter()
    path = tmp_path / "mutant.toml"

    @settings(
        max_examples=cases,
        derandomize=seed == 0,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutants(ruleset))
    def check(case: tuple[str, str]) -> None:
        what, text = case
        path.write_text(text, encoding="utf-8")
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        start = time.perf_counter()
        result = runner.invoke(app, ["run", str(path), "--battles", BATTLES])
        elapsed = time.perf_counter() - start
        faulthandler.cancel_dump_traceback_later()
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            what,
            result.exception,
        )
        assert "Traceback" not in result.output, (what, result.output)
        assert elapsed < CASE_SECONDS, (what, elapsed)
        if result.exit_code == 0:
            # What runs holds no number a kernel cannot use: nan, inf or beyond 2**53.
            assert not unusable_numbers(tomllib.loads(text)), (
                what,
                unusable_numbers(tomllib.loads(text)),
            )
            tally["ran"] += 1
            return
        assert result.exit_code == 2, (what, result.exit_code, result.output)
        message = result.stderr
        assert message.startswith("error: ") and message.count("\n") == 1, (what, message)
        tally["rejected"] += 1

    # Seed 0: hypothesis's own derandomized stream; any other: that seed's, so that the
    # slow tier's mutants are others than the first tier's.
    (fixed_seed(seed)(check) if seed else check)()
    TALLY[ruleset] = tally
    print(
        f"\n{ruleset}: {sum(tally.values())} cases, {tally['ran']} ran, "
        f"{tally['rejected']} rejected"
    )
    # The mutations must exercise both paths: some mutants valid, most not.
    assert tally["ran"] > 0 and tally["rejected"] > 0, tally
