"""The prisoners rule against its closed form, in every kernel and reference that has it.

After a decided battle the winner takes each surviving noble of the loser with chance
clamp(25 W // L, 25, 75) percent, W and L the men and nobles still standing on each side
(integer percent). The battles here are decided before anyone can fall, so W and L are the
armies as fielded and the number of nobles taken is exactly Binomial(nobles, percent / 100):
the attacker's side cannot break (break point 0) and the defender's breaks at its first
check (break point 100). Olympia checks after each strike, so there every strike is made
harmless: fighters and nobles of attack 0, so that the one striker is the attacker's
catapult, whose strikes hit the defender's tower and no man (and siege engines are not
men: they count in neither W nor L); age_of_gods checks before the first volley.

The kernels' sample sizes see a one-point change of the chance (a ``<`` written ``<=``,
the floor rounded, a bound moved) with power above 99.9%: at 100,000 battles the mean
number taken of two nobles has a standard error under 0.0023 and one point moves it by
0.02, nine standard errors (and the leader's capture by six of its own).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy import stats

import simulator
from simulator.errors import Source
from simulator.rulesets.olympia.keys import KERNEL_CHOICES
from simulator.rulesets.olympia.model import Ratings
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from tests.reference import age_of_gods as age_of_gods_reference
from tests.reference import olympia as olympia_reference
from tests.stats_tests import interval_contains

OLYMPIA_KERNELS = [k for k in KERNEL_CHOICES if k != "auto"]
KERNEL_BATTLES = 100_000
REFERENCE_BATTLES = 20_000

#: (men of the winner's one unit, the loser's units as men per noble, percent)
#: W and L count the nobles: 7 v 4 is 175 // 4 = 43 (the floor of 43.75); 12 v 4 is
#: 75 (clamped from 75 exactly); 13 v 4 is 81, clamped to 75; 2 v 9 is 5, clamped to 25;
#: 11 v 4 is 68 (68.75).
CASES = [
    (6, [1, 1], 43),
    (11, [1, 1], 75),
    (12, [1, 1], 75),
    (1, [3, 4], 25),
    (10, [0, 2], 68),
    (6, [2, 0, 2], 25),
]


def standing(men: int, losers: list[int]) -> tuple[int, int]:
    return men + 1, sum(losers) + len(losers)


@pytest.mark.parametrize(("men", "losers", "percent"), CASES)
def test_the_cases_are_the_closed_form(men: int, losers: list[int], percent: int) -> None:
    w, lost = standing(men, losers)
    assert percent == min(75, max(25, 25 * w // lost))


def binomial_failures(taken: np.ndarray, nobles: int, percent: int) -> list[str]:
    """The counts of nobles taken against Binomial(nobles, percent / 100): a chi-square
    goodness of fit (every count has an expected frequency in the thousands) and the mean
    inside its 99.9% interval."""
    p = percent / 100
    pmf = stats.binom.pmf(np.arange(nobles + 1), nobles, p)
    observed = np.bincount(taken, minlength=nobles + 1)
    failures = []
    if observed.size > nobles + 1:
        failures.append(f"more than {nobles} nobles taken")
    else:
        fit = stats.chisquare(observed, pmf * len(taken)).pvalue
        if fit < 0.0005:
            failures.append(f"counts {observed.tolist()} against {percent}% (p={fit:.2g})")
    n = len(taken)
    se = np.sqrt(nobles * p * (1 - p) / n)
    if abs(taken.mean() - nobles * p) > 3.48 * se:  # two-sided 0.0005
        failures.append(f"mean {taken.mean():.4f} against {nobles * p:.4f}")
    return failures


def harmless_olympia(men: int, losers: list[int]) -> Any:
    """An olympia battle nobody can fall in, decided at the first break check."""
    data = {
        "ruleset": "olympia",
        "units": {"scarecrow": {"attack": 0, "defense": 5}},
        "attacker": {
            "units": [{"men": {"scarecrow": men}}],
            "break_point": 0,
            "siege_engines": {"catapult": 1},
        },
        "defender": {
            "units": [{"men": {"scarecrow": m}} if m else {} for m in losers],
            "break_point": 100,
            "structure": {"kind": "tower", "defense": 4, "damage": 90},
        },
    }
    battle = simulator.from_data(data, Source("prisoners")).model
    return replace(battle, noble=Ratings(0, 80, 0))


@pytest.mark.parametrize("kernel", OLYMPIA_KERNELS)
@pytest.mark.parametrize(("men", "losers", "percent"), CASES)
def test_olympia_kernels_take_prisoners_at_the_closed_form_chance(
    kernel: str, men: int, losers: list[int], percent: int
) -> None:
    prepared = OlympiaPrepared(harmless_olympia(men, losers))
    rows = prepared.run_matrix(23, 0, KERNEL_BATTLES, kernel)
    column = prepared.columns
    assert (rows[:, column["winner"]] == 0).all()
    assert (rows[:, column["casualties.defender.scarecrow"]] == 0).all()
    taken = rows[:, column["nobles_captured.defender"]]
    assert binomial_failures(taken, len(losers), percent) == []
    leader = rows[:, column["leader_captured.defender"]]
    assert interval_contains(int(leader.sum()), len(leader), percent / 100)


# Slow tier (docs/testing.md): 5.7 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("men", "losers", "percent"), CASES[:3])
def test_olympia_reference_takes_prisoners_at_the_closed_form_chance(
    men: int, losers: list[int], percent: int
) -> None:
    rows = olympia_reference.simulate(harmless_olympia(men, losers), REFERENCE_BATTLES, 4)
    assert (rows["winner"] == 0).all()
    assert binomial_failures(rows["nobles_captured.defender"], len(losers), percent) == []


def age_of_gods_battle(men: int, losers: list[int]) -> simulator.Scenario:
    defender = "; ".join(f"noble, {m} soldier" if m else "noble" for m in losers)
    return simulator.inline_scenario(
        "age_of_gods",
        f"noble, {men} soldier",
        defender,
        attacker_break=0,
        defender_break=100,
    )


@pytest.mark.parametrize(("men", "losers", "percent"), CASES)
def test_age_of_gods_kernel_takes_prisoners_at_the_closed_form_chance(
    men: int, losers: list[int], percent: int
) -> None:
    result = simulator.simulate(age_of_gods_battle(men, losers), KERNEL_BATTLES, seed=29)
    rows = result.rows
    assert rows is not None
    assert (rows["winner"] == 0).all() and (rows["steps"] == 0).all()
    assert binomial_failures(rows["nobles_captured.defender"], len(losers), percent) == []
    leader = rows["leader_captured.defender"]
    assert interval_contains(int(leader.sum()), len(leader), percent / 100)


# Slow tier (docs/testing.md): 7.2 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("men", "losers", "percent"), CASES[:3])
def test_age_of_gods_reference_takes_prisoners_at_the_closed_form_chance(
    men: int, losers: list[int], percent: int
) -> None:
    model = age_of_gods_battle(men, losers).model
    rows = age_of_gods_reference.simulate(model, REFERENCE_BATTLES, 6)
    assert (rows["winner"] == 0).all()
    assert binomial_failures(rows["nobles_captured.defender"], len(losers), percent) == []
