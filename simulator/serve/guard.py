"""Who may make the server work: its own page, in the browser of whoever started it.

A page of another site, opened in the same browser, can send requests to any address,
127.0.0.1 included (an iframe, a form, ``fetch(..., {mode: "no-cors"})``, an
``EventSource``). As Jupyter's server does, ``serve`` makes a secret at each start and
prints it in its address (``?token=...``); the first visit trades it for a cookie the
browser sends only with requests its own pages make (``SameSite=Strict``), and every
request that makes the server work (``/api/...``) must carry it, come from the page's own
origin (``Origin``, ``Sec-Fetch-Site``) and read no body. The page itself may not be framed
(``frame-ancestors 'none'``) and runs only its own script (a content security policy).

The page's files and the page itself carry no secret and are served to anyone who asks:
a question's link opens on the receiver's own server, whose cookie their browser holds
from their own first visit.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.responses import PlainTextResponse, RedirectResponse, Response

#: The page's own script, styles and requests only; never in a frame.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: Headers on every answer: the policy, no framing, no type guessing, no address sent
#: on to another site, nothing read by another origin.
HEADERS = (
    (b"content-security-policy", POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
#: Where a browser loads a document into another page's frame.
FRAMED = (b"iframe", b"frame", b"embed", b"object", b"fencedframe")
#: Largest request body read (bytes): the page sends none, a stop request an empty one.
MAX_BODY = 1024
#: How a script that is not the page (the tests, curl) shows the secret.
AUTHORIZATION = "token"


def new_token() -> str:
    """A secret for one start of the server (32 random bytes, as text for an address)."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The cookie holding the secret of the server on ``port`` (browsers keep one jar per
    host name, not per port: two servers on one machine keep a cookie each)."""
    return f"battle-odds-{port}"


class Guard:
    """The ASGI middleware that refuses requests the page did not make (module docstring).

    ``token``: the secret of this start; ``cookie``: the cookie name that carries it;
    ``refused``: called at each refusal (the server counts them).
    """

    def __init__(
        self, app: Any, token: str, cookie: str, refused: Callable[[], None] = lambda: None
    ) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie
        self.refused = refused

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        refusal = self.refusal(scope)
        if refusal is not None:
            self.refused()
            await refusal(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def refusal(self, scope: Any) -> Response | None:
        """The answer to a request the page did not make (None: it may go on)."""
        headers = _headers(scope)
        path = scope["path"]
        if headers.get(b"sec-fetch-dest", b"") in FRAMED:
            return _refuse("battle-odds serve: the page does not open inside another page")
        length = headers.get(b"content-length", b"0")
        if b"transfer-encoding" in headers or not length.isdigit() or int(length) > MAX_BODY:
            return _refuse("battle-odds serve: the page sends no request body", 413)
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if path == "/" and any(key == "token" for key, _ in pairs):
            return self._trade(pairs)
        if not path.startswith("/api/"):
            return None
        site = headers.get(b"sec-fetch-site")
        if site is not None and site != b"same-origin":
            return _refuse(
                "battle-odds serve answers its own page only, not a request from "
                f"another site (Sec-Fetch-Site: {site.decode('latin-1')})"
            )
        origin = headers.get(b"origin")
        own = f"{scope.get('scheme', 'http')}://{headers.get(b'host', b'').decode('latin-1')}"
        if origin is not None and origin.decode("latin-1") != own:
            return _refuse(
                "battle-odds serve answers its own page only, not a request from "
                f"{origin.decode('latin-1')}"
            )
        if not self._holds_token(headers):
            return _refuse(
                "battle-odds serve: this browser has not shown the server's key: open the "
                "address battle-odds serve printed (it ends in ?token=...) once, then this "
                "page and its links work"
            )
        return None

    def _holds_token(self, headers: dict[bytes, bytes]) -> bool:
        shown = ""
        kind, _, value = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        if kind.lower() == AUTHORIZATION:
            shown = value.strip()
        else:
            shown = _cookies(headers.get(b"cookie", b"")).get(self.cookie, "")
        return bool(shown) and hmac.compare_digest(shown.encode(), self.token.encode())

    def _trade(self, pairs: list[tuple[str, str]]) -> Response:
        """The first visit: the address's secret for the cookie, and the same address
        without it (so the secret stays out of the history and any link copied)."""
        given = next((v for k, v in pairs if k == "token"), "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return _refuse(
                "battle-odds serve: this key is not the server's: open the address "
                "battle-odds serve printed at its last start"
            )
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        answer = RedirectResponse("/" + ("?" + rest if rest else ""), status_code=303)
        answer.set_cookie(
            self.cookie, self.token, httponly=True, samesite="strict", path="/", secure=False
        )
        answer.headers["cache-control"] = "no-store"
        return answer


def _headers(scope: Any) -> dict[bytes, bytes]:
    return {k.lower(): v for k, v in scope.get("headers", [])}


def _cookies(raw: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in raw.decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            found.setdefault(name, value)
    return found


def _refuse(line: str, status: int = 403) -> Response:
    return PlainTextResponse(line, status_code=status, headers={"cache-control": "no-store"})
