"""Olympia combinations of a scenario with ranges that differ only in counts and break
points walk one chain table (simulator/rulesets/olympia/shared.py,
kernels/olympia/shared_chain.py; docs/unknowns.md "Speed"): each battle is the chain
kernel's own battle of its combination, column for column, on any thread count and
chunking; a combination that cannot share runs as before."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tomllib

import simulator
from simulator.errors import Source
from simulator.results.stats import Tally
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.rulesets.outcomes import Outcomes
from simulator.scenario.scenario import prepare, set_path
from simulator.scenario.unknowns import BLOCK
from tests import ROOT
from tests.reference.agreement import check_case
from tests.reference.cases import CASES
from tests.stats_tests import reproducibility
from tests.test_unknowns import battles_of_their_combinations
from tests.test_unknowns_stacked import alone_of


def ranged(ranges: dict[str, str]) -> simulator.Scenario:
    data = tomllib.loads((ROOT / "scenarios/olympia/knights_vs_pikemen.toml").read_text())
    for path, value in ranges.items():
        set_path(data, path, value)
    return simulator.from_data(data, Source("knights_vs_pikemen with ranges"))


#: Nine combinations: three counts of pikemen, three break points (0: fought to the last).
SHARED = {"defender.units[0].men.pikeman": "35..37", "defender.break_point": "0:1, 30:1, 50:1"}


def shared_of(mixture: Any, c: int) -> Any:
    prepared = mixture.prepared_of(c)
    assert isinstance(prepared, OlympiaPrepared)
    return prepared._shared


def test_each_battle_is_its_combinations_own_chain_battle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every combination walks one table (the largest count's, fought to the last), a
    chunk in one call; battle j, the r-th of its block to draw combination c, is battle
    block x BLOCK + r of c's scenario prepared on its own and run on the chain kernel,
    every column, across a block's end."""
    scenario = ranged(SHARED)
    mixture = scenario.model
    chains = {id(shared_of(mixture, c)[0]) for c in range(mixture.combinations)}
    assert len(chains) == 1
    # Its own opening and limits each: the openings differ by their pikemen.
    starts = {int(shared_of(mixture, c)[1][0]) for c in range(mixture.combinations)}
    assert len(starts) == 3
    calls: list[int] = []
    run_stacked = OlympiaPrepared.run_stacked

    def counted(self: Any, tables: Any, slots: np.ndarray, *rest: Any) -> None:
        calls.append(len(slots))
        run_stacked(self, tables, slots, *rest)

    monkeypatch.setattr(OlympiaPrepared, "run_stacked", counted)
    first, count = BLOCK - 200, 500
    got = prepare(scenario).run(11, first, count)
    monkeypatch.undo()
    assert calls == [count]
    alone = alone_of(scenario)
    assert all(alone(c).kernel == "chain" for c in (0, 8))
    assert battles_of_their_combinations(got, mixture, 11, first, alone) == count


def test_a_combination_broken_before_its_first_strike_runs_as_before() -> None:
    """A break point of 100 breaks the defender at the opening: the chain kernel strikes
    once, which the shared walk does not, so that combination runs on its own kernel
    (the chain kernel on a table of its own: half the battles repay it; each battle
    still its own), the other on the shared table."""
    scenario = ranged({"defender.break_point": "0:1, 100:1"})
    mixture = scenario.model
    assert shared_of(mixture, 0) is not None and shared_of(mixture, 1) is None
    assert mixture.prepared_of(1).kernel == "chain" and not mixture.prepared_of(1).stacks()
    got = prepare(scenario).run(5, 0, 300)
    assert battles_of_their_combinations(got, mixture, 5, 0, alone_of(scenario)) == 300
    assert (got["winner"][got["unknown.0"] // 3 == 1] == 0).mean() > 0.9  # broken: lost


def test_a_chunk_counts_its_block_from_the_last_chunks_and_gives_its_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk that starts inside a block numbers its battles from the draws of the
    chunks just run (drawing only its own), the same battles as a fresh run's that
    draws the block's earlier battles again; a chunk all on one table answers as a plain
    run does, its rows with the mixture's columns in their order, tallied alike."""
    scenario = ranged(SHARED)
    kept, fresh = prepare(scenario), prepare(scenario)
    kept.run(3, BLOCK, 100)
    kept.run(3, BLOCK + 100, 150)
    drawn: list[tuple[int, int]] = []
    draws = type(scenario.model).draws

    def counted(self: Any, seed: int, first: int, count: int) -> np.ndarray:
        drawn.append((first, count))
        return draws(self, seed, first, count)

    monkeypatch.setattr(type(scenario.model), "draws", counted)
    got = kept.run(3, BLOCK + 250, 200)
    assert drawn == [(BLOCK + 250, 200)]
    again = fresh.run(3, BLOCK + 250, 200)
    assert drawn[1:] == [(BLOCK + 250, 200), (BLOCK, 250)]
    monkeypatch.undo()
    assert isinstance(got, Outcomes) and list(got) == list(kept.columns)
    for name in kept.columns:
        assert np.array_equal(got[name], again[name]), name
    assert Tally.of(got).to_dict() == Tally.of(dict(got)).to_dict()


def test_same_battles_on_any_threads_and_chunks() -> None:
    assert reproducibility(ranged(SHARED), battles=1_500, seed=4, chunks=(500, 77)) == []


def test_the_table_holds_a_combinations_own_table_row_for_row() -> None:
    """Each position of a combination's own chain table is a row of the shared table with
    the same chance of a change and the same cumulative chances (the changes in the same
    order) where the combination's battles go on, and goes on there too."""
    mixture = ranged(SHARED).model
    for c in (0, 4):
        member = mixture.prepared_of(c)
        chain, record = shared_of(mixture, c)
        own = OlympiaPrepared(member.battle).chain_table()
        assert own is not None
        space = own.space
        counts = own.code[:, None] // space.stride % space.radix
        wide = chain.space
        codes = counts @ wide.stride + (wide.sradix - 1) @ wide.sstride
        rows = np.array([chain.rows[int(code)] for code in codes])
        assert rows[0] == record[0]
        going = own.ends < 0  # the rows where its battles go on
        assert (chain.table.ends[rows[going]] < 0).all()
        assert np.array_equal(chain.table.scale[rows[going]], own.scale[going])
        shared_cum = chain.table.cum.reshape(-1, chain.table.width)[rows, : own.width - 1]
        own_cum = own.cum.reshape(-1, own.width)[:, :-1]
        assert np.array_equal(shared_cum[going], own_cum[going])


# Slow tier (docs/testing.md): 9 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_shared_walk_agrees_with_the_stored_reference() -> None:
    """The reference case run as a mixture whose other combination (one chance in a
    million: it moves no probability by a point) has two more soldiers and no break
    point: the case's own combination walks that wider table, from its own opening to
    its own break point, against the stored reference sample of the case.

    open field, rear archers: winner 1.00, others 0.81
    """
    case = next(c for c in CASES if c.name == "open field, rear archers")
    changes = {
        "attacker.units[0].men[0].count": "8:999999, 10:1",
        "defender.break_point": "50:999999, 0:1",
    }
    mixture = case.build().with_changes(changes).model
    assert shared_of(mixture, 0) is not None  # 8 soldiers, break point 50
    assert (shared_of(mixture, 0)[0].counts > mixture.prepared_of(0).arrays.groups[:, 3]).any()
    doc = test_the_shared_walk_agrees_with_the_stored_reference.__doc__
    assert check_case(case, doc, changes, kernel_only=("unknown.0", "unknown.1")) == []


def test_warming_runs_the_shared_walk_on_a_copy() -> None:
    """``warm_shared`` loads the shared walk on one battle of a battle that could share
    (the open field), leaving the battle as it was; a tower's, over the chain kernel's
    budget, shares nothing."""
    from simulator.rulesets.stacked import warm_shared

    field = prepare(ranged({}))
    assert isinstance(field, OlympiaPrepared)
    assert warm_shared(field) and field._shared is None
    castle = simulator.load_scenario(ROOT / "scenarios/olympia/castle_siege.toml")
    assert not warm_shared(prepare(castle))  # type: ignore[arg-type]
