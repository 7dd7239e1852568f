"""A long run says how long it will take within its first seconds: the bar's ETA on a
terminal, one line on stderr in a pipe."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import Source
from simulator.running import progress
from simulator.running.plan import RunPlan
from simulator.running.progress import Estimate, format_seconds, progress_bar, run_battles
from simulator.running.runner import FIRST_CHUNK, chunk_plan
from simulator.scenario.scenario import from_data


def ticking(times: list[float]) -> Any:
    clock: Iterator[float] = iter(times)
    return lambda: next(clock)


def test_chunks_start_small_and_grow_to_the_chunk_size() -> None:
    plan = chunk_plan(100, 200_000, 1 << 17)
    assert plan[0] == (100, FIRST_CHUNK)
    sizes = [count for _, count in plan]
    assert sizes[:4] == [FIRST_CHUNK, 4 * FIRST_CHUNK, 16 * FIRST_CHUNK, 64 * FIRST_CHUNK]
    assert max(sizes) == 1 << 17 and sum(sizes) == 200_000
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(plan))
    assert chunk_plan(0, 5, 3) == [(0, 3), (3, 2)]


def test_estimate_waits_for_a_long_enough_timing() -> None:
    """0.1 s of timing is not trusted (one-off costs); 0.6 s is: 100 battles in it."""
    estimate = Estimate(ticking([0.0, 10.0, 10.1, 10.6]), min_span=0.5)
    assert estimate.left(0, 1_000) is None
    assert estimate.left(8, 1_000) is None
    assert estimate.left(18, 1_000) is None
    assert estimate.left(108, 1_000) == pytest.approx(892 * 0.6 / 100)


def test_estimate_ignores_the_first_piece_of_work() -> None:
    """The first chunk took 10 s (compiling); 32 battles then took 1 s: 960 left, 30 s."""
    estimate = Estimate(ticking([0.0, 10.0, 11.0]))
    assert estimate.left(0, 1_000) is None
    assert estimate.left(8, 1_000) is None
    assert estimate.left(40, 1_000) == pytest.approx(30.0)


def pipe_console() -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, force_terminal=False, width=200), text


def test_pipe_prints_one_line_once_when_the_estimate_is_long() -> None:
    console, text = pipe_console()
    clock = ticking([0.0, 10.0, 11.0, 12.0, 13.0])
    with progress_bar(console, "slow", notice_after=20.0, clock=clock) as report:
        assert report is not None
        for done in (0, 8, 40, 72, 104):
            report(done, 1_000)
    lines = text.getvalue().splitlines()
    assert lines == [
        "battle-odds: slow: about 30 s left for 960 more battles (Ctrl-C stops "
        "with the result so far)"
    ]


def test_pipe_stays_silent_when_the_estimate_is_short() -> None:
    console, text = pipe_console()
    with progress_bar(console, "fast", clock=ticking([0.0, 10.0, 11.0])) as report:
        assert report is not None
        for done in (0, 8, 40):
            report(done, 1_000)  # 30 s left: under the default minute
    assert text.getvalue() == ""


def test_terminal_bar_shows_the_estimate() -> None:
    text = io.StringIO()
    console = Console(file=text, force_terminal=True, width=120)
    with progress_bar(console, "slow", clock=ticking([0.0, 10.0, 11.0])) as report:
        assert report is not None
        for done in (0, 8, 40):
            report(done, 1_000)
    assert "eta 30 s" in text.getvalue()


def test_format_seconds() -> None:
    assert format_seconds(42) == "42 s"
    assert format_seconds(720) == "12 min"
    assert format_seconds(3.5 * 3600) == "3.5 h"
    assert format_seconds(3 * 86400) == "3.0 days"


def slow_scenario() -> simulator.Scenario:
    """Two skirmish titans that stall to their turn limit: about a millisecond a battle."""
    titan = {"attack": 5, "defence": 5, "damage": 5, "health": 1_000_000, "abilities": ["strike"]}
    data = {
        "ruleset": "skirmish",
        "battle": {"attacked": [0, 0], "attacking": [1, 0], "turn_limit": 1_000},
        "unit_types": {"titan": titan},
        "stacks": [
            {"tile": [1, 0], "owner": "a", "units": ["titan"]},
            {"tile": [0, 0], "owner": "b", "units": ["titan"]},
        ],
    }
    return from_data(data, Source("slow"))


def test_slow_run_estimates_from_its_first_small_chunks(monkeypatch: Any) -> None:
    """With the thresholds lowered to 1 ms, a slow run in a pipe tells its time left after
    the first two chunks (40 of 400 battles), long before its end. (The second chunk's 32
    battles of 1,000 turns each take far more than 1 ms on any machine.)"""
    monkeypatch.setattr(progress, "ETA_NOTICE_SECONDS", 0.001)
    monkeypatch.setattr(progress, "TIMED_SECONDS", 0.001)
    console, text = pipe_console()
    slow = slow_scenario()
    result = run_battles(slow, RunPlan.of(slow, 400, 1, interruptible=True), console=console)
    assert result.n == 400
    lines = text.getvalue().splitlines()
    assert len(lines) == 1
    assert f"left for {400 - 5 * FIRST_CHUNK:,} more battles" in lines[0]


def test_cli_in_a_pipe_prints_only_the_result_for_a_short_run() -> None:
    result = CliRunner().invoke(
        app, ["run", "scenarios/skirmish/cavalry_charge.toml", "-n", "2000", "--json"]
    )
    assert result.exit_code == 0
    assert "left for" not in result.output
