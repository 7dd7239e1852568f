"""Starting and stopping ``battle-odds serve``: bind, listen, print the address, load
the kernels while serving (:mod:`.warming`), serve until Ctrl-C or SIGTERM."""

from __future__ import annotations

import math
import signal
import socket
import sys
import threading
import time
import webbrowser
from contextlib import nullcontext
from typing import Any

import uvicorn

from .. import rulesets
from ..errors import BattleOddsError
from ..running.distributed import connect
from .app import Calculator, make_app
from .connections import ACCEPT_BATCH, IDLE_SECONDS, bounded_protocol, max_connections
from .guard import cookie_name, new_token
from .question import MAX_SCENARIO_BYTES
from .warming import Readiness, order, warm_in_background

#: Addresses that only this machine reaches.
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Longest request head the server reads (bytes): the address of the longest pasted
#: scenario the page takes, every byte of it escaped (%XX), and the rest of the head.
MAX_HEAD = 3 * MAX_SCENARIO_BYTES + 16 * 1024
#: Shortest limit on a question's time (seconds).
MIN_SECONDS = 0.1
#: Seconds the open connections get to finish once Ctrl-C stops the server.
GRACE_SECONDS = 2


class _Server(uvicorn.Server):
    """uvicorn's server, telling every running question to stop when it is told to
    stop: a page's answer stream would otherwise hold the shutdown open."""

    def __init__(self, config: uvicorn.Config, calculator: Calculator) -> None:
        super().__init__(config)
        self.calculator = calculator

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.calculator.stop_all()
        super().handle_exit(sig, frame)


def _as_ctrl_c(sig: int, frame: Any) -> None:
    raise KeyboardInterrupt


def check_max_seconds(max_seconds: float | None) -> None:
    """A question's time limit: a finite number of seconds, at least 0.1 (None: the
    default), checked the same for the command line and a caller of :func:`serve`."""
    if max_seconds is not None and not (MIN_SECONDS <= max_seconds < math.inf):
        raise BattleOddsError(
            f"--max-seconds {max_seconds:g}: expected a number of seconds, at least "
            f"{MIN_SECONDS:g} (a question's answer so far arrives then)"
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BattleOddsError(
            f"--host {host}: not an address of this machine ({exc.strerror})"
        ) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise BattleOddsError(
            f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}): "
            "choose another port, or --port 0 for any free one"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address_of(host: str, sock: socket.socket, token: str) -> str:
    """The address ``serve`` prints: its page, with the secret of this start."""
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


def serve(
    host: str = "127.0.0.1",
    port: int = 8765,
    open_page: bool = False,
    warm_rulesets: tuple[str, ...] | None = None,
    max_seconds: float | None = None,
    scheduler: str | None = None,
) -> None:
    """Serve the page until Ctrl-C or SIGTERM (which return from here); ``scheduler``:
    questions' battles run on this Dask cluster (``tcp://HOST:PORT``, ``local:N``)."""
    check_max_seconds(max_seconds)
    if threading.current_thread() is threading.main_thread():
        # The server takes Ctrl-C over from the command line's first defence (which ends
        # the process at once, status 130): here it stops the server cleanly, status 0.
        # SIGTERM (a service manager's, `kill`'s) stops it the same way.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _as_ctrl_c)
    names = rulesets.available() if warm_rulesets is None else warm_rulesets
    for name in names:
        rulesets.get(name, "--warm")
    sock = bind(host, port)
    token = new_token()
    url = address_of(host, sock, token)
    if host not in LOOPBACK:
        sys.stderr.write(
            f"warning: serving on {host}, not only this machine: anyone who can reach it and "
            "who also holds the address printed below, with its secret, can run battles "
            "here (--host 127.0.0.1 keeps the page to this machine)\n"
        )
    calculator = Calculator() if max_seconds is None else Calculator(max_seconds=max_seconds)
    calculator.readiness = {name: Readiness(name) for name in order(names)}
    try:
        with connect(scheduler) if scheduler else nullcontext() as cluster:
            if scheduler and cluster is None:
                raise KeyboardInterrupt  # Ctrl-C while the cluster started
            calculator.cluster = cluster
            _serve(calculator, sock, host, token, url, open_page)
    except KeyboardInterrupt:
        pass
    finally:
        calculator.stop_all()
        sock.close()
    sys.stderr.write("battle-odds serve: stopped\n")


def _serve(
    calculator: Calculator, sock: socket.socket, host: str, token: str, url: str, open_page: bool
) -> None:
    """Run uvicorn on ``sock`` until it is told to stop."""
    config = uvicorn.Config(
        make_app(
            calculator,
            token,
            cookie_name(sock.getsockname()[1]),
            loopback_only=host in LOOPBACK,
        ),
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=GRACE_SECONDS,
        # The address carries a pasted scenario: room for the longest the page takes
        # (h11's default, 16 KB, refuses a few pages of TOML).
        h11_max_incomplete_event_size=MAX_HEAD,
        http=bounded_protocol(max_connections()),
        timeout_keep_alive=IDLE_SECONDS,
        backlog=ACCEPT_BATCH,
    )
    server = _Server(config, calculator)
    threading.Thread(
        target=_announce, args=(server, url, open_page, calculator), daemon=True
    ).start()
    server.run(sockets=[sock])


def _announce(server: _Server, url: str, open_page: bool, calculator: Calculator) -> None:
    """Print the address once the server listens (and open it, when asked), then load
    the kernels: the page says which rulesets are ready."""
    while not server.started and not server.should_exit:
        time.sleep(0.02)
    if server.should_exit:
        return
    sys.stdout.write(f"battle-odds serve: {url} (Ctrl-C stops)\n")
    sys.stdout.flush()
    if calculator.readiness:
        warm_in_background(calculator.readiness)
    if open_page:
        webbrowser.open(url)
