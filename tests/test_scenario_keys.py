"""The scenario key definitions: one source for the validator, the docs' key tables and
the JSON Schema; non-finite and out-of-range numbers are rejected with the range."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from simulator import rulesets
from simulator.cli import app
from simulator.input.fields import Field, rows
from simulator.rulesets import keys
from tests import ROOT
from tests.test_olympia_errors import assert_clean_failure

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCENARIOS = sorted((ROOT / "scenarios").glob("**/*.toml"))
runner = CliRunner()


@pytest.mark.parametrize("name", rulesets.builtin_names())
def test_docs_page_holds_the_generated_key_table(name: str) -> None:
    page = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
    assert keys.docs_section(name) in page, (
        f"docs/{name}.md is out of date: run python -c 'from pathlib import Path; "
        'from simulator.rulesets.keys import update_docs; update_docs(Path("docs"))\''
    )
    assert page.rstrip("\n").endswith(keys.DOCS_END)


@pytest.mark.parametrize("name", rulesets.names())
def test_every_number_has_a_range_and_every_default_is_allowed(name: str) -> None:
    for path, f in rows(keys.file_format(name)):
        assert f.doc, path
        if f.numeric:
            assert f.lo is not None and f.hi is not None and f.lo <= f.hi, path
        if f.default is None:
            continue
        if f.kind in ("int", "number"):
            assert f.lo <= f.default <= f.hi, path  # type: ignore[operator]
        elif f.kind == "choice":
            assert f.default in f.choices, path
        elif f.kind == "names":
            assert set(f.default) <= set(f.choices), path


def test_a_numeric_field_without_a_range_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a range"):
        Field("count", "int", "men")


def toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_bundled_scenarios_validate_against_their_schema(path: Path) -> None:
    data = toml(path)
    jsonschema.Draft7Validator(keys.schema(data["ruleset"])).validate(data)


@pytest.mark.parametrize("name", rulesets.names())
def test_schemas_are_valid_draft_7(name: str) -> None:
    jsonschema.Draft7Validator.check_schema(keys.schema(name))


#: A unit of scenarios/confrontation/bombard.toml (line 28) to change.
UNIT = "integrity = 14 }"
#: Bad files: (bundled scenario, TOML text appended or replaced, what the error names).
BAD = {
    "unknown top-level key": ("olympia/knights_vs_pikemen", 'colour = "red"\n', None),
    "unknown battle key": ("blocks/field_battle", None, ("[battle]", "[battle]\nturnz = 2")),
    "wrong type": ("confrontation/attack", None, ("turns = ", 'turns = "ten" #')),
    "out of range": ("confrontation/attack", None, ("turns = ", "turns = 10001 #")),
    "negative seed": (
        "olympia/castle_siege",
        None,
        ("seed = ", "seed = -1 #"),
    ),
    "arms too large": ("confrontation/bombard", None, (UNIT, "integrity = 14, arms = 1e19 }")),
    "integrity too large": (
        "confrontation/bombard",
        None,
        (UNIT, "integrity = 99999999999999999999 }"),
    ),
    "skirmish tile far away": (
        "skirmish/cavalry_charge",
        None,
        ("attacked = [", "attacked = [1, 99999] #["),
    ),
    "age_of_gods flee above 1": ("age_of_gods/swamp_ambush", "[units.peasant]\nflee = 1.5\n", None),
}


def bad_file(
    tmp_path: Path, scenario: str, append: str | None, swap: tuple[str, str] | None
) -> Path:
    text = (ROOT / "scenarios" / f"{scenario}.toml").read_text(encoding="utf-8")
    if append is not None:
        # Top-level keys must come before the first table: put them first.
        text = append + text if "[" not in append else text + "\n" + append
    if swap is not None:
        old, new = swap
        assert old in text, (scenario, old)
        text = text.replace(old, new, 1)
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", BAD)
def test_schema_rejects_what_the_validator_rejects(tmp_path: Path, case: str) -> None:
    scenario, append, swap = BAD[case]
    path = bad_file(tmp_path, scenario, append, swap)
    assert_clean_failure(runner.invoke(app, ["validate", str(path)]), ["bad.toml:"])
    data = toml(path)
    validator = jsonschema.Draft7Validator(keys.schema(scenario.split("/")[0]))
    assert list(validator.iter_errors(data)), case


#: The issue's reproductions: each must name the key, the value and the allowed range.
NON_FINITE = [
    ("integrity = 14, arms = inf }", "arms", "inf", "0..10,000"),
    ("integrity = 14, arms = nan }", "arms", "nan", "0..10,000"),
    ("integrity = 14, arms = -inf }", "arms", "-inf", "0..10,000"),
    ("integrity = 14, arms = 1e19 }", "arms", "1e+19", "0..10,000"),
    ("integrity = 14, resolve = nan }", "resolve", "nan", "-1000..1000"),
    ("integrity = 14, resolve = inf }", "resolve", "inf", "-1000..1000"),
    ("integrity = 14, resolve = 1e300 }", "resolve", "1e+300", "-1000..1000"),
    ("integrity = 99999999999999999999 }", "integrity", "99999999999999999999", "1..1,000,000"),
    ("integrity = 14, a = nan }", ".a:", "nan", "0..100"),
    ("integrity = 14, b = inf }", ".b:", "inf", "0..100"),
    ("integrity = 14, arms = 0.333 }", "arms", "0.333", "multiple of 0.01"),
]


@pytest.mark.parametrize("new, key, value, allowed", NON_FINITE)
def test_confrontation_non_finite_and_huge_values(
    tmp_path: Path, new: str, key: str, value: str, allowed: str
) -> None:
    path = bad_file(tmp_path, "confrontation/bombard", None, (UNIT, new))
    message = assert_clean_failure(runner.invoke(app, ["run", str(path), "-n", "10"]), [])
    for part in ("bad.toml:28:", key, value, allowed):
        assert part in message, (part, message)


@pytest.mark.parametrize("name", rulesets.builtin_names())
def test_non_finite_battles_or_seed_are_rejected_everywhere(tmp_path: Path, name: str) -> None:
    scenario = next(p for p in SCENARIOS if p.parent.name == name)
    for line, allowed in (("seed = nan", "0..9,223"), ("battles = inf", "1..1,000,000,000")):
        path = tmp_path / "bad.toml"
        path.write_text(
            line
            + "\n"
            + scenario.read_text(encoding="utf-8").replace("seed =", "#").replace("battles =", "#"),
            encoding="utf-8",
        )
        result = runner.invoke(app, ["validate", str(path)])
        assert_clean_failure(result, ["bad.toml:1:", line.split()[0], "whole number", allowed])


def test_schema_command_prints_the_schema(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "--ruleset", "confrontation"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == keys.schema("confrontation")
    target = tmp_path / "confrontation.json"
    result = runner.invoke(app, ["schema", "--ruleset", "confrontation", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text(encoding="utf-8")) == keys.schema("confrontation")
    assert_clean_failure(
        runner.invoke(app, ["schema", "--ruleset", "confrontaton"]),
        ["--ruleset", "did you mean 'confrontation'"],
    )
