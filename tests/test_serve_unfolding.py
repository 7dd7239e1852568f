"""The page's battle as it unfolds, without a browser: the steps its answer carries (the
state after each step, in ``run --by-round``'s words), worked out within the question's
Stop and the kernel lock, and their JSON. The slider in a real browser:
tests/test_serve_browser.py."""

from __future__ import annotations

import threading

import pytest

from simulator import load_scenario
from simulator.results.steps import STATES
from simulator.running.unfolding import run_steps
from simulator.serve.answer import STATE_WORDS, steps_payload
from simulator.serve.question import Question

ARMIES = {"attacker": "noble, 6 soldier", "defender": "noble, 5 pikeman"}


def test_stop_ends_the_steps_with_the_whole_chunks_done():
    """``stop()`` true after a few kernel calls: every step counts the same first
    battles, which are those of a run of just them."""
    scenario = load_scenario("scenarios/confrontation/attack.toml")
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) >= 7

    answer = run_steps(scenario, [1, 2], seed=3, first=0, battles=50_000, stop=stop)
    assert answer.partial
    counted = {c.battles for c in answer.tally.steps.values()}
    assert len(counted) == 1 and 0 < answer.tally.battles < 50_000
    alone = run_steps(scenario, [1, 2], seed=3, first=0, battles=answer.tally.battles)
    assert not alone.partial
    for step in (1, 2):
        assert answer.tally.steps[step].to_dict() == alone.tally.steps[step].to_dict()


def test_each_kernel_call_holds_the_lock():
    """The page's questions take turns call by call: a lock held elsewhere holds the
    steps until it is let go."""
    scenario = Question.of(ARMIES).scenario
    lock = threading.Lock()
    done = threading.Event()
    lock.acquire()
    worker = threading.Thread(
        target=lambda: (run_steps(scenario, [1], 1, 0, 200, lock=lock), done.set())
    )
    worker.start()
    assert not done.wait(0.5)
    lock.release()
    assert done.wait(60)
    worker.join()


def test_the_steps_json_is_the_tally_in_the_reports_words():
    scenario = Question.of(ARMIES).scenario
    steps = run_steps(scenario, None, 5, 0, 3000)
    shown = steps_payload(steps, 3000)
    assert shown["unit"] == "strikes" and shown["title"] == "The battle as it unfolds"
    assert shown["battles"] == 3000 and not shown["partial"] and shown["notes"] == []
    assert [r["step"] for r in shown["steps"]] == list(steps.tally.steps)
    last = shown["steps"][-1]
    # No stop rule: no withdrawal is shown, as the text report leaves them out.
    assert [s["state"] for s in last["states"]] == ["attacker", "defender", "draw", "fighting"]
    assert {s["words"] for s in last["states"]} >= {"attacker won", "drawn", "still fighting"}
    for row in shown["steps"]:
        counts = steps.tally.steps[row["step"]]
        assert sum(s["p"] for s in row["states"]) == pytest.approx(1.0)
        for state in row["states"]:
            assert state["p"] == counts.p(state["state"])[0]
            assert state["low"] <= state["p"] <= state["high"]
            assert state["words"] == STATE_WORDS[state["state"]]
        men = {m["key"]: m for m in row["men_left"]}
        assert set(men) == {"attacker", "defender", "attacker.soldier", "defender.pikeman"}
        assert men["attacker"]["start"] == 6 and men["defender.pikeman"]["start"] == 5
        assert men["attacker.soldier"]["words"] == "soldiers of the attacking army"
        assert men["attacker"]["words"] == "attacker's men left"
        for key, m in men.items():
            h = counts.men_left[key]
            assert m["mean"] == h.mean() and m["q90"] == h.quantile(0.9)
            assert 0 <= m["q10"] <= m["q50"] <= m["q90"] <= m["start"]
    # Men left never grow from a step to the next.
    means = [
        next(m["mean"] for m in r["men_left"] if m["key"] == "attacker") for r in shown["steps"]
    ]
    assert means == sorted(means, reverse=True)


def test_fewer_battles_than_the_answer_and_a_stop_are_said():
    scenario = Question.of(ARMIES).scenario
    steps = run_steps(scenario, None, 5, 0, 1000)
    assert steps_payload(steps, 5000)["notes"] == [
        "the state after each step is that of the first 1,000 of the 5,000 battles"
    ]
    calls = iter(range(100))
    stopped = run_steps(scenario, None, 5, 0, 100_000, stop=lambda: next(calls) >= 3)
    said = steps_payload(stopped, 100_000)
    assert said["partial"]
    assert said["notes"] == [
        f"stopped: the state after each step is that of the first {stopped.tally.battles:,} battles"
    ]


def test_with_a_stop_rule_the_withdrawals_are_states_of_their_own():
    scenario = Question.of({**ARMIES, "defender.retreat.at_most": "3"}).scenario
    steps = run_steps(scenario, None, 5, 0, 3000)
    shown = steps_payload(steps, 3000)
    last = {s["state"]: s for s in shown["steps"][-1]["states"]}
    assert list(last) == list(STATES)
    assert last["defender_withdrew"]["words"] == "defender withdrew"
    assert last["defender_withdrew"]["p"] > 0.05 and last["attacker_withdrew"]["p"] == 0.0
    assert last["fighting"]["p"] == 0.0
    # A battle the defender left has at least its 3 men at the end: never below them
    # in a battle still fighting or withdrawn from, only in one it lost.
    counts = steps.tally.steps[max(steps.tally.steps)]
    assert counts.states[STATES.index("defender_withdrew")] == round(
        last["defender_withdrew"]["p"] * counts.battles
    )
