"""``battle-odds serve`` listening at once on a fresh install (an empty Numba cache: its
kernels compile after it listens, simulator/serve/warming.py): the page says which
rulesets are not ready and about how long, a question for a ready ruleset is answered at
once, and one for a ruleset still compiling waits, saying so, then is answered."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
if not Path("/proc/self/stat").exists():
    pytest.skip("reads a process's processor time from /proc (Linux)", allow_module_level=True)

from simulator.serve.warming import Readiness, order

from .serving import Server

#: Seconds from the command to its address, on an empty cache: the processor time the
#: process spends before it listens (1.9-2.9 s of wall time measured at a load average of
#: 10 on 2 cores; processor time does not grow with other processes' load, wall time does,
#: so wall time gets a looser bound that still catches a wait).
LISTENING = 5.0
LISTENING_WALL = 30.0
SKIRMISH = {"ruleset": "skirmish", "attacker": "cavalry, 2 swordsman", "defender": "giant"}
CONFRONTATION = {
    "ruleset": "confrontation",
    "attacker": "2 trooper, veteran",
    "defender": "spearman, trooper",
}


def _processor_seconds(pid: int) -> float:
    """User and system time of process ``pid`` so far, all its threads (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _states(server: Server) -> dict[str, dict]:
    return {r["name"]: r for r in server.get("/api/ready")["rulesets"]}


# A fresh install: every kernel compiled anew (41 s at load 4): slow tier.
@pytest.mark.slow
def test_a_fresh_install_listens_at_once_and_answers_ready_rulesets(tmp_path):
    began = time.monotonic()
    server = Server(
        warm="confrontation,skirmish", ready=False, env={"NUMBA_CACHE_DIR": str(tmp_path)}
    ).start()
    try:
        assert server.process is not None
        assert time.monotonic() - began < LISTENING_WALL
        assert _processor_seconds(server.process.pid) < LISTENING
        first = _states(server)
        assert first["confrontation"]["state"] in ("loading", "compiling")
        assert first["skirmish"]["state"] == "waiting"
        assert first["olympia"]["state"] == "later"  # not warmed: loads at its question
        # A question for the ruleset compiled last waits, saying what it waits for.
        events: list[tuple[str, dict]] = []

        def ask() -> None:
            params = urlencode({**SKIRMISH, "battles": "2000", "seed": "1"})
            events.extend(server.events(params, timeout=900))

        waiting = threading.Thread(target=ask)
        waiting.start()
        said = set()
        deadline = time.monotonic() + 900
        while _states(server)["confrontation"]["state"] != "ready":
            said.add(_states(server)["confrontation"]["words"])
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert any("compiling the confrontation kernel (first start" in w for w in said), said
        assert _states(server)["skirmish"]["state"] in ("loading", "compiling")
        # Confrontation is ready: its question is answered at once, skirmish compiling.
        asked = time.monotonic()
        done = [d for k, d in server.events(urlencode({**CONFRONTATION, "battles": "2000"}))]
        assert time.monotonic() - asked < 5
        assert done[-1]["battles"] == 2000
        waiting.join(timeout=900)
        kinds = [k for k, _ in events]
        assert kinds[0] == "start" and kinds[-1] == "done", kinds
        # What it waited for before its answer (after it, the page works out the battle
        # as it unfolds and says so in a waiting event of its own).
        words = [
            d["words"]
            for k, d in events
            if k == "waiting" and not d["words"].startswith("the battle as it unfolds")
        ]
        assert words and all(w.startswith("skirmish: ") for w in words), set(words)
        assert any("compiling the skirmish kernel" in w for w in words), words
        assert events[-1][1]["battles"] == 2000
        assert _states(server)["skirmish"]["state"] == "ready"
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.errors
    assert "compiling the confrontation kernel for confrontation" in server.errors


def test_the_default_ruleset_loads_first():
    assert order(("blocks", "olympia", "skirmish")) == ("olympia", "blocks", "skirmish")


def test_compiling_words_say_the_estimate_and_a_busy_machine():
    state = Readiness("olympia", state="compiling", kernel="olympia chain", seconds=19.0)
    state.since = time.monotonic() - 4.2
    assert state.words() == (
        "olympia: compiling the olympia chain kernel (first start after install only), "
        "4 s of about 19 s"
    )
    state.since = time.monotonic() - 31
    assert state.words().endswith("31 s so far, about 19 s on an idle machine")


def test_the_example_question_readies_a_ruleset_and_its_starter_loads_later(monkeypatch):
    """A ruleset is ready once the page's example question's kernels are: olympia's
    starter (a tower, the skip kernel: about 41 s of a fresh install's compiling) loads
    with the other kernels after every ruleset is ready; a ruleset with no example is
    readied by its starter."""
    from simulator.serve import warming

    ran: list[str] = []

    class Starter:
        """A prepared starter that runs nothing."""

    def starter_battle(name: str) -> Starter:
        ran.append(f"starter {name}")
        return Starter()

    def stream_battles(scenario, plan):
        ran.append(f"example {scenario.ruleset}")
        return iter(())

    monkeypatch.setattr(warming, "_starter_battle", starter_battle)
    monkeypatch.setattr(warming, "stream_battles", stream_battles)
    monkeypatch.setattr(warming, "run_steps", lambda *args: ran.append("steps"))
    monkeypatch.setattr(warming, "exact", lambda *args, **kw: ran.append("exact"))
    monkeypatch.setattr(warming, "_kernel_choices", lambda ruleset: ())
    warming._first("olympia")
    assert ran == ["example olympia", "steps", "exact"]
    ran.clear()
    warming._other_kernels("olympia")
    assert ran == ["starter olympia"]
    ran.clear()
    monkeypatch.delitem(warming.EXAMPLES, "skirmish")
    warming._first("skirmish")
    assert ran == ["starter skirmish"]
