"""Ctrl-C, one contract for every command that runs battles: a real process, SIGINT once
its battles run (the pipe's time-left notice says they do), then the answer so far
marked partial, exit status 130, within seconds."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

import simulator
from tests import ROOT
from tests.processes import started
from tests.terminal import read_terminal

KNIGHTS = str(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
#: 10,000 attackers against 9,000 defenders: about a millisecond a battle.
LARGE = str(ROOT / "benchmarks/scenarios/large.toml")
SWAMP = str(ROOT / "scenarios/olympia/knights_in_swamp.toml")
MANY = "1000000000"
#: From SIGINT to the process's end: the kernel call in progress (a quarter second, a
#: second on a crowded machine), printing the answer, writing a figure, and the exit.
STOPS_WITHIN = 8.0
#: Commands that print no time-left notice in a pipe (searches that count probes, races
#: or price cells): Ctrl-C a second after the kernels' threads start.
# Synchronised on the kernels' threads, not on a time-left notice: a search's total is
# not known in advance, and meta's notice waits for an estimate of its matchups (which
# a busy machine may keep under the notice's minute for long).
QUIET = ("worth", "best", "prices", "meta")


def kernel_threads_run(pid: int) -> bool:
    """The kernels' thread pool has started (numpy's own threads are kept to one)."""
    return len(os.listdir(f"/proc/{pid}/task")) > 1


def interrupt(
    args: list[str],
    twice: bool = False,
    later: float = 0.0,
    terminal: bool = False,
    quiet: bool = False,
) -> tuple[int, str, str, float]:
    """Run ``python -m simulator ARGS``, press Ctrl-C once its battles run (its time-left
    notice says so, or, for a search that counts probes, the kernels' threads have
    started a second ago), ``later`` seconds after that: exit status, stdout, stderr and
    the seconds from Ctrl-C to the end. ``terminal``: Ctrl-C reaches every process of
    the command, as a terminal sends it, not the command's process alone. ``quiet``: a
    command that counts points or probes (as the QUIET ones do)."""
    process = started(args, new_session=terminal)
    quiet = quiet or args[0] in QUIET
    if quiet:
        deadline = time.time() + 120
        while not kernel_threads_run(process.pid) and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
    lines: list[str] = []
    running = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "left for" in line:
                running.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert quiet or running.wait(120), "".join(lines)
    time.sleep(later)

    def press() -> None:
        if terminal:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGINT)

    pressed = time.perf_counter()
    press()
    if twice:
        time.sleep(0.05)
        press()
    assert process.stdout is not None
    out = process.stdout.read()
    process.wait(60)
    seconds = time.perf_counter() - pressed
    reader.join(10)
    return process.returncode, out, "".join(lines), seconds


def check_stopped(code: int, err: str, seconds: float) -> None:
    assert code == 130, err
    assert "Traceback" not in err and "interrupted" in err, err
    assert seconds < STOPS_WITHIN, seconds


CASES = {
    "run": (["run", KNIGHTS, "-n", MANY, "--json"], "battles"),
    "odds": (
        [
            "odds",
            "--attacker",
            "noble, 10 knight",
            "--defender",
            "noble, 30 pikeman",
            "-n",
            MANY,
            "--json",
        ],
        "battles",
    ),
    "compare": (["compare", KNIGHTS, SWAMP, "-n", MANY, "--json"], "battles"),
    "sweep": (["sweep", KNIGHTS, "--vary", "attacker.knight=1..3", "-n", MANY, "--json"], "points"),
    "matrix": (["matrix", "--budget", "20", "-n", "10000000", "--json"], "cells"),
    "meta": (
        ["meta", "--budget", "20", "--types", "knight,pikeman", "-n", "100000000", "--json"],
        "cells",
    ),
    "sensitivity": (["sensitivity", KNIGHTS, "--battles", "100000000", "--json"], "changes"),
    "worth": (
        [
            "worth",
            KNIGHTS,
            "--add",
            "1 knight",
            "--in",
            "soldier",
            "--json",
            "--battles",
            "50000000",
            "--max-battles",
            "100000000",
        ],
        "probes",
    ),
}


# Slow tier (docs/testing.md): 21.7 s for its 8 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("command", list(CASES))
def test_ctrl_c_gives_the_json_answer_so_far(command: str) -> None:
    args, _ = CASES[command]
    code, out, err, seconds = interrupt(args)
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True
    if command in ("run", "odds", "compare"):
        assert 0 < answer["battles"] < int(MANY)
    if command == "worth":
        assert answer["n"] is None and "interrupted after" in answer["answer"]
    if command == "meta":  # a game needs both types' four pairs, far from fought
        assert answer["types"] == [] and answer["left_out"] == ["knight", "pikeman"]


# Slow tier (docs/testing.md): 3.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_retreat_gives_the_rule_so_far_marked_partial() -> None:
    """The simulated best retreat rule of the castle siege (200,000 training battles of
    600 strikes): Ctrl-C while its training battles run gives the rule fitted so far,
    valued on one small block of fresh battles, marked partial. Its kernel calls are
    sized by time: it stopped 2.0 s after Ctrl-C when each recorded 20,000 battles."""
    siege = str(ROOT / "scenarios/olympia/castle_siege.toml")
    code, out, err, seconds = interrupt(
        ["retreat", siege, "--method", "simulated", "--paths", "200000", "--json"], quiet=True
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["paths"] < 200_000
    assert 0 < answer["battles"] <= 2_000 and answer["rule"]
    assert answer["value"]["low"] <= answer["value"]["value"] <= answer["value"]["high"]


def test_ctrl_c_calibrate_scores_the_battles_run_so_far(tmp_path: Path) -> None:
    """Ctrl-C in the first of two real battles: it is scored on the battles it ran, the
    second not at all, the answer marked partial."""
    real = tmp_path / "real.toml"
    battle = f'[[battles]]\nscenario = "{KNIGHTS}"\nwinner = "defender"\n'
    real.write_text(battle + battle.replace("defender", "attacker"))
    code, out, err, seconds = interrupt(["calibrate", str(real), "-n", MANY, "--json"])
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and answer["battles_scored"] == 1
    assert 0 < answer["rows"][0]["battles"] < int(MANY)


# Slow tier (docs/testing.md): 2.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_a_run_with_unknowns_gives_the_mixture_so_far() -> None:
    scouted = str(ROOT / "examples/unknowns/scouted_pike_wall.toml")
    code, out, err, seconds = interrupt(["run", scouted, "-n", MANY, "--json"])
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < int(MANY)
    assert sum(v["battles"] for v in answer["unknowns"][0]["values"]) == answer["battles"]


# Slow tier (docs/testing.md): 2.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_best_stops_its_worker_threads_and_draws_the_answer_so_far(
    tmp_path: Path,
) -> None:
    """28 armies, a first look of a million battles each: Ctrl-C lands in it, on the
    thread pool that runs the armies side by side."""
    figure = tmp_path / "best.svg"
    code, out, err, seconds = interrupt(
        [
            "best",
            KNIGHTS,
            "--budget",
            "6",
            "--types",
            "knight,soldier",
            "--battles",
            "1000000",
            "--max-battles",
            "2000000",
            "--json",
            "-o",
            str(figure),
        ]
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and answer["best"] is None and answer["within"] is None
    assert "interrupted before" in answer["answer"]
    assert "PARTIAL: 0 armies evaluated" in figure.read_text()


# Slow tier (docs/testing.md): 3.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_prices_marks_the_answer_and_writes_no_costs_file(tmp_path: Path) -> None:
    costs, figure = tmp_path / "costs.toml", tmp_path / "prices.svg"
    code, out, err, seconds = interrupt(
        [
            "prices",
            "--types",
            "knight,pikeman",
            "-n",
            "2000000",
            "--json",
            "--write",
            str(costs),
            "-o",
            str(figure),
        ]
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and answer["converged"] is None
    assert answer["prices"]["pikeman"]["low"] is None
    assert not costs.exists() and "not written: the prices are partial" in err
    assert "PARTIAL: " in figure.read_text()


# Slow tier (docs/testing.md): 5.7 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(
    "search",
    [
        ["--precision", "0.00001", "--max-battles", "1000000000"],
        ["--target", "0.999", "--battles", "100000000", "--max-battles", "1000000000"],
    ],
    ids=["precision", "target"],
)
def test_ctrl_c_sweep_to_a_precision_or_a_target(search: list[str]) -> None:
    """The rounds of a point run to a precision and the looks of a target search's
    probe, on the study engine: Ctrl-C ends them with the answer so far."""
    code, out, err, seconds = interrupt(
        ["sweep", KNIGHTS, "--vary", "attacker.knight=1..3", *search, "--json"], quiet=True
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True


# Slow tier (docs/testing.md): 8.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_text_answer_says_partial() -> None:
    code, out, err, seconds = interrupt(
        ["sweep", KNIGHTS, "--vary", "attacker.knight=1..3", "-n", MANY]
    )
    check_stopped(code, err, seconds)
    assert "PARTIAL: interrupted by Ctrl-C" in out


# Slow tier (docs/testing.md): 2.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_plot_writes_a_figure_marked_partial(tmp_path: Path) -> None:
    figure = tmp_path / "odds.svg"
    code, out, err, seconds = interrupt(["plot", KNIGHTS, "-n", MANY, "-o", str(figure)])
    check_stopped(code, err, seconds)
    assert "(PARTIAL)" in out and "PARTIAL: interrupted by Ctrl-C after" in figure.read_text()


# Slow tier (docs/testing.md): 2.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_run_writes_the_rows_so_far(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    slow = tmp_path / "slow.toml"
    slow.write_text(
        (ROOT / "scenarios/olympia/castle_siege.toml")
        .read_text()
        .replace("[battle]\n", '[battle]\nkernel = "strike"\n')
        # Ten times the men: 2,000,000 battles (the most rows kept) must take well over a
        # minute even on a quiet machine, or no time-left notice says the battles run.
        .replace("soldier = 100, swordsman = 20", "soldier = 1000, swordsman = 200")
        .replace("soldier = 60, pikeman = 60", "soldier = 600, pikeman = 600")
    )
    code, out, err, seconds = interrupt(
        ["run", str(slow), "-n", "2000000", "--keep-battles", str(rows), "--json"]
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    written = rows.read_text().splitlines()
    assert answer["partial"] is True and len(written) == answer["battles"] + 1
    assert written[1].startswith("0,")


# Slow tier (docs/testing.md): 4.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_regress_reports_the_scenarios_checked(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "k.toml").write_text(Path(KNIGHTS).read_text())
    baseline = tmp_path / "balance.toml"
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "simulator",
            "regress",
            str(folder),
            "--baseline",
            str(baseline),
            "--update",
            "-n",
            "2000",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    baseline.write_text(baseline.read_text().replace("battles = 2000\n", f"battles = {MANY}\n"))
    junit = tmp_path / "report.xml"
    code, out, err, seconds = interrupt(
        ["regress", str(folder), "--baseline", str(baseline), "--json", "--junit", str(junit)]
    )
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and answer["scenarios"] == {"s/k.toml": "interrupted"}
    assert 'name="partial" value="true"' in junit.read_text()
    # An interrupted --update writes nothing.
    before = baseline.read_bytes()
    code, out, err, seconds = interrupt(
        ["regress", str(folder), "--baseline", str(baseline), "--update", "-n", MANY]
    )
    check_stopped(code, err, seconds)
    assert "not written" in err and baseline.read_bytes() == before


def test_a_second_ctrl_c_exits_at_once() -> None:
    code, _, err, seconds = interrupt(["run", KNIGHTS, "-n", MANY, "--json"], twice=True)
    # Either the handler's exit status 130, or, when the second Ctrl-C lands after the
    # first one's answer restored Python's own handler, death by SIGINT: a shell reports
    # both as 130.
    assert code in (130, -signal.SIGINT) and "Traceback" not in err
    assert seconds < STOPS_WITHIN


# A local Dask cluster started (22 s at load 4): slow tier.
@pytest.mark.slow
def test_ctrl_c_on_a_local_dask_cluster_stops_at_once_with_the_first_battles() -> None:
    """Chunks of a fixed 131,072 battles kept the command waiting for its workers after
    Ctrl-C, for a minute and more on a large battle (they are sized by time now and
    cancelled), and the cluster's workers, which a terminal's Ctrl-C reaches too, each
    printed a traceback. The answer so far is battles 0..n-1, as a local run's is."""
    args = ["run", LARGE, "-n", "10000000", "--seed", "5", "--json", "--scheduler", "local:2"]
    code, out, err, seconds = interrupt(args, later=4.0, terminal=True)
    check_stopped(code, err, seconds)
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < 10_000_000
    scenario = simulator.load_scenario(LARGE)
    local = json.loads(
        json.dumps(
            simulator.simulate(scenario, answer["battles"], seed=5, keep_battles=False).to_dict()
        )
    )
    for key in ("win", "steps", "casualties", "extras", "turn_limit_battles"):
        assert answer[key] == local[key], key


# Slow tier (docs/testing.md): 7.0 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("command", ["odds", "best"])
def test_ctrl_c_while_the_kernels_compile_stops_at_once(tmp_path: Path, command: str) -> None:
    """On a cold cache a kernel's first call compiles it first, for seconds to a minute,
    and a Ctrl-C then waited for the whole compile (12.8 s for blocks' first run): now
    it ends the process at once with one line and status 130 (no battle has run; no half
    answer on stdout). ``best`` compiles on its worker threads, not the main thread."""
    args = {
        "odds": ["odds", "--ruleset", "skirmish", "--attacker", "2 archer", "--defender",
                 "2 swordsman", "--json"],
        "best": ["best", KNIGHTS, "--budget", "6"],
    }[command]  # fmt: skip
    process = started(args, {"NUMBA_CACHE_DIR": str(tmp_path / "cold")})
    assert process.stderr is not None
    lines = []
    for line in process.stderr:  # the compile notice: the first compile has started
        lines.append(line)
        if "compiling the" in line:
            break
    assert lines and "compiling the" in lines[-1], "".join(lines)
    process.send_signal(signal.SIGINT)
    pressed = time.perf_counter()
    out, err = process.communicate(timeout=120)
    seconds = time.perf_counter() - pressed
    assert process.returncode == 130 and out == ""
    assert err.strip().splitlines()[-1] == (
        "battle-odds: interrupted while compiling the kernels: stopped at once"
    )
    assert "Traceback" not in err
    assert seconds < STOPS_WITHIN


# Slow tier (docs/testing.md): 2.5 s, quiet, the kernels cached
@pytest.mark.slow
def test_ctrl_c_while_compiling_in_a_terminal_takes_the_bar_off(tmp_path: Path) -> None:
    """In a terminal the progress bar is drawn with the cursor hidden; exiting at once
    left the bar on screen, the shell's prompt glued to it and the cursor hidden. Now
    the bar is taken off as at a command's end, the cursor shown, then the one line."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", NUMBA_CACHE_DIR=str(tmp_path / "cold"))
    attack = str(ROOT / "scenarios/confrontation/attack.toml")
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", "run", attack],
        cwd=ROOT, stdin=follower, stdout=subprocess.DEVNULL, stderr=follower, env=env,
    )  # fmt: skip
    os.close(follower)
    pressed_at: list[int] = []

    def press_once_compiling(shown: bytes) -> None:
        if not pressed_at and b"compiling the kernel:" in shown:  # the bar counts compiles
            process.send_signal(signal.SIGINT)
            pressed_at.append(len(shown))

    shown = read_terminal(leader, process, press_once_compiling)
    assert process.wait(timeout=60) == 130 and pressed_at
    after = shown[pressed_at[0] :].decode(errors="replace")
    assert "\x1b[?25h" in after  # the cursor shown again
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", after).replace("\r", "")
    lines = [line for line in plain.split("\n") if line.strip()]
    assert lines[-1] == "battle-odds: interrupted while compiling the kernels: stopped at once"
    assert "Traceback" not in plain
