"""The jitted tally equals the plain numpy computation it replaced, on any integers."""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kernels.tally import NARROW
from simulator import load_scenario, rulesets
from simulator.results.stats import FOUGHT_OUT, OUTCOMES, Histogram, Tally
from simulator.rulesets import Outcomes, Recorded

INT64 = np.iinfo(np.int64)


def numpy_histogram(data: np.ndarray) -> tuple[list[int], list[int]]:
    """Distinct values and their counts, the way numpy counts them."""
    values, counts = np.unique(np.asarray(data, np.int64), return_counts=True)
    return values.tolist(), counts.tolist()


def numpy_tally(outcomes: Mapping[str, np.ndarray]) -> dict[str, object]:
    """``Tally.to_dict()`` of ``outcomes`` computed column by column with numpy: the
    withdrawals (winner 3 and 4) written only when a battle withdrew."""
    winner, steps = outcomes["winner"], outcomes["steps"]
    kept = len(OUTCOMES) if (winner >= len(FOUGHT_OUT)).any() else len(FOUGHT_OUT)
    by_outcome = [numpy_histogram(steps[winner == k]) for k in range(kept)]
    return {
        "battles": int(winner.size),
        "wins": np.bincount(winner, minlength=kept).tolist(),
        "steps_by_outcome": [{"values": v, "counts": c} for v, c in by_outcome],
        "columns": {
            name: dict(zip(("values", "counts"), numpy_histogram(values), strict=True))
            for name, values in outcomes.items()
            if name not in ("winner", "steps")
        },
    }


#: Small values, values around the first pass's table (NARROW), values near the int64
#: limits, and mixtures of them (huge spreads).
integers = st.one_of(
    st.integers(-5, 40),
    st.integers(NARROW - 3, NARROW + 3),
    st.integers(INT64.min, INT64.min + 3),
    st.integers(INT64.max - 3, INT64.max),
    st.integers(-(10**12), 10**12),
)


@st.composite
def outcome_matrices(draw: st.DrawFn, extra: int | None = None) -> np.ndarray:
    rows = draw(st.integers(0, 300))
    extra = draw(st.integers(0, 5)) if extra is None else extra
    # The withdrawals (3, 4) in some matrices: their steps are counted in a pass apart.
    most = draw(st.sampled_from([2, 4]))
    winner = draw(hnp.arrays(np.int64, rows, elements=st.integers(0, most)))
    rest = draw(hnp.arrays(np.int64, (rows, 1 + extra), elements=integers))
    return np.column_stack([winner, rest])


def names_of(matrix: np.ndarray) -> list[str]:
    return ["winner", "steps"] + [f"extra.{c}" for c in range(matrix.shape[1] - 2)]


def as_outcomes(matrix: np.ndarray) -> Outcomes:
    """Every column of one row-major matrix by name, as the rulesets return them."""
    return Outcomes(matrix, {name: c for c, name in enumerate(names_of(matrix))})


# Slow tier (docs/testing.md): 2.6 s, quiet, the kernels cached
@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 400), elements=integers))
def test_histogram_equals_numpy(data: np.ndarray) -> None:
    h = Histogram.of(data)
    assert (h.values.tolist(), h.counts.tolist()) == numpy_histogram(data)
    assert h.values.dtype == np.int64 and h.counts.dtype == np.int64


# Slow tier (docs/testing.md): 2.0 s, quiet, the kernels cached
@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(outcome_matrices())
def test_tally_of_column_views_equals_numpy(matrix: np.ndarray) -> None:
    outcomes = as_outcomes(matrix)
    assert json.dumps(Tally.of(outcomes).to_dict()) == json.dumps(numpy_tally(outcomes))


# Slow tier (docs/testing.md): 2.0 s, quiet, the kernels cached
@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(outcome_matrices(), st.data())
def test_tally_of_separate_and_mixed_arrays_equals_numpy(
    matrix: np.ndarray, data: st.DataObject
) -> None:
    # Some columns copied out of the matrix (derived columns), winner and steps
    # possibly apart: the tally must not depend on how the columns are stored.
    names = names_of(matrix)
    copied = data.draw(st.sets(st.sampled_from(names)))
    mixed = Outcomes(
        matrix,
        {name: c for c, name in enumerate(names) if name not in copied},
        {name: matrix[:, c].copy() for c, name in enumerate(names) if name in copied},
    )
    assert json.dumps(Tally.of(mixed).to_dict()) == json.dumps(numpy_tally(mixed))
    # A plain mapping (a plugin's dict, the waves' columns) counts a column at a time.
    plain = {name: v.copy() if name in copied else v for name, v in mixed.items()}
    assert json.dumps(Tally.of(plain).to_dict()) == json.dumps(numpy_tally(mixed))


def test_outcomes_are_views_of_the_kernels_rows() -> None:
    """Outcomes names the kernel's matrix's columns without copying it, its derived
    columns after them; a matrix the tally cannot read in place, or a name given twice,
    is refused."""
    matrix = np.arange(12, dtype=np.int64).reshape(4, 3)
    turn = np.array([1, 1, 2, 2], np.int64)
    outcomes = Outcomes(matrix, {"winner": 0, "steps": 2}, {"turn": turn})
    assert list(outcomes) == ["winner", "steps", "turn"] and len(outcomes) == 3
    assert outcomes["steps"].tolist() == [2, 5, 8, 11] and outcomes["turn"] is turn
    assert np.shares_memory(outcomes["winner"], matrix)
    outcomes["steps"][0] = 40  # a view: the row changes
    assert matrix[0, 2] == 40
    for bad in (matrix.T, matrix.astype(np.int32), matrix[:, 0]):
        with pytest.raises(ValueError, match="C-contiguous int64"):
            Outcomes(bad, {"winner": 0})
    with pytest.raises(ValueError, match="both placed and derived"):
        Outcomes(matrix, {"winner": 0, "turn": 1}, {"turn": turn})
    # Pickled (to a process, a Dask worker) with its places in a read-only mapping, as
    # the rulesets give them: its columns are views of its matrix again after.
    places = MappingProxyType({"winner": 0, "steps": 2})
    again = pickle.loads(pickle.dumps(Outcomes(matrix, places, {"turn": turn})))
    assert np.shares_memory(again["steps"], again.matrix) and list(again) == list(outcomes)
    assert again["steps"].tolist() == [40, 5, 8, 11] and again["turn"].tolist() == [1, 1, 2, 2]


def test_a_record_gives_each_column_by_step_and_battle() -> None:
    """Recorded (run_through's answer): ``table[i, k, place]`` as column ``[k, i]``, a
    view; the table must be battles by steps by row."""
    table = np.arange(24, dtype=np.int64).reshape(2, 3, 4)  # 2 battles, 3 steps
    recorded = Recorded(table, {"winner": 1, "steps": 3})
    assert recorded["steps"].shape == (3, 2) and recorded["steps"][2, 1] == table[1, 2, 3]
    assert np.shares_memory(recorded["winner"], table) and list(recorded) == ["winner", "steps"]
    again = pickle.loads(pickle.dumps(recorded))
    assert np.shares_memory(again["winner"], again.table)
    with pytest.raises(ValueError, match="3 dimensions"):
        Recorded(table[0], {"winner": 1})


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 3).flatmap(
        lambda extra: st.lists(outcome_matrices(extra), min_size=1, max_size=4)
    )
)
def test_merged_chunks_equal_the_whole_in_any_order(chunks: list[np.ndarray]) -> None:
    whole = json.dumps(numpy_tally(as_outcomes(np.concatenate(chunks))))
    for order in (chunks, chunks[::-1]):
        merged = Tally()
        for chunk in order:
            merged = merged.merge(Tally.of(as_outcomes(chunk)))
        if merged.battles:
            assert json.dumps(merged.to_dict()) == whole


def test_empty_chunk_tallies_to_nothing() -> None:
    outcomes = as_outcomes(np.zeros((0, 4), np.int64))
    tally = Tally.of(outcomes)
    assert json.dumps(tally.to_dict()) == json.dumps(numpy_tally(outcomes))
    assert tally.battles == 0 and tally.steps.n == 0


def test_a_spread_wider_than_the_chunk_is_counted_exactly() -> None:
    rng = np.random.default_rng(7)
    matrix = np.column_stack(
        [rng.integers(0, 3, 1000), rng.integers(-(10**9), 10**9, (1000, 2))]
    ).astype(np.int64)
    matrix[:5, 2] = [INT64.min, INT64.max, INT64.min, 0, -1]
    outcomes = as_outcomes(matrix)
    assert json.dumps(Tally.of(outcomes).to_dict()) == json.dumps(numpy_tally(outcomes))


@pytest.mark.parametrize("winner", [-1, 5, 7])
def test_a_winner_outside_the_five_outcomes_is_refused(winner: int) -> None:
    # 5 is a battle still fighting (Prepared.run_until): not an outcome.
    matrix = np.array([[0, 3], [winner, 4]], np.int64)
    with pytest.raises(ValueError, match="winner"):
        Tally.of(as_outcomes(matrix))


def test_withdrawals_are_outcomes_of_their_own() -> None:
    matrix = np.array([[0, 3], [3, 4], [3, 2], [4, 1], [1, 9]], np.int64)
    tally = Tally.of(as_outcomes(matrix))
    assert tally.wins.tolist() == [1, 1, 0, 2, 1] and tally.withdrawals == 3
    assert tally.win("attacker_withdrew")[0] == 2 / 5 and tally.win("attacker")[0] == 1 / 5
    assert tally.steps_by_outcome[3].to_dict() == {"values": [2, 4], "counts": [1, 1]}
    assert tally.seen_outcomes() == OUTCOMES
    assert Tally.from_dict(tally.to_dict()).to_dict() == tally.to_dict()


def test_a_tally_written_before_withdrawals_reads_with_none() -> None:
    # What a checkpoint or a stored sample written before stop rules holds: 3 outcomes.
    old = {
        "battles": 3,
        "wins": [1, 2, 0],
        "steps_by_outcome": [
            {"values": [4], "counts": [1]},
            {"values": [2, 5], "counts": [1, 1]},
            {"values": [], "counts": []},
        ],
        "columns": {},
    }
    tally = Tally.from_dict(old)
    assert tally.wins.tolist() == [1, 2, 0, 0, 0] and len(tally.steps_by_outcome) == 5
    assert tally.seen_outcomes() == FOUGHT_OUT
    assert tally.to_dict() == old  # written as it was read: no withdrawal
    withdrew = Tally.of(as_outcomes(np.array([[4, 6]], np.int64)))
    both = tally.merge(withdrew)
    assert both.wins.tolist() == [1, 2, 0, 0, 1] and both.steps.n == 4


@pytest.mark.parametrize(
    "name",
    [
        "olympia/knights_vs_pikemen",
        "age_of_gods/archers_in_rain",
        "blocks/relief",
        "confrontation/attack",
        "skirmish/cavalry_charge",
    ],
)
def test_every_ruleset_answers_its_kernels_rows_by_name(name: str) -> None:
    """Each built-in ruleset's run is its kernel's rows named (counted in one pass, no
    copy), and tallies as the same columns copied out of it do."""
    scenario = load_scenario(f"scenarios/{name}.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    outcomes = prepared.run(3, 0, 200)
    assert isinstance(outcomes, Outcomes)
    assert set(outcomes.places) >= {"winner", "steps"}
    copied = {n: np.array(c) for n, c in outcomes.items()}
    assert json.dumps(Tally.of(outcomes).to_dict()) == json.dumps(Tally.of(copied).to_dict())
