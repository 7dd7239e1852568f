"""The benchmarks run end to end: ``benchmarks/run.py --quick`` runs every measurement with
small budgets and writes the report, keeping the notes below its marker; the ruleset and
overhead scripts run on their own. (Speed itself is asserted in the benchmark's report,
never in a timed test.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import more_tables
from tests import ROOT

RULESETS = ("age_of_gods", "blocks", "confrontation", "skirmish")


def run_script(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rates(line: str) -> list[float]:
    return [float(x.strip().replace(",", "").rstrip("x%")) for x in line.split("|")[3:-1]]


# Slow tier (docs/testing.md): 2.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_ruleset_benchmark_measures_every_ruleset_against_its_reference() -> None:
    out = run_script("rulesets.py")
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    for ruleset in RULESETS:
        python, kernel, ratio = rates(rows[ruleset])
        assert python > 0 and kernel > 0
        # The ratio column is the kernel's rate over the reference's, rounded.
        assert ratio == pytest.approx(kernel / python, rel=0.01, abs=1)
    assert re.search(r"slowest against its reference: \w+, [\d,]+x .*: (met|NOT met)", out)


# Slow tier (docs/testing.md): 1.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_overhead_benchmark_compares_simulate_with_the_bare_kernel() -> None:
    out = run_script("overhead.py")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows[1:]] == [
        "olympia: noble, 100 soldier vs noble, 20 knight",
        "medium.toml",
    ]
    for row in rows[1:]:
        kernel, simulate, overhead, in_run = rates(row)
        assert kernel > 0 and simulate > 0 and in_run > -100
        assert overhead == pytest.approx(100 * (kernel / simulate - 1), abs=0.1)
    verdict = r"simulate over bare kernel: at most [+-][\d.]+% in-run .*: (met|NOT met)"
    assert re.search(verdict, out)


def test_the_tables_replace_their_own_block_and_keep_the_rest() -> None:
    notes = "# Benchmarks\n\nsome notes\n"
    first = more_tables.with_tables(notes, ["| a |", "| 1 |"])
    second = more_tables.with_tables(first + "\nlater notes\n", ["| a |", "| 2 |"])
    assert first.startswith(notes.rstrip("\n")) and "| 1 |" in first
    assert second.count(more_tables.BEGIN) == 1 and second.count(more_tables.END) == 1
    assert "| 1 |" not in second and "| 2 |" in second
    assert second.startswith(notes.rstrip("\n")) and second.endswith("later notes\n")


@pytest.mark.slow
def test_latency_benchmark_times_serve_listening_and_its_rulesets_ready() -> None:
    """serve's start as latency.py times it (here on the tree's warm cache: every ruleset
    loaded, not compiled): it listens, says what is loading, answers olympia's example."""
    pytest.importorskip("starlette")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import latency
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    figures = latency.serve_once(latency.battle_odds(), latency.CHILD_ENV)
    assert 0 < figures["listening"] < figures["all ready"]
    assert 0 < figures["listening CPU"] < figures["listening"] + 5
    assert figures["olympia ready"] <= figures["all ready"]
    assert figures["question"] > 0
    assert figures["page"] == "ready" or "olympia: " in figures["page"]


def test_latency_every_scenario_runs_each_bundled_scenario_once() -> None:
    """``--every-scenario``: one cold ``run`` of each bundled scenario, the documented
    first scenarios among them."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import latency
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    chosen = latency.every_scenario()
    bundled = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "scenarios").glob("*/*.toml"))
    assert sorted(args[1] for args in chosen.values()) == bundled
    assert all(args[0] == "run" and len(args) == 2 for args in chosen.values())
    documented = latency.documented()
    assert {n for n in documented if n.startswith("run ")} <= set(chosen)


# The tools that compile kernels of their own (a cold cache, another revision) or time
# every measurement end to end: tens of seconds each, in the slow tier (.ci/run runs it).
@pytest.mark.slow
def test_quick_benchmark_writes_every_table_and_keeps_the_notes(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("old tables\n<!-- notes -->\n\n## Notes kept\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--write", str(doc)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    text = doc.read_text()
    assert "old tables" not in text
    # The notes are kept; the other rulesets' tables (benchmarks/more_tables.py) follow.
    assert "<!-- notes -->\n\n## Notes kept\n" in text
    assert text.count(more_tables.BEGIN) == 1 and "| skirmish |" in text
    assert "Produced by `python benchmarks/run.py --quick --write`" in text
    for heading in ("The yardstick", "olympia kernels", "A whole run of", "Scaling", "Targets"):
        assert f"## {heading}" in text
    # Every table names the processor its figures were measured on.
    assert text.count("Processor: ") >= 3
    # The odds process ran on the chain kernel and its answer held the exact one.
    assert "kernel `chain`" in text
    assert "inside the 99.9% sampling tolerance" in text
    assert "- odds answer within the 99.9% tolerance of the exact 0.999781: met" in text
    for battle in ("benchmark small", "benchmark medium", "benchmark large", "yardstick"):
        assert f"| {battle} |" in text
    assert "| 100 |" in text  # a scaling row


# Slow tier (docs/testing.md): 25.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_serve_latency_benchmark_times_the_warm_server_against_odds() -> None:
    pytest.importorskip("starlette")
    out = run_script("serve_latency.py")
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    for row in ("serve, warm (median)", "serve, warm (slowest)", "`battle-odds odds` (median)"):
        assert float(rows[row].split("|")[2]) > 0
    assert "processor:" in out and "load average" in out


# Slow tier (docs/testing.md): 2.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_latency_benchmark_times_the_warm_commands_against_the_floor() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "latency.py"), "--repeats", "1", "--no-cold"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1].split()[0] for row in rows] == [
        "python",
        "battle-odds",
        "battle-odds",
        "battle-odds",
    ]
    assert "processor" in done.stdout and "load average" in done.stdout


# The tools that compile kernels of their own (a cold cache, another revision) or time
# every measurement end to end: tens of seconds each, in the slow tier (.ci/run runs it).
@pytest.mark.slow
def test_compile_benchmark_lists_a_cold_runs_compiled_functions() -> None:
    """A cold run (its own empty cache) compiles the ruleset's kernel functions once each."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "compile.py"), "confrontation", "-n", "40"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr
    counts = {
        line.split()[3]: int(line.split()[2])
        for line in done.stdout.splitlines()
        if line.strip().split(" ")[-1].startswith("kernels.")
    }
    assert "kernels.confrontation.confrontation_battles" in counts
    assert all(n == 1 for name, n in counts.items() if name.startswith("kernels.")), counts


# The tools that compile kernels of their own (a cold cache, another revision) or time
# every measurement end to end: tens of seconds each, in the slow tier (.ci/run runs it).
@pytest.mark.slow
def test_kernel_versions_compares_a_revisions_kernels_with_the_working_trees() -> None:
    """The same kernels at HEAD and in the working tree (confrontation: the quickest to
    compile) give the same rows, and both are timed."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "kernel_versions.py"),
            "HEAD",
            "scenarios/confrontation/attack.toml",
            "--rounds",
            "1",
            "--battles",
            "500",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr
    row = next(x for x in done.stdout.splitlines() if "attack.toml" in x)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[1].replace(",", "")) > 0 and float(cells[2].replace(",", "")) > 0
    assert cells[-1] == "yes"


def tree_versions(scenarios: str, *options: str) -> subprocess.CompletedProcess[str]:
    """benchmarks/tree_versions.py, this tree against itself (a real run names an older
    checkout), on ``scenarios/confrontation/{scenarios}.toml``, one process a tree."""
    script = str(ROOT / "benchmarks" / "tree_versions.py")
    glob = f"scenarios/confrontation/{scenarios}.toml"
    return subprocess.run(
        [sys.executable, script, str(ROOT), "--scenarios", glob, "--processes", "1", *options],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip


# Slow tier (docs/testing.md): 2.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_tree_versions_times_two_checkouts_and_checks_their_rows(tmp_path: Path) -> None:
    """This tree against itself (a real run names an older checkout): each scenario
    timed in both, its ratio, and the rows found the same; a folder that holds no
    checkout is refused with a line saying so."""
    script = str(ROOT / "benchmarks" / "tree_versions.py")
    done = tree_versions("[ab]*", "--rounds", "1", "--battles", "500")
    assert done.returncode == 0, done.stderr
    assert "# processor " in done.stdout
    rows = [x for x in done.stdout.splitlines() if x.startswith("| scenarios/")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "scenarios/confrontation/attack.toml",
        "scenarios/confrontation/bombard.toml",
    ]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[3].rstrip("x")) > 0 and cells[-1] == "yes"
    refused = subprocess.run(
        [sys.executable, script, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 2 and "holds no battle-odds checkout" in refused.stderr


@pytest.mark.slow
def test_tree_versions_times_the_answer_made_of_the_rows() -> None:
    """``--answer``: the Python side of a run (the kernel's rows named and tallied) in
    both trees, the tallies found the same."""
    done = tree_versions("attack", "--answer", "--rounds", "2", "--battles", "2000")
    assert done.returncode == 0, done.stderr
    assert "# the answer made of a kernel call's rows" in done.stdout
    row = next(x for x in done.stdout.splitlines() if x.startswith("| scenarios/"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[3].rstrip("x")) > 0 and cells[-1] == "yes"


# Slow tier (docs/testing.md): 8.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_tree_versions_under_ctrl_c_prints_the_processes_done_marked_partial() -> None:
    """Ctrl-C to the whole process group, as a terminal sends it, after the first
    processes ended: the table of those, marked partial, and exit 130."""
    import os
    import signal
    import time

    script = str(ROOT / "benchmarks" / "tree_versions.py")
    running = subprocess.Popen(
        [
            sys.executable, script, str(ROOT), "--scenarios",
            "scenarios/confrontation/a*.toml", "--processes", "1000", "--rounds", "1",
            "--battles", "500",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    time.sleep(8)  # a process a tree takes about a second once the kernels are cached
    os.killpg(running.pid, signal.SIGINT)
    out, err = running.communicate(timeout=60)
    assert running.returncode == 130, err
    assert "| scenarios/confrontation/attack.toml |" in out
    assert out.rstrip().endswith("interrupted (Ctrl-C): partial, the processes that ended only")


# The tools that compile kernels of their own (a cold cache, another revision) or time
# every measurement end to end: tens of seconds each, in the slow tier (.ci/run runs it).
@pytest.mark.slow
def test_studies_benchmark_times_both_trees_and_checks_their_answers() -> None:
    """``benchmarks/studies.py --quick`` against this very tree (the older one is a
    checkout beside it in a real run): each small study timed in both, its ratio and
    whether the answers agree printed, with the processor and the load."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "studies.py"),
            "--quick",
            "--no-warm",
            "--together",
            "--base",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("processor: ") for line in lines)
    assert any(line.startswith("load average before: ") for line in lines)
    timed = [line for line in lines if " s -> " in line]
    assert [line.split(":")[0] for line in timed] == [
        "best (quick)",
        "prices (quick)",
        "matrix blocks (quick)",
    ]
    for line in timed:
        said = re.search(r"CPU ([\d.]+) s -> ([\d.]+) s, ([\d.]+)x", line)
        assert said is not None, line
        old, new, ratio = map(float, said.groups())
        assert old > 0 and new > 0
        # The ratio of the seconds before their rounding to a tenth (and itself to 0.01).
        assert (old - 0.05) / (new + 0.05) - 0.005 <= ratio <= (old + 0.05) / (new - 0.05) + 0.005
        # One tree against itself, on one seed: the same answer.
        assert "answers: same" in line, line


# Slow tier (docs/testing.md): 1.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_unknowns_benchmark_times_ranges_against_fixed_inputs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "unknowns_speed.py"),
            *("--battles", "3000", "--rounds", "1", "--only", "blocks,skirmish"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [r.split("|")[1].strip() for r in rows[1:]] == [
        "blocks/field_battle",
        "skirmish/cavalry_charge",
    ]
    # 4 x 3 x 3 x 3 steps; cavalry 8 counts x 5 healths x swordsmen 8 counts.
    assert [r.split("|")[2].strip() for r in rows[1:]] == ["108", "320"]
    for row in rows[1:]:
        battles, fixed, ranged, ratio = rates(row)
        assert battles > 0 and fixed > 0 and ranged > 0
        assert ratio == pytest.approx(ranged / fixed, abs=0.006)
    verdict = r"slowest against fixed: \S+, [\d.]+x; at least 0.5x: (met|NOT met)"
    assert re.search(verdict, done.stdout)


def test_unknowns_benchmark_stages_say_where_a_run_with_ranges_spends_its_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--stages`` on blocks: every combination validated and prepared once, one stacked
    kernel call a chunk and none a combination, the timers taken off afterwards."""
    from benchmarks import unknowns_speed

    validating = unknowns_speed.Mixture.scenario_of
    unknowns_speed.stages(["blocks"], 3_000)
    assert unknowns_speed.Mixture.scenario_of is validating
    rows = {
        cells[1].strip(): cells[2:4]
        for cells in (line.split("|") for line in capsys.readouterr().out.splitlines())
        if len(cells) > 4 and cells[1].strip() not in ("stage", "---")
    }
    calls = {stage: int(n.strip().replace(",", "")) for stage, (_, n) in rows.items()}
    assert calls["preparing each combination's arrays"] == 108
    assert calls["validating each combination's scenario"] >= 108
    assert calls["the stacked kernel calls"] == calls["gathering the columns"] >= 1
    assert "the kernel calls, one a combination (no stacked kernel)" not in calls
    assert float(rows["the whole run with ranges"][0]) > 0


def test_unknowns_benchmark_times_the_battles_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """``--kernels-only``: a row a case, the mixture's battles and a stacked call of the
    fixed scenario's battles each as a ratio to the fixed run's (olympia's open field has
    no stacked call of its own: its fixed run is on the chain kernel)."""
    from benchmarks import unknowns_speed

    unknowns_speed.kernels_only(["blocks", "olympia", "olympia_castle"], 2_000, 1)
    rows = [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| ") and "---" not in line
    ][1:]
    assert [row[0] for row in rows] == [
        "blocks/field_battle",
        "olympia/knights_vs_pikemen",
        "olympia/castle_siege",
    ]
    for name, _, ranges, alone in rows:
        assert float(ranges.rstrip("x")) > 0, name
        assert (alone == "-") == (name == "olympia/knights_vs_pikemen"), name
        assert alone == "-" or float(alone.rstrip("x")) > 0, name


# Slow tier (docs/testing.md): about 5 s (a quick price search, then its cells made six
# times), load average 6, the kernels cached
@pytest.mark.slow
def test_price_cells_benchmark_makes_a_searchs_cells_both_ways() -> None:
    out = run_script("price_cells.py")
    counted = re.search(r"([\d,]+) cells, ([\d,]+) of them filled in", out)
    assert counted is not None, out
    cells, filled = (int(n.replace(",", "")) for n in counted.groups())
    assert 0 < filled < cells
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    for way in ("whole", "filled in"):
        seconds, per_cell = (float(x) for x in rows[way].split("|")[2:-1])
        # Both printed rounded: the seconds to 0.001 s (so per cell to 0.0005 s / cells)
        # and the milliseconds a cell to 0.001 ms.
        rounding = 0.0005 / cells * 1e3 + 0.0005
        assert seconds > 0 and per_cell == pytest.approx(seconds / cells * 1e3, abs=rounding)
