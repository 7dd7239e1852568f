"""``battle-odds serve`` held by its clients' connections (simulator/serve/connections.py)
and by what they send: idle, slow and half-sent connections are closed, open connections
are bounded below the descriptor limit, request heads and pasted scenarios are bounded, and
a pasted scenario is read in a worker thread while the server answers others. Every
connection is to 127.0.0.1, bounded in count and time."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import time
import urllib.error
from typing import Any
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from simulator.errors import BattleOddsError
from simulator.serve import app as app_module
from simulator.serve.app import Calculator, make_app
from simulator.serve.connections import ACCEPT_BATCH, HEAD_SECONDS, OWN_FILES, max_connections
from simulator.serve.question import MAX_SCENARIO_BYTES, MAX_UNIT_TYPES, Question

from .serving import ROOT, Server, serving

ARMIES = {"attacker": "noble, 12 soldier", "defender": "noble, 14 pikeman"}
KNIGHTS = (ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml").read_text()


@pytest.fixture(scope="module")
def server():
    yield from serving()


def _port(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1].strip("/"))


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.settimeout(0.2)
    return sock


def _closed(sock: socket.socket) -> bool:
    """The server closed ``sock`` (its end reads as ended, or reset)."""
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def _page_seconds(server: Server) -> float:
    began = time.monotonic()
    assert server.get("/api/status")["running"] >= 0
    return time.monotonic() - began


# Slow tier (docs/testing.md): 12.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_idle_and_slowly_sent_heads_are_closed(server):
    port = _port(server)
    idle = [_connect(port) for _ in range(10)]
    slow = [_connect(port) for _ in range(10)]
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    began = time.monotonic()
    sent = 0
    try:
        # A byte a second from each slow one (slowloris), never a whole head.
        while time.monotonic() - began < HEAD_SECONDS + 5:
            for sock in slow:
                with contextlib.suppress(OSError):  # closed already
                    sock.sendall(head[sent : sent + 1])
            sent += 1
            if all(_closed(s) for s in idle + slow):
                break
            time.sleep(0.8)
        took = time.monotonic() - began
        assert all(_closed(s) for s in idle + slow), "connections left open"
        assert HEAD_SECONDS - 1 < took < HEAD_SECONDS + 5
        assert _page_seconds(server) < 2
    finally:
        for sock in idle + slow:
            sock.close()


# Slow tier (docs/testing.md): 5.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_connection_left_idle_after_its_answer_is_closed(server):
    sock = _connect(_port(server))
    try:
        sock.sendall(
            b"GET /page.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )  # keep-alive: HTTP/1.1's default
        deadline = time.monotonic() + HEAD_SECONDS + 5
        answered = b""
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            answered += chunk
        assert answered.startswith(b"HTTP/1.1 200")
        assert time.monotonic() < deadline, "the idle connection was kept"
    finally:
        sock.close()


def test_a_request_head_longer_than_the_page_sends_is_refused(server):
    long = urlencode({"toml": "#" * (4 * MAX_SCENARIO_BYTES)})
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.open(f"/api/question?{long}")
    assert refused.value.code in (400, 431)
    assert _page_seconds(server) < 2


def test_a_request_body_is_refused(server):
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.open("/api/stop?run=x", method="POST", **{"Content-Length": str(1 << 20)})
    assert refused.value.code == 413


# Connections opened up to the descriptor limit (14 s at load 4): slow tier.
@pytest.mark.slow
def test_open_connections_stay_below_the_descriptor_limit():
    # 160 descriptors (a machine's limit can be this low): some kept for the server's
    # own files and for connections accepted but not yet counted, the rest for
    # connections.
    limit = 160

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    limited = Server(preexec=lower).start()
    port = _port(limited)
    most = max_connections(limit)
    assert most == limit - OWN_FILES - 2 * ACCEPT_BATCH
    held = []
    try:
        for _ in range(most + 60):
            held.append(_connect(port))
        time.sleep(0.5)
        dropped = sum(_closed(s) for s in held)
        # The ones beyond the bound, closed at once (a few more while the closed ones
        # are still counted).
        assert 60 <= dropped <= 60 + ACCEPT_BATCH
        assert len(held) - dropped <= most
        for sock in held:
            sock.close()
        held = []
        time.sleep(0.5)
        assert limited.get("/api/status")["running"] == 0
    finally:
        for sock in held:
            sock.close()
        assert limited.stop() == 0
    assert "Too many open files" not in limited.errors
    assert "Traceback" not in limited.errors and "Exception" not in limited.errors


def test_a_pasted_scenario_is_bounded_in_size_and_unit_types():
    big = KNIGHTS + "#" * MAX_SCENARIO_BYTES
    with pytest.raises(BattleOddsError, match=r"^pasted scenario: [\d,]+ bytes: .*64 KB"):
        Question.of({"toml": big})
    many = KNIGHTS + "".join(
        f'[units.type{i}]\nlike = "soldier"\n' for i in range(MAX_UNIT_TYPES + 1)
    )
    with pytest.raises(BattleOddsError, match=rf"\[units\]: {MAX_UNIT_TYPES + 1} unit types"):
        Question.of({"toml": many})
    with pytest.raises(BattleOddsError, match="attacker: 5,000 characters"):
        Question.of({"attacker": "x" * 5000, "defender": "noble"})


# -- reading off the event loop (the application, driven as uvicorn drives it) -----------


def _request(app: Any, path: str) -> Any:
    route, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8765"), (b"authorization", b"token t")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def asked() -> list[dict[str, Any]]:
        await app(scope, receive, send)
        return sent

    return asked()


# Slow tier (docs/testing.md): 1.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_slow_question_is_read_beside_the_others_and_counts_against_the_bound(monkeypatch):
    reading = 1.5
    of = Question.of

    def slowly(params: Any) -> Question:
        time.sleep(reading)  # a long scenario being read, holding its thread
        return of(params)

    monkeypatch.setattr(app_module.Question, "of", staticmethod(slowly))
    calculator = Calculator(max_runs=2)
    app = make_app(calculator, "t", loopback_only=True)
    question = urlencode({**ARMIES, "battles": "100"})

    async def together() -> tuple[float, list[int]]:
        slow = [asyncio.ensure_future(_request(app, f"/api/question?{question}")) for _ in (1, 2)]
        await asyncio.sleep(0.2)
        began = time.monotonic()
        status = await _request(app, "/api/status")
        assert status[0]["status"] == 200
        quick = time.monotonic() - began
        third = await _request(app, f"/api/question?{question}")  # the bound is taken
        done = await asyncio.gather(*slow)
        assert b"answering 2 questions already" in third[1]["body"]
        return quick, [d[0]["status"] for d in done]

    quick, statuses = asyncio.run(together())
    assert quick < 0.5 < reading  # the status was answered while both were read
    assert statuses == [200, 200]
    assert calculator.reading == 0
