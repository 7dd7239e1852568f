"""The simulated best retreat rule (Longstaff-Schwartz; ``battle-odds retreat --method
simulated``), checked against the exact best rule of small olympia battles (the
simulated rule is valued on fresh battles: its value is an unbiased estimate of a rule's,
so never above the exact optimum beyond noise, and close to it), against the exact
values of "never retreat" and of the side's own rule (unbiased estimates of them), on a
battle where withdrawing can only lose (no withdrawal, a gain of exactly 0), and for
the randomness contract (same seed, same rule and numbers, on 1 thread or all)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.studies.machinery.retreat_simulated import Estimate, fresh_seed
from simulator.studies.retreat import best_retreat

Z999 = 3.29
FORD = "examples/retreat/knights_at_the_ford.toml"
runner = CliRunner()


def _se(e: Estimate) -> float:
    return (e.high - e.low) / (2 * 1.959963984540054)


def test_the_simulated_rule_comes_close_to_the_exact_optimum_and_never_above_it() -> None:
    scenario = simulator.load_scenario(FORD)
    exact = best_retreat(scenario, "attacker", 20.0, method="exact")
    simulated = best_retreat(
        scenario, "attacker", 20.0, method="simulated", paths=20_000, battles=20_000, seed=5
    )
    a = simulated.answer  # type: ignore[union-attr]
    # An unbiased estimate of a rule's value: at most the optimum, beyond noise.
    assert a.value.value <= exact.value + Z999 * _se(a.value)
    # Close to it: the paired gain over never retreating (tighter than the value's own
    # interval) within noise and a tenth of the exact gain (0.50) of the exact gain.
    exact_gain = exact.value - exact.never
    assert a.gain_over_never.value >= exact_gain - Z999 * _se(a.gain_over_never) - 0.05
    # "Never retreat" and the side's own rule (at 3 knights) are unbiased estimates of
    # the exact values.
    assert abs(a.never.value - exact.never) <= Z999 * _se(a.never)
    assert exact.own is not None and a.own is not None
    assert abs(a.own.value - exact.own) <= Z999 * _se(a.own)
    assert a.gain_over_own is not None and a.gain_over_own.low > 0
    assert simulated.words().startswith("withdraw with")


def test_where_withdrawing_can_only_lose_it_never_withdraws(tmp_path: Path) -> None:
    """Eight knights against two pikemen, a win worth 100 against 24 for all the
    knights: the knights win every battle, so on every battle fighting on is worth more
    than withdrawing at any step (100 less the knights lost after it). The rule fights
    to the end and its gain over never retreating is exactly 0."""
    easy = tmp_path / "easy.toml"
    text = Path(FORD).read_text().replace("pikeman = 12", "pikeman = 2")
    easy.write_text(text.replace("at_most = 3", "at_most = 7"))
    scenario = simulator.load_scenario(easy)
    result = best_retreat(
        scenario, "attacker", 100.0, method="simulated", paths=5_000, battles=5_000
    )
    a = result.answer  # type: ignore[union-attr]
    assert a.outcomes["win"] == 1.0
    assert a.rule.never
    assert a.gain_over_never.value == 0.0 and a.gain_over_never.high == 0.0
    assert a.outcomes["withdrew"] == 0.0
    assert result.words() == "never withdraw"
    # The side's own rule (withdraw at 7 knights) gives up wins: worth less.
    assert a.gain_over_own is not None and a.gain_over_own.low > 0


def _numbers(result: object) -> dict[str, object]:
    data = result.to_dict()  # type: ignore[attr-defined]
    data.pop("seconds")
    return data


def test_same_seed_same_rule_on_one_thread_or_all() -> None:
    scenario = simulator.load_scenario(FORD)
    kwargs = {"method": "simulated", "paths": 3_000, "battles": 3_000, "seed": 11}
    one = best_retreat(scenario, "attacker", 20.0, threads=1, **kwargs)  # type: ignore[arg-type]
    again = best_retreat(scenario, "attacker", 20.0, threads=1, **kwargs)  # type: ignore[arg-type]
    every = best_retreat(scenario, "attacker", 20.0, **kwargs)  # type: ignore[arg-type]
    assert _numbers(one) == _numbers(again) == _numbers(every)
    for x, y in zip(one.answer.rule.coefficients, every.answer.rule.coefficients, strict=True):  # type: ignore[union-attr]
        assert (x is None and y is None) or np.array_equal(x, y)
    other = best_retreat(scenario, "attacker", 20.0, **{**kwargs, "seed": 12})  # type: ignore[arg-type]
    assert _numbers(other) != _numbers(one)
    assert fresh_seed(11) != 11 and fresh_seed(11) == fresh_seed(11)


@pytest.mark.parametrize(
    "path",
    [
        "scenarios/skirmish/cavalry_charge.toml",
        "scenarios/confrontation/attack.toml",
        "scenarios/age_of_gods/pikemen_vs_knights.toml",
    ],
)
def test_every_ruleset_never_retreat_agrees_with_a_plain_run(path: str) -> None:
    """ "Never retreat" over the fresh battles estimates W x P(win) - the price of the
    men lost, which a plain run of the scenario (another kernel's draws) gives too."""
    scenario = simulator.load_scenario(path)
    result = best_retreat(scenario, "attacker", method="simulated", paths=3_000, battles=6_000)
    a = result.answer  # type: ignore[union-attr]
    run = simulator.simulate(scenario, 20_000, seed=3)
    frame = run.battles
    won = (frame["winner"] == "attacker").to_numpy()
    lost = sum(
        price * frame[f"casualties.attacker.{t}"].to_numpy() for t, price in result.prices.items()
    )
    per = result.win_value * won - lost
    half = Z999 * float(np.std(per, ddof=1)) / np.sqrt(len(per))
    assert abs(a.never.value - per.mean()) <= Z999 * _se(a.never) + half
    # The rule is valued on the same battles as never retreating: no worse beyond noise.
    assert a.gain_over_never.high >= 0


# Slow tier: its simulated rule runs blocks' battle as it unfolds, which only the slow
# tier compiles (tests/tiers.py).
@pytest.mark.slow
def test_blocks_needs_prices_and_takes_costs(tmp_path: Path) -> None:
    path = "scenarios/blocks/field_battle.toml"
    result = runner.invoke(app, ["retreat", path])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: --costs: no price for the attacker's")
    assert len(result.output.strip().splitlines()) == 1
    costs = tmp_path / "costs.toml"
    names = ["Richard", "Templars", "Turcopoles", "Saladin", "Mamluks", "Bedouins"]
    costs.write_text("".join(f"{n} = 1\n" for n in names))
    result = runner.invoke(
        app,
        ["retreat", path, "--costs", str(costs), "--paths", "2000", "-n", "2000", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["method"] == "simulated" and data["battles"] == 2000
    for key in ("value", "never", "gain_over_never"):
        assert data[key]["low"] <= data[key]["value"] <= data[key]["high"]


# Slow tier (docs/testing.md): 1.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_command_says_the_simulated_rule(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["retreat", FORD, "--win-value", "20", "--method", "simulated", "--paths", "3000",
         "-n", "3000", "-o", str(tmp_path / "map.png")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "simulated: fitted on 3,000 battles, valued on 3,000" in result.output
    assert "never retreat: " in result.output and "best gains" in result.output
    assert "The rule: " in result.output and (tmp_path / "map.png").exists()
    result = runner.invoke(
        app, ["retreat", "scenarios/skirmish/cavalry_charge.toml", "--method", "exact"]
    )
    assert result.exit_code == 2 and result.output.startswith("error: --method exact: ")


def test_ctrl_c_is_answered_after_one_kernel_call_sized_by_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each recording call runs as many battles as fit in about a quarter second (the
    first one battle, each next at most four times the last), not a fixed block of
    20,000 (2 s of olympia's castle siege before Ctrl-C was looked at). Ctrl-C after the
    third training call: the training ends there, and one more call, of at most
    STOPPED_BLOCK fresh battles, values the rule so far, marked partial. (The real
    process and its exit status: tests/test_interrupt.py.)"""
    from simulator.studies.machinery import retreat_simulated as rs

    calls: list[int] = []
    real = rs.record

    def counted(prepared: object, seed: int, first: int, count: int, *rest: object) -> object:
        calls.append(count)
        return real(prepared, seed, first, count, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rs, "record", counted)
    monkeypatch.setattr(rs, "stop_requested", lambda: len(calls) >= 3)
    scenario = simulator.load_scenario(FORD)
    answer, _, _ = rs.simulated_retreat(
        scenario, 0, 20.0, rs.Simulation(paths=200_000, fresh=200_000)
    )
    assert calls[0] == 1 and all(b <= 4 * a for a, b in itertools.pairwise(calls[:3]))
    assert len(calls) == 4 and calls[3] <= rs.STOPPED_BLOCK
    assert answer.partial and answer.paths == sum(calls[:3]) and answer.fresh == calls[3]
    assert answer.value.low <= answer.value.value <= answer.value.high


IN_PROGRESS = """
ruleset = "olympia"
name = "in progress"

[battle]
from_step = 3

[units.knight]
cost = 3

[attacker]
break_point = 0

[[attacker.units]]
men = { knight = KNIGHTS }

[defender]
break_point = 0

[[defender.units]]
men = { pikeman = PIKEMEN }
"""


@pytest.mark.parametrize(("knights", "pikemen", "choice"), [(1, 12, "stop now"), (8, 2, "go on")])
def test_stop_now_or_go_on(tmp_path: Path, knights: int, pikemen: int, choice: str) -> None:
    """A battle in progress after strike 3: one knight left against twelve pikemen
    (going on risks a knight for a win almost never had: stop now), eight against two
    (go on). The exact value of going on is the best rule's; the simulated one's
    interval holds it (99.9%), and both choose alike."""
    path = tmp_path / "progress.toml"
    text = IN_PROGRESS.replace("KNIGHTS", str(knights)).replace("PIKEMEN", str(pikemen))
    path.write_text(text)
    scenario = simulator.load_scenario(path)
    exact = best_retreat(scenario, "attacker", 5.0, method="exact")
    said = exact.stop_now()
    assert said is not None and said["step"] == 3 and said["stop_now"] == 0.0
    assert said["go_on"]["value"] == exact.value and said["choice"] == choice
    simulated = best_retreat(
        scenario, "attacker", 5.0, method="simulated", paths=4_000, battles=4_000, seed=3
    )
    went = simulated.stop_now()
    assert went is not None and went["choice"] == choice
    a = simulated.answer  # type: ignore[union-attr]
    assert a.rule.dates[0] == 4  # the rule is first looked at after the next strike
    assert went["go_on"]["value"] <= exact.value + Z999 * _se(a.value)
    assert abs(went["go_on"]["value"] - exact.value) <= Z999 * _se(a.value) + 0.05
    result = runner.invoke(app, ["retreat", str(path), "--win-value", "5", "--json"])
    assert json.loads(result.output)["stop_now_or_go_on"]["choice"] == choice
    result = runner.invoke(app, ["retreat", str(path), "--win-value", "5"], env={"COLUMNS": "60"})
    assert "Stop now or go on (after step 3)" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 60


def test_a_battle_not_begun_has_no_stop_now() -> None:
    scenario = simulator.load_scenario(FORD)
    assert best_retreat(scenario, "attacker", 20.0).stop_now() is None


def test_the_map_by_bands_of_steps_adds_up_to_the_whole() -> None:
    scenario = simulator.load_scenario(FORD)
    result = best_retreat(
        scenario, "attacker", 20.0, method="simulated", paths=3_000, battles=3_000, seed=4
    )
    bands = result.bands()  # type: ignore[union-attr]
    assert 1 <= len(bands) <= 3
    steps = [s for first, last, _ in bands for s in (first, last)]
    assert steps == sorted(steps) and steps[0] == 1
    whole = sum(cells for _, _, cells in bands)
    assert np.array_equal(whole, result.cells())  # type: ignore[union-attr]
    # Each fresh battle still fighting after a decision step is counted there once.
    asked = result.answer.asked  # type: ignore[union-attr]
    assert asked is not None and asked[0].sum() <= 3_000
    data = result.to_dict()
    assert [b["steps"] for b in data["bands"]] == [[first, last] for first, last, _ in bands]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("side", "attacker", "defender", "win"),
    [
        ("attacker", "knight = 8", "pikeman = 12", 20.0),
        ("defender", "soldier = 9", "knight = 4", 10.0),
    ],
)
def test_the_simulated_rule_on_more_battles_is_within_a_tenth_of_the_exact_gain(
    tmp_path: Path, side: str, attacker: str, defender: str, win: float
) -> None:
    """50,000 training and 100,000 fresh battles: never above the exact optimum beyond
    noise, and the option to retreat (the gain over never retreating) within a tenth
    of its exact worth, beyond noise."""
    text = Path(FORD).read_text().replace("knight = 8", attacker)
    text = text.replace("pikeman = 12", defender).split("# The knights' own rule")[0]
    path = tmp_path / "battle.toml"
    path.write_text(text)
    scenario = simulator.load_scenario(path)
    exact = best_retreat(scenario, side, win, method="exact")
    result = best_retreat(
        scenario, side, win, method="simulated", paths=50_000, battles=100_000, seed=9
    )
    a = result.answer  # type: ignore[union-attr]
    exact_gain = exact.value - exact.never
    assert exact_gain > 0.05  # the option to retreat is worth something here
    assert a.value.value <= exact.value + Z999 * _se(a.value)
    assert a.gain_over_never.value >= 0.9 * exact_gain - Z999 * _se(a.gain_over_never)
    assert abs(a.never.value - exact.never) <= Z999 * _se(a.never)


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_the_simulated_answer_fits_any_width(columns: str) -> None:
    """A long title and long values (castle siege's hundreds) wrap to the width."""
    result = runner.invoke(
        app,
        ["retreat", "scenarios/olympia/castle_siege.toml", "--paths", "300", "-n", "300"],
        env={"COLUMNS": columns},
    )
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= int(columns)
    assert "never retreat: " in result.output


def test_the_upper_bound_is_hindsight_and_holds_the_exact_optimum() -> None:
    """The upper bound is each fresh battle's best with hindsight (withdrawing at the
    best step it was still fought at, or fighting to the end), by hand on two battles;
    on the knights at the ford it is above the rule's value and never retreating's on
    the same battles (battle by battle), and the exact optimum lies below it."""
    from simulator.studies.machinery import retreat_simulated as rs

    f = rs.Features(["attacker.knight"], ["defender.pikeman"],
                    {"attacker.knight": 8, "defender.pikeman": 12}, np.array([3.0]))  # fmt: skip
    paths = rs.Paths(
        np.array([[True, True], [True, False]]),
        np.array([[[7], [8]], [[5], [8]]], np.int16),  # knights left after each step
        np.zeros((2, 2, 1), np.int16),
        {},
    )
    end = np.array([-24.0, 20.0 - 3.0])  # the first battle lost to the end, the second won
    assert rs.hindsight(paths, end, f).tolist() == [-3.0, 17.0]
    scenario = simulator.load_scenario(FORD)
    exact = best_retreat(scenario, "attacker", 20.0, method="exact")
    a = best_retreat(
        scenario, "attacker", 20.0, method="simulated", paths=5000, battles=5000, seed=5
    ).answer  # type: ignore[union-attr]
    assert a.upper is not None and a.upper.value >= max(a.value.value, a.never.value)
    assert exact.value <= a.upper.value + Z999 * _se(a.upper)
    said = runner.invoke(
        app, ["retreat", FORD, "--method", "simulated", "--paths", "2000", "-n", "2000", "--json"]
    )
    assert (
        json.loads(said.output)["upper_bound"]["value"] >= json.loads(said.output)["value"]["value"]
    )


def _figures(result) -> dict:
    """Every figure of a simulated answer but its time."""
    said = result.to_dict()
    said.pop("seconds")
    return said


def test_fresh_battles_recorded_only_as_far_as_the_rule_reaches_change_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fresh battles past the first BOUND_BATTLES are recorded only as far as the
    training battles reach under the rule, a block where one goes further recorded again
    after every step: the same values, outcomes and map as every battle recorded after
    every step (the hindsight bound is the first BOUND_BATTLES' own)."""
    from simulator.studies.machinery import retreat_simulated as rs

    scenario = simulator.load_scenario(FORD)

    def answer(bound: int, reach: int | None) -> dict:
        monkeypatch.setattr(rs, "BOUND_BATTLES", bound)
        if reach is not None:
            monkeypatch.setattr(rs, "reach_of", lambda rule, paths: reach)
        result = best_retreat(
            scenario, "attacker", 20.0, method="simulated", paths=2000, battles=3000, seed=5
        )
        monkeypatch.undo()
        return _figures(result)

    every = answer(10**9, None)
    assert every["battles"] == 3000 and len(every["decision_steps"]) > 10
    for reach in (None, 1, 3):  # as far as the training went; too short: recorded again
        prefix = answer(500, reach)
        bound = prefix.pop("upper_bound")
        assert prefix == {k: v for k, v in every.items() if k != "upper_bound"}
        assert bound["value"] == pytest.approx(every["upper_bound"]["value"], abs=0.5)


def test_olympia_records_the_columns_asked_as_run_through_gives_them(tmp_path: Path) -> None:
    """olympia's record_columns (one gather over the kernel's recording, kept between
    calls) is the default's (run_through's columns), on the chain and skip kernels and a
    battle in progress."""
    from simulator.rulesets.base import Prepared
    from simulator.scenario.scenario import prepare

    for path in (FORD, "scenarios/olympia/knights_in_swamp.toml"):
        prepared = prepare(simulator.load_scenario(path))
        names = ["winner", "steps", *[c for c in prepared.columns if c.startswith("casualties.")]]
        steps = [1, 2, 5, 9, 40, 10**9]
        for first, count in ((0, 300), (300, 300), (7, 50)):
            ours = prepared.record_columns(11, first, count, steps, names)
            default = Prepared.record_columns(prepared, 11, first, count, steps, names)
            assert np.array_equal(ours, default)
    text = Path(FORD).read_text().replace("[battle]", "[battle]\nfrom_step = 3")
    if "[battle]" not in text:
        text += "\n[battle]\nfrom_step = 3\n"
    later = tmp_path / "later.toml"
    later.write_text(text)
    prepared = prepare(simulator.load_scenario(later))
    assert prepared.from_step == 3
    ours = prepared.record_columns(11, 0, 200, [4, 8, 10**9], ["winner", "steps"])
    default = Prepared.record_columns(prepared, 11, 0, 200, [4, 8, 10**9], ["winner", "steps"])
    assert np.array_equal(ours, default)


def test_the_normal_equations_kernel_is_numpys_product() -> None:
    from kernels.least_squares import normal_equations

    rng = np.random.default_rng(3)
    for k, n in ((1, 1), (5, 4097), (17, 3000)):
        x, y = rng.random((k, n)), rng.random(n)
        gram, xy = np.empty((k, k)), np.empty(k)
        normal_equations(x, y, gram, xy)
        assert np.allclose(gram, x @ x.T, rtol=1e-12) and np.allclose(xy, x @ y, rtol=1e-12)


def test_the_andersen_broadie_bound_is_asked_and_refused_in_one_line(tmp_path: Path) -> None:
    said = runner.invoke(
        app, ["retreat", FORD, "--win-value", "20", "--method", "simulated", "--paths", "300",
              "-n", "300", "--dual-battles", "5", "--json"],
    )  # fmt: skip
    assert said.exit_code == 0, said.output
    dual = json.loads(said.output)["dual_bound"]
    assert dual["battles"] == 5 and dual["inner"] > 0 and dual["low"] <= dual["value"]
    text = runner.invoke(
        app, ["retreat", FORD, "--method", "simulated", "--paths", "300", "-n", "300",
              "--dual-battles", "3"], env={"COLUMNS": "60"},
    )  # fmt: skip
    assert text.exit_code == 0 and "Andersen-Broadie bound:" in text.output
    assert max(len(line) for line in text.output.splitlines()) <= 60
    turns = tmp_path / "turns.toml"
    turns.write_text(Path(FORD).read_text() + '\n[battle]\nstrike_order = "alternating"\n')
    for arguments, words in [
        (["scenarios/olympia/castle_siege.toml", "--method", "simulated"],
         "--dual-battles 5: no Andersen-Broadie bound here: the attacker's break point"),
        ([FORD, "--method", "exact"], "--dual-battles: only the simulated method takes it"),
        ([FORD, "--side", "both"], "--dual-battles 5: the bound is for one side's rule"),
        (["scenarios/confrontation/attack.toml"],
         "--dual-battles 5: no Andersen-Broadie bound here: not offered for confrontation"),
        # Whose turn it is (the strike budgets) is not in the men left a state keeps.
        ([str(turns), "--method", "simulated"],
         "--dual-battles 5: no Andersen-Broadie bound here: the strikes' order is alternating"),
    ]:  # fmt: skip
        refused = runner.invoke(app, ["retreat", *arguments, "--dual-battles", "5"])
        assert refused.exit_code == 2, refused.output
        assert refused.output.startswith(f"error: {words}"), refused.output


def test_ctrl_c_in_the_andersen_broadie_bound_keeps_the_battles_done() -> None:
    """Stop is looked at before each nested simulation: the bound's battles so far."""
    from simulator.studies.machinery.retreat_dual import dual_bound
    from simulator.studies.machinery.retreat_simulated import (
        Simulation,
        simulated_retreat,
        without_rule,
    )

    scenario = simulator.load_scenario(FORD)
    answer, _, _ = simulated_retreat(scenario, 0, 20.0, Simulation(paths=300, fresh=2, seed=5))
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 40

    never = without_rule(scenario, "attacker")
    upper = dual_bound(never, 0, answer.rule, 20.0, 11, battles=50, inner=20, stop=stop)
    assert 0 < len(upper) < 50 and len(asked) == 41
    again = dual_bound(never, 0, answer.rule, 20.0, 11, battles=len(upper), inner=20)
    assert np.array_equal(upper, again)  # the battles done are the same battles
