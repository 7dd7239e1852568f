"""Faults, signals and resources, each in a real ``battle-odds`` process: never a traceback
on the terminal, Ctrl-C answered from the first second, the answer printed before what
failed, nothing partial left, and input that would exhaust the machine refused before
any work (docs/scale.md, "What each fault costs")."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

import simulator
from simulator.running.checkpoint import checksum
from tests import ROOT
from tests.processes import started

KNIGHTS = str(ROOT / "scenarios/olympia/knights_vs_pikemen.toml")
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def command(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> Any:
    """``python -m simulator ARGS`` to its end."""
    return subprocess.run(
        [sys.executable, "-m", "simulator", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env or ENV,
        timeout=timeout,
    )


def one_line(stderr: str) -> str:
    """The one line a failure prints (and nothing like a traceback); a first run's notice
    that it compiles a kernel is not the failure's (the test alone on an empty cache)."""
    assert "Traceback" not in stderr, stderr
    lines = [
        line
        for line in stderr.splitlines()
        if line.strip() and not line.startswith("battle-odds: compiling the ")
    ]
    assert len(lines) == 1, stderr
    return lines[0]


def start(*args: str) -> subprocess.Popen[str]:
    return started(list(args), new_session=True)  # Ctrl-C from a terminal reaches the group


def wait_for(condition: Any, seconds: float = 120.0, every: float = 0.01) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(every)


def read_stderr_until(process: subprocess.Popen[str], text: str) -> list[str]:
    """Collect the process's stderr in a thread; returns the list it fills, once a line
    holding ``text`` was read."""
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if text in line:
                seen.set()

    threading.Thread(target=read, daemon=True).start()
    assert seen.wait(180), "".join(lines)
    return lines


def finish(process: subprocess.Popen[str], lines: list[str] | None = None) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=180)
    time.sleep(0.2)  # the stderr reader's last lines
    # The reader thread and communicate() share stderr: each has some of its lines.
    return process.returncode, out, "".join(lines or []) + err


def loaded(pid: int, library: str) -> bool:
    """The process has mapped a shared library whose path holds ``library``."""
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


# --- 5: Ctrl-C from the first second, and the last resort ---------------------------


@pytest.mark.parametrize("library", ["_multiarray_umath", "numba/core/typeconv"])
def test_ctrl_c_while_python_imports_is_one_line_and_status_130(library: str) -> None:
    """Ctrl-C while NumPy or Numba loads (the first second of every command) was a
    30-line KeyboardInterrupt traceback. A machine busy enough to let the command end
    before this test saw the library loaded makes an attempt say nothing (no Ctrl-C was
    sent to a running command): such an attempt is made again, up to five times."""
    for _ in range(5):
        process = start("run", KNIGHTS, "-n", "1000", "--json")
        wait_for(lambda p=process: loaded(p.pid, library) or p.poll() is not None)
        if process.poll() is not None:  # ended before the test looked: nothing shown
            finish(process)
            continue
        os.killpg(process.pid, signal.SIGINT)
        code, out, err = finish(process)
        assert code == 130 and out == "", (code, out[-300:], err[-600:])
        assert one_line(err) == "battle-odds: interrupted"
        return
    pytest.fail("the command ended each time before this test saw it load " + library)


def test_a_failure_no_layer_expected_is_one_line_and_a_saved_traceback(tmp_path: Path) -> None:
    """A bug (here: the table renderer raising) prints one line naming the traceback's
    file, exit status 1; the file holds the traceback for a bug report."""
    program = (
        f"import sys; sys.argv = ['battle-odds', 'run', {KNIGHTS!r}, '-n', '100']\n"
        "import simulator.report.tables as t\n"
        "def broken(*a, **k): raise RuntimeError('a bug in the tables')\n"
        "t.render = broken\n"
        "from simulator.cli import main; main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**ENV, "TMPDIR": str(tmp_path)},
        timeout=300,
    )
    line = one_line(done.stderr)
    assert done.returncode == 1
    assert line.startswith("battle-odds: internal error (RuntimeError: a bug in the tables)")
    saved = Path(line.split("traceback saved in ")[1].split(":")[0])
    assert saved.parent == tmp_path and "Traceback" in saved.read_text()


def test_standard_output_that_refuses_the_answer_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "simulator", "run", KNIGHTS, "-n", "100"],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=300,
        )
    assert done.returncode == 1
    assert "cannot write the answer to standard output (No space left" in one_line(done.stderr)


# --- 10, 11: the environment and names --------------------------------------------------


def test_numba_num_threads_0_is_one_line() -> None:
    done = command("run", KNIGHTS, "-n", "100", env={**ENV, "NUMBA_NUM_THREADS": "0"})
    assert done.returncode == 2 and "NUMBA_NUM_THREADS='0'" in one_line(done.stderr)


def escaping(tmp_path: Path) -> Path:
    """A scenario named with an accent, a window title sequence and 'clear screen'."""
    path = tmp_path / "escapes.toml"
    path.write_text(
        Path(KNIGHTS)
        .read_text()
        .replace(
            'name = "Knights against pikemen"',
            'name = "Ritt\\u00e9r \\u001b]0;pwned\\u0007 \\u001b[2J"',
        )
    )
    return path


# Slow tier (docs/testing.md): 1.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_name_full_of_escapes_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    path = escaping(tmp_path)
    for args in (["validate", str(path)], ["run", str(path), "-n", "100"]):
        done = command(*args)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout
        # The line wraps at the terminal's width, at a space that may fall inside the
        # name (at 200 columns under a long temporary folder it fell after the BEL).
        assert "\\x1b]0;pwned\\x07 \\x1b[2J" in " ".join(done.stdout.split())


def test_an_ascii_terminal_gets_escapes_not_a_traceback(tmp_path: Path) -> None:
    done = command(
        "run", str(escaping(tmp_path)), "-n", "100", env={**ENV, "PYTHONIOENCODING": "ascii"}
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "Ritt\\xe9r \\x1b]0;pwned" in done.stdout


# --- 7, 8: resources bounded and only regular files read ----------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.toml"
    os.mkfifo(path)
    return path


# Slow tier (docs/testing.md): 4.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_fifo_or_a_device_is_refused_before_it_is_opened(fifo: Path, tmp_path: Path) -> None:
    """A FIFO with no writer blocked for ever, deaf to Ctrl-C; /dev/zero read without end."""
    for args, kind in (
        (["run", str(fifo), "-n", "10"], "a FIFO (named pipe), not a regular file"),
        (["validate", "/dev/zero"], "a character device, not a regular file"),
        (["matrix", "--budget", "20", "--costs", str(fifo), "-n", "10"], "a FIFO"),
        (["run", KNIGHTS, "-n", "10", "--checkpoint", str(fifo)], "not a regular file"),
        (["run", KNIGHTS, "-n", "10", "--keep-battles", "/dev/null"], "not a regular file"),
    ):
        done = command(*args, timeout=120)
        assert done.returncode == 2 and kind in one_line(done.stderr), args


# Slow tier (docs/testing.md): 2.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_files_that_would_exhaust_the_machine_are_refused_before_any_work(
    tmp_path: Path,
) -> None:
    many = tmp_path / "many.toml"
    # 20,000 one-man units in 0.7 MB grew to 24 GB once they ran.
    units = "".join("[[attacker.units]]\nmen={soldier=1}\n" for _ in range(20_000))
    many.write_text(
        f'ruleset = "olympia"\n[attacker]\n{units}[defender]\n'
        "[[defender.units]]\nmen={soldier=1}\n"
    )
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 500 + "]" * 500 + "\n")
    big = tmp_path / "big.toml"
    big.write_text(Path(KNIGHTS).read_text() + "#" * (1 << 20) + "\n")
    for path, expected in (
        (many, "more than the 2,000 a side may hold"),
        (deep, "nested deeper than 32 levels"),
        (big, "larger than the 1,048,576 bytes read at most"),
    ):
        started = time.monotonic()
        done = command("run", str(path), "-n", "10", timeout=120)
        assert done.returncode == 2 and expected in one_line(done.stderr)
        assert time.monotonic() - started < 60


def skirmish_file(path: Path, stacks_a_side: int) -> Path:
    """A skirmish of ``stacks_a_side`` stacks of eight swordsmen a side (all of them
    participants: a side of eight times as many units)."""
    stack = '[[stacks]]\ntile = [0, {}]\nowner = "{}"\nunits = ["8 swordsman"]\n'
    path.write_text(
        'ruleset = "skirmish"\n[battle]\nattacked = [0, 0]\nattacking = [0, 1]\n'
        'tile_owner = "blue"\n'
        + stack.format(1, "red") * stacks_a_side
        + stack.format(0, "blue") * stacks_a_side
    )
    return path


# Slow tier (docs/testing.md): 5.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_sides_of_more_units_or_men_than_a_battle_may_hold_are_refused_on_reading(
    tmp_path: Path,
) -> None:
    """24,000 skirmish participants in 0.2 MB passed ``validate``, then took 4.7 GB and
    15 s a battle (the skirmish kernel's table is every participant against every other);
    a million and more olympia men a side, seconds a battle that Ctrl-C cannot cut."""
    many = skirmish_file(tmp_path / "many.toml", 3_000)
    strong = tmp_path / "strong.toml"
    units = "[[attacker.units]]\nmen = { soldier = 100000 }\n" * 11
    strong.write_text(
        f'ruleset = "olympia"\n[attacker]\n{units}[[defender.units]]\nmen = {{ soldier = 1 }}\n'
    )
    for path, key, expected in (
        (many, "stacks", "fields 24,000 units, more than the 1,000 a side may field"),
        (strong, "attacker", "fields 1,100,011 men, more than the 1,000,000 a side may field"),
    ):
        for verb in ("validate", "run"):
            started = time.monotonic()
            done = command(verb, str(path), timeout=120)
            line = one_line(done.stderr)
            assert done.returncode == 2 and expected in line, line
            assert line.startswith(f"error: {path}:") and f": {key}: " in line
            assert time.monotonic() - started < 60


def test_the_bounds_on_a_side_are_far_above_every_bundled_scenario() -> None:
    from simulator import rulesets
    from simulator.scenario.scenario import BUNDLED_MOST, load_scenario

    sides = [
        side
        for path in sorted((ROOT / "scenarios").glob("*/*.toml"))
        for side in (lambda s: rulesets.get(s.ruleset).side_sizes(s.model))(load_scenario(path))
    ]
    assert {s.side for s in sides} == {"attacker", "defender"}
    assert max(s.units for s in sides) == BUNDLED_MOST["units"]
    assert max(s.men for s in sides) == BUNDLED_MOST["men"]
    assert 100 * BUNDLED_MOST["units"] < rulesets.MAX_UNITS_PER_SIDE
    assert 1000 * BUNDLED_MOST["men"] < rulesets.MAX_MEN_PER_SIDE


def test_a_run_that_needs_more_memory_than_the_machine_has_is_refused_before_any_battle(
    tmp_path: Path,
) -> None:
    """The memory a run needs is estimated before its first battle: 2,000,000 kept rows of
    a skirmish of 1,000 participants a side (2,009 columns) are 120 GB."""
    wide = skirmish_file(tmp_path / "wide.toml", 125)
    have = next(
        int(line.split()[1]) << 10
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemAvailable:")
    )
    if have > 100 << 30:
        pytest.skip("this machine has the 120 GB the run needs")
    rows = tmp_path / "rows.csv"
    started = time.monotonic()
    done = command("run", str(wide), "-n", "2000000", "--keep-battles", str(rows))
    line = one_line(done.stderr)
    assert done.returncode == 2 and "this run needs about 120.0 GB" in line
    assert "2,000,000 kept battles of 2,009 columns" in line and "of memory available" in line
    assert time.monotonic() - started < 60 and not rows.exists()


# Slow tier (docs/testing.md): 3.0 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_memory_bound_can_be_set_and_reaches_the_studies(tmp_path: Path) -> None:
    """BATTLE_ODDS_MEMORY (a machine shared with other work) bounds runs and studies alike:
    a call of 2,000 battles of 2,009 columns is 123 MB."""
    wide = skirmish_file(tmp_path / "wide.toml", 125)
    small = {**ENV, "BATTLE_ODDS_MEMORY": "100M"}
    for args in (
        ["run", str(wide), "-n", "2000"],
        ["compare", str(wide), str(wide), "-n", "2000"],
    ):
        done = command(*args, env=small, timeout=120)
        line = one_line(done.stderr)
        assert done.returncode == 2 and "more than the 100 MB of BATTLE_ODDS_MEMORY" in line
    done = command("run", KNIGHTS, "-n", "100", env={**ENV, "BATTLE_ODDS_MEMORY": "lots"})
    assert done.returncode == 2 and "expected a number of bytes" in one_line(done.stderr)


def test_rows_are_kept_unasked_only_where_they_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    from simulator.running.runner import simulate
    from simulator.scenario.scenario import load_scenario

    scenario = load_scenario(KNIGHTS)
    assert simulate(scenario, 20_000, 1).rows is not None
    # A call of 20,000 battles (and the chain kernel's table) fits in 85 MB, its rows too
    # do not.
    monkeypatch.setenv("BATTLE_ODDS_MEMORY", "85M")
    result = simulate(scenario, 20_000, 1)
    assert result.rows is None and result.tally.battles == 20_000


# Slow tier (docs/testing.md): 1.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_run_has_max_total() -> None:
    done = command("run", KNIGHTS, "-n", "100000", "--max-total", "1000")
    assert done.returncode == 2 and "more than --max-total 1,000" in one_line(done.stderr)


# --- 9: checkpoints whose numbers cannot be ---------------------------------------------


# Slow tier (docs/testing.md): 4.5 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(("change", "why"), [(1_000_000, "impossible"), (-100, "impossible")])
def test_a_checkpoint_with_impossible_numbers_is_refused(
    tmp_path: Path, change: int, why: str
) -> None:
    """Casualties beyond the ten knights the attacker brings, or below none, under a
    recomputed (valid) checksum: the file is refused and left as it was."""
    path = tmp_path / "run.ckpt"
    done = command("run", KNIGHTS, "-n", "2000", "--checkpoint", str(path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    data["identity"]["battles"] = 4000  # a run to resume
    column = data["tally"]["columns"]["casualties.attacker.knight"]
    column["values"] = [v + change for v in column["values"]]
    content = {k: data[k] for k in ("identity", "done", "tally")}
    data["checksum"] = checksum(content)
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    done = command("run", KNIGHTS, "-n", "4000", "--checkpoint", str(path), "--json")
    line = one_line(done.stderr)
    assert done.returncode == 2 and why in line and "casualties.attacker.knight" in line
    assert path.read_bytes() == before


def forge(path: Path, edit: Any) -> bytes:
    """Edit a real checkpoint's content with ``edit(data)``, recompute its checksum (so
    that only the numbers can give it away), make it a run to resume; its bytes."""
    data = json.loads(path.read_text())
    data["identity"]["battles"] *= 2  # a run to resume
    edit(data)
    data["checksum"] = checksum({k: data[k] for k in ("identity", "done", "tally")})
    path.write_text(json.dumps(data))
    return path.read_bytes()


RULESET_SCENARIOS = {
    "age_of_gods": "scenarios/age_of_gods/pikemen_vs_knights.toml",
    "blocks": "scenarios/blocks/storm.toml",
    "confrontation": "scenarios/confrontation/open_field.toml",
    "skirmish": "scenarios/skirmish/cavalry_charge.toml",
}


# Slow tier (docs/testing.md): 14.9 s for its 8 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("change", [1_000_000, -100])
@pytest.mark.parametrize("ruleset", sorted(RULESET_SCENARIOS))
def test_every_ruleset_refuses_casualties_its_armies_cannot_lose(
    tmp_path: Path, ruleset: str, change: int
) -> None:
    """Every ruleset declares what its columns can hold: a checkpoint saying the attacker
    lost a million of a type it brought a few of, or fewer than none, is refused."""
    scenario, path = RULESET_SCENARIOS[ruleset], tmp_path / "run.ckpt"
    done = command("run", scenario, "-n", "500", "--checkpoint", str(path), "--json")
    assert done.returncode == 0, done.stderr
    name = next(
        c
        for c in json.loads(path.read_text())["tally"]["columns"]
        if c.startswith("casualties.attacker.")
    )

    def edit(data: dict[str, Any]) -> None:
        column = data["tally"]["columns"][name]
        column["values"] = [v + change for v in column["values"]]

    before = forge(path, edit)
    done = command("run", scenario, "-n", "1000", "--checkpoint", str(path), "--json")
    line = one_line(done.stderr)
    assert done.returncode == 2 and "impossible in this scenario" in line and name in line
    assert path.read_bytes() == before


# Slow tier (docs/testing.md): 5.9 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(
    ("ruleset", "limit"), [("blocks", "..4)"), ("confrontation", "..10)"), ("skirmish", "..")]
)
def test_battles_longer_than_the_turn_limit_are_refused(
    tmp_path: Path, ruleset: str, limit: str
) -> None:
    """A ruleset with a turn limit bounds ``steps``: a battle that lasted longer cannot be."""
    scenario, path = RULESET_SCENARIOS[ruleset], tmp_path / "run.ckpt"
    done = command("run", scenario, "-n", "500", "--checkpoint", str(path), "--json")
    assert done.returncode == 0, done.stderr

    def edit(data: dict[str, Any]) -> None:
        steps = data["tally"]["steps_by_outcome"][0]
        steps["values"][-1] += 1_000_000

    before = forge(path, edit)
    done = command("run", scenario, "-n", "1000", "--checkpoint", str(path), "--json")
    line = one_line(done.stderr)
    assert done.returncode == 2 and "steps of" in line and "impossible" in line
    assert f"(expected 0{limit}" in line
    assert path.read_bytes() == before


# Slow tier (docs/testing.md): 2.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_histogram_that_does_not_count_every_battle_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.ckpt"
    scenario = RULESET_SCENARIOS["blocks"]
    done = command("run", scenario, "-n", "500", "--checkpoint", str(path), "--json")
    assert done.returncode == 0, done.stderr

    def edit(data: dict[str, Any]) -> None:
        data["tally"]["columns"]["steps_lost.attacker"]["counts"][0] += 7

    before = forge(path, edit)
    done = command("run", scenario, "-n", "1000", "--checkpoint", str(path), "--json")
    line = one_line(done.stderr)
    assert done.returncode == 2 and "counts 507 battles, expected 500" in line
    assert path.read_bytes() == before


# --- 11: symbolic links and long names ----------------------------------------------------


# Slow tier (docs/testing.md): 1.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_an_output_through_a_symbolic_link_writes_its_target(tmp_path: Path) -> None:
    target, link = tmp_path / "rows.csv", tmp_path / "link.csv"
    link.symlink_to(target)
    done = command("run", KNIGHTS, "-n", "100", "--keep-battles", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and len(target.read_text().splitlines()) == 101


def test_a_file_name_of_255_characters_is_written(tmp_path: Path) -> None:
    rows = tmp_path / ("r" * 251 + ".csv")
    done = command("run", KNIGHTS, "-n", "100", "--keep-battles", str(rows))
    assert done.returncode == 0, done.stderr
    assert len(rows.read_text().splitlines()) == 101


# --- 6: writes that fail mid-run --------------------------------------------------------


@contextlib.contextmanager
def full_folder(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A folder whose disk is full: a tmpfs of 64 KiB filled up where the machine lets
    this process mount one (root), else a folder where every rename into place fails
    with ENOSPC, injected into the command's process (a wrapper patches ``os.replace``,
    the last step of both writers), because the disk cannot be filled for real here."""
    folder = tmp_path / "full"
    folder.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
            capture_output=True,
        ).returncode
        == 0
        if os.geteuid() == 0
        else False
    )
    if mounted:
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as filler:
            filler.write(b"\0" * (1 << 20))
        try:
            yield folder, [sys.executable, "-m", "simulator"]
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=False)
        return
    injected = (
        "import errno, os, runpy, sys\n"
        "real = os.replace\n"
        "def replace(src, dst, *a, **k):\n"
        f"    if str(dst).startswith({str(folder)!r}):\n"
        "        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
        "    return real(src, dst, *a, **k)\n"
        "os.replace = replace\n"
        "sys.argv[0] = 'battle-odds'\n"
        "runpy.run_module('simulator', run_name='__main__')\n"
    )
    yield folder, [sys.executable, "-c", injected]


def left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "filler")


# Slow tier (docs/testing.md): 4.6 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_full_disk_mid_run_prints_the_answer_then_what_was_not_written(
    tmp_path: Path,
) -> None:
    with full_folder(tmp_path) as (folder, program):
        cases = [
            (
                ["run", KNIGHTS, "-n", "20000", "--json", "--keep-battles", str(folder / "r.csv")],
                "--keep-battles",
            ),
            (
                ["run", KNIGHTS, "-n", "20000", "--json", "--checkpoint", str(folder / "r.ckpt")],
                "--checkpoint",
            ),
            (["plot", KNIGHTS, "-n", "2000", "-o", str(folder / "p.svg")], "-o"),
        ]
        for args, option in cases:
            done = subprocess.run(
                [*program, *args], cwd=ROOT, capture_output=True, text=True, env=ENV, timeout=300
            )
            assert done.returncode == 1, (args, done.stderr)
            line = one_line(done.stderr)
            assert line.startswith(f"error: {option} {folder}") and "not written (No space" in line
            if "--json" in args:
                answer = json.loads(done.stdout)
                assert answer["battles"] == 20000 and answer["partial"] is False
            else:
                # Wrapped at the width like any text: where depends on the folder's length.
                said = " ".join(done.stdout.split())
                assert "Knights against pikemen, 2,000 battles (not written)" in said
            assert left_in(folder) == [], left_in(folder)  # no temporary file, no half file


# Slow tier (docs/testing.md): 2.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_regress_junit_and_update_on_a_full_disk(tmp_path: Path) -> None:
    scenarios = tmp_path / "s"
    scenarios.mkdir()
    (scenarios / "k.toml").write_text(Path(KNIGHTS).read_text())
    baseline = tmp_path / "balance.toml"
    made = command("regress", str(scenarios), "--baseline", str(baseline), "--update", "-n", "2000")
    assert made.returncode == 0, made.stderr
    with full_folder(tmp_path) as (folder, program):
        junit = folder / "report.xml"
        done = subprocess.run(
            [
                *program,
                "regress",
                str(scenarios),
                "--baseline",
                str(baseline),
                "--junit",
                str(junit),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
        )
        assert done.returncode == 1 and "k.toml" in done.stdout  # the report, then the line
        assert f"--junit {junit}: not written (No space" in one_line(done.stderr)
        update = folder / "balance.toml"
        done = subprocess.run(
            [
                *program,
                "regress",
                str(scenarios),
                "--baseline",
                str(update),
                "--update",
                "-n",
                "2000",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
        )
        assert done.returncode == 1
        assert f"--baseline {update}: not written (No space" in one_line(done.stderr)
        assert left_in(folder) == []


# --- 1, 2, 3, 4: Dask ---------------------------------------------------------------------

needs_dask = pytest.mark.skipif(
    find_spec("distributed") is None,
    reason='Dask is not installed (pip install -e ".[distributed]")',
)


def workers_of(pid: int) -> list[int]:
    """The local cluster's worker processes (multiprocessing's spawned children)."""
    found = []
    for task in Path("/proc").iterdir():
        if not task.name.isdigit():
            continue
        try:
            status = (task / "status").read_text()
            cmdline = (task / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(next(x for x in status.splitlines() if x.startswith("PPid:")).split()[1])
        if parent == pid and b"spawn_main" in cmdline:
            found.append(int(task.name))
    return found


# Slow tier (docs/testing.md): 2.8 s, quiet, the kernels cached
@pytest.mark.slow
@needs_dask
def test_ctrl_c_while_a_local_cluster_starts_answers_with_0_battles() -> None:
    """Ctrl-C was ignored while the cluster started (seconds), and the run then went on
    to the end with exit status 0."""
    process = start("run", KNIGHTS, "-n", "100000000", "--json", "--scheduler", "local:2")
    wait_for(lambda: workers_of(process.pid) or process.poll() is not None)
    pressed = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    code, out, err = finish(process)
    assert code == 130 and "Traceback" not in err, err
    answer = json.loads(out)
    assert answer["partial"] is True and answer["battles"] == 0
    assert answer["win"]["attacker"]["p"] is None
    # The answer at once; the process ends once the cluster it was starting is closed.
    assert time.monotonic() - pressed < 60


def run_killing_every_worker(*options: str) -> tuple[int, str, str]:
    """``run`` of a long olympia battle on a local cluster whose workers are killed as
    soon as they appear, to its end."""
    process = start(
        "run", KNIGHTS, "-n", "1000000000", "--seed", "7", *options, "--scheduler", "local:2"
    )
    lines = read_stderr_until(process, "left for")
    while process.poll() is None:
        for pid in workers_of(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
    return finish(process, lines)


# A whole cluster's faults (workers killed until the run gives up, a scheduler killed, a
# connect timeout waited out): tens of seconds each, in the slow tier.
@pytest.mark.slow
@needs_dask
def test_a_partial_answer_says_the_cluster_stopped_it_not_ctrl_c() -> None:
    """The text answer of a run the cluster's failure stopped was marked "interrupted by
    Ctrl-C", which nobody pressed."""
    code, out, err = run_killing_every_worker()
    assert code == 1, err
    words = " ".join(out.split())  # the title may wrap at 80 columns
    assert "[PARTIAL: the Dask cluster failed]" in words and "Ctrl-C" not in words
    assert "Traceback" not in err


# A whole cluster's faults (workers killed until the run gives up, a scheduler killed, a
# connect timeout waited out): tens of seconds each, in the slow tier.
@pytest.mark.slow
@needs_dask
def test_workers_killed_again_and_again_end_in_one_line_and_the_chunks_that_finished() -> None:
    """All workers killed over and over: the run hung for ever, or ended in a
    KilledWorker traceback without the finished chunks."""
    code, out, err = run_killing_every_worker("--json")
    assert code == 1, err
    error = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "Dask" in error[0] and "Traceback" not in err
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < 1_000_000_000
    local = simulator.simulate(
        simulator.load_scenario(KNIGHTS), answer["battles"], seed=7, keep_battles=False
    )
    assert answer["win"] == json.loads(json.dumps(local.to_dict()))["win"]


# A whole cluster's faults (workers killed until the run gives up, a scheduler killed, a
# connect timeout waited out): tens of seconds each, in the slow tier.
@pytest.mark.slow
@needs_dask
def test_a_scheduler_killed_mid_run_ends_in_one_line_and_the_chunks_that_finished(
    tmp_path: Path,
) -> None:
    """A real scheduler killed mid-run: a FuturesCancelledError traceback, and millions
    of finished battles lost."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dask = Path(sys.executable).parent / "dask"
    scheduler = subprocess.Popen(
        [str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [str(dask), "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        process = start(
            "run", KNIGHTS, "-n", "1000000000", "--json", "--scheduler", f"tcp://127.0.0.1:{port}"
        )
        lines = read_stderr_until(process, "left for")
        scheduler.kill()
        code, out, err = finish(process, lines)
    finally:
        for other in (scheduler, worker):
            other.kill()
            other.wait()
    assert code == 1, err
    error = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "Traceback" not in err, err
    answer = json.loads(out)
    assert answer["partial"] is True and 0 < answer["battles"] < 1_000_000_000


@contextlib.contextmanager
def not_a_scheduler(speaks: bool) -> Iterator[str]:
    """A TCP service that is no Dask scheduler: one that speaks first (as SSH does), or
    one that accepts and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                held.append(connection)
                if speaks:
                    connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" * 8)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in held:
            connection.close()


# Slow tier (docs/testing.md): 1.5 s, quiet, the kernels cached
@pytest.mark.slow
@needs_dask
@pytest.mark.parametrize(
    "speaks",
    # The silent one waits out the 10 s connect timeout: slow tier.
    [True, pytest.param(False, marks=pytest.mark.slow)],
    ids=["speaks first", "silent"],
)
def test_an_address_that_is_not_a_scheduler_is_one_line_within_the_timeout(speaks: bool) -> None:
    """A service speaking first gave 'Unable to allocate 3.07 EiB' (a traceback); a
    silent one hung past the 10 s connect timeout."""
    with not_a_scheduler(speaks) as address:
        process = start("run", KNIGHTS, "-n", "100", "--scheduler", address)
        # Timed from the process's start: imports take seconds on a loaded machine.
        code, out, err = finish(process)
    assert code == 2 and out == ""
    assert f"--scheduler {address}: not a Dask scheduler" in one_line(err)


# Slow tier (docs/testing.md): 2.8 s, quiet, the kernels cached
@pytest.mark.slow
@needs_dask
def test_ctrl_c_while_connecting_answers_with_0_battles_in_text() -> None:
    """Ctrl-C while connecting was ignored; an answer of no battles was a KeyError."""
    with not_a_scheduler(False) as address:
        process = start("run", KNIGHTS, "-n", "100", "--scheduler", address)
        wait_for(lambda: _connecting(process.pid), 120)
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)
        code, out, err = finish(process)
    assert code == 130 and "Traceback" not in err, err
    assert "0 battles [PARTIAL" in out and out.count("not yet known") == 3


def _connecting(pid: int) -> bool:
    """The process has a TCP connection open (it is connecting to the scheduler)."""
    try:
        return any(
            os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            for fd in os.listdir(f"/proc/{pid}/fd")
        )
    except OSError:
        return False


# Slow tier (docs/testing.md): 8.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_matrix_stopped_early_shows_its_unfought_pairs_as_not_yet_known() -> None:
    """A cell of 0 battles was 'cannot convert float NaN to integer'."""
    process = start("matrix", "--budget", "20", "-n", "10000000")
    lines = read_stderr_until(process, "left for")
    os.killpg(process.pid, signal.SIGINT)
    code, out, err = finish(process, lines)
    assert code == 130 and "Traceback" not in err, err
    # Compact (80 columns): a "?" and its legend; wide enough (COLUMNS=200): the words in
    # the cells themselves.
    legend = "?: not yet known (the pair fought no battle)" in out
    assert legend or ("not yet" in out and "?" not in out), out
