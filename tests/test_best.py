"""``battle-odds best`` and :func:`simulator.best`: the answer checked against the exact
solver on small olympia battles, the statistics of the races checked exactly, the
candidates counted, and the command line."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.studies import best as best_study
from simulator.studies.machinery.armies import Offer, all_armies, count_armies, neighbours
from simulator.studies.machinery.racing import (
    Race,
    choose_best,
    choose_cheapest,
    looks,
    paired_lower,
)

TYPES = ("soldier", "pikeman", "swordsman", "knight")
COSTS = {"soldier": 1, "pikeman": 1.5, "swordsman": 2, "knight": 3}
ENEMY = "noble, 4 pikeman"
BUDGET = 7
# A close call is told apart to 0.01 within 64,000 battles of each army.
TOLERANCE = 0.01
QUICK = {"battles": 2_000, "max_battles": 64_000, "tolerance": TOLERANCE, "seed": 11}


def _scenario() -> simulator.Scenario:
    return simulator.inline_scenario("olympia", "noble", ENEMY)


def _army_text(army: dict[str, int]) -> str:
    return ", ".join(["noble", *(f"{n} {t}" for t, n in army.items() if n)])


@pytest.fixture(scope="module")
def exact_odds() -> dict[tuple[int, ...], tuple[float, float]]:
    """(cost, exact P(attacker wins)) of every army within the budget, each built as a
    one-line army (not by the code under test)."""
    odds = {}
    ranges = [range(math.floor(BUDGET / COSTS[t]) + 1) for t in TYPES]
    for counts in itertools.product(*ranges):
        cost = sum(n * COSTS[t] for n, t in zip(counts, TYPES, strict=True))
        if cost > BUDGET:
            continue
        army = dict(zip(TYPES, counts, strict=True))
        scenario = simulator.inline_scenario("olympia", _army_text(army), ENEMY)
        odds[counts] = (cost, simulator.exact(scenario).win["attacker"])
    return odds


def _key(answer: best_study.BestArmy | None, army: dict[str, int]) -> tuple[int, ...]:
    return tuple(army.get(t, 0) for t in TYPES)


def test_the_chosen_army_is_within_the_tolerance_of_the_exact_best(exact_odds):
    answer = simulator.best(_scenario(), budget=BUDGET, types=TYPES, costs=COSTS, **QUICK)
    best_p = max(p for _, p in exact_odds.values())
    # The question is not trivial: most armies are worse than the best by more than the
    # tolerance, so a wrong choice would show.
    assert sum(p < best_p - TOLERANCE for _, p in exact_odds.values()) > len(exact_odds) / 2
    assert answer.exhaustive and answer.candidates == answer.evaluated == len(exact_odds)
    chosen = exact_odds[_key(answer, answer.to_dict()["best"]["army"])][1]
    assert chosen >= best_p - answer.within
    assert answer.within <= TOLERANCE and answer.sure


def test_a_race_of_every_army_starts_at_the_first_look_and_keeps_the_guarantee(exact_odds):
    """Without ``battles`` a race of every army starts at FIRST_LOOK battles, fewer than a
    search's: it fights fewer battles than from SEARCH_FIRST_LOOK, and its answer is still
    within its stated margin of the exact best."""
    assert best_study.FIRST_LOOK < best_study.SEARCH_FIRST_LOOK
    given = {k: v for k, v in QUICK.items() if k != "battles"}
    answer = simulator.best(_scenario(), budget=BUDGET, types=TYPES, costs=COSTS, **given)
    first = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS, battles=best_study.FIRST_LOOK,
        **given,
    )  # fmt: skip
    longer = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS,
        battles=best_study.SEARCH_FIRST_LOOK, **given,
    )  # fmt: skip
    assert answer.to_dict() == first.to_dict()
    assert answer.battles < longer.battles
    best_p = max(p for _, p in exact_odds.values())
    chosen = exact_odds[_key(answer, answer.to_dict()["best"]["army"])][1]
    assert answer.exhaustive and answer.sure and answer.within <= TOLERANCE
    assert chosen >= best_p - answer.within


def test_its_races_compile_no_tally_while_they_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """best's races count wins, no outcomes: its battles run where a wait for a compile
    aside compiles nothing of ``meanwhile`` (the tally, 2.4 to 3 CPU s of a cold
    ``best`` it never called), and after it the others' waits compile it again."""
    from kernels import _aside
    from simulator.studies.machinery.army_battles import ArmyBattles

    seen: list[int] = []
    race = ArmyBattles.race

    def watched(self: ArmyBattles, *args: object, **kwargs: object) -> object:
        seen.append(_aside._counting_nothing)
        return race(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ArmyBattles, "race", watched)
    simulator.best(_scenario(), budget=4, types=TYPES, costs=COSTS, **QUICK)
    assert seen and all(seen)
    assert _aside._counting_nothing == 0


def test_a_search_starts_its_races_at_the_search_first_look():
    """Without ``battles`` a search's races (its steps' and its final one) start at
    SEARCH_FIRST_LOOK battles, on which its climbs decide: its answer is the one of
    ``battles=SEARCH_FIRST_LOOK``."""
    given = {k: v for k, v in QUICK.items() if k != "battles"}
    kwargs = {"budget": BUDGET, "types": TYPES, "costs": COSTS, "exhaustive_limit": 1}
    answer = simulator.best(_scenario(), **kwargs, **given)
    same = simulator.best(_scenario(), **kwargs, battles=best_study.SEARCH_FIRST_LOOK, **given)
    assert not answer.exhaustive
    assert answer.to_dict() == same.to_dict()


def test_the_cheapest_army_reaching_the_target_is_the_exact_one(exact_odds):
    def fits(target: float) -> bool:
        # No army's P within the tolerance of the target (so the exact answer is the
        # only right one), and the cheapest armies reaching it clear it by two.
        if any(abs(p - target) <= TOLERANCE for _, p in exact_odds.values()):
            return False
        cheapest = min(c for c, p in exact_odds.values() if p >= target)
        return max(p for c, p in exact_odds.values() if c == cheapest) > target + 2 * TOLERANCE

    target = next(t for t in np.arange(0.2, 0.6, 0.0025) if fits(t))
    cheapest = min(c for c, p in exact_odds.values() if p >= target)
    at_cheapest = {a: p for a, (c, p) in exact_odds.items() if c == cheapest}
    best_there = max(at_cheapest.values())
    answer = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS, target=target, **QUICK
    )
    chosen = _key(answer, answer.to_dict()["best"]["army"])
    assert answer.sure and not answer.undecided
    assert exact_odds[chosen][0] == cheapest
    assert exact_odds[chosen][1] >= best_there - answer.within >= best_there - TOLERANCE
    assert exact_odds[chosen][1] >= target


def test_an_unreachable_target_says_so(exact_odds):
    best_p = max(p for _, p in exact_odds.values())
    answer = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS, target=best_p + 0.05, **QUICK
    )
    assert answer.chosen is None and answer.to_dict()["best"] is None
    assert "no army within budget 7 surely reaches" in answer.sentence()


def test_the_search_finds_the_exact_best_where_greedy_steps_do_not(exact_odds):
    # Greedy: from nothing, add the one man who raises the exact P most, while the
    # budget allows. On this battle it ends far from the best.
    army = (0,) * len(TYPES)
    while True:
        steps = [tuple(n + (i == j) for j, n in enumerate(army)) for i in range(len(TYPES))]
        steps = [s for s in steps if s in exact_odds]
        if not steps:
            break
        army = max(steps, key=lambda s: exact_odds[s][1])
    best_p = max(p for _, p in exact_odds.values())
    assert exact_odds[army][1] < best_p - 5 * TOLERANCE
    answer = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS, exhaustive_limit=1, **QUICK
    )
    assert not answer.exhaustive
    assert answer.evaluated < answer.candidates
    assert answer.sentence().startswith(
        f"best found among {answer.evaluated:,} evaluated of {answer.candidates:,}: "
    )
    chosen = _key(answer, answer.to_dict()["best"]["army"])
    assert exact_odds[chosen][1] >= best_p - TOLERANCE


def test_the_search_climbs_from_a_poor_start(exact_odds, monkeypatch):
    # One start, a lone soldier (P 0.06), more than one move from the best army (P 0.59):
    # the answer is only right if the climb moves from army to army towards it.
    start = (1, 0, 0, 0)
    monkeypatch.setattr(best_study, "starts", lambda offer, seed, count: [start])
    answer = simulator.best(
        _scenario(), budget=BUDGET, types=TYPES, costs=COSTS, exhaustive_limit=1, **QUICK
    )
    best_p = max(p for _, p in exact_odds.values())
    offer = answer.offer
    near = [a for a in neighbours(offer, start) if exact_odds[a][1] >= best_p - TOLERANCE]
    assert exact_odds[start][1] < best_p - 0.5 and not near
    chosen = _key(answer, answer.to_dict()["best"]["army"])
    assert exact_odds[chosen][1] >= best_p - TOLERANCE


def test_same_seed_same_answer_on_one_and_two_threads():
    scenario = _scenario()
    answers = [
        simulator.best(
            scenario, budget=BUDGET, types=TYPES, costs=COSTS, threads=threads, **QUICK
        ).to_dict()
        for threads in (1, 2)
    ]
    assert answers[0] == answers[1]


# Slow tier (docs/testing.md): 2.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_dask_runs_the_batches_to_the_same_answer():
    pytest.importorskip("distributed")
    from simulator.running.distributed import executor_for

    scenario = _scenario()
    local = simulator.best(scenario, budget=BUDGET, types=TYPES, costs=COSTS, **QUICK)
    with executor_for("local:2") as executor:
        on_cluster = simulator.best(
            scenario, budget=BUDGET, types=TYPES, costs=COSTS, executor=executor, **QUICK
        )
    assert on_cluster.to_dict() == local.to_dict()


def test_frames_of_the_frontier_and_of_every_army():
    answer = simulator.best(_scenario(), budget=BUDGET, types=TYPES, costs=COSTS, **QUICK)
    frontier, every = answer.frontier, answer.frame
    assert list(frontier["cost"]) == sorted(set(every["cost"]))
    assert len(every) == answer.evaluated
    assert (every["status"] == "chosen").sum() == 1
    assert {"army", "cost", *TYPES, "p", "low", "high", "battles", "status"} <= set(every)
    for cost, group in every.groupby("cost"):
        assert frontier.loc[frontier["cost"] == cost, "p"].item() == group["p"].max()


# The statistics.


@pytest.mark.parametrize("n", [12, 40])
@pytest.mark.parametrize(
    "only_y, only_x", [(0.0, 0.0), (0.05, 0.05), (0.3, 0.1), (0.1, 0.3), (0.02, 0.5), (0.45, 0.45)]
)
def test_paired_lower_bound_is_wrong_at_most_at_its_level(n, only_y, only_x):
    """The chance that the bound is above p_y - p_x, summed exactly over every outcome of
    n paired battles (a multinomial over y only, x only, neither or both)."""
    a = 0.1
    truth = only_y - only_x
    ys, xs = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    possible = ys + xs <= n
    ys, xs = ys[possible], xs[possible]
    log_pmf = (
        math.lgamma(n + 1)
        - np.array(
            [
                math.lgamma(y + 1) + math.lgamma(x + 1) + math.lgamma(n - y - x + 1)
                for y, x in zip(ys, xs, strict=True)
            ]
        )
        + ys * _log(only_y)
        + xs * _log(only_x)
        + (n - ys - xs) * _log(1 - only_y - only_x)
    )
    wrong = paired_lower(n, ys, xs, a) > truth + 1e-12
    assert np.exp(log_pmf[wrong]).sum() <= a


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -1e300


def _synthetic(p: np.ndarray, coupling: float, rng: np.random.Generator):
    """Armies with known P: each battle's luck is shared by all armies with chance
    ``coupling`` (common random numbers), else the army's own."""

    def wins_of(ids: list[int], first: int, count: int) -> np.ndarray:
        shared = rng.random((count, 1))
        own = rng.random((count, len(p)))
        luck = np.where(rng.random((count, len(p))) < coupling, shared, own)
        return (luck < p)[:, ids]

    return wins_of


#: Races of the whole-procedure checks, and the chance each may fail.
RACES, LEVEL = 300, 0.4


def _at_most(failures: int) -> None:
    from scipy.stats import binom

    assert failures <= binom.ppf(0.999, RACES, LEVEL)


# Slow tier (docs/testing.md): 2.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_race_keeps_its_guarantee_on_armies_of_known_p():
    """The guarantee as stated (no army better than the chosen one by more than
    ``within``) fails in at most 1 - confidence of the races: here armies 0.005 to 0.02
    apart, a tolerance of 0.005, and a battle cap that often stops the race first."""
    rng = np.random.default_rng(28)
    p = np.array([0.5, 0.495, 0.49, 0.49, 0.485, 0.48, 0.48, 0.47, 0.46, 0.45])
    failures = 0
    for _ in range(RACES):
        race = Race(list(range(len(p))), _synthetic(p, 0.7, rng), looks(200, 12_800))
        choice = choose_best(race, 1 - LEVEL, 0.005)
        failures += p.max() - p[choice.chosen] > choice.within + 1e-12
    _at_most(failures)


# Slow tier (docs/testing.md): 1.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_target_race_keeps_its_guarantee_on_armies_of_known_p():
    rng = np.random.default_rng(29)
    p = np.array([0.30, 0.38, 0.41, 0.42, 0.40, 0.47, 0.45, 0.55, 0.60])
    costs = dict(enumerate([1, 2, 2, 3, 3, 3, 4, 4, 5]))
    target, tolerance = 0.4, 0.02
    failures = 0
    for _ in range(RACES):
        race = Race(list(costs), _synthetic(p, 0.7, rng), looks(200, 12_800))
        choice = choose_cheapest(race, costs, target, 1 - LEVEL, tolerance)
        decided = [x for x in costs if x not in choice.undecided]
        if choice.chosen is None:
            wrong = any(p[x] >= target + tolerance for x in decided)
        else:
            c = costs[choice.chosen]
            wrong = (
                p[choice.chosen] < target
                or any(p[x] >= target + tolerance for x in decided if costs[x] < c)
                or max(p[x] for x in costs if costs[x] == c) - p[choice.chosen]
                > choice.within + 1e-12
            )
        failures += wrong
    _at_most(failures)


def test_paired_lower_bound_is_not_vacuous():
    # 1,000 battles, y alone won 120, x alone 20: surely better, by about 0.1.
    bound = paired_lower(1_000, np.array([120]), np.array([20]), 1e-6)[0]
    assert 0.03 < bound < 0.1


# The candidates.


def test_armies_are_counted_as_listed():
    rng = random.Random(5)
    for _ in range(40):
        k = rng.randint(1, 4)
        costs = tuple(rng.choice([0.5, 1, 1.5, 2, 3, 0.3]) for _ in range(k))
        budget = rng.choice([2, 3.5, 6, 7.2])
        caps = tuple(rng.randint(0, 12) for _ in range(k))
        room = rng.choice([None, 3, 6])
        offer = Offer(tuple(f"t{i}" for i in range(k)), costs, budget, caps, room)
        listed = list(all_armies(offer))
        assert count_armies(offer) == len(listed) == len(set(listed))
        assert all(offer.fits(a) for a in listed)
        for army in listed[:5]:
            assert all(offer.fits(b) and b != army for b in neighbours(offer, army))


def test_a_large_offer_is_counted_without_listing():
    offer = Offer(tuple(f"t{i}" for i in range(15)), (1.0,) * 15, 24.0, (24,) * 15)
    assert count_armies(offer) == math.comb(24 + 15, 15)


def test_a_budget_of_a_hundred_thousand_men_is_counted_in_linear_time():
    """Two types of cost 1 and a budget of 100,000 (the most men of a type): the armies
    a + b <= 100,000, capped at 60,000 knights. Added term by term the count took hours."""
    offer = Offer(("soldier", "knight"), (1.0, 1.0), 100_000.0, (100_000, 60_000))
    capped = sum(100_000 - b + 1 for b in range(60_001))
    assert count_armies(offer) == capped
    dear = Offer(("soldier", "knight"), (1.0, 2.5), 100_000.0, (100_000, 40_000))
    assert count_armies(dear) == sum(100_000 - math.ceil(2.5 * b) + 1 for b in range(40_001))


# The command line.

runner = CliRunner()
SCENARIO = """\
ruleset = "olympia"
name = "A noble against four pikemen"
seed = 5

[[attacker.units]]
noble = {}
men = { soldier = 0 }

[[defender.units]]
noble = {}
men = { pikeman = 4 }
"""
COSTS_FILE = "soldier = 1\npikeman = 1.5\nswordsman = 2\nknight = 3\n"


@pytest.fixture
def files(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    costs = tmp_path / "costs.toml"
    costs.write_text(COSTS_FILE)
    return scenario, costs


def _run(*args: str):
    return runner.invoke(app, ["best", *args])


def _quick(scenario, costs) -> list[str]:
    return [
        str(scenario),
        "--budget",
        "7",
        "--types",
        ",".join(TYPES),
        "--costs",
        str(costs),
        "--max-battles",
        "64000",
        "--tolerance",
        "0.01",
    ]


def test_cli_prints_the_frontier_the_sentence_and_the_guarantee(files, tmp_path):
    plot = tmp_path / "frontier.png"
    result = _run(*_quick(*files), "-o", str(plot))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "<- chosen" in text
    assert "could not be told apart from it at 95%, none better" in text or "surely worse" in text
    assert "With probability at least 95%, no army of the 64 armies within budget" in text
    assert plot.stat().st_size > 10_000


def test_cli_json_has_the_documented_keys(files):
    result = _run(*_quick(*files), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in (
        "best",
        "tied",
        "frontier",
        "candidates",
        "evaluated",
        "battles",
        "exhaustive",
        "confidence",
        "tolerance",
        "seed",
    ):
        assert key in data
    assert set(data["best"]) == {"army", "cost", "win"}
    assert set(data["best"]["win"]) == {"p", "low", "high"}
    assert data["candidates"] == 64 and data["exhaustive"] is True and data["seed"] == 5
    assert [f["cost"] for f in data["frontier"]] == sorted({f["cost"] for f in data["frontier"]})


def test_cli_target_answers_the_cheapest_army(files, exact_odds):
    result = _run(*_quick(*files), "--target", "0.45", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    cheapest = min(c for c, p in exact_odds.values() if p >= 0.45 + TOLERANCE)
    assert data["target"] == 0.45 and data["best"]["cost"] <= cheapest
    assert exact_odds[_key(None, data["best"]["army"])][1] >= 0.45
    assert "the cheapest army that surely reaches P 0.45" in data["answer"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--types", "soldier,knigth"],
            "unknown unit type 'knigth' of olympia (did you mean 'knight'?)",
        ),
        (["--budget", "0.5"], "--budget 0.5 buys no man of any type offered"),
        (["--max", "archer=2"], "--max archer: not a type offered"),
        (["--max", "knight=two"], "--max knight=two: expected a whole number of men"),
        (["--target", "1.5"], "--target 1.5: expected a probability between 0 and 1"),
        (["--target", "0"], "--target 0.0: expected a probability between 0 and 1"),
        (["--tolerance", "0"], "--tolerance 0.0: expected a probability above 0"),
        (["--confidence", "1"], "--confidence 1.0: expected a probability"),
        (["--side", "middle"], "--side middle: expected attacker or defender"),
        (["--battles", "5000", "--max-battles", "1000"], "--max-battles 1,000: expected --battles"),
    ],
)
def test_cli_bad_input_is_one_line_and_status_2(files, extra, message):
    scenario, costs = files
    args = [str(scenario), "--budget", "7", "--costs", str(costs), "--types", ",".join(TYPES)]
    # A later option wins: the bad value replaces the good one above.
    result = _run(*args, *extra)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert message in " ".join(result.output.split())


def test_cli_says_why_best_does_not_apply_to_blocks(tmp_path):
    scenario = tmp_path / "b.toml"
    result = runner.invoke(app, ["new", "--ruleset", "blocks", str(scenario)])
    assert result.exit_code == 0, result.output
    result = _run(str(scenario), "--budget", "10")
    assert result.exit_code == 2
    assert "best does not apply to blocks" in result.output
