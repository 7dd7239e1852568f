"""A long run says how long it will take within its first seconds: the bar's ETA on a
terminal, one line on stderr in a pipe."""

from __future__ import annotations

import io
import itertools
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import Source
from simulator.running import progress
from simulator.running.chunking import ChunkSizes
from simulator.running.front import run_battles
from simulator.running.plan import RunPlan
from simulator.running.progress import (
    Count,
    Estimate,
    bar_lines,
    format_seconds,
    progress_bar,
)
from simulator.running.runner import FIRST_CHUNK, chunk_plan
from simulator.scenario.scenario import from_data
from tests.terminal import terminal_bytes


def ticking(times: list[float]) -> Any:
    clock: Iterator[float] = iter(times)
    return lambda: next(clock)


def test_chunks_start_small_and_grow_to_the_chunk_size() -> None:
    plan = chunk_plan(100, 400_000, 1 << 17)
    assert plan[0] == (100, FIRST_CHUNK)
    sizes = [count for _, count in plan]
    assert sizes[:4] == [FIRST_CHUNK, 4 * FIRST_CHUNK, 16 * FIRST_CHUNK, 64 * FIRST_CHUNK]
    assert max(sizes) == 1 << 17 and sum(sizes) == 400_000
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(plan))
    assert chunk_plan(0, 5, 3) == [(0, 1), (1, 3), (4, 1)]


def test_estimate_waits_for_a_long_enough_timing() -> None:
    """Calls of 10, 30 and 110 battles took 0.1, 0.2 and 0.6 s: 50 ms a call and 5 ms a
    battle. 0.3 s of timing is not trusted; 0.9 s is. The calls to come take 0.25 s (50 ms
    of it fixed: 40 battles), so each of their battles costs 5 ms + 50 ms / 40."""
    estimate = Estimate(ticking([0.0, 10.0, 10.1, 10.3, 10.9]), min_span=0.5)
    assert estimate.left(0, 1_000) is None
    assert estimate.left(8, 1_000) is None
    assert estimate.left(18, 1_000) is None
    assert estimate.left(48, 1_000) is None
    assert estimate.left(158, 1_000) == pytest.approx(842 * (0.005 + 0.05 / 40))


@pytest.mark.parametrize(
    ("fixed", "per_battle"), [(0.05, 1e-5), (0.001, 1e-6), (0.0, 3e-4), (0.25, 1e-6), (0.2, 2.0)]
)
def test_estimate_is_within_a_factor_of_two_from_its_first_answer(
    fixed: float, per_battle: float
) -> None:
    """Calls that cost ``fixed`` seconds plus ``per_battle`` a battle, in the runner's
    chunks (sized by time, growing fourfold): every estimate, from the first, is within a
    factor of two of the time the rest of the run takes. Timed as battles per second
    over the first small calls, the fixed cost of 50 ms a call made a 4 s run look like
    a quarter of an hour."""
    battles = round(20 / per_battle)  # a run of about 20 s
    sizes = ChunkSizes(1 << 17)
    now, done = 0.0, 0
    ends = [(0.0, 0)]
    while done < battles:
        count = sizes.next(battles - done)
        seconds = fixed + per_battle * count
        sizes.timed(count, seconds)
        now, done = now + seconds + (5.0 if done == 0 else 0.0), done + count
        ends.append((now, done))
    estimate = Estimate(ticking([t for t, _ in ends]))
    answers = [(estimate.left(d, battles), now - t) for t, d in ends]
    timed = [(left, actual) for left, actual in answers if left is not None]
    assert timed and len(timed) >= len(answers) // 2
    # The last call's fixed cost is not worth a prediction: compared while a second or
    # more is left.
    assert all(0.5 <= left / actual <= 2 for left, actual in timed if actual >= 1.0), timed
    first_answer = next(i for i, (left, _) in enumerate(answers) if left is not None)
    # Within 2 s of the first call's loading; or of four battles when they are slower; or,
    # when a call's fixed cost is a quarter second (a crowded machine), of the dozen calls
    # that grow until battles show through it.
    allowed = max(2.0, 4 * (fixed + per_battle), 12 * fixed)
    assert ends[first_answer][0] <= 5.0 + allowed + 1e-9


# Slow tier (docs/testing.md): 8.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_estimate_of_a_real_run_is_within_a_factor_of_two_from_its_first_answer() -> None:
    """The runner and its estimate on a real scenario of known rate: knights_vs_pikemen,
    a few microseconds a battle, so that its first calls are mostly fixed cost (timed as
    battles per second over them, a run of 5 s once said 17 min). Its rate is measured
    first, and the run sized to take about 8 s; the first estimate comes within its
    first two seconds, and every one from it is within a factor of two of the time the
    run then takes.

    Time is the process's CPU seconds, on one kernel thread: an estimate assumes the
    machine keeps the speed it measured, and in wall time another process starting on a
    2-core machine mid-run halves that speed (0.36 of the truth, measured so), which no
    estimate foresees; in CPU seconds the run's speed is its own."""
    clock = time.process_time
    scenario = simulator.load_scenario("scenarios/olympia/knights_vs_pikemen.toml")
    simulator.simulate(scenario, 1_000, seed=1, threads=1, keep_battles=False)  # loaded
    began, battles, count = clock(), 0, 10_000
    while clock() - began < 1.0:
        simulator.simulate(scenario, count, seed=2, first=battles, threads=1, keep_battles=False)
        battles, count = battles + count, 2 * count
    rate = battles / (clock() - began)
    estimate = Estimate(clock)
    answers: list[tuple[float, float | None]] = []

    def report(done: int, total: int) -> None:
        answers.append((clock(), estimate.left(done, total)))

    start = clock()
    simulator.simulate(
        scenario, round(8 * rate), seed=3, threads=1, keep_battles=False, progress=report
    )
    end = clock()
    timed = [(left, end - at) for at, left in answers if left is not None]
    first_at = next(at for at, left in answers if left is not None)
    assert first_at - start <= 2.0 and end - first_at >= 4.0, (first_at - start, end - start)
    assert all(0.5 <= left / actual <= 2 for left, actual in timed if actual >= 1.0), timed


def test_estimate_ignores_the_first_piece_of_work() -> None:
    """The first chunk took 10 s (compiling); 32 battles then took 1 s three times: 896
    left, 28 s. One piece alone is not trusted (it may be mostly a call's fixed cost)."""
    estimate = Estimate(ticking([0.0, 10.0, 11.0, 12.0, 13.0]))
    assert estimate.left(0, 1_000) is None
    assert estimate.left(8, 1_000) is None
    assert estimate.left(40, 1_000) is None
    assert estimate.left(72, 1_000) is None
    assert estimate.left(104, 1_000) == pytest.approx(28.0)


def test_estimate_leaves_out_a_piece_in_which_a_kernel_compiled() -> None:
    """A check of several scenarios compiles another kernel as a later one starts: its
    first call (here 32 battles in 20 s, a compile of 19 s) is not timed as battles:
    the 864 left at 1 s for 32 take 27 s (timed with it, about 200 s)."""
    marks = iter([(0.0, 0, False)] * 4 + [(19.0, 40, False)] * 3)
    estimate = Estimate(ticking([0.0, 10.0, 11.0, 31.0, 32.0, 33.0]), compiled=lambda: next(marks))
    assert estimate.left(0, 1_000) is None
    assert estimate.left(8, 1_000) is None  # the first piece: never timed
    assert estimate.left(40, 1_000) is None
    assert estimate.left(72, 1_000) is None  # 20 s, a kernel compiled in it: left out
    assert estimate.left(104, 1_000) is None  # one timed piece of 1 s: not yet
    assert estimate.left(136, 1_000) == pytest.approx(864 / 32)
    # A compile running as the piece ends (another thread's): left out as well.
    running = Estimate(ticking([0.0, 1.0, 2.0, 3.0]), compiled=lambda: (0.0, 0, True))
    for done in (0, 8, 40, 72):
        assert running.left(done, 1_000) is None


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
        "battle-odds: slow: about 28 s left for 896 more battles (Ctrl-C stops "
        "with the result so far)"
    ]


def test_pipe_says_what_a_search_counts_within_seconds() -> None:
    """A search has no time left until enough of it is done (its first value may take
    minutes): in a pipe it says soon after its start what it counts, done of how many in
    all and what it is at, once; a quick one says nothing."""
    console, text = pipe_console()
    with progress_bar(
        console, "worth", "numbers of soldier tried", running_after=0.05, at_most=True
    ) as report:
        report(2, 18, "now 12 soldier: battles up to 8,000 of at most 256,000")
        time.sleep(0.5)
    said = text.getvalue().splitlines()
    assert len(said) == 1 and said[0].startswith(
        "battle-odds: worth: running: 2 of at most 18 numbers of soldier tried (now 12 "
        "soldier: battles up to 8,000 of at most 256,000), 0 s so far (the time left is "
        "not known until more is done; Ctrl-C stops with the answer so far)"
    ), said
    console, text = pipe_console()
    with progress_bar(console, "worth", "numbers of soldier tried", running_after=0.5):
        pass
    time.sleep(0.7)
    assert text.getvalue() == ""


# Slow tier (docs/testing.md): 1.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_pipe_says_an_open_ended_search_runs_and_what_it_counts() -> None:
    console, text = pipe_console()
    with progress_bar(
        console, "prices", "pairs of counts fought", running_after=0.05, open_ended=True
    ) as report:
        report(1_234, 0, "each 4,000 battles")
        time.sleep(0.5)
    assert text.getvalue().startswith(
        "battle-odds: prices: running: 1,234 pairs of counts fought (each 4,000 battles), "
    ), text.getvalue()
    assert "no total is known in advance" in text.getvalue()
    console, text = pipe_console()
    with progress_bar(console, "sweep", "points of the sweep", running_after=0.05, at_most=True):
        time.sleep(0.5)  # no point done yet: it says what it counts all the same
    assert text.getvalue().startswith(
        "battle-odds: sweep: running: counting points of the sweep, none done yet, "
    ), text.getvalue()


def test_pipe_stays_silent_when_the_estimate_is_short() -> None:
    console, text = pipe_console()
    with progress_bar(console, "fast", clock=ticking([0.0, 10.0, 11.0, 12.0, 13.0])) as report:
        assert report is not None
        for done in (0, 8, 40, 72, 104):
            report(done, 1_000)  # 28 s left: under the default minute
    assert text.getvalue() == ""


def test_terminal_bar_shows_the_estimate() -> None:
    text = io.StringIO()
    console = Console(file=text, force_terminal=True, width=120)
    with progress_bar(console, "slow", clock=ticking([0.0, 10.0, 11.0, 12.0, 13.0])) as report:
        assert report is not None
        for done in (0, 8, 40, 72, 104):
            report(done, 1_000)
    assert "104 of 1,000 battles, about 28 s left" in text.getvalue()


@pytest.mark.parametrize("terminal", [True, False])
def test_the_compile_notice_fits_a_terminal_and_stays_one_line_in_a_pipe(
    terminal: bool,
) -> None:
    """The compile notice is longer than 80 columns: a terminal of 80 gets it wrapped
    between words (the terminal itself cut it mid-phrase), a pipe one line to grep."""
    from kernels import blocks
    from simulator.running import compiling

    text = io.StringIO()
    console = Console(file=text, force_terminal=terminal, width=80)
    clock = compiling.compile_clock()
    with progress_bar(console, "field battle") as report:
        assert report is not None
        clock.started(blocks.blocks_battles.py_func)
        clock.ended()
    notice = compiling.compile_notice(blocks.blocks_battles.py_func)
    assert len(notice) > 80
    said = text.getvalue()
    first, second = said[said.index("battle-odds: compiling") :].split("\n")[:2]
    if terminal:
        assert len(first) <= 80 and len(second) <= 80
        assert f"{first} {second}" == notice
    else:
        assert first == notice


BAR_CASES = [
    (Count(), "Knights against pikemen", "time left: estimating"),
    (Count(done=1_234_567, total=10_000_000), "Knights against pikemen", "about 12 min left"),
    (
        Count("numbers of soldier tried", at_most=True, done=2, total=18),
        "worth",
        "up to 3 min left",
    ),
    (
        Count(
            "battles of this race",
            at_most=True,
            done=172_000,
            total=21_504_000,
            detail="a search step's race, look 2 of 8: 412 armies left of 1,234",
        ),
        "best",
        "time left: estimating",
    ),
    (Count("pairs of counts fought", open_ended=True, done=25_000), "prices", "2 min so far"),
]


@pytest.mark.parametrize("width", [80, 120, 50])
@pytest.mark.parametrize(("count", "label", "time_words"), BAR_CASES)
def test_bar_fits_and_never_cuts_a_number(
    count: Count, label: str, time_words: str, width: int
) -> None:
    """The bar fits the terminal (its last column free) and says, whole, what it counts,
    done of how many in all with thousands separators, the time left and the detail."""
    lines = [text for text, _ in bar_lines(label, count, time_words, width)]
    assert all(len(line) <= width - 1 for line in lines), lines
    said = " ".join(" ".join(lines).split())
    if count.done is None:
        assert f"starting: counting {count.unit}" in said
    elif count.open_ended:
        assert f"{count.done:,} {count.unit}" in said
    else:
        most = "at most " if count.at_most else ""
        assert f"{count.done:,} of {most}{count.total:,} {count.unit}" in said, said
    assert time_words in said and " ".join(count.detail.split()) in said
    if width >= 80:  # room for the label, whole or cut at a word
        assert lines[0].startswith(label.split()[0]), lines


KNIGHTS = "scenarios/olympia/knights_vs_pikemen.toml"
#: Commands and what their bar must say, whole: a run's battles, a race's battles of the
#: most it may fight with the look and the armies left, the numbers a search tried.
IN_A_TERMINAL = {
    "run": (["run", KNIGHTS, "-n", "3000000"], [r"\b[\d,]+ of 3,000,000 battles, "]),
    "best": (
        [
            "best",
            KNIGHTS,
            "--budget",
            "4",
            "--types",
            "soldier,knight",
            "-n",
            "100",
            "--max-battles",
            "200",
        ],
        [
            r"\b[\d,]+ of at most [\d,]+ battles of this race, ",
            r"look 1 of 2: 15 armies left of 15",
        ],
    ),
    "worth": (
        [
            "worth",
            KNIGHTS,
            "--add",
            "1 knight",
            "--in",
            "soldier",
            "--max",
            "4",
            # Races of up to a few hundred thousand battles: the search runs long enough
            # (about a second) for the bar to be drawn with its detail line more than once.
            "-n",
            "400000",
            "--max-battles",
            "4000000",
        ],
        [
            r"\b\d+ of at most 10 numbers of soldier tried, ",
            r"now \d+ soldier: battles up to [\d,]+ of at most 4,000,000",
        ],
    ),
}


# Slow tier (docs/testing.md): 21.1 s for its 6 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", sorted(IN_A_TERMINAL))
def test_a_real_terminal_shows_the_whole_count(command: str, columns: int) -> None:
    """In a pseudo-terminal (rich measures it: no COLUMNS), every frame of the bar fits
    and says what it counts, done of how many in all, whole, with thousands separators."""
    args, said = IN_A_TERMINAL[command]
    # Compiled first, out of the terminal: on an empty cache the bar's detail says that
    # the kernel compiles, and a race of milliseconds may end before it is redrawn.
    CliRunner().invoke(app, args)
    frames = bar_frames(args, columns)
    assert all(len(f) <= columns for f in frames), [f for f in frames if len(f) > columns]
    for pattern in said:
        assert any(re.search(pattern, f) for f in frames), (pattern, frames)
    assert not [f for f in frames if re.search(r"\d\u2026|\d{4,} (?:of|battles)", f)], frames


def bar_frames(args: list[str], columns: int) -> list[str]:
    """Every line the command draws on its terminal's stderr (the bar's frames too),
    escape sequences removed."""
    raw = terminal_bytes(args, columns, "stderr")
    # Each frame is drawn after a carriage return or a cleared line.
    pieces = re.split(r"\r|\n|\x1b\[2K|\x1b\[1A", raw)
    plain = [re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", piece) for piece in pieces]
    return [line for line in plain if line.strip()]


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
    """With the thresholds lowered to 1 ms, a slow run in a pipe tells its time left
    after its first few calls of one battle and more, long before its end."""
    monkeypatch.setattr(progress, "ETA_NOTICE_SECONDS", 0.001)
    monkeypatch.setattr(progress, "TIMED_SECONDS", 0.001)
    console, text = pipe_console()
    slow = slow_scenario()
    result = run_battles(slow, RunPlan.of(slow, 2000, 1, interruptible=True), console=console)
    assert result.n == 2000
    # (On an empty Numba cache the run also says first that it compiles the kernel.)
    lines = [x for x in text.getvalue().splitlines() if "compiling the" not in x]
    assert len(lines) == 1
    said = re.search(r"left for ([\d,]+) more battles", lines[0])
    # Before the last call, not after a given one: calls of a few milliseconds time
    # noisily on a busy machine, and the estimate rightly waits for a steadier fit (the
    # tests with a ticking clock above pin down which calls it needs).
    assert said is not None and 0 < int(said[1].replace(",", "")) < 2000


def test_cli_in_a_pipe_prints_only_the_result_for_a_short_run() -> None:
    result = CliRunner().invoke(
        app, ["run", "scenarios/skirmish/cavalry_charge.toml", "-n", "2000", "--json"]
    )
    assert result.exit_code == 0
    assert "left for" not in result.output


@pytest.mark.parametrize(("fixed", "per_battle"), [(0.0005, 3e-4), (0.2, 1e-5), (0.0, 2.0)])
def test_kernel_calls_stay_within_a_second(fixed: float, per_battle: float) -> None:
    """Calls sized by time: none takes much over a second, large battles of 0.3 ms come
    in calls of a quarter second (131,072 of them took 40 s), and on a crowded machine
    (a fifth of a second to wake the threads) three quarters of a call still fight."""
    sizes = ChunkSizes(1 << 17)
    done, calls = 0, []
    while done < 1_000_000 and len(calls) < 200:
        count = sizes.next(1_000_000 - done)
        seconds = fixed + per_battle * count
        sizes.timed(count, seconds)
        calls.append((count, seconds))
        done += count
    assert max(t for _, t in calls[1:]) <= 1.25 * max(1.0, fixed + per_battle)
    settled = calls[-6:-1]  # the last call runs what is left
    if per_battle < 1:
        assert all(0.2 <= t <= 1.0 for _, t in settled), settled
        assert all(per_battle * n >= 0.7 * t for n, t in settled), settled


def test_estimate_is_never_many_times_slower_than_the_pieces_so_far() -> None:
    """Pieces of 1,000, 4,000 and 16,000 battles that took 1.1, 1.25 and 1.85 s fit a
    fixed cost of 1.05 s, above the second a call is sized to: the calls to come came
    out below one battle each, and 1,000 battles left were said to take 17 minutes. The
    pieces so far ran 21,000 battles in 4.2 s; the estimate stays within twice that."""
    estimate = Estimate(ticking([0.0, 1.0, 2.1, 3.35, 5.2]))
    for done in (0, 500, 1_500, 5_500):
        estimate.left(done, 22_500)
    left = estimate.left(21_500, 22_500)
    assert left is not None and left <= 1_000 * 2 * 4.2 / 21_000 + 1e-9


@pytest.mark.parametrize(("asked", "longest"), [(None, 0.35), (1.0, 1.25)])
def test_a_scenario_may_ask_for_calls_of_up_to_a_second(
    asked: float | None, longest: float
) -> None:
    """A mixture of unknowns (``Prepared.call_seconds``) makes a kernel call per
    combination in each call: its calls settle at about a second, so their fixed cost
    is a smaller share; others at a quarter second."""
    sizes = ChunkSizes(1 << 22, seconds=asked)
    done, calls = 0, []
    while len(calls) < 40:
        count = sizes.next(10_000_000 - done)
        seconds = 0.05 + 1e-5 * count
        sizes.timed(count, seconds)
        calls.append(seconds)
        done += count
    settled = calls[-10:]
    assert all(0.7 * longest <= t <= longest for t in settled), settled
