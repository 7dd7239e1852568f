"""A price search's cells filled in from a template of their two types
(simulator/studies/machinery/one_type_cells.py): the same scenario, model and prepared
arrays as validating and preparing each whole, and a count the ruleset refuses refused
with its own error."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import BattleOddsError
from simulator.rulesets import Army, get
from simulator.rulesets.olympia.keys import MAX_MEN
from simulator.scenario.scenario import Scenario, prepare
from simulator.studies.machinery.one_type import one_type_scenario
from simulator.studies.machinery.one_type_cells import OneTypeCells, changed

from .test_unknowns_fill_in import same

TYPES = ("soldier", "archer", "knight", "pikeman", "elite_archer")
Cell = tuple[str, int, str, int]


def check_cell(cells: OneTypeCells, cell: Cell) -> bool:
    """Build ``cell`` with ``cells`` and check it against one validated and prepared
    whole; whether it was filled in."""
    attacker, a_men, defender, d_men = cell
    built = cells.cell(Army(attacker, a_men), Army(defender, d_men))
    scenario, made = built if isinstance(built, tuple) else (built, None)
    whole = one_type_scenario(
        cells.rs, Army(attacker, a_men), Army(defender, d_men), cells.settings
    )
    where = f"{cell} {cells.settings}"
    assert isinstance(scenario, Scenario), where
    assert scenario == whole, where  # ruleset, name, data, description, battles, seed
    assert list(scenario.data) == list(whole.data), where
    assert scenario.source.label == whole.source.label, where
    assert scenario.model == whole.model, where
    if made is not None:
        own = prepare(whole)
        for prepared in (made, own):
            _ = (prepared.stops, prepared.column_bounds)  # made on first use: compared too
        assert vars(made).keys() == vars(own).keys(), where
        for name in vars(own):
            same(vars(made)[name], vars(own)[name], f"{where}: {name}")
    return made is not None


#: Few types and counts, so that a list comes back to a pair and to counts seen before
#: (cells filled in), with a larger count now and then (validated whole).
counts = st.integers(1, 6) | st.integers(7, 60)
cells_drawn = st.lists(
    st.tuples(st.sampled_from(TYPES[:3]), counts, st.sampled_from(TYPES), counts),
    min_size=1,
    max_size=40,
)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(cells_drawn, st.sampled_from([{}, {"strike_order": "alternating"}, {"terrain": "swamp"}]))
def test_a_cell_is_the_battle_validated_and_prepared_whole(
    drawn: list[Cell], given_settings: dict[str, Any]
) -> None:
    """Cells in any order (a count seen before or not, a pair's first cell or not), under
    settings: each is the one validated and prepared whole."""
    cells = OneTypeCells(get("olympia"), given_settings)
    for cell in drawn:
        check_cell(cells, cell)


def test_most_cells_of_a_search_are_filled_in() -> None:
    """A search's pattern: every pair of types at counts around one another. After the
    first cells validated whole, the rest are filled in, and still the same."""
    cells = OneTypeCells(get("olympia"), {})
    drawn = [
        (a, a_men, d, d_men)
        for a_men in range(5, 12)
        for d_men in range(a_men - 2, a_men + 3)
        for a in TYPES[:3]
        for d in TYPES[:3]
    ]
    filled = [check_cell(cells, cell) for cell in drawn]
    assert sum(filled) > 0.8 * len(filled)
    assert not filled[0]


def test_chain_kernel_cells_are_validated_whole() -> None:
    """``kernel = "chain"`` refuses a table over budget, which depends on both counts:
    the ruleset does not fill such cells in (Olympia's fill_in), so each is whole."""
    cells = OneTypeCells(get("olympia"), {"kernel": "chain"})
    assert not any(check_cell(cells, ("knight", n, "soldier", n + 1)) for n in range(1, 8))


def test_a_ruleset_without_fill_in_validates_every_cell() -> None:
    cells = OneTypeCells(get("age_of_gods"), {})
    assert not any(check_cell(cells, ("soldier", n, "pikeman", 3)) for n in range(1, 6))


def test_a_count_the_ruleset_refuses_says_so_as_before() -> None:
    """A count never validated is validated whole: a count past the most a key takes
    gives the error the battle validated whole gives, after the pair's template and
    counts next to it were filled in."""
    cells = OneTypeCells(get("olympia"), {})
    for n in (3, 4, 5, 4):
        check_cell(cells, ("soldier", n, "archer", 2))
    for n in (MAX_MEN + 1, MAX_MEN + 1):
        with pytest.raises(BattleOddsError) as whole:
            one_type_scenario(cells.rs, Army("soldier", n), Army("archer", 2), {})
        with pytest.raises(BattleOddsError) as made:
            cells.cell(Army("soldier", n), Army("archer", 2))
        assert str(made.value) == str(whole.value)
        assert "100,000" in str(made.value) or "100000" in str(made.value)


def test_cells_made_on_two_threads_at_once_are_right() -> None:
    """The engine builds cells on its worker threads: two threads building cells of the
    same pairs at once each get the battle validated and prepared whole."""
    cells = OneTypeCells(get("olympia"), {})
    errors: list[BaseException] = []

    def build(offset: int) -> None:
        try:
            for n in range(1, 30):
                check_cell(cells, ("knight", n, "archer", n + offset))
                check_cell(cells, ("archer", n + offset, "pikeman", n))
        except BaseException as error:  # handed to the test's thread
            errors.append(error)

    threads = [threading.Thread(target=build, args=(offset,)) for offset in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 3]}}, {"a.b[1]": (2, 3)}),
        ({"a": 1, "name": "x"}, {"a": 1, "name": "y"}, {}),
        ({"a": 1}, {"a": 1.0}, {"a": (1, 1.0)}),
        ({"a": 1}, {"a": True}, {"a": (1, True)}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"c": 2, "b": 1}}, None),
        ({"a": [1]}, {"a": [1, 2]}, None),
        ({"a": {"b": 1}}, {"a": [1]}, None),
        ({"a": 1}, {"a": [1]}, None),
        ({"a": 1}, {"b": 1}, None),
    ],
)
def test_changed_finds_each_value_that_differs_or_a_difference_of_form(
    old: dict[str, Any], new: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    assert changed(old, new, "name") == expected
