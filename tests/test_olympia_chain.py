"""The chain-walk kernel (kernels/olympia/chain.py) against the strike kernel, the exact
solver and itself.

It walks battles through a table of the exact solver's chain, so it is checked against
both: against the strike kernel (independent draws, one distribution) by chi-square on
the whole histogram of every column and by the means (``differing_columns``, at a
family-wise false-alarm rate of 0.001 per scenario); against the exact answer by the
99.9% intervals of :func:`simulator.testing.exact_within_intervals`. Its own draws (the
exponential ziggurat behind the geometric draw of the strikes) are checked against their
exact distributions.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import simulator
from kernels.olympia import chain as olympia_chain
from kernels.rng import new_state, seed_battle
from simulator.errors import BattleOddsError
from simulator.rulesets.olympia import prepare
from simulator.rulesets.olympia.prepare import OlympiaPrepared, chain_refusal
from simulator.testing import ALPHA, exact_within_intervals, reproducibility
from tests import ROOT

from .test_olympia_skip import differing_columns

BUNDLED = sorted((ROOT / "scenarios" / "olympia").glob("*.toml"))
BATTLES = 30_000


def fits(scenario: simulator.Scenario) -> bool:
    return chain_refusal(OlympiaPrepared(scenario.model).arrays) is None


#: The rules the skip kernel's tests exercise (tests/test_olympia_skip.py), in battles
#: small enough for a table.
SCENARIOS: dict[str, dict[str, Any]] = {
    "tower": {
        "attacker": "noble, 12 soldier, 3 archer@1",
        "defender": "noble, 3 knight, 3 pikeman",
        "structure": "tower:8",
    },
    "units": {
        "attacker": "noble, 4 soldier, 2 blessed_soldier; noble(health=30), 2 knight",
        "defender": "noble, 4 pikeman, 2 crossbowman@1; noble, 2 swordsman",
        "terrain": "swamp",
        "weather": "rain",
    },
    "siege": {
        "attacker": "noble, 6 soldier, 3 peasant, 2 catapult, 1 battering_ram",
        "defender": "noble, 4 pikeman, 2 archer@1",
        "structure": "tower:10:60",
    },
    "kinds": {
        "attacker": "noble, 3 soldier, 1 archer@1; noble, 2 soldier, 1 archer@1; noble, 2 soldier",
        "defender": "noble, 3 pikeman, 1 knight; noble, 2 pikeman, 1 knight",
        "attacker_break": 10,
        "defender_break": 10,
    },
    "extremes": {
        "attacker": "noble, 8 swordsman",
        "defender": "noble, 6 soldier",
        "attacker_break": 0,
        "defender_break": 100,
    },
}


def inline(name: str) -> simulator.Scenario:
    spec = dict(SCENARIOS[name])
    return simulator.inline_scenario("olympia", spec.pop("attacker"), spec.pop("defender"), **spec)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_chain_and_strike_kernels_agree_on_every_bundled_scenario_that_fits(path: Path) -> None:
    scenario = simulator.load_scenario(path)
    if not fits(scenario):
        pytest.skip(f"{path.name}: {chain_refusal(OlympiaPrepared(scenario.model).arrays)}")
    prepared = OlympiaPrepared(scenario.model)
    assert prepared.kernel == "chain"  # what auto runs for it
    strike = prepared.run_matrix(11, 0, BATTLES, "strike")
    chain = prepared.run_matrix(12, 0, BATTLES, "chain")
    assert differing_columns(strike, chain, prepared.columns) == []


def test_at_least_three_bundled_scenarios_run_the_chain_kernel() -> None:
    """The test above is not vacuous: most bundled random-order battles fit."""
    assert sum(fits(simulator.load_scenario(p)) for p in BUNDLED) >= 3


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_chain_and_strike_kernels_agree_on_rules_scenarios(name: str) -> None:
    """Shielded nobles, leaders, blessed soldiers, swamp and rain, engines against a
    structure that collapses, units sharing types, break points of 0 and 100."""
    scenario = inline(name)
    prepared = OlympiaPrepared(scenario.model)
    assert prepared.kernel == "chain"
    strike = prepared.run_matrix(21, 0, BATTLES, "strike")
    chain = prepared.run_matrix(22, 0, BATTLES, "chain")
    assert differing_columns(strike, chain, prepared.columns) == []


def test_a_broken_chain_kernel_is_caught() -> None:
    """The comparison sees one more casualty in one battle in a hundred."""
    prepared = OlympiaPrepared(simulator.load_scenario(BUNDLED[0]).model)
    strike = prepared.run_matrix(11, 0, BATTLES, "strike")
    chain = prepared.run_matrix(12, 0, BATTLES, "chain")
    column = next(c for n, c in prepared.columns.items() if n.startswith("casualties."))
    chain[::100, column] += 1
    assert differing_columns(strike, chain, prepared.columns) != []


EXACT_CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "yardstick": ("noble, 100 soldier", "noble, 20 knight", {}),
    "siege": (
        "noble, 8 soldier, 2 catapult, 1 battering_ram",
        "noble, 5 pikeman, 2 archer@1",
        {"structure": "tower:10:60"},
    ),
    "sea": ("noble, 6 pirate", "noble, 5 soldier", {"structure": "roundship:5"}),
    "units": (
        "noble, 4 soldier, 2 blessed_soldier; noble(health=30), 2 knight",
        "noble, 5 pikeman, 2 crossbowman@1",
        {"terrain": "swamp", "weather": "rain"},
    ),
    "broken at the opening": (
        "noble, 8 swordsman",
        "noble, 6 soldier",
        {"attacker_break": 0, "defender_break": 100},
    ),
    "to the last man": (
        "noble, 5 soldier",
        "noble, 4 pikeman",
        {"attacker_break": 0, "defender_break": 0},
    ),
}


@pytest.mark.parametrize("name", list(EXACT_CASES))
def test_the_chain_kernel_agrees_with_the_exact_solver(name: str) -> None:
    """P(each outcome) inside its 99.9% interval, and the mean strikes, casualties and
    every extra (nobles, leader, structure, engines) by z-tests at a family-wise 99.9%."""
    attacker, defender, options = EXACT_CASES[name]
    scenario = simulator.inline_scenario("olympia", attacker, defender, **options)
    prepared = OlympiaPrepared(scenario.model)
    assert prepared.kernel == "chain"
    matrix = prepared.run_matrix(31, 0, 100_000, "chain")
    rows = {column: matrix[:, c] for column, c in prepared.columns.items()}
    assert exact_within_intervals(simulator.exact(scenario), rows) == []


def test_same_seed_same_battles_on_one_and_two_threads_and_any_chunking() -> None:
    scenario = simulator.inline_scenario(
        "olympia",
        "noble, 4 soldier, 2 archer@1; noble, 2 soldier",
        "noble, 5 pikeman, 2 knight",
        structure="tower:5",
        kernel="chain",
    )
    assert reproducibility(scenario, battles=3_000, seed=5, chunks=(1_000, 77, 64)) == []
    one = simulator.simulate(scenario, 500, 5, threads=1, chunk=100)
    assert one.kernel == "chain"


def test_auto_picks_the_chain_kernel_within_budget_and_skip_beyond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = simulator.inline_scenario("olympia", "noble, 10 knight", "noble, 10 soldier")
    assert simulator.simulate(small, 200, 1).kernel == "chain"
    # Over the positions budget: 201 x 2 x 31 x 2 x 51 x 121 positions with the tower.
    large = simulator.inline_scenario(
        "olympia", "noble, 200 soldier, 30 archer@1", "noble, 50 knight", structure="tower:20"
    )
    assert simulator.simulate(large, 200, 1).kernel == "skip"
    # The alternating order has no geometric strikes between changes.
    alternating = simulator.inline_scenario(
        "olympia", "noble, 10 knight", "noble, 10 soldier", strike_order="alternating"
    )
    assert simulator.simulate(alternating, 200, 1).kernel == "skip"
    # A table over the bytes budget.
    monkeypatch.setattr(prepare, "CHAIN_MAX_BYTES", 1_000)
    assert simulator.simulate(small, 200, 1).kernel == "skip"
    # Either can still be named.
    for kernel in ("strike", "skip"):
        named = simulator.inline_scenario(
            "olympia", "noble, 10 knight", "noble, 10 soldier", kernel=kernel
        )
        assert simulator.simulate(named, 200, 1).kernel == kernel


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strike_order": "alternating"}, "random strike order only"),
        ({"structure": "castle:100", "defender_break": 0}, "over the chain kernel's limit"),
    ],
)
def test_the_chain_kernel_named_where_it_cannot_run_is_a_clear_error(
    options: dict[str, str], message: str
) -> None:
    with pytest.raises(BattleOddsError, match=rf"kernel.*{message}.*use \"skip\""):
        simulator.inline_scenario(
            "olympia", "noble, 60 soldier", "noble, 40 pikeman", kernel="chain", **options
        )


def test_the_table_rows_are_distributions() -> None:
    prepared = OlympiaPrepared(inline("siege").model)
    table = prepared.chain_table()
    assert table is not None and table.width >= 2
    cum = table.cum.reshape(-1, table.width)
    playing = table.ends < 0
    assert playing[0] and (table.p_change[playing] > 0).all()
    assert ((table.p_change > 0) == playing).all()
    real = np.where(cum < olympia_chain.PAST, cum, 1.0)
    assert (np.diff(real, axis=1) >= 0).all() and (real[:, :-1] <= 1.0 + 1e-12).all()
    # Every change leads to a later row (the chain only moves down its state space).
    to = table.to.reshape(-1, table.width)
    real_changes = (cum < olympia_chain.PAST).sum(axis=1) + 1
    for x in np.flatnonzero(playing):
        assert (to[x, : real_changes[x]] > x).all()
    # A row a position, in falling index (a position reached by several changes is given
    # one row), and every row but the opening's reached by a change.
    assert (np.diff(table.code) < 0).all()
    reached = {int(to[x, j]) for x in np.flatnonzero(playing) for j in range(real_changes[x])}
    assert reached | {0} == set(range(len(table.code)))


def test_positions_decode_by_float_quotients_as_by_integer_division() -> None:
    """The walk's decode of a battle's last position (float quotients below 2**53,
    exact.py's integer ``decode`` past it) gives the digits ``decode`` gives: positions
    of a battle with a structure, and indices of a space of large digits around 2**53,
    where a float quotient would first round wrong."""
    from kernels.olympia.exact import decode
    from simulator.rulesets.olympia.space import layout

    def digits(decoder: Any, index: int, space: tuple[np.ndarray, ...]) -> list[int]:
        radix, stride, sradix, sstride = space
        cnt, remaining = np.zeros(len(radix), np.int64), np.zeros(2, np.int64)
        groups = np.zeros((len(radix), 1), np.int64)  # its rows' count alone is read
        decoder(np.int64(index), groups, radix, stride, groups, sradix, sstride, cnt, remaining)
        return [*cnt, *remaining]

    digits_of = layout(OlympiaPrepared(inline("siege").model).arrays)
    siege = (digits_of.radix, digits_of.stride, digits_of.sradix, digits_of.sstride)
    assert (siege[2] > 1).any()  # its structure's digit is decoded too
    wide = tuple(
        np.array(a, np.int64)
        for a in ([1 << 21, 1 << 21, 1 << 12], [1, 1 << 21, 1 << 42], [3, 1], [1 << 54, 3 << 54])
    )
    edge = 1 << 53
    rng = np.random.default_rng(5)
    indices = [*range(edge - 300, edge + 300), *(edge - (1 << k) for k in range(54))]
    indices += [*rng.integers(0, 3 << 54, 500), (3 << 54) - 1]
    battle = [*rng.integers(0, digits_of.states, 1000), digits_of.states - 1]
    for space, positions in ((siege, battle), (wide, indices)):
        for index in positions:
            assert digits(olympia_chain._decoded, index, space) == digits(decode, index, space)


def draws(count: int, draw: Any, *args: Any) -> np.ndarray:
    state = new_state()
    seed_battle(state, np.uint64(9), 0)
    return np.array([draw(state, *args) for _ in range(count)])


# Slow tier (docs/testing.md): 1.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_ziggurat_draws_are_exponential() -> None:
    """Kolmogorov-Smirnov against Exp(1), and the tail past the ziggurat's base (0.05% of
    draws, its slow path) as often as exp(-R) says."""
    x = draws(200_000, olympia_chain.exponential)
    assert stats.kstest(x, "expon").pvalue > ALPHA
    tail = int((x > olympia_chain.ZIGGURAT_R).sum())
    p = math.exp(-olympia_chain.ZIGGURAT_R)
    assert stats.binomtest(tail, len(x), p).pvalue > ALPHA


@pytest.mark.parametrize("p", [0.02, 0.18, 0.5, 0.95, 1.0])
def test_the_strikes_until_a_change_are_geometric(p: float) -> None:
    scale = 0.0 if p >= 1.0 else 1.0 / -math.log1p(-p)
    f = draws(50_000, olympia_chain.failures, scale)
    if p >= 1.0:
        assert (f == 0).all()
        return
    top = int(stats.geom(p).ppf(0.999))
    observed = np.bincount(np.minimum(f, top), minlength=top + 1).astype(float)
    expected = stats.geom(p).pmf(np.arange(1, top + 1)) * len(f)
    expected = np.append(expected, len(f) - expected.sum())
    # Bins of at least 20 expected draws.
    bins_o, bins_e, o, e = [], [], 0.0, 0.0
    for ob, ex in zip(observed, expected, strict=True):
        o, e = o + ob, e + ex
        if e >= 20:
            bins_o.append(o)
            bins_e.append(e)
            o = e = 0.0
    bins_o[-1] += o
    bins_e[-1] += e
    assert stats.chisquare(bins_o, bins_e).pvalue > ALPHA
