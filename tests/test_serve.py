"""``battle-odds serve`` without a browser: the question the address carries, the
answer stream (same numbers as ``battle-odds odds``), stopping, abandoned and
concurrent questions, bad input, and Ctrl-C. The page in a real browser:
tests/test_serve_browser.py."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest
import tomllib

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from simulator.errors import BattleOddsError, Source
from simulator.input.fields import Field
from simulator.rulesets import InlineQuery
from simulator.rulesets.olympia import keys as olympia_keys
from simulator.running.plan import RunPlan
from simulator.running.precision import run_to_precision
from simulator.running.runner import run_chunks
from simulator.running.stream import stream_battles
from simulator.scenario.scenario import from_data, from_query
from simulator.serve.app import MAX_RUNS, _one_line, _said
from simulator.serve.question import Question, settings
from simulator.serve.warming import EXAMPLES, SYNTAX

from .serving import ROOT, Server, odds_json, refused, serving

ARMIES = {"attacker": "noble, 12 soldier, 4 archer@1", "defender": "noble, 14 pikeman"}


# -- the question ----------------------------------------------------------------------


def test_settings_are_the_declared_scenario_keys():
    found = {s.path: s.field for s in settings("olympia")}
    assert found["battle.terrain"] is olympia_keys.BATTLE["terrain"]
    assert found["battle.weather"].choices == olympia_keys.WEATHERS
    assert isinstance(found["attacker.break_point"], Field)
    assert "defender.structure.defense" in found
    # Armies and unit tables are not settings.
    assert not any(p.startswith(("attacker.units", "units")) for p in found)
    blocks = {s.path for s in settings("blocks")}
    assert {"battle.castle_limit", "policy.withdraw"} <= blocks


def test_a_question_builds_the_scenario_odds_builds():
    question = Question.of({**ARMIES, "battle.terrain": "swamp", "attacker.break_point": "40"})
    same = from_query(
        "olympia",
        InlineQuery(
            ARMIES["attacker"], ARMIES["defender"], {"terrain": "swamp", "attacker_break": 40}
        ),
    )
    assert question.scenario.hash == same.hash
    command = question.command()
    assert command is not None
    assert "--terrain swamp" in command and "--attacker-break 40" in command
    # The address asks the same question again.
    again = Question.of(dict(_query(question.address())))
    assert again.scenario.hash == question.scenario.hash


def test_the_hash_is_the_one_odds_prints_for_the_command():
    armies = {"ruleset": "blocks", "attacker": "B2:4, A3:3", "defender": "B3:3@castle, A2:2"}
    question = Question.of(
        {**armies, "battle.siege": "true", "battle.castle_limit": "2", "battles": "500"}
    )
    command = question.command()
    assert command is not None and "--set siege=true --set castle_limit=2" in command
    assert odds_json(*shlex.split(command)[2:])["scenario_hash"] == question.scenario.hash


def test_a_setting_odds_cannot_say_is_set_at_its_key():
    question = Question.of(
        {
            "ruleset": "skirmish",
            "attacker": "cavalry",
            "defender": "giant",
            "battle.turn_limit": "50",
        }
    )
    assert question.scenario.data["battle"]["turn_limit"] == 50
    assert question.command() is None  # the TOML file asks it


def test_the_toml_copy_is_the_same_scenario():
    question = Question.of({**ARMIES, "battle.weather": "rain", "seed": "7", "battles": "5000"})
    data = tomllib.loads(question.to_toml())
    assert data["seed"] == 7 and data["battles"] == 5000
    loaded = from_data(data, Source("copy"))
    assert {k: v for k, v in loaded.data.items() if k not in ("seed", "battles")} == dict(
        question.scenario.data
    )


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({**ARMIES, "attacker": "noble, 12 soldeir"}, "did you mean 'soldier'"),
        ({**ARMIES, "battle.terain": "swamp"}, "did you mean 'battle.terrain'"),
        ({**ARMIES, "battle.terrain": "moon"}, "terrain"),
        ({**ARMIES, "attacker.break_point": "many"}, "expected a whole number"),
        ({**ARMIES, "seed": "-1"}, "seed"),
        ({**ARMIES, "battles": "0"}, "battles"),
        ({**ARMIES, "battles": "100", "precision": "0.01"}, "give one"),
        ({"toml": "ruleset = 'olympia'\n[attacker\n"}, "pasted scenario:2: malformed TOML"),
        ({**ARMIES, "ruleset": "olympai"}, "did you mean 'olympia'"),
    ],
)
def test_bad_questions_are_one_line_errors(params, words):
    with pytest.raises(BattleOddsError) as caught:
        Question.of(params).plan()
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def _query(address: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(address, keep_blank_values=True)


# -- the stream ------------------------------------------------------------------------


def test_the_stream_ends_with_the_runs_own_numbers():
    scenario = Question.of(ARMIES).scenario
    plan = RunPlan.of(scenario, 30_000, 11)
    sofar = list(stream_battles(scenario, plan, every=0.0))
    assert [final for _, final in sofar] == [False] * (len(sofar) - 1) + [True]
    seen = [result for result, _ in sofar]
    assert len(seen) >= 2  # results so far, then the whole answer
    assert [r.n for r in seen] == sorted(r.n for r in seen) and seen[0].n < 30_000
    whole = run_chunks(scenario, plan)
    assert seen[-1].tally.to_dict() == whole.tally.to_dict()
    assert not seen[-1].partial


def test_a_stopped_stream_is_the_run_of_its_battles():
    scenario = Question.of(ARMIES).scenario
    plan = RunPlan.of(scenario, 10**9, 5)
    calls = iter(range(10**9))
    last = list(stream_battles(scenario, plan, stop=lambda: next(calls) >= 3))[-1].result
    assert last.partial and 0 < last.n < 10**9
    same = run_chunks(scenario, RunPlan.of(scenario, last.n, 5))
    assert last.tally.to_dict() == same.tally.to_dict()


def test_a_cluster_that_fails_ends_the_stream_with_the_battles_done():
    from simulator.running.distributed import chunk_tally

    class FailsAfterOneChunk:
        """A Dask executor whose cluster goes after the first chunk of 1,000 battles."""

        failure: str | None = None

        def __call__(self, ruleset, canonical, seed, ranges, sizes):
            ((first, _),) = ranges
            yield first, 1000, chunk_tally(ruleset, canonical, seed, first, 1000, 1)[0]
            self.failure = "lost the connection to the Dask scheduler"

    scenario = Question.of(ARMIES).scenario
    plan = RunPlan.of(scenario, 50_000, 9)
    *_, (last, final) = stream_battles(scenario, plan, executor=FailsAfterOneChunk())
    assert final and last.partial and last.n == 1000
    assert "lost the connection to the Dask scheduler" in last.notes
    same = run_chunks(scenario, RunPlan.of(scenario, 1000, 9))
    assert last.tally.to_dict() == same.tally.to_dict()


def test_a_precision_stream_takes_the_rounds_of_a_precision_run():
    scenario = Question.of(ARMIES).scenario
    plan = RunPlan.of(scenario, seed=3, precision=0.004)
    last = list(stream_battles(scenario, plan))[-1].result
    rounds = run_to_precision(scenario, plan)
    assert last.n == rounds.n
    assert last.tally.to_dict() == rounds.tally.to_dict()
    assert str(last.extra["precision"]) == str(rounds.extra["precision"])


# -- the server ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    yield from serving()


def _answer(server: Server, params: dict[str, str]) -> tuple[dict, list[dict], dict]:
    start, progress, done = None, [], None
    for kind, data in server.events(urlencode(params)):
        if kind == "start":
            start = data
        elif kind == "progress":
            progress.append(data)
        elif kind == "done":
            done = data
        elif kind == "error":
            raise BattleOddsError(data["error"])
    assert start is not None and done is not None
    return start, progress, done


# Slow tier (docs/testing.md): 1.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_page_is_served_with_its_script(server):
    with urllib.request.urlopen(server.url, timeout=30) as response:
        page = response.read().decode()
    assert '<script src="/page.js">' in page
    for name in ("page.js", "page.css"):
        with urllib.request.urlopen(server.url + name, timeout=30) as response:
            assert response.status == 200 and len(response.read()) > 500
    offered = server.get("/api/rulesets")
    olympia = next(r for r in offered["rulesets"] if r["name"] == "olympia")
    assert "pikeman" in olympia["units"]
    assert any(s["path"] == "battle.terrain" for s in olympia["settings"])


def test_answers_match_odds_on_the_same_seed(server):
    params = {**ARMIES, "seed": "99", "battles": "40000", "battle.terrain": "swamp"}
    start, _, done = _answer(server, params)
    cli = odds_json(*shlex.split(start["command"])[2:])
    assert done["battles"] == cli["battles"] == 40_000
    assert done["scenario_hash"] == cli["scenario_hash"] == start["scenario_hash"]
    for row in done["win"]:
        assert row["p"] == cli["win"][row["outcome"]]["p"]
        assert row["low"] == cli["win"][row["outcome"]]["low"]
    means = {c["metric"]: c["mean"] for c in done["casualties"]}
    assert means == {k: v["mean"] for k, v in cli["casualties"].items()}


def test_results_arrive_while_the_battles_run(server):
    _, progress, done = _answer(server, {**ARMIES, "battles": "3000000"})
    assert progress, "no result arrived before the last"
    widths = [
        w["high"] - w["low"] for p in progress for w in p["win"] if w["outcome"] == "attacker"
    ]
    final = next(w for w in done["win"] if w["outcome"] == "attacker")
    assert final["high"] - final["low"] <= min(widths)
    assert progress[0]["battles"] < done["battles"] == 3_000_000


def test_a_bad_question_is_one_line_and_the_next_works(server):
    events = list(server.events(urlencode({**ARMIES, "defender": "noble, 14 pikemn"})))
    assert events == [("error", {"error": events[0][1]["error"]})]
    assert "did you mean 'pikeman'" in events[0][1]["error"]
    _, _, done = _answer(server, {**ARMIES, "battles": "2000"})
    assert done["battles"] == 2000


def test_a_stopped_question_frees_its_thread(server):
    events = server.events(urlencode({**ARMIES, "battles": str(10**10)}))
    kind, start = next(events)
    assert kind == "start"
    assert next(events)[0] == "progress"
    assert server.post(f"/api/stop?run={start['run']}") == {"stopped": True}
    last = [data for kind, data in events if kind == "done"][-1]
    assert last["partial"] and 0 < last["battles"] < 10**10
    assert server.running() == 0


def test_an_abandoned_question_frees_its_thread(server):
    response = server.open(f"/api/run?{urlencode({**ARMIES, 'battles': str(10**10)})}")
    assert response.readline().startswith(b"event: start")
    deadline = time.monotonic() + 30
    while server.get("/api/status")["running"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    response.close()  # the tab is closed
    assert server.running(within=10) == 0


def test_several_tabs_get_their_own_answers(server):
    answers: dict[int, dict] = {}

    def ask(seed: int) -> None:
        answers[seed] = _answer(server, {**ARMIES, "seed": str(seed), "battles": "200000"})[2]

    tabs = [threading.Thread(target=ask, args=(seed,)) for seed in (1, 2, 3)]
    for tab in tabs:
        tab.start()
    for tab in tabs:
        tab.join(timeout=300)
    assert sorted(answers) == [1, 2, 3]
    alone = _answer(server, {**ARMIES, "seed": "2", "battles": "200000"})[2]
    assert answers[2]["win"] == alone["win"]
    assert answers[1]["win"] != answers[2]["win"]


def test_the_exact_answer_stands_beside(server):
    small = {"attacker": "noble, 3 soldier", "defender": "noble, 3 pikeman", "battles": "200000"}
    solved = server.get("/api/exact?" + urlencode(small))
    _, _, done = _answer(server, small)
    for row in done["win"]:
        exact = next(w["p"] for w in solved["win"] if w["outcome"] == row["outcome"])
        # The exact answer inside a 99.9% interval of the Monte Carlo one (Wilson, z 3.29).
        half = 3.29 / 1.96 * (row["high"] - row["low"]) / 2
        assert abs(row["p"] - exact) <= half + 1e-12
    huge = {"attacker": "noble, 2000 soldier", "defender": "noble, 2000 pikeman"}
    big = server.get("/api/exact?" + urlencode(huge))
    assert "states" in big["unavailable"]


# Slow tier (docs/testing.md): 4.8 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_the_server_cleanly_while_it_answers(sig):
    running = Server().start()
    events = running.events(urlencode({**ARMIES, "battles": str(10**10)}))
    assert next(events)[0] == "start"
    assert next(events)[0] == "progress"
    began = time.monotonic()
    status = running.stop(sig)
    assert time.monotonic() - began < 10
    assert status == 0
    assert "Traceback" not in running.errors
    assert "battle-odds serve: stopped" in running.errors


# Slow tier (docs/testing.md): 1.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_another_address_than_loopback_is_warned_of():
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--warm",
            "",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("battle-odds serve: http://0.0.0.0:")
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=30)
    assert "warning: serving on 0.0.0.0" in errors
    assert process.returncode == 0


def test_a_port_in_use_is_a_one_line_error(server):
    port = server.url.rsplit(":", 1)[1].strip("/")
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "serve", "--port", port, "--warm", ""],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --port {port}: cannot listen")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_precision_target_is_met_as_precision_runs_meet_it(server):
    _, _, done = _answer(server, {**ARMIES, "seed": "3", "precision": "0.004"})
    scenario = Question.of(ARMIES).scenario
    rounds = run_to_precision(scenario, RunPlan.of(scenario, seed=3, precision=0.004))
    assert done["battles"] == rounds.n
    assert done["precision"] == str(rounds.extra["precision"])
    assert done["precision"].startswith("reached")


def test_open_hands_the_address_to_the_browser(tmp_path):
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", "serve", "--port", "0", "--warm", "", "--open"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BROWSER": str(browser)},
    )
    assert process.stdout is not None
    url = process.stdout.readline().split()[2]
    deadline = time.monotonic() + 30
    while not (opened.exists() and opened.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert opened.read_text().strip() == url


def test_a_pasted_scenario_answers_as_run_does(server):
    path = ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml"
    start, _, done = _answer(
        server, {"toml": path.read_text(encoding="utf-8"), "battles": "20000", "seed": "5"}
    )
    assert start["command"] is None  # a file is asked with `run`, not on one line
    ran = subprocess.run(
        [sys.executable, "-m", "simulator", "run", str(path), "-n", "20000", "-s", "5", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    cli = json.loads(ran.stdout)
    assert done["scenario_hash"] == cli["scenario_hash"]
    assert {w["outcome"]: w["p"] for w in done["win"]} == {o: v["p"] for o, v in cli["win"].items()}


def test_a_request_under_another_name_is_refused(server):
    port = server.url.rsplit(":", 1)[1].strip("/")
    request = urllib.request.Request(server.url, headers={"Host": f"rebound.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 403
    named = urllib.request.Request(server.url, headers={"Host": f"localhost:{port}"})
    with urllib.request.urlopen(named, timeout=30) as response:
        assert response.status == 200


# Slow tier (docs/testing.md): 3.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_question_is_bounded_in_time():
    limited = Server("--max-seconds", "1").start()
    try:
        began = time.monotonic()
        _, _, done = _answer(limited, {**ARMIES, "battles": str(10**10)})
        assert time.monotonic() - began < 10
        assert done["partial"] and 0 < done["battles"] < 10**10
        assert any("limit of 1 s a question" in note for note in done["notes"])
    finally:
        assert limited.stop() == 0


def test_questions_at_once_are_bounded(server):
    streams = [
        server.events(urlencode({**ARMIES, "battles": str(10**10)})) for _ in range(MAX_RUNS)
    ]
    assert all(next(stream)[0] == "start" for stream in streams)
    refused = list(server.events(urlencode(ARMIES)))
    assert refused[0][0] == "error"
    assert f"answering {MAX_RUNS} questions already" in refused[0][1]["error"]
    for stream in streams:
        stream.close()
    assert server.running(within=15) == 0


def test_a_long_pasted_scenario_fits_in_the_address(server):
    path = ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml"
    padding = "".join(f"# a designer's note, line {i}, kept in the file\n" for i in range(600))
    text = path.read_text(encoding="utf-8") + padding
    assert len(urlencode({"toml": text})) > 32_000
    _, _, done = _answer(server, {"toml": text, "battles": "1000"})
    assert done["battles"] == 1000


@pytest.mark.parametrize("seconds", ["inf", "nan", "0.01", "-1"])
def test_max_seconds_is_a_finite_time(seconds):
    line = refused("--max-seconds", seconds)
    assert line.startswith("error: --max-seconds ")
    assert "expected a number of seconds, at least 0.1" in line


@pytest.mark.parametrize("precision", ["1e-300", "1e-7", "0", "nan", "0.5"])
def test_the_page_and_odds_refuse_the_same_precisions(precision):
    with pytest.raises(BattleOddsError) as page:
        Question.of({**ARMIES, "precision": precision}).plan()
    # The page's refusal names its field, as the command names its option.
    said = _said(page.value)
    assert said.startswith(f"--precision {float(precision)}: expected a half-width")
    assert _one_line(said).startswith(f"Precision {float(precision)}: expected")
    odds = subprocess.run(
        [
            sys.executable,
            "-m",
            "simulator",
            "odds",
            "--attacker",
            ARMIES["attacker"],
            "--defender",
            ARMIES["defender"],
            "--precision",
            precision,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert odds.returncode == 2, odds.stderr
    Question.of({**ARMIES, "precision": "1e-6"}).plan()  # the smallest both take


# Slow tier (docs/testing.md): 1.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_stopped_answer_is_asked_again_by_its_link_and_command(server):
    events = server.events(urlencode({**ARMIES, "seed": "11", "battles": str(10**10)}))
    kind, start = next(events)
    assert kind == "start" and f"-n {10**10}" in start["command"]
    assert next(events)[0] == "progress"
    server.post(f"/api/stop?run={start['run']}")
    done = [data for kind, data in events if kind == "done"][-1]
    fought = done["battles"]
    assert done["partial"] and 0 < fought < 10**10
    again = done["described"]
    assert dict(_query(again["address"]))["battles"] == str(fought)
    assert f"-n {fought}" in again["command"] and str(10**10) not in again["command"]
    assert f"battles = {fought}" in again["toml"].replace("_", "")
    cli = odds_json(*shlex.split(again["command"])[2:])
    assert cli["battles"] == fought
    assert {w["outcome"]: w["p"] for w in done["win"]} == {o: v["p"] for o, v in cli["win"].items()}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_rulesets_example_is_a_battle_worth_asking(name):
    from simulator import simulate

    attacker, defender = EXAMPLES[name]
    question = Question.of({"ruleset": name, "attacker": attacker, "defender": defender})
    result = simulate(question.scenario, 4000, 1)
    rows = {r.metric: r for r in result.summary_rows() if r.group == "win"}
    # Neither side's win foregone: each side's 99.9% interval (Wilson's 95% widened to
    # z 3.29) inside 5%..95%.
    for side in ("attacker", "defender"):
        p, half = rows[side].mean, 3.29 / 1.96 * (rows[side].high - rows[side].low) / 2
        assert p - half > 0.05 and p + half < 0.95, (name, side, p)
    assert SYNTAX[name]


def test_the_answer_carries_the_battle_as_it_unfolds(server):
    """After the answer, the state after each step over the same battles (the slider
    shows any step of it without another request): what ``run_steps`` gives for them."""
    from simulator.running.unfolding import run_steps
    from simulator.serve.answer import steps_payload

    params = {"attacker": "noble, 5 soldier", "defender": "noble, 4 pikeman"}
    _, progress, done = _answer(server, {**params, "seed": "8", "battles": "3000"})
    # The whole answer comes before its steps are worked out, then again with them.
    assert not progress[-1]["running"] and "unfolding" not in progress[-1]
    assert progress[-1]["win"] == done["win"]
    scenario = Question.of(params).scenario
    expected = steps_payload(run_steps(scenario, None, 8, 0, 3000), 3000)
    shown = done["unfolding"]
    assert shown["steps"] == json.loads(json.dumps(expected["steps"]))
    assert shown["battles"] == 3000 and not shown["partial"] and shown["notes"] == []


def test_the_steps_of_a_long_answer_are_its_first_battles(server):
    from simulator.serve.app import STEP_BATTLES

    params = {"attacker": "noble, 3 soldier", "defender": "noble, 3 pikeman"}
    _, _, done = _answer(server, {**params, "seed": "2", "battles": str(STEP_BATTLES + 5000)})
    assert done["battles"] == STEP_BATTLES + 5000
    assert done["unfolding"]["battles"] == STEP_BATTLES
    assert done["unfolding"]["notes"] == [
        f"the state after each step is that of the first {STEP_BATTLES:,} of the "
        f"{STEP_BATTLES + 5000:,} battles"
    ]


def test_a_stopped_answer_has_no_steps(server):
    events = server.events(urlencode({**ARMIES, "seed": "4", "battles": "10000000000"}))
    for kind, data in events:
        if kind == "start":
            server.post(f"/api/stop?run={data['run']}")
        if kind == "done":
            assert data["partial"] and "unfolding" not in data
            break


def test_stop_while_the_steps_are_worked_out_keeps_the_answer_whole(server):
    """Stop pressed once the answer is in and its steps are being worked out: the answer
    stays whole, its steps are those of the whole blocks of battles done, marked so."""
    params = {**ARMIES, "seed": "6", "battles": "100000"}
    done = None
    for kind, data in server.events(urlencode(params)):
        if kind == "start":
            run = data["run"]
        elif kind == "waiting" and data["words"].startswith("the battle as it unfolds"):
            server.post(f"/api/stop?run={run}")
        elif kind == "done":
            done = data
            break
    assert done is not None and not done["partial"] and done["battles"] == 100_000
    steps = done["unfolding"]
    assert steps["partial"] and steps["battles"] < 100_000
    if steps["battles"]:  # stopped after a whole block of battles
        assert steps["notes"] == [
            f"stopped: the state after each step is that of the first {steps['battles']:,} battles"
        ]
    else:  # stopped in the first block (of one battle: chunks are sized by time)
        assert steps["steps"] == []
        assert steps["notes"] == ["stopped before the state after each step was worked out"]
    assert server.running() == 0


def test_a_pasted_scenario_with_waves_shows_the_waves_table_run_prints(server):
    from simulator.report.tables import wave_table

    text = (ROOT / "examples" / "waves" / "raids_on_a_gate.toml").read_text()
    _, _, done = _answer(server, {"toml": text, "battles": "4000", "seed": "3"})
    scenario = Question.of({"toml": text}).scenario
    title, columns, rows, note = wave_table(run_chunks(scenario, RunPlan.of(scenario, 4000, 3)))
    shown = {
        "title": title,
        "columns": list(columns),
        "rows": [list(r) for r in rows],
        "note": note,
    }
    assert done["waves"] == shown
    assert [r[0] for r in done["waves"]["rows"]] == ["1", "2", "3"]
    # Waves are whole battles, wave after wave: no state after each step, said in a line.
    assert "a scenario with waves" in done["unfolding"]["unavailable"]
    _, _, plain = _answer(server, {**ARMIES, "battles": "2000"})
    assert plain["waves"] is None


# Slow tier (docs/testing.md): 1.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_retreat_panel_answers_as_retreat_does(server):
    """The page's retreat panel (/api/retreat): its exact rule is best_retreat's on the
    question's scenario, figure for figure, its map the positions' decisions; its
    simulated rule is the same seed's on the panel's bounded battles; a bad field is the
    command line's line, named by its field."""
    from simulator.serve.retreat import RETREAT_BATTLES
    from simulator.studies.retreat import best_retreat

    asked = {"attacker": "noble, 8 soldier", "defender": "noble, 10 pikeman", "seed": "3"}
    scenario = Question.of(asked).scenario
    exact = server.get("/api/retreat?" + urlencode({**asked, "side": "defender", "win_value": "5"}))
    expected = best_retreat(scenario, "defender", 5.0, method="exact")
    assert exact["method"] == "exact" and exact["rule"] == expected.words()
    assert exact["value"] == {"value": expected.value, "low": None, "high": None}
    assert exact["gain_over_never"]["value"] == expected.value - expected.never
    decided = expected.frame["decision"].isin(["fight", "withdraw"]).sum()
    assert sum(c["fight"] + c["withdraw"] for c in exact["cells"]) == decided
    assert any(c["withdraw"] for c in exact["cells"]) and not exact["partial"]
    simulated = server.get("/api/retreat?" + urlencode({**asked, "method": "simulated"}))
    again = best_retreat(
        scenario, "attacker", None, method="simulated", paths=RETREAT_BATTLES,
        battles=RETREAT_BATTLES, seed=3,
    )  # fmt: skip
    assert simulated["value"] == again.answer.value.to_dict()  # type: ignore[union-attr]
    assert simulated["rule"] == again.words() and "fitted on 10,000" in simulated["size"]
    assert simulated["upper"] == again.answer.upper.to_dict() and exact["upper"] is None  # type: ignore[union-attr]
    assert simulated["upper"]["value"] >= simulated["value"]["value"]
    for field, value, words in [
        ("side", "attackr", "Retreat: side attackr: expected attacker or defender"),
        ("win_value", "0", "Retreat: win value 0: expected a number more than 0"),
        ("win_value", "lots", "Retreat: win value lots: expected a number more than 0"),
        ("method", "exakt", "Retreat: method exakt: expected one of exact, simulated"),
    ]:
        with pytest.raises(urllib.error.HTTPError) as refused_field:
            server.get("/api/retreat?" + urlencode({**asked, field: value}))
        assert json.loads(refused_field.value.read())["error"].startswith(words)
