"""A ``battle-odds serve`` process for the tests of the page and its server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from tests import ROOT

#: Seconds the server may take to start: it loads (or, on a fresh clone, compiles)
#: olympia's kernels first.
START_SECONDS = 900


class Server:
    """``battle-odds serve --port 0`` in a process of its own; once it listens, ``page`` is
    the address it printed (with its secret: a browser's first visit), ``url`` the same
    without the secret, and ``token`` the secret (shown by these requests as a script
    shows it, ``Authorization: token ...``)."""

    def __init__(
        self,
        *args: str,
        warm: str = "olympia",
        preexec: Callable[[], None] | None = None,
        ready: bool = True,
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = ["--port", "0", "--warm", warm, *args]
        self.preexec = preexec
        #: Whether :meth:`start` waits for the warmed rulesets' kernels, loaded (or
        #: compiled) after the server listens.
        self.ready = ready
        self.env = env or {}
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.page = ""
        self.token = ""
        self.errors = ""

    def start(self) -> Server:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "simulator", "serve", *self.args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "100", **self.env},
            preexec_fn=self.preexec,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                self.stop()
                raise AssertionError(f"battle-odds serve ended before it listened: {self.errors}")
            if "http://" in line:
                self.page = line.split()[2]
                self.url, _, secret = self.page.partition("?token=")
                self.token = secret
                if self.ready:
                    self.wait_until_ready(deadline)
                return self
        self.stop()
        raise AssertionError("battle-odds serve did not print its address in time")

    def wait_until_ready(self, deadline: float) -> None:
        """Wait for every warmed ruleset's kernels (the server answers meanwhile)."""
        while time.monotonic() < deadline:
            states = {r["name"]: r["state"] for r in self.get("/api/ready")["rulesets"]}
            if not {"waiting", "loading", "compiling"} & set(states.values()):
                return
            time.sleep(0.2)
        self.stop()
        raise AssertionError("battle-odds serve did not load its kernels in time")

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Ctrl-C, as a terminal sends it; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            _, self.errors = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.errors = self.process.communicate()
        return self.process.returncode

    def open(self, path: str, method: str = "GET", timeout: float = 60, **headers: str) -> Any:
        """``path`` (``/api/...``) asked with the server's secret, as a script asks it."""
        request = urllib.request.Request(
            self.url.rstrip("/") + path,
            method=method,
            data=b"" if method == "POST" else None,
            headers={"Authorization": f"token {self.token}", **headers},
        )
        return urllib.request.urlopen(request, timeout=timeout)

    def get(self, path: str) -> Any:
        with self.open(path) as response:
            return json.loads(response.read())

    def post(self, path: str) -> Any:
        with self.open(path, method="POST") as response:
            return json.loads(response.read())

    def events(self, query: str, timeout: float = 120) -> Iterator[tuple[str, Any]]:
        """The answer stream of ``/api/run?query``, event by event."""
        response = self.open(f"/api/run?{query}", timeout=timeout)
        with response:
            kind = ""
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    yield kind, json.loads(line.removeprefix("data: "))

    def running(self, within: float = 5.0) -> int:
        """Questions whose threads still run, waiting up to ``within`` seconds for none."""
        deadline = time.monotonic() + within
        while True:
            running = int(self.get("/api/status")["running"])
            if running == 0 or time.monotonic() > deadline:
                return running
            time.sleep(0.05)


def odds_json(*args: str) -> dict[str, Any]:
    """``battle-odds odds ... --json`` run as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "odds", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def serving(*args: str, **options: Any) -> Iterator[Server]:
    """A module fixture's server: started, handed over, then stopped with Ctrl-C, cleanly
    (status 0, no traceback)."""
    running = Server(*args, **options).start()
    yield running
    assert running.stop() == 0, running.errors
    assert "Traceback" not in running.errors


def refused(*args: str) -> str:
    """``battle-odds serve --port 0 ARGS`` refused before it listens: its one line."""
    done = subprocess.run(
        [sys.executable, "-m", "simulator", "serve", "--port", "0", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not done.stdout, done.stderr
    return done.stderr
