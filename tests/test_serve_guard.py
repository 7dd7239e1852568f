"""Who may make ``battle-odds serve`` work (simulator/serve/guard.py): requests are handed
to the application as uvicorn hands them (ASGI), without a server or a browser. The real
browser's refusals of another site's page: tests/test_serve_browser.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("starlette")

from simulator.serve.app import Calculator, make_app
from simulator.serve.guard import MAX_BODY, POLICY

TOKEN = "s3cret-of-this-start"
COOKIE = "battle-odds-8765"
HOST = "127.0.0.1:8765"
OWN = {"host": HOST, "cookie": f"{COOKIE}={TOKEN}", "sec-fetch-site": "same-origin"}


def ask(
    path: str, headers: dict[str, str], method: str = "GET", body: bytes = b""
) -> tuple[int, dict[str, str], str]:
    """The status, headers and text of ``path`` asked with ``headers`` (no network)."""
    app = make_app(Calculator(), TOKEN, COOKIE, loopback_only=True)
    route, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[dict[str, Any]] = []
    bodies = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if bodies:
            return bodies.pop()
        await asyncio.sleep(3600)  # the client stays: nothing more arrives
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    names: dict[str, str] = {}
    for k, v in start["headers"]:
        names.setdefault(k.decode().lower(), v.decode())
    return start["status"], names, text.decode()


def test_the_page_asks_with_its_cookie_and_is_answered():
    status, _, text = ask("/api/status", OWN)
    assert status == 200 and '"running":0' in text.replace(" ", "")


@pytest.mark.parametrize(
    "changed, words",
    [
        ({"cookie": ""}, "has not shown the server's key"),
        ({"cookie": f"{COOKIE}=guessed"}, "has not shown the server's key"),
        ({"cookie": f"battle-odds-9999={TOKEN}"}, "has not shown the server's key"),
        ({"sec-fetch-site": "cross-site"}, "from another site (Sec-Fetch-Site: cross-site)"),
        ({"sec-fetch-site": "same-site"}, "Sec-Fetch-Site: same-site"),
        ({"origin": "http://127.0.0.1:9999"}, "not a request from http://127.0.0.1:9999"),
        ({"origin": "null"}, "not a request from null"),
        ({"sec-fetch-dest": "iframe"}, "does not open inside another page"),
    ],
)
def test_work_the_page_did_not_ask_for_is_refused(changed, words):
    for path in ("/api/run?attacker=noble&defender=noble", "/api/rulesets", "/api/status"):
        status, headers, text = ask(path, {**OWN, **changed})
        assert status == 403, (path, changed)
        assert words in text
        assert len(text.splitlines()) == 1
        assert headers["content-security-policy"] == POLICY


def test_a_script_shows_the_secret_in_its_authorization():
    assert ask("/api/status", {"host": HOST, "authorization": f"token {TOKEN}"})[0] == 200
    assert ask("/api/status", {"host": HOST, "authorization": "token nope"})[0] == 403
    assert ask("/api/status", {"host": HOST, "authorization": f"Basic {TOKEN}"})[0] == 403


def test_a_request_body_is_refused():
    stop = "/api/stop?run=abc"
    assert ask(stop, {**OWN, "content-length": "0"}, "POST")[0] == 200
    too_long = {**OWN, "content-length": str(MAX_BODY + 1)}
    status, _, text = ask(stop, too_long, "POST", b"x" * (MAX_BODY + 1))
    assert status == 413 and "sends no request body" in text
    assert ask(stop, {**OWN, "transfer-encoding": "chunked"}, "POST")[0] == 413


def test_the_first_visit_trades_the_secret_for_a_strict_cookie():
    status, headers, _ = ask(
        f"/?token={TOKEN}&attacker=noble%2C+2+soldier", {"host": HOST, "sec-fetch-site": "none"}
    )
    assert status == 303
    # The secret leaves the address; the question in it stays.
    assert headers["location"] == "/?attacker=noble%2C+2+soldier"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    wrong = ask("/?token=guessed", {"host": HOST})
    assert wrong[0] == 403 and "set-cookie" not in wrong[1]
    assert "not the server's" in wrong[2]


def test_the_page_itself_opens_without_the_secret_and_never_in_a_frame():
    # A question's link sent to someone opens their page; its questions then need their
    # own server's cookie.
    status, headers, text = ask("/?attacker=noble&defender=noble", {"host": HOST})
    assert status == 200 and '<script src="/page.js">' in text
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert "onsubmit" not in text and "<script>" not in text  # nothing inline: the policy
    framed = ask("/", {"host": HOST, "sec-fetch-dest": "iframe"})
    assert framed[0] == 403


def test_another_host_name_is_still_refused():
    status, _, text = ask("/api/status", {**OWN, "host": "rebound.example:8765"})
    assert status == 403 and "this machine only" in text
