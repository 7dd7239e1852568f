"""How long a command takes to end after Ctrl-C: the figures of docs/scale.md.

    python benchmarks/interrupt.py [--after S] [--terminal] -- COMMAND ARGS...

Starts ``python -m simulator COMMAND ARGS`` (which must print the pipe's time-left
notice, so a run of more than a minute), waits for the notice and ``--after`` seconds
more, sends SIGINT (``--terminal``: to the whole process group, as a terminal's Ctrl-C
does, cluster workers included) and prints the seconds to the exit, its status, and
whether a traceback was printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import command_line, load_average, processor

ROOT = Path(__file__).parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=float, default=3.0, help="seconds after the notice")
    parser.add_argument("--terminal", action="store_true", help="SIGINT the process group")
    parser.add_argument("command", nargs="+", help="the battle-odds command and arguments")
    args = parser.parse_args()
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", *args.command],
        cwd=ROOT,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stderr is not None
    started = time.perf_counter()
    said = []
    for line in process.stderr:  # the notice comes before any other line of a long run
        said.append(line)
        if "left for" in line:
            break
    else:
        sys.exit("the command ended before its time-left notice: " + "".join(said))
    time.sleep(args.after)
    into = time.perf_counter() - started
    pressed = time.perf_counter()
    if args.terminal:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    said.append(process.stderr.read())
    status = process.wait()
    seconds = time.perf_counter() - pressed
    print(f"command: {command_line()}")
    print(f"processor: {processor()}; load average: {load_average()}")
    print(f"SIGINT {into:.1f} s after the start; exit status {status} {seconds:.2f} s later")
    print("traceback printed: " + ("yes" if "Traceback" in "".join(said) else "no"))


if __name__ == "__main__":
    main()
