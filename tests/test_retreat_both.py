"""Both sides choosing their retreat rules (``battle-odds retreat --side both``):
alternate best responses on recorded battles. A pair of rules played out on recorded
battles is the kernel's battle with those withdrawals, battle by battle; the first turn
is the one-side method's rule; the alternation settles, or says it did not; Ctrl-C gives
the rules reached so far; what it cannot take is one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.scenario.scenario import prepare
from simulator.studies.machinery import retreat_both as rb
from simulator.studies.machinery.retreat_simulated import (
    TO_THE_END,
    SimulatedRule,
    Simulation,
    simulated_retreat,
    without_rule,
)

FORD = "examples/retreat/knights_at_the_ford.toml"
runner = CliRunner()


def _recorded(scenario, seed: int, count: int, rule: SimulatedRule | None = None):
    """Battles of ``scenario`` with neither side's rule, recorded as the alternation
    records them (at ``rule``'s decision steps), with both sides' features."""
    bare = without_rule(without_rule(scenario, "attacker"), "defender")
    prepared = prepare(bare)
    if rule is None:
        rule = simulated_retreat(scenario, 0, 20.0, Simulation(paths=200, fresh=2))[0].rule
    dates = list(rule.dates)
    f = rule.features
    fd = rb.Features(f.enemy, f.own, f.brought, np.ones(len(f.enemy)))
    rec = rb._record_all(
        prepared, seed, count, dates, (f, fd), (20.0, 20.0), count, lambda: False, None,
        lambda n: None,
    )  # fmt: skip
    return bare, dates, (f, fd), rec


def _at_step(dates, k: int, f) -> SimulatedRule:
    """A rule that withdraws after decision step ``dates[k]`` whatever the men left."""
    always = np.zeros(10 + len(f.own) + len(f.enemy))
    always[0] = -1e9  # the constant column: fighting on is worth -1e9 there
    return SimulatedRule(
        tuple(dates), tuple(always if i == k else None for i in range(len(dates))), f
    )


@pytest.mark.parametrize(("attacker_k", "defender_k"), [(None, 2), (3, None), (2, 2), (4, 1)])
def test_a_pair_played_on_recorded_battles_is_the_kernels_battle(attacker_k, defender_k):
    """Rules that withdraw after a given step, played on battles recorded with no rule,
    give each battle the winner code and each side the value the kernel's own run with
    ``after`` rules gives (the attacker withdrawing on a tie). Both on olympia's strike
    kernel: a battle without rules may run on another kernel, which draws differently."""
    loaded = simulator.load_scenario(FORD)
    data = dict(loaded.data)
    data["battle"] = {**data.get("battle", {}), "kernel": "strike"}
    scenario = simulator.from_data(data, loaded.source)
    bare, dates, features, rec = _recorded(scenario, 11, 3000)
    never = [rb.never_rule(dates, f) for f in features]
    rules = list(never)
    data = dict(bare.data)
    for s, k in ((0, attacker_k), (1, defender_k)):
        if k is not None:
            rules[s] = _at_step(dates, k, features[s])
            data = {
                **data,
                ("attacker", "defender")[s]: {
                    **data[("attacker", "defender")[s]],
                    "retreat": {"after": dates[k]},
                },
            }
    played = rb.play(rules, rec, features)
    run = prepare(simulator.from_data(data, bare.source)).run_until(11, 0, 3000, TO_THE_END)
    code = np.where(played.withdrew == 0, 3, np.where(played.withdrew == 1, 4, rec.winner))
    assert np.array_equal(code, run["winner"])
    for s in range(2):
        kernel = rb.value_of_rows(run, s, 20.0, features[s])
        assert np.allclose(played.values[s], kernel)
    assert (played.withdrew >= 0).any()


def test_the_first_turn_is_the_one_side_rule_and_the_rules_settle():
    """The attacker's first best response (against a defender that never withdraws) is
    the one-side method's rule on the same training battles, coefficient for
    coefficient; the knights at the ford settle, each side's rule gaining over never
    withdrawing against the other's."""
    scenario = simulator.load_scenario(FORD)
    result = simulator.best_retreat(scenario, "both", 20.0, paths=3000, battles=3000, seed=5)
    one, _, _ = simulated_retreat(scenario, 0, 20.0, Simulation(3000, 2, seed=5))
    a = result.answer
    first = a.rounds[0]
    assert first["side"] == "attacker" and first["kept"]
    # The next turns may change the attacker's rule; the first is fitted as one side's.
    again = rb.fit_rule(
        *rb.against(_recorded(scenario, 5, 3000, one.rule)[3], 0, one.rule.features,
                    np.full(3000, -1)),
        list(one.rule.dates), one.rule.features, lambda: False,
    )  # fmt: skip
    for ours, theirs in zip(again.coefficients, one.rule.coefficients, strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert np.allclose(ours, theirs)
    assert a.settled and not a.partial and a.battles == (3000, 3000, 3000)
    assert [r["kept"] for r in a.rounds[-2:]] == [False, False]
    for s in range(2):
        assert a.gain_over_never[s].low >= 0
    assert sum(a.outcomes.values()) == pytest.approx(1.0)


def test_an_alternation_cut_short_says_it_did_not_settle(monkeypatch):
    monkeypatch.setattr(rb, "MOST_ROUNDS", 1)
    scenario = simulator.load_scenario(FORD)
    result = simulator.best_retreat(scenario, "both", 20.0, paths=2000, battles=2000, seed=5)
    assert not result.answer.settled and len(result.answer.rounds) == 2
    lines = "\n".join(rb_lines(result))
    assert "Did not settle in 2 turns" in lines


def rb_lines(result):
    from simulator.report.retreat import both_sides_lines

    return both_sides_lines(result, 80)


def test_ctrl_c_gives_the_rules_reached_so_far(monkeypatch):
    """A stop after the second training call: no turn is played, both sides never
    withdraw, valued on a small block of judging battles, marked partial."""
    calls: list[int] = []
    real = rb.record

    def counted(*args, **kwargs):
        calls.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(rb, "record", counted)
    monkeypatch.setattr(rb, "stop_requested", lambda: len(calls) >= 2)
    scenario = simulator.load_scenario(FORD)
    result = simulator.best_retreat(scenario, "both", 20.0, paths=100_000, battles=100_000)
    a = result.answer
    assert a.partial and a.rounds == [] and a.battles[0] == sum(calls[:2])
    assert a.battles[1:] == (rb.STOPPED_BATTLES,) * 2 and np.isfinite(a.values[0].low)
    json.dumps(result.to_dict(), allow_nan=False)


def test_the_command_says_both_rules_and_refuses_what_it_cannot(tmp_path):
    said = runner.invoke(
        app, ["retreat", FORD, "--side", "both", "--win-value", "20", "--paths", "1000",
              "-n", "1000", "--json"],
    )  # fmt: skip
    assert said.exit_code == 0, said.output
    answer = json.loads(said.output)
    assert answer["side"] == "both" and answer["settled"] is True
    assert answer["attacker"]["value"]["low"] <= answer["attacker"]["value"]["value"]
    assert answer["defender"]["rule"].startswith(("withdraw with", "never withdraw"))
    text = runner.invoke(
        app, ["retreat", FORD, "--side", "both", "--paths", "1000", "-n", "1000"],
        env={"COLUMNS": "60"},
    )  # fmt: skip
    assert text.exit_code == 0 and "Settled after" in text.output
    assert max(len(line) for line in text.output.splitlines()) <= 60
    for args, words in [
        (["--side", "bth"], "--side bth: expected attacker, defender or both"),
    ]:
        refused = runner.invoke(app, ["retreat", FORD, "--side", "both", *args])
        assert refused.exit_code == 2, refused.output
        assert refused.output.startswith(f"error: {words}"), refused.output
    blocks = runner.invoke(app, ["retreat", "scenarios/blocks/field_battle.toml", "--side", "both"])
    assert (
        blocks.exit_code == 2
        and "--side both: both sides choosing is not offered for blocks" in (blocks.output)
    )
