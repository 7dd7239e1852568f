"""The battle as it unfolds: the state after a step (``Prepared.run_until``), its tally,
``run`` / ``odds`` ``--by-round`` and ``--after``.

Three kinds of check: every kernel's stopped battles against its own whole battles
(exactly, battle by battle: a battle decided by step t is its whole row, one still going
is marked fighting at t with casualties between none and its final ones, growing step by
step); each kernel's state after a step against its plain-Python reference stopped
there, in distribution; and the command line's answers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from simulator import load_scenario, rulesets
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.results.steps import STATES, StepCounts, StepTally, men_brought
from simulator.rulesets import InlineQuery, Recorded
from simulator.rulesets.base import FIGHTING, Prepared
from simulator.running.unfolding import check_unfolds, run_steps
from simulator.scenario.scenario import from_query
from simulator.testing import same_distribution
from tests.tiers import slow_for

runner = CliRunner()

#: Blocks' scenarios here run its battle as it unfolds, which only the slow tier compiles
#: (tests/tiers.py): their share of each test is the slow tier's.
BLOCKS_UNFOLDING = {"blocks/siege_attrition", "blocks/relief", "blocks/storm"}

#: One bundled scenario per ruleset (olympia: two, one behind a structure).
SCENARIOS = [
    "confrontation/morale_cascade",
    "skirmish/cavalry_charge",
    "olympia/knights_vs_pikemen",
    "olympia/castle_siege",
    "age_of_gods/control_limits",
    "blocks/siege_attrition",
    "blocks/relief",
]


def _whole(prepared: Prepared, ruleset: str, seed: int, n: int) -> dict[str, np.ndarray]:
    """The whole battles on the kernel ``run_until`` stops (olympia: the one that records
    its strikes, ``skip`` for a battle on the chain kernel)."""
    if ruleset == "olympia":
        kernel = prepared.recording_kernel  # type: ignore[attr-defined]
        out = prepared.run_matrix(seed, 0, n, kernel)  # type: ignore[attr-defined]
        return {name: out[:, col] for name, col in prepared.columns.items()}
    return prepared.run(seed, 0, n)


@pytest.mark.parametrize("name", slow_for(SCENARIOS, BLOCKS_UNFOLDING))
def test_stopped_battles_are_the_whole_battles_so_far(name: str) -> None:
    scenario = load_scenario(f"scenarios/{name}.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    n = 300
    whole = _whole(prepared, scenario.ruleset, 11, n)
    ends = whole["steps"]
    casualties = [c for c in whole if c.startswith("casualties.")]
    last = int(ends.max())
    # Every step of short battles; of long ones (olympia's strikes) a spread of them.
    steps = sorted({*range(1, min(last, 12) + 1), *np.linspace(1, last, 12).astype(int), last + 1})
    before: dict[str, np.ndarray] | None = None
    for t in steps:
        cut = prepared.run_until(11, 0, n, t)
        decided = ends <= t
        assert np.array_equal(cut["winner"] == FIGHTING, ~decided), (name, t)
        for column in whole:
            if column in cut:
                assert np.array_equal(cut[column][decided], whole[column][decided]), (t, column)
        assert (cut["steps"][~decided] == t).all()
        for column in casualties:
            assert (cut[column] >= 0).all() and (cut[column] <= whole[column]).all()
            if before is not None:
                assert (before[column] <= cut[column]).all(), (t, column)
        before = cut
    # Past the longest battle nothing is stopped: the whole battles, bit for bit.
    for column, values in _whole(prepared, scenario.ruleset, 11, n).items():
        if column in before:  # type: ignore[operator]
            assert np.array_equal(before[column], values)  # type: ignore[index]


def _compare(scenario, reference: dict[str, np.ndarray], step: int, battles: int) -> list[str]:
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    kernel = prepared.run_until(5, 0, battles, step)
    columns = ["winner", "steps", *(c for c in reference if c.startswith("casualties."))]
    return same_distribution(kernel, reference, [c for c in columns if c in kernel])


def _olympia_sample(model, battles: int, until: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    from tests.reference import olympia

    return olympia.simulate(model, battles, 1, until=until)


def _confrontation_sample(model, battles: int, until: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    from tests.reference import confrontation

    return confrontation.run(model, battles, 1, until=until)


def _skirmish_sample(model, battles: int, until: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    from tests.reference import skirmish

    return skirmish.run(model, 1, battles, until=until)


def _age_of_gods_sample(model, battles: int, until: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    from tests.reference import age_of_gods

    return age_of_gods.simulate(model, battles, 1, until=until)


#: Each ruleset's reference stopped at a step: the scenario, the reference's sampler and
#: battles, and the steps compared (olympia's: one early, one with many battles over).
REFERENCES = {
    "olympia": (
        lambda: from_query(
            "olympia", InlineQuery("noble, 8 soldier, 4 archer@1", "noble, 6 swordsman")
        ),
        _olympia_sample,
        3000,
        (5, 30),
    ),
    "confrontation": (
        lambda: load_scenario("scenarios/confrontation/morale_cascade.toml"),
        _confrontation_sample,
        3000,
        (1, 2),
    ),
    "skirmish": (
        lambda: load_scenario("scenarios/skirmish/cavalry_charge.toml"),
        _skirmish_sample,
        2000,
        (2, 4),
    ),
    "age_of_gods": (
        lambda: load_scenario("scenarios/age_of_gods/pikemen_vs_knights.toml"),
        _age_of_gods_sample,
        2000,
        (1, 2),
    ),
}


# Slow tier (docs/testing.md): 18.8 s for its 4 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("ruleset", list(REFERENCES))
def test_the_state_after_a_step_agrees_with_the_reference(ruleset: str) -> None:
    build, sample_of, battles, steps = REFERENCES[ruleset]
    scenario = build()
    for step in steps:
        sample = sample_of(scenario.model, battles, step)
        assert (sample["winner"] == FIGHTING).any()
        assert _compare(scenario, sample, step, 20_000) == []


# Slow tier (docs/testing.md): 8.5 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("name", ["siege_attrition", "relief", "field_reserves"])
def test_blocks_state_after_a_phase_agrees_with_the_reference(name: str) -> None:
    from tests.reference import blocks as reference

    scenario = load_scenario(f"scenarios/blocks/{name}.toml")
    for step in (1, 3, 5):
        rows = reference.simulate(scenario.model, 3000, 1, until=step)
        sample = {k: np.asarray(v, np.int64) for k, v in rows.items()}
        assert _compare(scenario, sample, step, 20_000) == []


# Slow tier (docs/testing.md): 2.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_changed_stop_is_noticed() -> None:
    """The comparison sees the state one strike late (the check can fail)."""
    from tests.reference import olympia as reference

    scenario = from_query("olympia", InlineQuery("noble, 8 soldier", "noble, 6 swordsman"))
    sample = reference.simulate(scenario.model, 3000, 1, until=6)
    assert _compare(scenario, sample, 9, 20_000) != []


def test_step_tally_merges_as_one_run() -> None:
    scenario = load_scenario("scenarios/confrontation/attack.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    brought = men_brought(prepared.column_bounds)
    whole = StepCounts.of(prepared.run_until(3, 0, 1000, 2), brought)
    halves = StepCounts.of(prepared.run_until(3, 0, 400, 2), brought).merge(
        StepCounts.of(prepared.run_until(3, 400, 600, 2), brought)
    )
    assert np.array_equal(whole.states, halves.states)
    for a, b in [
        (whole.joint, halves.joint),
        *((whole.men_left[k], halves.men_left[k]) for k in whole.men_left),
    ]:
        assert a.to_dict() == b.to_dict()
    tally = StepTally(brought, {2: whole})
    attacker, _, p = tally.joint(2)
    assert p.sum() == pytest.approx(1.0)
    mean_attacker = float(attacker @ p.sum(axis=1))
    assert mean_attacker == pytest.approx(whole.men_left["attacker"].mean())


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("blocks/relief", marks=pytest.mark.slow),
        "skirmish/cavalry_charge",
        "confrontation/attack",
        "age_of_gods/archers_in_rain",
    ],
)
def test_counts_by_step_are_each_steps_own_counts(name: str) -> None:
    """StepCounts.by_step, one pass over the recorded table, counts each step as
    StepCounts.of of its columns does; so it does from columns that are no views of a
    table, and a winner no outcome has is refused as there."""
    scenario = load_scenario(f"scenarios/{name}.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    brought = men_brought(prepared.column_bounds)
    steps = [1, 2, 3, 5]
    recorded = prepared.run_through(4, 30, 1500, steps)
    assert isinstance(recorded, Recorded)  # the kernel's record, counted in place
    copied = {n: np.array(c) for n, c in recorded.items()}
    for columns in (recorded, copied):
        counted = StepCounts.by_step(columns, steps, brought)
        assert list(counted) == steps
        for k, step in enumerate(steps):
            alone = StepCounts.of({n: c[k] for n, c in recorded.items()}, brought)
            assert counted[step].to_dict() == alone.to_dict(), (name, step)
    copied["winner"][1, 7] = len(STATES)
    with pytest.raises(ValueError, match=r"expected 0\.\.5"):
        StepCounts.by_step(copied, steps, brought)


def test_step_tallies_merged_at_once_are_merged_in_turn() -> None:
    """StepTally.merged of a run's blocks (some recorded to fewer steps: all their battles
    were decided sooner) is each block merged in turn, histogram for histogram."""
    scenario = load_scenario("scenarios/skirmish/cavalry_charge.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    brought = men_brought(prepared.column_bounds)
    blocks = []
    for first, count in ((0, 1), (1, 40), (41, 700), (741, 3)):
        recorded = prepared.run_through(6, first, count, list(range(1, 10)))
        counted = StepCounts.by_step(recorded, list(range(1, 10)), brought)
        last = min([t for t, c in counted.items() if c.states[-1] == 0] + [9])
        blocks.append(StepTally(brought, {t: c for t, c in counted.items() if t <= last}))
    assert len({max(b.steps) for b in blocks}) > 1
    in_turn = StepTally(brought)
    for block in blocks:
        in_turn = in_turn.merge(block)
    at_once = StepTally.merged(brought, [StepTally(brought), *blocks])
    assert list(at_once.steps) == list(in_turn.steps)
    for t, counts in in_turn.steps.items():
        assert at_once.steps[t].to_dict() == counts.to_dict()
    assert StepTally.merged(brought, []).steps == {}


@pytest.mark.parametrize(
    ("name", "most"),
    [pytest.param("blocks/relief", 4, marks=pytest.mark.slow), ("skirmish/cavalry_charge", 100)],
)
def test_by_round_records_to_the_turn_limit_and_the_longest_battle_seen(
    name: str, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step recorded is a row written for every battle of a block: ``--by-round``
    records no step past the turn limit (blocks' relief: one turn, 4 phases), and after
    the first block about the steps the battles seen took (skirmish's cavalry charge:
    its battles last at most a dozen turns, its limit is 1,000; the first block records
    16, and each block as many again only while a battle still fights)."""
    scenario = load_scenario(f"scenarios/{name}.toml")
    prepared = rulesets.get(scenario.ruleset).prepare(scenario.model)
    kind = type(prepared)
    calls: list[list[int]] = []
    through = kind.run_through

    def spy(self, seed, first, count, steps, through=through, calls=calls):  # type: ignore[no-untyped-def]
        calls.append(list(steps))
        return through(self, seed, first, count, steps)

    monkeypatch.setattr(kind, "run_through", spy)
    answer = run_steps(scenario, None, 3, 0, 6000, threads=1)
    monkeypatch.setattr(kind, "run_through", through)
    longest = max(answer.tally.steps)
    assert answer.tally.steps[longest].states[-1] == 0
    assert all(max(c) <= most for c in calls), (name, calls)
    assert all(len(c) <= longest + (longest + 3) // 4 for c in calls[1:]), (name, calls)


@pytest.mark.parametrize(
    "name", slow_for(["blocks/storm", "skirmish/cavalry_charge"], BLOCKS_UNFOLDING)
)
def test_by_round_on_one_thread_and_all_threads_is_the_same(name: str) -> None:
    """Blocks of battles sized by time (other sizes on another thread count), each
    counted in one pass and merged at the end: the same counts, step for step."""
    scenario = load_scenario(f"scenarios/{name}.toml")
    one = run_steps(scenario, None, 9, 5, 8000, threads=1)
    every = run_steps(scenario, None, 9, 5, 8000)
    assert list(one.tally.steps) == list(every.tally.steps)
    for t, counts in one.tally.steps.items():
        assert counts.to_dict() == every.tally.steps[t].to_dict()


def test_a_ruleset_without_the_capability_is_refused_in_one_line() -> None:
    class Plain(Prepared):
        def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
            return {}

    with pytest.raises(BattleOddsError, match="does not give the state after a step"):
        check_unfolds(Plain(), "risk")


def test_the_last_step_is_the_run_itself() -> None:
    """Confrontation's run and its steps run one kernel: the state after the longest
    battle is the run's outcome, battle for battle."""
    result = runner.invoke(
        app,
        ["run", "scenarios/confrontation/attack.toml", "--battles", "3000", "--by-round", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    steps = data["by_step"]
    assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[-1]["fighting"]["p"] == 0
    for outcome in ("attacker", "defender", "draw"):
        assert steps[-1]["decided"][outcome]["p"] == data["win"][outcome]["p"]
    fighting = [s["fighting"]["p"] for s in steps]
    assert fighting == sorted(fighting, reverse=True)
    assert set(steps[0]["men_left"]) == {k for k in data["casualties"]}


# Slow tier (docs/testing.md): 1.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_after_shows_the_joint_table_at_any_width() -> None:
    for width in (60, 80, 200):
        result = runner.invoke(
            app,
            ["odds", "--ruleset", "confrontation", "--attacker", "3 trooper", "--defender",
             "3 spearman", "--battles", "2000", "--after", "1", "--by-round"],
            env={"COLUMNS": str(width)},
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "The battle as it unfolds" in result.output
        assert "Men left after 1 turns" in result.output
        assert max(len(line) for line in result.output.splitlines()) <= width


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--after", "0"], "--after 0: expected a step 1..10"),
        (["--after", "11"], "--after 11: expected a step 1..10"),
    ],
)
def test_bad_steps_are_one_line(args: list[str], words: str) -> None:
    result = runner.invoke(app, ["run", "scenarios/confrontation/attack.toml", *args])
    assert result.exit_code == 2
    assert words in result.output
    assert "Traceback" not in result.output


def test_run_steps_counts_every_battle_at_every_step() -> None:
    scenario = load_scenario("scenarios/skirmish/cavalry_charge.toml")
    answer = run_steps(scenario, [1], seed=2, first=10, battles=25_000, after=3)
    assert list(answer.tally.steps) == [1, 3]
    assert answer.tally.battles == 25_000
    data = answer.to_dict()
    assert data["after"]["step"] == 3
    assert sum(map(sum, data["after"]["p"])) == pytest.approx(1.0)


def test_chunks_recorded_to_their_own_end_merge_as_one_run() -> None:
    """``unfold`` records each chunk to its own longest battle; a chunk that ended
    sooner counts its final states after the later steps: the merge equals one run of
    every step over all the battles."""
    from simulator.running import unfolding

    scenario = load_scenario("scenarios/skirmish/cavalry_charge.toml")
    previous = unfolding.STEP_CALL
    unfolding.STEP_CALL = 700
    try:
        chunked = run_steps(scenario, None, seed=4, first=0, battles=3000)
    finally:
        unfolding.STEP_CALL = previous
    steps = list(chunked.tally.steps)
    assert steps == list(range(1, len(steps) + 1))
    assert chunked.tally.steps[steps[-1]].states[-1] == 0  # every battle decided
    whole = run_steps(scenario, steps, seed=4, first=0, battles=3000)
    for t in steps:
        a, b = chunked.tally.steps[t], whole.tally.steps[t]
        assert np.array_equal(a.states, b.states)
        assert a.joint.to_dict() == b.joint.to_dict()


def test_unfold_from_python_and_its_plots(tmp_path) -> None:
    import simulator
    from simulator.report.figures import save
    from simulator.report.unfolding_plots import joint_panel, unfolding_figure

    scenario = load_scenario("scenarios/age_of_gods/pikemen_vs_knights.toml")
    answer = simulator.unfold(scenario, 4000, seed=3, after=1)
    data = answer.to_dict()
    assert data["after"]["step"] == 1
    assert data["by_step"][0]["step"] == 1
    first = data["by_step"][0]
    assert set(first["men_left"]) == set(answer.tally.brought)
    assert all(len(key.split(".")) == 2 for key in first["men_left"])
    path = save(unfolding_figure(answer), tmp_path / "unfolds.png")
    assert path.stat().st_size > 0
    ax = joint_panel(answer, step=99)
    assert "No state recorded" in ax.texts[0].get_text()


def test_ctrl_c_in_the_steps_keeps_the_whole_chunks_so_far(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Stopped after a few kernel calls: every step counts the same whole chunks of
    battles, marked partial, and the table says so."""
    from io import StringIO

    from rich.console import Console

    from simulator.report.unfolding import render_steps
    from simulator.running import unfolding

    calls = []

    def stop_after_three() -> bool:
        calls.append(1)
        return len(calls) >= 7  # a chunk of battles is 2 steps here: stop in the 4th

    monkeypatch.setattr(unfolding, "STEP_CALL", 500)
    monkeypatch.setattr(unfolding, "stop_requested", stop_after_three)
    scenario = load_scenario("scenarios/confrontation/attack.toml")
    answer = run_steps(scenario, [1, 2], seed=1, first=0, battles=10_000)
    assert answer.partial
    counted = [c.battles for c in answer.tally.steps.values()]
    # Blocks sized by time from one battle up (1, 4, 16, then at most 500): three whole.
    assert counted[0] == counted[1] and 0 < counted[0] < 10_000
    shown = StringIO()
    render_steps(answer, Console(file=shown, width=80))
    assert "PARTIAL" in shown.getvalue()
    assert answer.to_dict()["by_step_partial"] is True


@pytest.mark.parametrize(
    ("attacker", "defender", "strikes"),
    [
        ("noble, 8 soldier", "noble, 6 swordsman", (10, 20)),
        ("noble, 5 soldier, 3 archer@1", "noble, 6 pikeman", (6, 25)),
    ],
)
def test_olympia_state_after_strikes_is_the_exact_one(
    attacker: str, defender: str, strikes: tuple[int, ...]
) -> None:
    """The Monte Carlo state after N strikes holds the exact one (the chain pushed one
    strike at a time): each outcome so far in its 99.9% Wilson interval, each type's mean
    men left within a z-test, Bonferroni over all of them."""
    from scipy import stats

    from simulator.rulesets.olympia.exact import exact_after
    from simulator.testing import interval_contains

    scenario = from_query("olympia", InlineQuery(attacker, defender))
    prepared = rulesets.get("olympia").prepare(scenario.model)
    n = 40_000
    for step in strikes:
        exact = exact_after(scenario, step)
        rows = prepared.run_until(9, 0, n, step)
        shares = {**exact.decided, "fighting": exact.fighting}
        tests = len(shares) + len(exact.men_left)
        confidence = 1 - 0.001 / tests
        for state in ("attacker", "defender", "draw", "fighting"):
            hits = int((rows["winner"] == STATES.index(state)).sum())
            assert interval_contains(hits, n, shares[state], confidence), (step, state)
        brought = men_brought(prepared.column_bounds)
        z_limit = float(stats.norm.isf(0.001 / tests / 2))
        for key, chances in exact.men_left.items():
            left = brought[key] - rows[f"casualties.{key}"]
            mean = exact.mean_men_left(key)
            variance = sum(p * (m - mean) ** 2 for m, p in chances.items())
            z = (left.mean() - mean) / max(np.sqrt(variance / n), 1e-12)
            assert abs(z) < z_limit, (step, key, left.mean(), mean)


def test_olympia_exact_state_long_after_is_the_exact_answer() -> None:
    from simulator import exact
    from simulator.rulesets.olympia.exact import exact_after

    scenario = from_query("olympia", InlineQuery("noble, 8 soldier", "noble, 6 swordsman"))
    late = exact_after(scenario, 2_000)
    assert late.fighting == pytest.approx(0.0, abs=1e-12)
    for outcome, p in exact(scenario).win.items():
        assert late.decided[outcome] == pytest.approx(p, abs=1e-12)


def test_olympia_exact_state_refuses_what_it_does_not_solve() -> None:
    """Pushing a battle strike by strike is bounded (the alternating order's budgets
    count in its states): past the bound, one line."""
    from simulator.rulesets.olympia.exact import exact_after

    scenario = from_query(
        "olympia",
        InlineQuery("noble, 8 soldier", "noble, 6 swordsman", {"strike_order": "alternating"}),
    )
    assert exact_after(scenario, 5).fighting > 0.5
    with pytest.raises(BattleOddsError, match="too large for an exact answer") as refused:
        exact_after(scenario, 10**7)
    assert "\n" not in str(refused.value)


def test_exact_after_from_the_command_line() -> None:
    args = ["odds", "--attacker", "noble, 8 soldier", "--defender", "noble, 6 swordsman"]
    shown = runner.invoke(app, [*args, "--exact", "--after", "20"], env={"COLUMNS": "60"})
    assert shown.exit_code == 0, shown.output
    assert "the state after 20 strikes" in " ".join(shown.output.split())
    assert "still fighting" in shown.output
    data = json.loads(runner.invoke(app, [*args, "--exact", "--after", "20", "--json"]).output)
    total = data["fighting"]["p"] + sum(d["p"] for d in data["decided"].values())
    assert total == pytest.approx(1.0)
    for bad, words in (
        (["--after", "0"], "--after 0: expected a step 1 or more"),
        (["--by-round"], "--exact: every step is simulated; drop --by-round"),
    ):
        refused = runner.invoke(app, [*args, "--exact", *bad])
        assert refused.exit_code == 2 and words in refused.output
    other = runner.invoke(
        app,
        ["odds", "--ruleset", "skirmish", "--attacker", "2 swordsman", "--defender",
         "2 swordsman", "--exact", "--after", "2"],
    )  # fmt: skip
    assert other.exit_code == 2
    assert "no exact state after a step for the 'skirmish' ruleset" in other.output


def test_plot_draws_the_battle_as_it_unfolds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    image = tmp_path / "unfolds.png"
    args = ["plot", "scenarios/confrontation/attack.toml", "-o", str(image), "-n", "3000"]
    drawn = runner.invoke(app, [*args, "--by-round", "--after", "2"])
    assert drawn.exit_code == 0, drawn.output
    assert image.stat().st_size > 0
    refused = runner.invoke(app, [*args, "--after", "11"])
    assert refused.exit_code == 2 and "--after 11: expected a step 1..10" in refused.output


# Slow tier (docs/testing.md): 1.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_cost_benchmark_runs_every_ruleset() -> None:
    """``benchmarks/unfolding_cost.py`` (docs/unfolding.md's table) end to end, small."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "benchmarks/unfolding_cost.py", "--battles", "300", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "/" in line]
    assert [row.split()[1].split("/")[0] for row in rows] == [
        "confrontation",
        "skirmish",
        "blocks",
        "age_of_gods",
        "olympia",
    ]
    assert "processor" in done.stdout and "load average" in done.stdout
