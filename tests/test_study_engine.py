"""The study engine (simulator.running.scenarios) and every study on it: the same answer
on one thread, on two and on a local Dask cluster (the randomness contract: battle i of
a seed is the same battle wherever it runs); one kernel for a group; the plan's checks
said with the parameter's name, and with its flag on the command line."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.results.stats import Tally
from simulator.running.plan import PlanError, StudyPlan
from simulator.running.scenarios import ScenarioBattles, attacker_won, joined, tally_each

SMALL = ("noble, 10 soldier", "noble, 10 pikeman")
#: Over the chain kernel's size limit: ``auto`` runs skip on it alone.
LARGE = ("noble, 3000 soldier", "noble, 3000 pikeman")


def without_times(answer: Any) -> Any:
    """A study's JSON answer without its timings (which differ from run to run)."""
    if isinstance(answer, dict):
        return {k: without_times(v) for k, v in answer.items() if "seconds" not in k}
    if isinstance(answer, list):
        return [without_times(v) for v in answer]
    return answer


def _compare(**how: Any) -> dict[str, Any]:
    a = simulator.inline_scenario("olympia", *SMALL)
    b = simulator.inline_scenario("olympia", "noble, 10 soldier", "noble, 11 pikeman")
    return simulator.compare(a, b, 3_000, 4, **how).to_dict()


def _matrix(**how: Any) -> dict[str, Any]:
    return simulator.matrix("blocks", 3, battles=500, seed=2, **how).to_dict()


def _sweep(**how: Any) -> dict[str, Any]:
    scenario = simulator.inline_scenario("olympia", *SMALL)
    return simulator.sweep(scenario, ["attacker.soldier=8..12:2"], 1_000, 3, **how).to_dict()


def _best(**how: Any) -> dict[str, Any]:
    scenario = simulator.inline_scenario("olympia", "noble", "noble, 4 pikeman")
    return simulator.best(
        scenario,
        budget=5,
        types=("soldier", "knight"),
        costs={"soldier": 1, "knight": 3},
        battles=500,
        max_battles=4_000,
        tolerance=0.02,
        seed=5,
        **how,
    ).to_dict()


def _prices(**how: Any) -> dict[str, Any]:
    from simulator.studies.prices import fair_prices

    return fair_prices(
        "olympia", "soldier,pikeman", budgets="6", battles=200, seed=7, **how
    ).to_dict()


def _worth(**how: Any) -> dict[str, Any]:
    scenario = simulator.inline_scenario("olympia", *SMALL)
    return simulator.worth(
        scenario,
        add="1 knight",
        in_="soldier",
        seed=3,
        battles=500,
        max_battles=2_000,
        max_n=6,
        **how,
    ).to_dict()


def _sensitivity(**how: Any) -> dict[str, Any]:
    scenario = simulator.inline_scenario("olympia", *SMALL)
    return simulator.sensitivity(scenario, 600, 3, **how).to_dict()


STUDIES: dict[str, Callable[..., dict[str, Any]]] = {
    "compare": _compare,
    "matrix": _matrix,
    "sweep": _sweep,
    "best": _best,
    "prices": _prices,
    "worth": _worth,
    "sensitivity": _sensitivity,
}


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[Any]:
    pytest.importorskip("distributed")
    from simulator.running.distributed import executor_for

    with executor_for("local:2") as executor:
        yield executor


# Slow tier (docs/testing.md): 12.7 s for its 7 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("study", STUDIES)
def test_the_same_answer_on_one_and_two_threads_and_on_dask(study: str, dask_executor: Any):
    run = STUDIES[study]
    one = without_times(run(threads=1))
    assert without_times(run(threads=2)) == one
    assert without_times(run(executor=dask_executor)) == one


# Slow tier: its large armies run olympia's skip kernel for deaths in batches, which
# only the slow tier compiles (tests/tiers.py, SLOW_TIER_PATHS).
@pytest.mark.slow
def test_a_group_runs_on_one_kernel_across_the_chain_limit() -> None:
    """Two scenarios either side of the chain kernel's limit: each alone runs its own
    kernel, together both run skip, and battle i of the small one is the battle it is
    on skip alone (the group's answer is the skip kernel's)."""
    plan = StudyPlan.of(seed=9, battles=50)
    with ScenarioBattles(plan) as engine:
        engine.add("small", simulator.inline_scenario("olympia", *SMALL))
        engine.add("large", simulator.inline_scenario("olympia", *LARGE))
        assert engine.prepared("small").kernel == "chain"
        assert engine.prepared("large").kernel == "skip"
        kernel = engine.settle(["small", "large"])
        assert kernel == "skip"
        small = Tally()
        for _, _, (small_part, _) in engine.tallies(["small", "large"], 0, 50, tally_each, kernel):
            small = small.merge(small_part)
    alone = simulator.inline_scenario("olympia", *SMALL, kernel="skip")
    assert small.wins.tolist() == simulator.simulate(alone, 50, 9).tally.wins.tolist()


def test_wins_are_the_battles_the_kernel_draws() -> None:
    plan = StudyPlan.of(seed=4, battles=300, threads=2)
    scenarios = [
        simulator.inline_scenario("olympia", f"noble, {n} soldier", "noble, 10 pikeman")
        for n in (8, 10, 12)
    ]
    with ScenarioBattles(plan) as engine:
        for i, s in enumerate(scenarios):
            engine.add(i, s)
        won = engine.wins([0, 1, 2], 0, 100, 200, engine.settle([0, 1, 2]))
    for column, s in enumerate(scenarios):
        rows = simulator.simulate(s, 200, 4, first=100, keep_battles=True).rows
        assert rows is not None
        np.testing.assert_array_equal(won[:, column], rows["winner"] == 0)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ({"battles": 0}, "battles=0: expected 1.."),
        ({"battles": 5_000, "max_battles": 1_000}, "max_battles=1,000: expected battles"),
        ({"confidence": 1.5}, "confidence=1.5: expected a probability"),
        ({"seed": -1}, "seed=-1: expected 0..2**63-1"),
    ],
)
def test_the_plan_speaks_the_parameter_name(asked: dict[str, Any], said: str) -> None:
    with pytest.raises(PlanError, match=said.replace("*", r"\*").replace("(", r"\(")):
        StudyPlan.of(**{"seed": 1, "battles": 100, **asked})


def test_the_command_line_says_the_flag() -> None:
    error = PlanError("max_battles", "1,000", "expected {battles} (5,000) or more")
    assert isinstance(error, BattleOddsError)
    assert str(error) == "max_battles=1,000: expected battles (5,000) or more"
    result = CliRunner().invoke(
        app,
        [
            "best",
            "scenarios/olympia/knights_vs_pikemen.toml",
            "--budget",
            "3",
            "--battles",
            "5000",
            "--max-battles",
            "1000",
        ],
    )
    assert result.exit_code == 2
    assert "--max-battles 1,000: expected --battles (5,000) or more" in result.output


RUNS_BATTLES = [
    "run",
    "odds",
    "plot",
    "compare",
    "sweep",
    "worth",
    "sensitivity",
    "matrix",
    "meta",
    "prices",
    "best",
    "regress",
]


@pytest.mark.parametrize("command", RUNS_BATTLES)
def test_every_command_that_runs_battles_takes_scheduler_and_max_total(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "--scheduler" in result.output and "--max-total" in result.output


def _meta(**how: Any) -> dict[str, Any]:
    return simulator.meta("blocks", 3, battles=300, seed=2, bootstrap=10, **how).to_dict()


def _target(**how: Any) -> dict[str, Any]:
    scenario = simulator.inline_scenario("olympia", *SMALL)
    from simulator.studies.sweep import find_target

    return find_target(
        scenario, "attacker.soldier=8..14", 0.5, 3, battles=400, max_battles=1_600, **how
    ).to_dict()


#: What a study's plain lines count, in the command line's words, where not battles.
UNITS = {
    "best": "battles of this race",
    "prices": "pairs of counts fought",
    "worth": "numbers of soldier tried",
}


@pytest.mark.parametrize(
    ("study", "label", "unit"),
    [
        *((name, name, UNITS.get(name, "battles")) for name in STUDIES),
        ("meta", "meta", "battles"),
        ("target", "target search", "values tried"),
    ],
)
def test_the_python_api_reports_plain_lines_for_every_study(
    study: str, label: str, unit: str, monkeypatch: Any
) -> None:
    """Called from a notebook or a script (no ``progress``), every study reports to the
    plain lines of the progress bar (stderr: its time left when long, then a line every
    half minute): what it counts, done of how many."""
    from contextlib import contextmanager

    from simulator.running import progress

    heard: list[tuple[str, str, int, int]] = []

    @contextmanager
    def recorded(console: Any, label: str, unit: str = "battles", **_: Any) -> Iterator[Any]:
        assert not console.is_terminal  # plain lines, not a bar
        yield lambda done, total, detail="": heard.append((label, unit, done, total))

    monkeypatch.setattr(progress, "progress_bar", recorded)
    run = {"meta": _meta, "target": _target}.get(study) or STUDIES[study]
    run(threads=1)
    assert heard, study
    assert {(said, counted) for said, counted, _, _ in heard} == {(label, unit)}
    if unit != "pairs of counts fought":  # a price search knows no total in advance
        assert all(0 <= done <= total for _, _, done, total in heard), heard
        assert heard[-1][2] > 0


# Slow tier (docs/testing.md): 1.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_openmp_threads_sleep_between_kernel_calls_unless_the_environment_says() -> None:
    """Spinning OpenMP threads took more CPU than a price search's battles on a shared
    machine: the kernels' package asks them to sleep, and keeps a value given."""
    import os
    import subprocess
    import sys

    said = "import kernels, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    plain = subprocess.run([sys.executable, "-c", said], env=env, capture_output=True, text=True)
    assert plain.stdout.strip() == "PASSIVE", plain.stderr
    given = subprocess.run(
        [sys.executable, "-c", said],
        env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
        capture_output=True,
        text=True,
    )
    assert given.stdout.strip() == "ACTIVE", given.stderr


def test_a_side_validated_once_is_the_same_side_and_a_bad_one_fails_every_time() -> None:
    """Olympia keeps the sides it validated (a price search builds thousands of cells
    from a few hundred sides): the same data give the same side, other data or another
    role another one, and a side that fails is not kept."""
    from simulator.errors import Source
    from simulator.rulesets.olympia import model
    from simulator.scenario.scenario import from_data

    def battle(knights: int, pikemen: int, kind: str = "pikeman") -> Any:
        data = {
            "ruleset": "olympia",
            "attacker": {"units": [{"men": {"knight": knights}}]},
            "defender": {"units": [{"men": {kind: pikemen}}]},
        }
        return from_data(data, Source("test")).model

    first, again = battle(5, 7), battle(5, 7)
    assert first.attacker is again.attacker and first.defender is again.defender
    other = battle(6, 7)
    assert other.attacker is not first.attacker and other.attacker.units[0].men[0].count == 6
    assert other.defender is first.defender
    # The same men attacking and defending are two sides (the role is in the key).
    swapped = battle(7, 5, "knight")
    assert swapped.defender is not first.attacker
    assert swapped.defender.units[0].men == first.attacker.units[0].men
    for _ in range(2):
        with pytest.raises(BattleOddsError, match="pikemen"):
            battle(5, 7, "pikemen")
    # (Its data exactly: other tests of the session may keep sides naming pikemen.)
    assert not any('{"men":{"pikemen":7}}' in key[0] for key in model._SIDES)


def test_the_fit_of_call_times_is_least_squares() -> None:
    """Kept as running moments (constant time a call), the fit of ``t = a + b n`` is
    the least-squares line over every call, its slope's standard error included."""
    from simulator.running.chunking import CallTimes

    random = np.random.default_rng(3)
    times = CallTimes()
    for _ in range(40):
        n = int(random.choice([1, 16, 256, 4096, 65536]))
        times.add(n, 0.002 + 3e-6 * n * random.uniform(0.8, 1.2))
    fitted = times.fit()
    assert fitted is not None
    ns = np.array([n for n, _ in times.calls], float)
    ts = np.array([t for _, t in times.calls])
    b, a = np.polyfit(ns, ts, 1)
    residual = float(np.sum((ts - a - b * ns) ** 2))
    error = (residual / (len(ns) - 2) / np.sum((ns - ns.mean()) ** 2)) ** 0.5
    assert fitted == pytest.approx((a, b, error), rel=1e-6)
    assert times.seconds == pytest.approx(ts.sum()) and times.battles == ns.sum()


def test_worth_and_sensitivity_prepare_each_scenario_once(monkeypatch: Any) -> None:
    """One engine for the whole study: worth prepares the scenario with ``add`` once for
    every probe and each probe's scenario once for all its looks; sensitivity prepares
    the scenario as it stands once for all its changes."""
    from simulator import rulesets

    olympia = type(rulesets.get("olympia"))
    prepared: list[Any] = []
    original = olympia.prepare

    def counted(self: Any, model: Any) -> Any:
        prepared.append(model)
        return original(self, model)

    monkeypatch.setattr(olympia, "prepare", counted)
    scenario = simulator.inline_scenario("olympia", *SMALL)
    worth = simulator.worth(
        scenario,
        add="1 knight",
        in_="soldier",
        seed=3,
        battles=200,
        max_battles=3_200,
        max_n=6,
        threads=1,
    )
    looks = sum(max(1, (p.comparison.n // 200).bit_length()) for p in worth.probes)
    assert looks > len(worth.probes)  # some probe took several looks
    # The scenario with the knight once, each probe's once (one of them may be it).
    assert len(prepared) <= 1 + len(worth.probes)
    prepared.clear()
    knobs = simulator.sensitivity(scenario, 300, 3, threads=1)
    changed = int((knobs.frame["battles"] > 0).sum())
    assert changed > 1 and len(prepared) == 1 + changed


def test_a_sweep_to_a_precision_and_a_target_search_run_on_the_engine(monkeypatch: Any) -> None:
    """``sweep --precision`` and ``sweep --target`` fight on the study engine, not the
    one-scenario runner, with the answers the runner gives each point (the same battles
    on the same kernel): a point's rounds or a probe's looks are one prepared scenario."""
    from simulator.running import precision, runner
    from simulator.studies.sweep import find_target, point

    scenario = simulator.inline_scenario("olympia", *SMALL)

    def not_the_runner(*_: Any, **__: Any) -> Any:
        raise AssertionError("a sweep ran battles through the one-scenario runner")

    with monkeypatch.context() as patched:
        patched.setattr(runner, "run_chunks", not_the_runner)
        patched.setattr(precision, "run_chunks", not_the_runner)
        swept = simulator.sweep(
            scenario,
            ["attacker.soldier=8..10"],
            seed=3,
            precision=0.006,
            max_battles=60_000,
            threads=1,
        )
        search = find_target(
            scenario,
            "attacker.soldier=8..14",
            0.5,
            3,
            battles=400,
            max_battles=3_200,
            threads=1,
        )
    # Rounds after the first (of FIRST_ROUND battles) ran.
    assert any(result.n > precision.FIRST_ROUND for result in swept.results)
    vary = swept.varies
    for values, result in zip(swept.points, swept.results, strict=True):
        alone = precision.simulate_to_precision(
            point(scenario, vary, values),
            0.006,
            3,
            max_battles=60_000,
            threads=1,
            keep_battles=False,
        )
        assert result.n == alone.n and result.kernel == alone.kernel
        assert result.tally.wins.tolist() == alone.tally.wins.tolist()
        assert result.extra["precision"] == alone.extra["precision"]
    assert search.probes
    for probe in search.probes:
        alone = simulator.simulate(
            point(scenario, (search.vary,), (probe.value,)),
            probe.result.n,
            3,
            threads=1,
            keep_battles=False,
        )
        assert probe.result.tally.wins.tolist() == alone.tally.wins.tolist()
        assert probe.result.kernel == alone.kernel


# The precision sweep's share is the slow tier's (3.9 s quiet on a fresh clone: rounds of
# battles until every point's interval is 0.01 wide, on one thread, two and a cluster).
@pytest.mark.parametrize("search", [pytest.param("precision", marks=pytest.mark.slow), "target"])
def test_a_sweep_to_a_precision_or_a_target_answers_alike_everywhere(
    search: str, dask_executor: Any
) -> None:
    from simulator.studies.sweep import find_target

    scenario = simulator.inline_scenario("olympia", *SMALL)

    def run(**how: Any) -> Any:
        if search == "precision":
            return simulator.sweep(
                scenario, ["attacker.soldier=8..10"], seed=3, precision=0.01, **how
            ).to_dict()
        return find_target(
            scenario, "attacker.soldier=8..14", 0.5, 3, battles=400, max_battles=3_200, **how
        ).to_dict()

    one = without_times(run(threads=1))
    assert without_times(run(threads=2)) == one
    assert without_times(run(executor=dask_executor)) == one


def test_a_groups_scenarios_start_near_the_last_ones_call_size(monkeypatch: Any) -> None:
    """A group is prepared before its battles: each scenario's calls start near the size
    the last one's reached (a quarter of it), not from one battle, so that a matrix's or
    a race's scenarios take two or three calls each, not seven growing from one."""
    from simulator.running import scenarios

    counts: list[int] = []
    original = scenarios._checked

    def counted(run: Any, seed: int, first: int, count: int) -> Any:
        counts.append(count)
        return original(run, seed, first, count)

    monkeypatch.setattr(scenarios, "_checked", counted)
    engine = ScenarioBattles(StudyPlan.of(seed=1, battles=4_000, threads=1))
    keys = []
    for n in range(8, 20):
        keys.append(
            engine.add(n, simulator.inline_scenario("olympia", f"noble, {n} soldier", SMALL[1]))
        )
    kernel = engine.settle(keys, 4_000)
    done = dict(engine.each(keys, 0, 4_000, kernel, scenarios.tally, scenarios.merged))
    assert sorted(done) == list(range(len(keys)))
    assert all(t.battles == 4_000 for t in done.values())
    # The first scenario grows from one battle; the others start where it ended.
    assert len(counts) <= 8 + 3 * (len(keys) - 1), counts
    engine.close()


def test_each_able_runs_only_the_scenarios_that_can_run_the_kernel() -> None:
    """Scenarios kept to be built at first use are built, prepared and their kernel
    choices found where their battles run; one that cannot run the kernel asked for
    runs no battle and says its choices; the others' battles are the kernel's."""
    plan = StudyPlan.of(seed=9, battles=50, threads=2)
    built: list[str] = []

    def later(name: str, armies: tuple[str, str]) -> Callable[[], Any]:
        def build() -> Any:
            built.append(name)
            return simulator.inline_scenario("olympia", *armies)

        return build

    with ScenarioBattles(plan) as engine:
        engine.add_later("small", later("small", SMALL))
        engine.add_later("large", later("large", LARGE))
        assert "small" in engine and not built
        said = {
            i: (choices, won)
            for i, choices, won in engine.each_able(
                ["small", "large"], 0, 50, "chain", attacker_won, joined
            )
        }
        assert sorted(built) == ["large", "small"]
    assert said[1] == (("skip", "strike"), None)
    choices, won = said[0]
    assert choices[0] == "chain"
    alone = simulator.simulate(
        simulator.inline_scenario("olympia", *SMALL), 50, 9, keep_battles=True
    )
    assert alone.kernel == "chain" and alone.rows is not None
    np.testing.assert_array_equal(won, alone.rows["winner"] == 0)


def test_a_scenario_built_later_that_fails_says_so_where_it_is_used() -> None:
    plan = StudyPlan.of(seed=9, battles=50, threads=2)
    with ScenarioBattles(plan) as engine:
        engine.add("small", simulator.inline_scenario("olympia", *SMALL))
        engine.add_later(
            "bad", lambda: simulator.inline_scenario("olympia", "noble, 3 dragon", "noble")
        )
        with pytest.raises(BattleOddsError, match="dragon"):
            list(engine.each(["small", "bad"], 0, 50, "chain", attacker_won, joined))


# Slow tier: its large armies run olympia's skip kernel for deaths in batches, which
# only the slow tier compiles (tests/tiers.py, SLOW_TIER_PATHS).
@pytest.mark.slow
@pytest.mark.parametrize("together", [True, False])
def test_a_price_bank_moved_past_the_chain_limit_reads_one_kernel(together: bool) -> None:
    """A cell past the chain kernel's size limit moves a price bank to skip, whether it
    is fought with the cells before it or after them: every score the bank reads is
    then the skip kernel's, as a bank on skip from the start reads it."""
    from simulator.studies.machinery.price_cells import CellBank

    small, large = ("soldier", 10, "pikeman", 10), ("soldier", 3000, "pikeman", 3000)
    bank = CellBank("olympia", 20, 4, threads=2)
    if together:
        bank.fight([small, large])
    else:
        bank.fight([small])
        assert bank.kernel == "chain"
        bank.fight([large])
    assert bank.kernel == "skip"
    on_skip = CellBank("olympia", 20, 4, threads=2, settings={"kernel": "skip"})
    for cell in (small, large):
        assert bank.score(*cell).tolist() == on_skip.score(*cell).tolist()
    assert bank.cells == 2
    # The scores are kept, the cells' scenarios and tables are not.
    assert small not in bank.engine and large not in bank.engine


def test_block_z_is_students_t_quantile() -> None:
    from scipy import stats

    from simulator.studies.machinery.price_cells import BATCHES, block_z

    for confidence in (0.5, 0.9, 0.95, 0.999):
        expected = stats.t.ppf(0.5 + confidence / 2, BATCHES - 1)
        assert block_z(confidence) == pytest.approx(expected, rel=1e-12)


def test_an_army_parsed_again_is_a_fresh_copy_of_the_same_data() -> None:
    """Olympia's one-type battles read their armies from a memo: the same data as a
    first parse, a copy the caller may change, and an error every time."""
    from simulator.rulesets.olympia import inline

    text = "noble, 12 knight"
    first = inline.parse_army_again(text, "--attacker")
    assert first == inline.parse_army(text, "--attacker")
    first["units"][0]["men"][0]["count"] = 99
    assert inline.parse_army_again(text, "--attacker")["units"][0]["men"][0]["count"] == 12
    for _ in range(2):
        with pytest.raises(BattleOddsError, match="--defender"):
            inline.parse_army_again("noble, 3 dragon", "--defender")


def test_a_quick_scenarios_battles_run_in_one_call(monkeypatch: Any) -> None:
    """Battles that the last scenario's rate says take a small part of a call run in
    one call (a price search's cells of a thousand battles took two each); the first
    scenario, of no known rate, still grows from one battle (and its rate, which counts
    loading the kernel, may leave the second to two calls)."""
    from simulator.running import scenarios

    calls: dict[int, list[int]] = {}
    original = scenarios._checked

    def counted(run: Any, seed: int, first: int, count: int) -> Any:
        calls.setdefault(len(calls) if first == 0 else len(calls) - 1, []).append(count)
        return original(run, seed, first, count)

    monkeypatch.setattr(scenarios, "_checked", counted)
    # The rule compares a measured rate with CALL_SECONDS / ONE_CALL_HEADROOM (2.5 us a
    # battle): these battles take about 0.5 us quiet, but a loaded machine measured 5 us
    # and more, and at a load average of 13 over 25 us (a headroom of 10 failed there).
    # The engine's clock is the test's: a microsecond a look, so a scenario of 1,000
    # battles measures at most a few nanoseconds a battle, on any machine.
    ticks = itertools.count()
    monkeypatch.setattr(scenarios, "time", SimpleNamespace(perf_counter=lambda: next(ticks) * 1e-6))
    with ScenarioBattles(StudyPlan.of(seed=1, battles=1_000, threads=1)) as engine:
        keys = [
            engine.add(n, simulator.inline_scenario("olympia", f"noble, {n} soldier", SMALL[1]))
            for n in range(8, 14)
        ]
        done = dict(engine.each(keys, 0, 1_000, "chain", scenarios.tally, scenarios.merged))
    assert all(t.battles == 1_000 for t in done.values())
    assert len(calls[0]) > 1 and sum(calls[0]) == 1_000
    assert all(calls[i] == [1_000] for i in range(2, len(keys))), calls
