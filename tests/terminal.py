"""A command run in a real pseudo-terminal of a given width (no COLUMNS: rich asks the
terminal itself, as it does for a person), for the tests of what a terminal shows."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Callable

from tests import ROOT


def terminal_bytes(args: list[str], columns: int, stream: str) -> str:
    """What ``battle-odds ARGS`` writes on its ``stream`` ("stdout" or "stderr"), a
    terminal 50 rows high and ``columns`` wide, with its escape sequences; the other
    stream is discarded. The command must succeed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    to_terminal = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: follower}
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", *args],
        stdin=follower,
        stdout=to_terminal["stdout"],
        stderr=to_terminal["stderr"],
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    shown = read_terminal(leader, process)
    assert process.wait(timeout=60) == 0, args
    return shown.decode("utf-8", "replace")


def read_terminal(
    leader: int, process: subprocess.Popen[bytes], on_read: Callable[[bytes], None] | None = None
) -> bytes:
    """Everything ``process`` writes on the pseudo-terminal ``leader`` until it closes
    (then closed here); ``on_read`` is given all read so far after each read."""
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 600)
        if not ready:  # ten minutes without a byte: hung
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        shown += chunk
        if on_read is not None:
            on_read(shown)
    os.close(leader)
    return shown


def too_wide(text: str, columns: int) -> list[str]:
    """The lines of ``text`` wider than ``columns``, and a cell cut short. A line of one
    word is not: a file's path longer than the terminal stands whole on its own line (a
    path cut by a newline is two useless halves; a long TMPDIR, a deep clone)."""
    return [
        line for line in text.splitlines() if len(line.rstrip()) > columns and len(line.split()) > 1
    ] + (["\u2026 (a cut cell)"] if "\u2026" in text else [])
