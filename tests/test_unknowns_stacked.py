"""Scenarios with ranges whose ruleset's kernel takes every combination's tables side by
side (simulator/rulesets/stacked.py, docs/unknowns.md "Speed"): a chunk is one kernel
call a stack, each battle is still the battle its combination's own scenario fights
(battle block x BLOCK + r of it, on its seed), and the same battles come out on any
thread count and chunking."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
import tomllib
from scipy import stats

import simulator
from simulator.errors import Source
from simulator.input.reader import read_once, reusing
from simulator.rulesets.base import Prepared
from simulator.rulesets.stacked import StackedRuns, stack
from simulator.scenario.scenario import prepare, set_path
from simulator.scenario.unknowns import BLOCK, substituted
from tests import ROOT
from tests.stats_tests import reproducibility
from tests.test_unknowns import battles_of_their_combinations
from tests.tiers import SLOW_TIER_RANGES, slow_for

#: A bundled scenario of each ruleset with stacked runs, its keys written as ranges, and
#: the kernel calls (stacks) a chunk of all its combinations makes. Blocks' from_step
#: puts the combinations on two battle functions (the plain one when 0), its turns on
#: two sets of derived columns (``turn`` only when more than one). Olympia's 264
#: combinations are each drawn too seldom to repay a chain table of their own: those in
#: random order walk one table they share (rulesets/olympia/shared.py), from step 0 or
#: 2, those in alternating order run on ``skip``: two stacks.
CASES: dict[str, tuple[str, dict[str, Any], int]] = {
    "age_of_gods": (
        "age_of_gods/pikemen_vs_knights",
        {"defender.units[0].men.pikeman": "35..37", "attacker.break_point": "0:1, 50:2"},
        1,
    ),
    "blocks": (
        "blocks/field_battle",
        {
            "attacker.blocks[0].steps": "1..3",
            "battle.turns": "1:1, 2:1",
            "battle.from_step": "0:1, 1:1",
        },
        2,
    ),
    "confrontation": (
        "confrontation/attack",
        {"attacker.stacks[0].advantages": "0..2", "defender.stacks[1].advantages": "0..1"},
        1,
    ),
    "olympia": (
        "olympia/knights_vs_pikemen",
        {
            "defender.units[0].men.pikeman": "35..40",
            "defender.break_point": "0..10",
            "battle.strike_order": "random:1, alternating:1",
            "battle.from_step": "0:1, 2:1",
        },
        2,
    ),
    "skirmish": (
        "skirmish/cavalry_charge",
        {
            "stacks[0].units[0]": {"type": "cavalry", "count": "1..3"},
            "stacks[1].units[0]": {"type": "swordsman", "count": "3:1, 4:1"},
        },
        1,
    ),
}


#: The cases the first tier leaves to the slow one: the rulesets whose stacked kernel only
#: the slow tier compiles, and blocks, whose battles from a later step run its battle as
#: it unfolds (tests/tiers.py).
SLOW_CASES = SLOW_TIER_RANGES | {"blocks"}


def ranged(ruleset: str) -> simulator.Scenario:
    name, ranges, _ = CASES[ruleset]
    data = tomllib.loads((ROOT / "scenarios" / f"{name}.toml").read_text(encoding="utf-8"))
    for path, value in ranges.items():
        set_path(data, path, value)
    return simulator.from_data(data, Source(f"{name} with ranges"))


@pytest.mark.parametrize("ruleset", slow_for(sorted(CASES), SLOW_CASES))
def test_a_chunk_is_one_call_a_stack_and_each_battle_its_combinations_own(
    ruleset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Battles across a block's end: one kernel call for each stack (no combination's
    own run), and battle j, the r-th of its block to draw combination c, is battle
    block x BLOCK + r of c's scenario validated on its own, on c's seed, every column."""
    scenario = ranged(ruleset)
    mixture = scenario.model
    prepared = prepare(scenario)
    kind = type(mixture.prepared_of(0))
    assert issubclass(kind, StackedRuns)
    stacked_calls: list[int] = []
    run_stacked = kind.run_stacked

    def counted(self: Any, tables: Any, slots: np.ndarray, *rest: Any) -> None:
        stacked_calls.append(len(slots))
        run_stacked(self, tables, slots, *rest)

    def refused(*_: Any) -> None:
        raise AssertionError("a combination ran on its own kernel call")

    monkeypatch.setattr(kind, "run_stacked", counted)
    monkeypatch.setattr(kind, "run", refused)
    first, count = BLOCK - 150, 400
    got = prepared.run(11, first, count)
    monkeypatch.undo()
    assert len(stacked_calls) == CASES[ruleset][2] and sum(stacked_calls) == count

    assert battles_of_their_combinations(got, mixture, 11, first, alone_of(scenario)) == count


def alone_of(scenario: simulator.Scenario) -> Any:
    """Combination c's scenario validated and prepared on its own, on the kernel the
    mixture runs it on (olympia's own choice for a lone scenario would be the chain)."""
    mixture = scenario.model

    def alone(c: int) -> Prepared:
        data = substituted(scenario.data, mixture.values_of(c))
        own = prepare(simulator.from_data(data, Source("one combination")))
        own.use_kernel(mixture.prepared_of(c).kernel)
        return own

    return alone


def test_olympia_combinations_off_the_stacked_kernel_run_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A combination the stacked kernels do not run (one that names the chain kernel
    builds its own table) runs by a call of its own, the others in one stacked call;
    every battle its combination's own, across a block's end."""
    data = tomllib.loads((ROOT / "scenarios/olympia/knights_vs_pikemen.toml").read_text())
    set_path(data, "battle.kernel", "chain:98, skip:1")
    set_path(data, "defender.break_point", "50:1, 25:1")
    scenario = simulator.from_data(data, Source("kernels"))
    mixture = scenario.model
    kernels = [mixture.prepared_of(c).kernel for c in range(mixture.combinations)]
    assert kernels == ["chain", "chain", "skip", "skip"], kernels
    kind = type(mixture.prepared_of(0))
    stacked: list[int] = []
    apart: list[int] = []
    run_stacked, run = kind.run_stacked, kind.run

    def counted_stacked(self: Any, tables: Any, slots: np.ndarray, *rest: Any) -> None:
        stacked.append(len(slots))
        run_stacked(self, tables, slots, *rest)

    def counted(self: Any, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        apart.append(count)
        return run(self, seed, first, count)

    monkeypatch.setattr(kind, "run_stacked", counted_stacked)
    monkeypatch.setattr(kind, "run", counted)
    first, count = BLOCK - 300, 600
    got = prepare(scenario).run(11, first, count)
    monkeypatch.undo()
    assert len(stacked) == 1 and len(apart) == 4  # the chain's: one call a block each
    assert sum(stacked) + sum(apart) == count and sum(stacked) < count / 10
    alone = alone_of(scenario)
    assert battles_of_their_combinations(got, mixture, 11, first, alone) == count


@pytest.mark.parametrize("ruleset", slow_for(sorted(CASES), SLOW_CASES))
def test_same_battles_on_any_threads_and_chunks(ruleset: str) -> None:
    assert reproducibility(ranged(ruleset), battles=1_500, seed=4, chunks=(500, 77)) == []


def test_a_stack_holds_each_members_tables_as_they_are() -> None:
    """Each member's table, read back from the stacked copy by its offsets and shape
    (what kernels/stacked.py's views read), is its own table exactly, whether the stack
    was made at once or grown."""
    scenario = ranged("confrontation")
    members = [scenario.model.prepared_of(c) for c in (5, 0, 11)]
    tables = stack(members)
    for s, member in enumerate(members):
        for t, own in enumerate(member.stack_tables()):
            part = tables.flats[t][tables.at[s, t] : tables.at[s + 1, t]]
            shape = own.shape if own.ndim == 1 else tuple(tables.dims[s, 2 * t : 2 * t + 2])
            assert np.array_equal(part.reshape(shape), own), (s, t)
        assert tuple(tables.sizes[s]) == member.stack_sizes()
    assert tables.width == max(m.stack_sizes()[0] for m in members)
    # A stack grown by the members a later chunk draws is the stack of them all.
    grown = stack(members[1:], stack(members[:1]))
    assert all(np.array_equal(a, b) for a, b in zip(grown.flats, tables.flats, strict=True))
    for name in ("at", "dims", "sizes"):
        assert np.array_equal(getattr(grown, name), getattr(tables, name)), name


#: Each ruleset's stacked kernel, by module and name (and olympia's run of a scenario's
#: battles, which it calls by its address).
STACKED_KERNELS = {
    "age_of_gods": ("kernels.age_of_gods_stacked", ("phased_stacked",)),
    "blocks": ("kernels.blocks_stacked", ("blocks_stacked",)),
    "confrontation": ("kernels.confrontation_stacked", ("confrontation_stacked",)),
    "olympia": ("kernels.olympia.stacked", ("skip_stacked", "_skip_run")),
    "skirmish": ("kernels.skirmish_stacked", ("skirmish_stacked",)),
}


@pytest.mark.parametrize("ruleset", slow_for(sorted(CASES), SLOW_CASES))
def test_one_compiled_signature_a_stacked_kernel(ruleset: str) -> None:
    """Whatever the stack (its members' sizes, one member or many, one battle function
    or the other), the stacked kernel is compiled once: every stack's arrays are of the
    same types."""
    module, names = STACKED_KERNELS[ruleset]
    scenario = ranged(ruleset)
    prepared = prepare(scenario)
    prepared.run(3, 0, 50)
    prepared.run(3, 50, 2_000)
    for name in names:
        kernel = getattr(importlib.import_module(module), name)
        assert len(kernel.signatures) == 1, (name, kernel.signatures)


def test_the_combinations_read_the_parts_they_share_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Confrontation's units, which its combinations here do not change, are each read
    (and each stack's named) once for all of them (input.reader.read_once); outside a
    mixture every read reads."""
    from simulator.rulesets.confrontation import model

    reads: list[str] = []
    stacks_read: list[str] = []
    unit, units = model._unit, model._units

    def counted(node: Any, types: Any) -> Any:
        reads.append(node.path)
        return unit(node, types)

    def counted_units(node: Any, *rest: Any) -> Any:
        stacks_read.append(node.path)
        return units(node, *rest)

    monkeypatch.setattr(model, "_unit", counted)
    monkeypatch.setattr(model, "_units", counted_units)
    scenario = ranged("confrontation")
    mixture = scenario.model
    for c in range(mixture.combinations):
        mixture.scenario_of(c)
    fielded = [u for stack in mixture.scenario_of(0).model.stacks for u in stack.units]
    assert sorted(reads) == sorted(set(reads)) and len(reads) == len(fielded)
    # Each stack's units named once too (its advantages vary, its units do not).
    stacks = mixture.scenario_of(0).model.stacks
    assert sorted(stacks_read) == sorted(set(stacks_read)) and len(stacks_read) == len(stacks)
    reads.clear()
    data = substituted(scenario.data, mixture.values_of(0))
    simulator.from_data(data, Source("alone"))
    simulator.from_data(data, Source("alone again"))
    assert len(reads) == 2 * len(fielded)


def test_read_once_reads_a_part_again_for_another_object() -> None:
    parts: dict[Any, Any] = {}
    table, same_content = {"a": 1}, {"a": 1}
    reads: list[object] = []

    def read(data: object) -> int:
        reads.append(data)
        return len(reads)

    with reusing(parts):
        assert read_once("t", table, None, lambda: read(table)) == 1
        assert read_once("t", table, None, lambda: read(table)) == 1
        assert read_once("t", same_content, None, lambda: read(same_content)) == 2
        assert read_once("t", table, same_content, lambda: read(table)) == 3
    assert read_once("t", table, None, lambda: read(table)) == 4  # outside: read afresh


# Slow tier: skirmish's ranges, whose stacked kernel only the slow tier compiles
# (tests/tiers.py).
@pytest.mark.slow
def test_past_the_tables_bound_a_chunk_makes_a_call_a_combination(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Skirmish's stacked call builds each combination's table of expected damage: past
    STACKED_TABLE_BYTES of them the chunk runs a call a combination, the same battles."""
    from simulator.scenario import unknowns

    prepared = prepare(ranged("skirmish"))
    stacked = prepared.run(5, 0, 600)
    kind = type(prepared.mixture.prepared_of(0))  # type: ignore[attr-defined]

    def refused(*_: Any) -> None:
        raise AssertionError("a stacked call past the bound")

    monkeypatch.setattr(unknowns, "STACKED_TABLE_BYTES", 0)
    monkeypatch.setattr(kind, "run_stacked", refused)
    one_a_combination = prepared.run(5, 0, 600)
    assert set(one_a_combination) == set(stacked)
    for column, values in stacked.items():
        assert np.array_equal(one_a_combination[column], values), column


# Slow tier: confrontation's ranges (60,000 battles), whose stacked kernel only the slow
# tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_the_stacked_answer_is_the_weighted_mixture_of_fixed_answers() -> None:
    """Confrontation's attacker's first stack with 0 advantages (weight 1) or 2 (weight
    3): P(attacker wins) of the stacked run is P(0) / 4 + 3 P(2) / 4, each estimated by
    its own fixed run, within the difference's 99.9% normal interval."""
    n = 20_000
    name = CASES["confrontation"][0]
    data = tomllib.loads((ROOT / "scenarios" / f"{name}.toml").read_text(encoding="utf-8"))

    def with_advantages(value: Any) -> simulator.Scenario:
        set_path(data, "attacker.stacks[0].advantages", value)
        return simulator.from_data(data, Source("advantages"))

    mixed = simulator.simulate(with_advantages("0:1, 2:3"), n, seed=21).win()[0]
    p0 = simulator.simulate(with_advantages(0), n, seed=22).win()[0]
    p2 = simulator.simulate(with_advantages(2), n, seed=23).win()[0]
    expected = p0 / 4 + 3 * p2 / 4
    variance = mixed * (1 - mixed) / n + (p0 * (1 - p0) / 16 + 9 * p2 * (1 - p2) / 16) / n
    assert abs(mixed - expected) < stats.norm.ppf(0.9995) * variance**0.5, (mixed, expected)


# Slow tier: it runs every ruleset's stacked kernel, two of which only the slow tier
# compiles (tests/tiers.py).
@pytest.mark.slow
def test_the_page_warms_the_stacked_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """serve's warming runs one battle of each stacked ruleset's starter through its
    stacked kernel (a question with ranges then waits on no compile), and olympia's
    page example through the walk of a shared chain table."""
    from simulator.serve import warming

    warmed = stacked_runs(monkeypatch)
    for ruleset in sorted(STACKED_KERNELS):
        warming._other_kernels(ruleset)
    assert warmed == sorted([*STACKED_KERNELS, "olympia"])


def stacked_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ruleset of each stacked kernel call from now on (until ``monkeypatch`` undoes
    it), in the order they run."""
    ran: list[str] = []

    def counting(run_stacked: Any) -> Any:
        def counted(self: Any, *args: Any) -> None:
            ran.append(type(self).__module__.split(".")[-2])
            run_stacked(self, *args)

        return counted

    # The base class's and any ruleset's own: a ruleset that ran its stack its own way
    # would otherwise go uncounted.
    classes, seen = [StackedRuns], []
    while classes:
        cls = classes.pop()
        seen.append(cls)
        classes += cls.__subclasses__()
    for cls in seen:
        if "run_stacked" in vars(cls):
            monkeypatch.setattr(cls, "run_stacked", counting(vars(cls)["run_stacked"]))
    return ran
