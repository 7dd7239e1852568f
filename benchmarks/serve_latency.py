"""How long a question takes in ``battle-odds serve``'s warm process, against
``battle-odds odds`` started afresh for the same question.

The server is started once (``--warm olympia``: its kernels loaded, after it listens,
before the first question); each question is then timed from the request to the answer's
last event, over HTTP as the page asks it, with a new seed each time. The same question
by ``battle-odds odds`` pays the interpreter's start, the imports and the kernels'
loading every time.

    python benchmarks/serve_latency.py [--quick] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import command_line, load_average, markdown_table, processor

ROOT = Path(__file__).resolve().parents[1]
#: README's one-line question (five questions, the third).
ARMIES = {"attacker": "noble, 20 soldier, 10 archer@1", "defender": "noble, 30 pikeman"}


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", "serve", "--port", "0", "--warm", "olympia"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if "http://" in line:
            url = line.split()[2]
            wait_until_ready(url)
            return process, url
    raise SystemExit("battle-odds serve ended before it listened")


def _open(url: str, path: str) -> Any:
    """``path`` of the server at ``url`` (the address it printed, with its secret)."""
    base, _, token = url.partition("?token=")
    request = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
    return urllib.request.urlopen(request, timeout=600)


def wait_until_ready(url: str) -> None:
    """Wait for the kernels the server loads after it listens."""
    while True:
        with _open(url, "api/ready") as response:
            states = {r["state"] for r in json.loads(response.read())["rulesets"]}
        if not states & {"waiting", "loading", "compiling"}:
            return
        time.sleep(0.2)


def ask(url: str, params: dict[str, str]) -> tuple[float, int]:
    """Seconds from the request to the answer's last event, and the battles answered."""
    began = time.perf_counter()
    battles = 0
    with _open(url, f"api/run?{urlencode(params)}") as response:
        kind = ""
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind in ("done", "error"):
                data = json.loads(line.removeprefix("data: "))
                if kind == "error":
                    raise SystemExit(data["error"])
                battles = data["battles"]
                break
    return time.perf_counter() - began, battles


def odds_seconds(params: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "simulator",
            "odds",
            "--attacker",
            params["attacker"],
            "--defender",
            params["defender"],
            "-n",
            params["battles"],
            "-s",
            params["seed"],
            "--json",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few, small questions (a test)")
    parser.add_argument("--repeats", type=int, default=20, help="warm questions timed")
    options = parser.parse_args()
    battles = 10_000 if options.quick else 100_000
    repeats = 3 if options.quick else options.repeats
    process, url = start_server()
    try:
        first, _ = ask(url, {**ARMIES, "battles": str(battles), "seed": "1"})
        warm = []
        for seed in range(2, 2 + repeats):
            seconds, answered = ask(url, {**ARMIES, "battles": str(battles), "seed": str(seed)})
            assert answered == battles
            warm.append(seconds)
    finally:
        process.terminate()
        process.wait(timeout=30)
    cold = [
        odds_seconds({**ARMIES, "battles": str(battles), "seed": str(seed)})
        for seed in range(2, 2 + (1 if options.quick else 3))
    ]
    print(
        f'{battles:,} battles of `odds --attacker "{ARMIES["attacker"]}" --defender '
        f'"{ARMIES["defender"]}"`'
    )
    rows = [
        ["serve, first question after start", f"{first:.3f}", "1"],
        ["serve, warm (median)", f"{statistics.median(warm):.3f}", str(len(warm))],
        ["serve, warm (slowest)", f"{max(warm):.3f}", str(len(warm))],
        ["`battle-odds odds` (median)", f"{statistics.median(cold):.3f}", str(len(cold))],
    ]
    print("\n".join(markdown_table(["question", "seconds", "questions"], rows)))
    print(f"\nprocessor: {processor()}; load average before/after: {load_average()}")
    print(f"command: {command_line()}")


if __name__ == "__main__":
    main()
