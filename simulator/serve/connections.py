"""Bounded connections: no client holds the server by connecting and sending slowly.

uvicorn's HTTP/1.1 protocol (h11) closes a connection left idle after a response
(``timeout_keep_alive``) and refuses a request head longer than a limit, but waits as long
as a client likes for the first request head, or for the rest of one half sent (a
"slowloris" client sending a byte a second), and accepts as many connections as the
descriptor limit allows (then every page load fails with "Too many open files"). The
protocol here adds the two missing bounds: a request head must arrive whole within
:data:`HEAD_SECONDS` of the connection's opening (or of the response before it), and a
connection beyond :func:`max_connections` is closed as soon as it is accepted (the event
loop accepts :data:`ACCEPT_BATCH` at a time, uvicorn's backlog, so that the bound is
counted before the descriptors run out).
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a whole request head (the page's take milliseconds).
HEAD_SECONDS = 10.0
#: Seconds an idle connection is kept open after a response (uvicorn's keep-alive).
IDLE_SECONDS = 5
#: Descriptors kept for the process's own files (libraries, the kernels' cache, logs:
#: 9 open while it serves, measured).
OWN_FILES = 32
#: Connections waiting to be accepted (``listen``'s backlog), which is also the most the
#: event loop accepts at a time: two batches may be accepted before the first is counted.
ACCEPT_BATCH = 32
#: Most connections at once however many descriptors the process may open: a page holds
#: a few (its answer stream, its requests), several tabs a few dozen.
MOST_CONNECTIONS = 256


def max_connections(limit: int | None = None) -> int:
    """Connections kept open at once: below the descriptor limit (``limit``: the
    process's own, ``ulimit -n``) by :data:`OWN_FILES` and two batches of accepted
    connections not yet counted, at most :data:`MOST_CONNECTIONS`, at least 8."""
    spare = OWN_FILES + 2 * ACCEPT_BATCH
    if limit is None:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if limit == resource.RLIM_INFINITY:
            limit = MOST_CONNECTIONS + spare
    return max(8, min(MOST_CONNECTIONS, limit - spare))


def bounded_protocol(most: int, head_seconds: float = HEAD_SECONDS) -> type[H11Protocol]:
    """uvicorn's h11 protocol with at most ``most`` connections and a request head due
    within ``head_seconds``."""

    class Bounded(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > most:
                transport.abort()  # one over: its descriptor is freed at once
                return
            self._expect_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._head_arrived()  # the request is read (or refused): the app's turn

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._expect_head()

        def _expect_head(self) -> None:
            self._head_arrived()
            self.head_timer = self.loop.call_later(head_seconds, self._head_late)

        def _head_arrived(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _head_late(self) -> None:
            self.head_timer = None
            answering = self.cycle is not None and not self.cycle.response_complete
            unread = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
            if unread and not answering and not self.transport.is_closing():
                self.transport.close()  # a head (or a body) still coming, too slowly

    return Bounded
