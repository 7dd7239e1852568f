"""A combination of a scenario with ranges filled in from one of its family prepared whole
(Ruleset.fill_in; Olympia's counts and break points, simulator/rulesets/olympia/fill_in.py;
docs/unknowns.md "Speed"): the same model, arrays and rows as validating and preparing it
whole, and any other key, or a combination the fill-in cannot make, still validated whole
with its own clear error."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
import tomllib

import simulator
from simulator.errors import BattleOddsError, Source
from simulator.rulesets import get
from simulator.rulesets.olympia import Olympia
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.scenario.scenario import prepare
from simulator.scenario.unknowns import TEMPLATES, Mixture

#: Counts of men by type and in a list of men, both break points, and a key the fill-in
#: leaves to whole validation (a noble's bonus); the list's archers reach 0 (a type then
#: not fielded: validated whole).
SCENARIO = """
ruleset = "olympia"
[attacker]
break_point = "{attacker_break}"
[[attacker.units]]
men = {{ knight = "2..{knights}", soldier = 3 }}
[[attacker.units]]
behind = 1
men = [{{ type = "archer", count = "0..3" }}, {{ type = "soldier", count = "1:1, 3:2, 6:1" }}]
[defender]
break_point = "{defender_break}"
[[defender.units]]
noble = {{ attack = "0..1" }}
men = {{ pikeman = "6..{pikemen}" }}
"""
#: Many combinations, for the property test; a few hundred, for a run.
MANY = SCENARIO.format(attacker_break="20..60", knights=4, defender_break="0..50", pikemen=9)
FEW = SCENARIO.format(attacker_break="20..23", knights=3, defender_break="0:1, 50:1", pikemen=7)


def scenario_of(text: str) -> simulator.Scenario:
    return simulator.from_data(tomllib.loads(text), Source("fill-in test"))


def combination_of(mixture: Mixture, values: dict[str, Any]) -> int:
    """The combination with ``values`` at their paths, the other unknowns at their first."""
    return sum(
        u.values.index(values[u.path]) * int(stride)
        for u, stride in zip(mixture.unknowns, mixture.strides, strict=True)
        if u.path in values
    )


def whole(mixture: Mixture, combination: int) -> OlympiaPrepared:
    """The combination validated and prepared whole, as before the fill-in."""
    prepared = get("olympia").prepare(mixture.scenario_of(combination).model)
    assert isinstance(prepared, OlympiaPrepared)
    return prepared


def same(a: Any, b: Any, where: str) -> None:
    """``a`` and ``b`` equal through arrays, dataclasses (with arrays), lists and dicts."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and np.array_equal(a, b), where
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            same(a[key], b[key], f"{where}[{key!r}]")
    else:
        assert a == b, where


def test_filled_in_is_the_combination_prepared_whole() -> None:
    """Random combinations (every unknown at random values): the fill-in's model,
    arrays, every attribute of the prepared scenario (its rules and column bounds made
    too) and its rows on each kernel are those of the combination validated and
    prepared whole. With no archers or with some, each is filled in from a combination
    that fields as it does (a group left out or put in is not filled in)."""
    mixture = scenario_of(MANY).model
    assert isinstance(mixture, Mixture)
    rs = get("olympia")
    filled_paths = [u.path for u in mixture.unknowns if rs.fills_in(u.path)]
    assert filled_paths == [
        "attacker.break_point",
        "attacker.units[0].men.knight",
        "attacker.units[1].men[0].count",
        "attacker.units[1].men[1].count",
        "defender.break_point",
        "defender.units[0].men.pikeman",
    ]
    archers = "attacker.units[1].men[0].count"
    mixture.prepared_of(0)  # the checked combinations, each family's first among them
    # The noble's bonus of 1: its checked combination has no archers; one with some.
    bonus = "defender.units[0].noble.attack"
    mixture.prepared_of(combination_of(mixture, {bonus: 1, archers: 2}))
    rng = np.random.default_rng(53)
    fielded = set()
    for combination in rng.choice(mixture.combinations, 24, replace=False).tolist():
        made = mixture._filled_in(combination)
        values = mixture.values_of(combination)
        where = f"combination {combination} {values}"
        assert isinstance(made, OlympiaPrepared), where
        fielded.add(values[archers] > 0)
        own = whole(mixture, combination)
        for prepared in (made, own):
            _ = (prepared.stops, prepared.column_bounds)  # made on first use: compared too
        assert vars(made).keys() == vars(own).keys(), where
        for name in vars(own):
            same(vars(made)[name], vars(own)[name], f"{where}: {name}")
        for kernel in ("skip", "chain"):
            rows = made.run_matrix(11, 0, 300, kernel)
            assert np.array_equal(rows, own.run_matrix(11, 0, 300, kernel)), (where, kernel)
    assert fielded == {False, True}
    none = whole(mixture, 0)
    some = whole(mixture, combination_of(mixture, {archers: 2}))
    assert rs.fill_in(none, mixture.values_of(combination_of(mixture, {archers: 1}))) is None
    assert rs.fill_in(some, mixture.values_of(0)) is None


def test_a_fill_in_that_misses_a_value_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above fails on a fill-in that leaves out a break point (the
    model's and the side table's) or a count (the model's, the group table's and the
    side's starting value)."""
    mixture = scenario_of(MANY).model
    assert isinstance(mixture, Mixture)
    mixture.prepared_of(0)
    changed = {"defender.break_point": 37, "defender.units[0].men.pikeman": 8}
    combination = combination_of(mixture, {**changed, "attacker.units[1].men[0].count": 2})
    fill_in = Olympia.fill_in
    for left_out in changed:

        def missing(self: Olympia, prepared: Any, values: Any, _out: str = left_out) -> Any:
            return fill_in(self, prepared, {p: v for p, v in values.items() if p != _out})

        monkeypatch.setattr(Olympia, "fill_in", missing)
        made = mixture._filled_in(combination)
        own = whole(mixture, combination)
        assert made is not None
        with pytest.raises(AssertionError):
            same(made.battle, own.battle, "battle")
        with pytest.raises(AssertionError):
            same(made.arrays.sides, own.arrays.sides, "sides")


def test_a_run_with_the_fill_in_gives_the_rows_of_one_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every column of every battle of a run is the same with the fill-in as with each
    combination validated and prepared whole; with it, only a few of each family are
    validated (the checked ones, and one for each way its types are fielded)."""
    filled = scenario_of(FEW)
    with_fill_in = prepare(filled).run(7, 0, 3_000)
    validated = len(filled.model._scenarios)
    monkeypatch.setattr(Olympia, "fills_in", lambda self, path: False)
    plain = scenario_of(FEW)
    without = prepare(plain).run(7, 0, 3_000)
    assert validated < len(plain.model._scenarios) / 3
    assert list(with_fill_in) == list(without)
    for name in without:
        assert np.array_equal(with_fill_in[name], without[name]), name


def test_a_key_outside_the_set_is_validated_whole() -> None:
    """A range on a key the fill-in leaves alone (where men stand) makes each of its
    combinations be validated whole: one whose rows leave a gap says so in its own line,
    though others with its break point and count of archers are fine (those filled in
    beside it)."""
    text = """
    ruleset = "olympia"
    [attacker]
    break_point = "20..30"
    [[attacker.units]]
    men = [{ type = "soldier", count = 4, behind = "1..2" },
           { type = "archer", count = "3..5", behind = "1..2" }]
    [defender]
    [[defender.units]]
    men = { pikeman = 8 }
    """
    mixture = scenario_of(text).model
    assert isinstance(mixture, Mixture)
    rs = get("olympia")
    assert not rs.fills_in("attacker.units[0].men[0].behind")
    assert rs.fills_in("attacker.units[0].men[1].count")
    assert list(mixture.values_of(0)) == [
        "attacker.break_point",
        "attacker.units[0].men[0].behind",
        "attacker.units[0].men[1].count",
        "attacker.units[0].men[1].behind",
    ]
    by_values = {tuple(mixture.values_of(c).values()): c for c in range(mixture.combinations)}
    good = mixture.prepared_of(by_values[(25, 2, 4, 1)])  # rows 0, 2 and 1: fine
    assert isinstance(good, OlympiaPrepared) and good.arrays.groups.shape[0] == 5
    with pytest.raises(BattleOddsError) as failed:
        mixture.prepared_of(by_values[(27, 2, 5, 2)])
    said = str(failed.value)
    assert "rear row 2 has nothing in front of it" in said
    assert "attacker.units[0].men[0].behind = 2" in said and "[with" in said


def test_a_side_too_large_together_is_refused_in_its_line() -> None:
    """Two counts each fine where written (a list's values checked with the others at
    their first) but too many men together: the fill-in leaves the combination to whole
    validation, which says so, naming the values drawn."""
    fixed = ", ".join(['{ type = "soldier", count = 100000 }'] * 8)
    text = f"""
    ruleset = "olympia"
    [attacker]
    [[attacker.units]]
    men = [{fixed}, {{ type = "soldier", count = "1:1, 100000:1" }},
           {{ type = "soldier", count = "1:1, 100000:1" }}]
    [defender]
    [[defender.units]]
    men = {{ pikeman = 8 }}
    """
    mixture = scenario_of(text).model
    assert isinstance(mixture, Mixture)
    assert mixture.combinations == 4
    assert mixture.prepared_of(1) is not None  # 900,001 men with the noble: fine
    with pytest.raises(BattleOddsError) as failed:
        mixture.prepared_of(3)
    said = str(failed.value)
    assert "1,000,001 men, more than the 1,000,000" in said and "[with" in said


def test_a_side_behind_a_structure_is_prepared_whole() -> None:
    """Men behind a structure (its capacity splits a group where it ends): never filled
    in; once its family has kept as many combinations as it may, it is not tried again,
    and each combination is its whole preparation."""
    text = """
    ruleset = "olympia"
    [attacker]
    break_point = "30..40"
    [[attacker.units]]
    men = { soldier = 12 }
    [defender]
    structure = { kind = "tower", defense = 20 }
    [[defender.units]]
    men = { soldier = "10..30" }
    """
    mixture = scenario_of(text).model
    assert isinstance(mixture, Mixture)
    for combination in range(0, mixture.combinations, 7):
        made = mixture.prepared_of(combination)
        own = whole(mixture, combination)
        assert isinstance(made, OlympiaPrepared)
        same(made.arrays, own.arrays, f"combination {combination}")
        assert mixture._filled_in(combination) is None
    assert mixture._unfilled == {0}
    assert len(mixture._templates[0]) == TEMPLATES
