"""The battle as it unfolds on olympia's chain kernel (kernels/olympia/chain.py).

The chain walk records each battle's table row after each strike asked (``run_through``,
``run_until``) and counts the battles by those rows (``count_through``, what
``--by-round`` tallies). Checked battle by battle: a battle decided by strike t is its
whole row of the plain chain run, bit for bit; one still fighting is marked so at t,
with every loss between none and its final one and growing strike by strike (a noble
out is wounded or killed as he is found at the end); the recording walk's own outcome
rows are the plain run's; the counts are the rows' counts, exactly; the same on one
thread and two. Against the reference and the exact solver, the chain's state after a
strike is checked by tests/test_unfolding.py (its olympia battles run on the chain).
"""

from __future__ import annotations

import resource

import numpy as np
import pytest

import simulator
from simulator import rulesets
from simulator.results.steps import StepCounts, StepTally, men_brought
from simulator.rulesets.base import FIGHTING
from simulator.rulesets.olympia import prepare
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.running import unfolding
from simulator.running.runner import thread_count
from simulator.running.unfolding import run_steps

from .test_olympia_chain import SCENARIOS, inline
from .test_olympia_stop_rules import scenario_of

#: The chain test's battles (a tower, units sharing types, engines against a wall, break
#: points of 0 and 100: broken at the opening) and the bundled yardstick.
CASES = [*SCENARIOS, "knights_vs_pikemen"]
#: Losses that only grow as a battle goes on (a structure's defense only falls).
GROWING = ("casualties.", "nobles_wounded", "nobles_killed", "engines_lost", "structure_damage")


def chain_of(name: str) -> OlympiaPrepared:
    if name == "knights_vs_pikemen":
        scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
    else:
        scenario = inline(name)
    prepared = rulesets.get("olympia").prepare(scenario.model)
    assert isinstance(prepared, OlympiaPrepared)
    assert prepared.kernel == "chain" and prepared.recording_kernel == "chain"
    return prepared


def strikes_of(whole: np.ndarray) -> list[int]:
    last = int(whole[:, 1].max())
    return sorted({*range(1, min(last, 12) + 1), *np.linspace(1, last, 15).astype(int), last + 3})


@pytest.mark.parametrize("name", CASES)
def test_recorded_rows_are_the_whole_battles_so_far(name: str) -> None:
    prepared = chain_of(name)
    n = 1500
    whole = prepared.run_matrix(11, 0, n)
    steps = strikes_of(whole)
    through = prepared.run_through(11, 0, n, steps)
    ends = whole[:, prepared.columns["steps"]]
    growing = [c for c in prepared.columns if c.startswith(GROWING)]
    assert growing
    before = None
    for k, t in enumerate(steps):
        cut = {column: rows[k] for column, rows in through.items()}
        decided = ends <= t
        assert np.array_equal(cut["winner"] == FIGHTING, ~decided), t
        assert (cut["steps"][~decided] == t).all()
        for column, c in prepared.columns.items():
            assert np.array_equal(cut[column][decided], whole[decided, c]), (t, column)
        for column in growing:
            final = whole[:, prepared.columns[column]]
            assert (cut[column] >= 0).all() and (cut[column] <= final).all(), (t, column)
            if before is not None:
                assert (before[column] <= cut[column]).all(), (t, column)
        before = cut
    assert not (before["winner"] == FIGHTING).any()  # type: ignore[index]
    # One strike asked is that strike of the many, battle by battle.
    for t in (steps[0], steps[len(steps) // 2]):
        until = prepared.run_until(11, 0, n, t)
        for column, rows in through.items():
            assert np.array_equal(until[column], rows[steps.index(t)]), (t, column)


def test_the_recording_walk_draws_the_plain_walks_numbers() -> None:
    """The outcome rows of a walk that records are the plain walk's (the same draws),
    whatever it records."""
    prepared = chain_of("units")
    plain = prepared.run_matrix(4, 100, 2000)
    for asked in (np.array([1]), np.arange(1, 80), np.array([3, 500, 10_000])):
        out = np.empty_like(plain)
        rec = np.empty((2000, len(asked), plain.shape[1]), np.int64)
        prepare._run_chain(prepared, np.uint64(4), 100, out, asked, rec)
        assert np.array_equal(out, plain)


def test_a_strike_asked_far_past_every_battle_is_its_final_row() -> None:
    """A step asked far past any battle's end (the retreat study asks strike 10**9 for
    each battle's final row) is each battle's whole row, in little memory: the walk's
    table of asked strikes stops at BEFORE_MOST strikes (it was one entry a strike up to
    the last asked, 8 GB), a search of the strikes asked answering past it."""
    prepared = chain_of("knights_vs_pikemen")
    n = 1500
    whole = prepared.run_matrix(5, 0, n)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    far = prepared.run_through(5, 0, n, [2, 40, 10**9])
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert grown < 1 << 20, f"{grown / 2**20:.1f} GiB more at the peak"
    for column, c in prepared.columns.items():
        assert np.array_equal(far[column][2], whole[:, c]), column


def test_the_paired_walk_records_what_a_battle_walked_alone_does() -> None:
    """Battles walked in pairs look the strikes asked up in a table, with no branch;
    a strike asked past the table's end (BEFORE_MOST) has every battle walked alone,
    searching the strikes asked: the same rows, battle by battle, at every strike."""
    prepared = chain_of("knights_vs_pikemen")
    steps = [1, 2, 5, 9, 30, 31, 60, 120, 250]
    paired = prepared.run_through(5, 0, 600, steps)
    alone = prepared.run_through(5, 0, 600, [*steps, 10**9])
    for column, rows in paired.items():
        assert np.array_equal(rows, alone[column][: len(steps)]), column


@pytest.mark.parametrize("name", CASES)
def test_counted_states_are_the_rows_counted(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``count_through`` over blocks of any size adds up to the counts of
    ``run_through``'s rows, step by step, exactly (the siege's table counted too)."""
    monkeypatch.setattr(prepare, "COUNTED_MOST", 1 << 24)
    prepared = chain_of(name)
    n = 1500
    steps = strikes_of(prepared.run_matrix(7, 0, n))
    brought = men_brought(prepared.column_bounds)
    states = prepared.state_columns(steps)
    assert states is not None
    counts = np.zeros((len(states["winner"]), len(steps)), np.int64)
    for first, count in ((0, 1), (1, 600), (601, 899)):
        prepared.count_through(7, first, count, steps, counts)
    assert (counts.sum(axis=0) == n).all()
    counted = StepTally.of_counts(brought, steps, [], counts, states)
    through = prepared.run_through(7, 0, n, steps)
    kept = []
    for k, t in enumerate(steps):
        rows = StepCounts.of({column: values[k] for column, values in through.items()}, brought)
        kept.append(t)
        assert counted.steps[t].to_dict() == rows.to_dict(), t
        if rows.states[-1] == 0:
            break
    assert list(counted.steps) == kept


def test_a_broken_counter_is_caught() -> None:
    """The comparison above sees one battle counted one row off at one strike."""
    prepared = chain_of("tower")
    steps = [5, 10]
    brought = men_brought(prepared.column_bounds)
    states = prepared.state_columns(steps)
    assert states is not None
    counts = np.zeros((len(states["winner"]), len(steps)), np.int64)
    prepared.count_through(7, 0, 500, steps, counts)
    through = prepared.run_through(7, 0, 500, steps)
    rows = StepCounts.of({column: values[1] for column, values in through.items()}, brought)
    x = int(np.flatnonzero(counts[:, 1])[0])
    men = np.stack([v for c, v in states.items() if c.startswith("casualties.")], axis=1)
    other = int(np.flatnonzero((men != men[x]).any(axis=1))[0])
    counts[x, 1] -= 1
    counts[other, 1] += 1
    counted = StepTally.of_counts(brought, steps, [], counts, states)
    assert counted.steps[10].to_dict() != rows.to_dict()


@pytest.mark.parametrize(
    "sets",
    [{}, {"battle.from_step": 6}],
    ids=["from the start", "in progress"],
)
def test_by_round_counts_as_the_rows_do(sets: dict[str, int], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``run_steps`` (``--by-round`` and ``--after``) on the chain's counts gives the
    tally its rows give (the chain's rows, counted a block at a time as before), with a
    battle in progress's strikes counted from its start."""
    scenario = scenario_of(**sets)
    assert rulesets.get("olympia").prepare(scenario.model).kernel == "chain"
    first = 1 + sets.get("battle.from_step", 0)
    counted = run_steps(scenario, None, 3, 5, 4000, after=first + 10)
    monkeypatch.setattr(OlympiaPrepared, "state_columns", lambda self, steps: None)
    rows = run_steps(scenario, None, 3, 5, 4000, after=first + 10)
    assert next(iter(counted.tally.steps)) == first
    assert list(counted.tally.steps) == list(rows.tally.steps)
    for t, counts in counted.tally.steps.items():
        assert counts.to_dict() == rows.tally.steps[t].to_dict(), t
    assert counted.to_dict() == rows.to_dict()


def test_by_round_counted_on_one_thread_and_two_is_the_same() -> None:
    """The randomness contract for the recorded path: battle i's strikes are the same on
    any thread count, so are the rows and the counts (calls past the chain kernel's
    serial size run in parallel)."""
    prepared = chain_of("kinds")
    n = 3 * prepare.olympia_chain.SERIAL_UP_TO
    steps = list(range(1, 40))
    runs = []
    for threads in (1, 2):
        with thread_count(threads):
            through = prepared.run_through(9, 3, n, steps)
            states = prepared.state_columns(steps)
            assert states is not None
            counts = np.zeros((len(states["winner"]), len(steps)), np.int64)
            prepared.count_through(9, 3, n, steps, counts)
        runs.append((through, counts))
    (one, counts_one), (two, counts_two) = runs
    assert np.array_equal(counts_one, counts_two)
    for column in one:
        assert np.array_equal(one[column], two[column]), column


def test_large_counts_fall_back_to_rows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past COUNTED_MOST a row a strike, the chain's rows are counted instead (the
    same tally)."""
    scenario = simulator.inline_scenario("olympia", "noble, 6 soldier", "noble, 5 pikeman")
    prepared = rulesets.get("olympia").prepare(scenario.model)
    assert prepared.state_columns(list(range(1, 50))) is not None
    monkeypatch.setattr(prepare, "COUNTED_MOST", 10)
    assert prepared.state_columns(list(range(1, 50))) is None
    assert run_steps(scenario, None, 1, 0, 500).tally.battles == 500
    assert unfolding.one_pass(prepared)
