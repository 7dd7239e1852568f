"""The kill-skipping kernel against the strike-by-strike kernel (issue 3).

Both kernels run the same battles with different random numbers, so their outputs
are two independent samples that must come from one distribution: every column is
compared as a whole distribution (chi-square on a contingency table, values pooled
into bins of at least 20 expected battles) and by its mean, at a family-wise level
of 0.001 per scenario (Bonferroni over the columns and both tests).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy import stats

import simulator
from kernels.olympia import G_COUNT, G_KIND, G_ROW, G_SIDE, MAN, NOBLE
from kernels.olympia import batch as olympia_batch
from kernels.olympia import kinds as olympia_kinds
from kernels.olympia import skip as olympia_skip
from kernels.rng import new_state, seed_battle
from simulator.errors import BattleOddsError, Source
from simulator.rulesets.olympia.model import Ratings
from simulator.rulesets.olympia.prepare import OlympiaPrepared

BATTLES = 30_000
ALPHA = 0.001
MIN_BIN = 20


def binned_table(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """2 x K counts of the values of x and y, adjacent values merged until every bin
    holds at least MIN_BIN battles of the two samples together."""
    values, inverse = np.unique(np.concatenate([x, y]), return_inverse=True)
    cx = np.bincount(inverse[: len(x)], minlength=len(values))
    cy = np.bincount(inverse[len(x) :], minlength=len(values))
    bins_x: list[int] = []
    bins_y: list[int] = []
    ax = ay = 0
    for a, b in zip(cx, cy, strict=True):
        ax += int(a)
        ay += int(b)
        if ax + ay >= MIN_BIN:
            bins_x.append(ax)
            bins_y.append(ay)
            ax = ay = 0
    if ax + ay and bins_x:
        bins_x[-1] += ax
        bins_y[-1] += ay
    return np.array([bins_x, bins_y])


def differing_columns(a: np.ndarray, b: np.ndarray, columns: dict[str, int]) -> list[str]:
    tests = 2 * len(columns)
    failures = []
    for name, col in columns.items():
        x, y = a[:, col], b[:, col]
        table = binned_table(x, y)
        if table.shape[1] >= 2:
            p = stats.chi2_contingency(table).pvalue
            if p < ALPHA / tests:
                failures.append(f"{name}: distributions differ (chi-square p={p:.2g})")
        elif np.unique(np.concatenate([x, y])).size > 1:
            # Almost constant: compare how often the rare values occur.
            rare = [[np.sum(x != x[0]), len(x)], [np.sum(y != x[0]), len(y)]]
            p = stats.fisher_exact(rare).pvalue
            if p < ALPHA / tests:
                failures.append(f"{name}: rare values differ (p={p:.2g})")
        if x.std() + y.std() > 0:
            p = stats.ttest_ind(x, y, equal_var=True).pvalue
            if p < ALPHA / tests:
                failures.append(f"{name}: means {x.mean():.4g} vs {y.mean():.4g} (p={p:.2g})")
    return failures


SCENARIOS: dict[str, dict[str, Any]] = {
    # The medium benchmark's shape: rear archers, a tower, knights and pikemen.
    "tower": {
        "attacker": "noble, 60 soldier, 12 archer@1",
        "defender": "noble, 12 knight, 18 pikeman",
        "structure": "tower:40",
    },
    # Several units (shielded nobles, leader last), blessed soldiers, swamp and rain.
    "units": {
        "attacker": "noble, 15 soldier, 6 blessed_soldier; noble(health=30), 4 knight",
        "defender": "noble, 20 pikeman, 8 crossbowman@1; noble, 5 swordsman",
        "terrain": "swamp",
        "weather": "rain",
    },
    # Siege engines against a small structure that collapses in most battles, with
    # peasants who do not strike when attacking under the alternating order.
    "siege": {
        "attacker": "noble, 25 soldier, 10 peasant, 2 catapult, 1 battering_ram",
        "defender": "noble, 12 pikeman, 4 archer@1",
        "structure": "tower:10:60",
    },
    # Units with men alike (the same types in the same rows), merged into kinds by the
    # skip kernel: groups empty and nobles come into reach unit by unit, so which unit
    # each death came from, drawn when it matters, shows in the nobles' columns.
    "kinds": {
        "attacker": "noble, 6 soldier, 3 archer@1; noble, 4 soldier, 2 archer@1; noble, 5 soldier",
        "defender": "noble, 7 pikeman, 2 knight; noble, 4 pikeman, 3 knight; noble, 2 knight",
        "attacker_break": 10,
        "defender_break": 10,
    },
    # Fought to the last man on one side, broken before the first strike on the other.
    "extremes": {
        "attacker": "noble, 8 swordsman",
        "defender": "noble, 6 soldier",
        "attacker_break": 0,
        "defender_break": 100,
    },
}


@pytest.mark.parametrize("order", ["random", "alternating"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_skip_and_strike_kernels_give_the_same_distributions(name: str, order: str) -> None:
    spec = dict(SCENARIOS[name])
    scenario = simulator.inline_scenario(
        "olympia", spec.pop("attacker"), spec.pop("defender"), strike_order=order, **spec
    )
    prepared = OlympiaPrepared(scenario.model)
    strike = prepared.run_matrix(11, 0, BATTLES, "strike")
    skip = prepared.run_matrix(12, 0, BATTLES, "skip")
    assert differing_columns(strike, skip, prepared.columns) == []


@pytest.mark.slow
def test_big_armies_take_batches_of_deaths_with_the_strike_kernels_distributions() -> None:
    """Hundreds of men in both front rows: the skip kernel draws deaths in batches from a
    fixed table, thinned (kernels/olympia/batch.py), until a side's front falls under
    BATCH_FROM, and per change after it. Units share soldiers and pikemen (a kind's room
    runs out inside a batch), catapults hit a tower, rear rows strike, and nobles come into
    reach late in the battle."""
    scenario = simulator.inline_scenario(
        "olympia",
        "noble, 300 soldier, 60 archer@1; noble, 40 knight; noble, 100 soldier, 2 catapult",
        "noble, 300 pikeman, 40 crossbowman@1; noble, 30 swordsman; noble, 150 pikeman",
        structure="tower:20",
        attacker_break=20,
        defender_break=20,
    )
    prepared = OlympiaPrepared(scenario.model)
    front = prepared.arrays.groups[:, G_ROW] == 0
    for side in (0, 1):
        men = prepared.arrays.groups[(prepared.arrays.groups[:, G_SIDE] == side) & front]
        assert men[:, G_COUNT].sum() >= olympia_batch.BATCH_FROM + 100
    strike = prepared.run_matrix(11, 0, BATTLES, "strike")
    skip = prepared.run_matrix(12, 0, BATTLES, "skip")
    assert differing_columns(strike, skip, prepared.columns) == []


def test_a_broken_skip_kernel_is_caught() -> None:
    """The comparison has the power to see a small bias: one more strike per battle."""
    scenario = simulator.inline_scenario("olympia", "noble, 15 soldier", "noble, 15 soldier")
    prepared = OlympiaPrepared(scenario.model)
    strike = prepared.run_matrix(11, 0, BATTLES, "strike")
    skip = prepared.run_matrix(12, 0, BATTLES, "skip")
    assert differing_columns(strike, skip, prepared.columns) == []
    skip[:, prepared.columns["steps"]] += 1
    assert any(f.startswith("steps") for f in differing_columns(strike, skip, prepared.columns))


def test_a_stalemate_is_a_draw_without_strikes_in_every_kernel() -> None:
    data = {
        "ruleset": "olympia",
        "units": {"scarecrow": {"attack": 0, "defense": 5}},
        "attacker": {"units": [{"men": {"scarecrow": 3}}]},
        "defender": {"units": [{"men": {"scarecrow": 2}}]},
    }
    # Nobles strike with 80 from the package table: make them as harmless as their men.
    battle = replace(simulator.from_data(data, Source("stalemate")).model, noble=Ratings(0, 80, 0))
    prepared = OlympiaPrepared(battle)
    for kernel in ("strike", "skip", "chain"):
        rows = prepared.run_matrix(3, 0, 100, kernel)
        assert (rows[:, prepared.columns["winner"]] == 2).all()
        assert (rows[:, prepared.columns["steps"]] == 0).all()


@pytest.mark.parametrize(
    ("attacker", "defender"),
    [
        ("noble, 200 soldier, 30 archer@1", "noble, 50 knight"),
        # Units sharing types: kinds whose deaths are shared out among their groups.
        (
            "noble, 60 soldier; noble, 40 soldier; noble, 30 soldier",
            "noble, 20 knight; noble, 15 knight",
        ),
        # Big enough for batches of deaths (kernels/olympia/batch.py): the slow tier's,
        # which alone compiles that kernel (tests/tiers.py).
        pytest.param(
            "noble, 300 soldier; noble, 100 soldier, 40 archer@1",
            "noble, 350 pikeman",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_same_seed_same_battles_on_any_thread_count_and_chunking(
    attacker: str, defender: str
) -> None:
    scenario = simulator.inline_scenario(
        "olympia", attacker, defender, structure="tower:20", kernel="skip"
    )
    one = simulator.simulate(scenario, 3000, 5, threads=1, chunk=1000)
    many = simulator.simulate(scenario, 3000, 5, chunk=3000)
    assert one.kernel == many.kernel == "skip"
    for column in one.rows or {}:
        np.testing.assert_array_equal(one.rows[column], many.rows[column])  # type: ignore[index]


# Slow tier: its large armies run olympia's skip kernel for deaths in batches, which
# only the slow tier compiles (tests/tiers.py, SLOW_TIER_PATHS).
@pytest.mark.slow
def test_auto_runs_the_skip_kernel_beyond_the_chain_budget_and_either_can_be_forced() -> None:
    """``auto`` runs ``skip`` on battles whose chain is over the chain kernel's budget
    (tests/test_olympia_chain.py checks the other side of it): the faster there on every
    scenario benchmarks/run.py measures (kills on one strike in a hundred or on half of
    them); either can be forced."""
    battles = {
        "sparse": ("noble, 40 peasant", "noble, 40 peasant", {"structure": "roundship:250"}),
        "mixed": ("noble, 300 soldier", "noble, 100 pikeman", {"structure": "tower:60"}),
        "dense": ("noble, 2000 knight", "noble, 2000 soldier", {}),
    }
    for attacker, defender, options in battles.values():
        scenario = simulator.inline_scenario("olympia", attacker, defender, **options)
        assert simulator.simulate(scenario, 200, 1).kernel == "skip"
    for kernel in ("strike", "skip"):
        forced = simulator.inline_scenario(
            "olympia", "noble, 300 soldier", "noble, 200 pikeman", kernel=kernel
        )
        result = simulator.simulate(forced, 200, 1)
        assert result.kernel == result.to_dict()["kernel"] == kernel


def test_an_unknown_kernel_is_a_clear_error() -> None:
    with pytest.raises(BattleOddsError, match=r"kernel.*(did you mean 'skip'|valid)"):
        simulator.inline_scenario("olympia", "noble", "noble", kernel="skipp")


def inverse_of_the_geometric(v: float, p: float) -> tuple[int, float]:
    """Failures before the first success, chance ``p``, by inversion from ``v`` in (0, 1],
    and how far ``v`` lies from the nearest boundary ``(1 - p) ** k`` (relative): there
    the two ways of rounding may disagree."""
    if p >= 1.0:
        return 0, 1.0
    f = math.floor(math.log(v) / math.log1p(-p))
    near = min(abs(v / (1.0 - p) ** k - 1.0) for k in (f, f + 1) if k >= 1) if f >= 0 else 1.0
    return f, near


@pytest.mark.parametrize("p", [0.01, 0.1, 0.13, 0.2, 0.29, 0.3, 0.45, 0.7, 0.95, 1.0])
def test_the_geometric_draw_is_the_inverse_of_its_distribution(p: float) -> None:
    """The skip kernel counts a geometric draw against the powers of ``1 - p`` where it
    can, and takes logarithms elsewhere: both must give the number of ``k >= 1`` with
    ``v <= (1 - p) ** k``, including in the tails the powers do not reach."""
    rng = np.random.default_rng(15)
    draws = np.concatenate([1.0 - rng.random(20_000), [1.0, 0.5, 1e-300, 2.0**-53]])
    for v in draws:
        expected, near = inverse_of_the_geometric(float(v), p)
        got = olympia_skip.geometric(float(v), p)
        assert got == expected or near < 1e-12, (v, p, got, expected)


@pytest.mark.parametrize(
    ("drawn", "good", "total"),
    [(5, 3, 10), (40, 12, 50), (60, 70, 100), (700, 1000, 4400), (999, 1200, 4400), (3, 1, 2000)],
)
def test_the_hypergeometric_draw_has_its_distribution(drawn: int, good: int, total: int) -> None:
    """The skip kernel shares a kind's deaths out among its groups with this draw: its
    counts must follow the exact probabilities C(good, x) C(total - good, drawn - x) /
    C(total, drawn) (chi-square, bins of at least 20 expected draws). With replacement
    (a binomial) or the mean alone would fail here."""
    state = new_state()
    seed_battle(state, np.uint64(22), 0)
    draws = np.array(
        [olympia_kinds.hypergeometric(state, drawn, good, total) for _ in range(20_000)]
    )
    support = np.arange(max(0, drawn - (total - good)), min(drawn, good) + 1)
    exact = stats.hypergeom(total, good, drawn).pmf(support)
    assert draws.min() >= support[0] and draws.max() <= support[-1]
    observed = np.bincount(draws - support[0], minlength=len(support)).astype(float)
    expected = exact * len(draws)
    bins_o, bins_e, o, e = [], [], 0.0, 0.0
    for ob, ex in zip(observed, expected, strict=True):
        o, e = o + ob, e + ex
        if e >= MIN_BIN:
            bins_o.append(o)
            bins_e.append(e)
            o = e = 0.0
    bins_o[-1] += o
    bins_e[-1] += e
    assert stats.chisquare(bins_o, bins_e).pvalue > ALPHA


@pytest.mark.parametrize(
    ("drawn", "good", "total", "only"), [(0, 5, 9, 0), (4, 0, 9, 0), (4, 9, 9, 4), (9, 5, 9, 5)]
)
def test_the_hypergeometric_draw_where_one_count_is_possible(
    drawn: int, good: int, total: int, only: int
) -> None:
    state = new_state()
    seed_battle(state, np.uint64(2), 0)
    assert olympia_kinds.hypergeometric(state, drawn, good, total) == only


def test_groups_alike_but_for_their_unit_are_one_kind() -> None:
    scenario = simulator.inline_scenario(
        "olympia",
        "noble, 6 soldier, 3 archer@1; noble, 4 soldier, 2 archer@1; noble, 5 soldier",
        "noble, 600 pikeman",
        structure="castle:60",
    )
    arrays = OlympiaPrepared(scenario.model).arrays
    groups = arrays.groups
    kinds = olympia_kinds.kind_table(groups, arrays.survive)
    rep = kinds[olympia_kinds.K_REP]
    soldiers = np.flatnonzero(
        (groups[:, G_SIDE] == 0) & (groups[:, G_KIND] == MAN) & (groups[:, G_ROW] == 0)
    )
    archers = np.flatnonzero((groups[:, G_SIDE] == 0) & (groups[:, G_ROW] == 1))
    nobles = np.flatnonzero(groups[:, G_KIND] == NOBLE)
    assert len(soldiers) == 3 and len(archers) == 2 and len(nobles) == 4
    assert (rep[soldiers] == soldiers[0]).all() and (rep[archers] == archers[0]).all()
    assert (rep[nobles] == nobles).all()  # every noble a kind of his own
    # The castle protects the first 500 defenders: its pikemen split into two kinds.
    pikemen = np.flatnonzero((groups[:, G_SIDE] == 1) & (groups[:, G_KIND] == MAN))
    assert len(set(rep[pikemen])) == len(pikemen) == 2
    for k in np.flatnonzero(rep == np.arange(len(rep))):
        start, size = kinds[olympia_kinds.K_START, k], kinds[olympia_kinds.K_SIZE, k]
        members = kinds[olympia_kinds.K_MEMBER, start : start + size]
        assert sorted(members) == sorted(np.flatnonzero(rep == k))
