"""Bad command-line options of every command: one line naming the option, exit status 2.

Usage errors found by the option parser (out of range, unknown option, missing or
directory SCENARIO) and errors found later (unknown ``--set`` key, too many threads)
must look alike: ``error: ...`` on one line, never click's boxed usage text, never a
traceback. No case here runs a battle: every one fails before the first chunk.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simulator.cli import app
from simulator.running.plan import MAX_BATTLES

SCENARIO = "scenarios/olympia/knights_vs_pikemen.toml"
SKIRMISH = "scenarios/skirmish/cavalry_charge.toml"
ODDS = ["odds", "--ruleset", "olympia", "--attacker", "noble, 5 knight", "--defender", "noble"]

#: Each command with a valid invocation the bad option is appended to.
COMMANDS = {
    "run": ["run", SCENARIO],
    "odds": ODDS,
    "compare": ["compare", SCENARIO, SCENARIO],
    "sweep": ["sweep", SCENARIO, "--vary", "attacker.knight=1..2"],
    "plot": ["plot", SCENARIO, "-o", "unused.png"],
}
#: Bad values of options every command above takes, and the option the error must name.
COMMON_BAD = [
    (["--battles", "0"], "--battles"),
    (["--battles", "-5"], "--battles"),
    (["--battles", str(10**13)], "--battles"),
    (["--battles", "many"], "--battles"),
    (["--seed", "-1"], "--seed"),
    (["--seed", str(2**70)], "--seed"),
    (["--bogus-option", "1"], "--bogus-option"),
]
#: Bad options of one command.
SPECIFIC_BAD = [
    ("run", ["--threads", "0"], "--threads"),
    ("run", ["--threads", "100000"], "--threads"),
    ("run", ["--chunk", "0"], "--chunk"),
    ("run", ["--precision", "0.01", "--max-battles", "0"], "--max-battles"),
    ("run", ["--precision", "nan"], "--precision"),
    ("odds", ["--threads", "0"], "--threads"),
    ("odds", ["--set", "bogus=1"], "bogus"),
    ("odds", ["--set", "novalue"], "--set"),
    ("odds", ["--attacker-break", "101"], "--attacker-break"),
    ("odds", ["--ruleset", "olympa"], "--ruleset"),
    ("compare", ["--threads", "0"], "--threads"),
    ("sweep", ["--vary", "attacker.knight=5..1"], "attacker.knight"),
    ("plot", ["--dpi", "0"], "--dpi"),
]
#: Commands taking a SCENARIO file as their first argument.
FILE_COMMANDS = {
    "run": ["run"],
    "compare": ["compare", SCENARIO],
    "sweep": ["sweep", "--vary", "attacker.knight=1..2"],
    "plot": ["plot", "-o", "unused.png"],
    "exact": ["exact"],
    "retreat": ["retreat"],
    "validate": ["validate"],
    "replay": ["replay"],
}


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def with_scenario(command: str, scenario: str) -> list[str]:
    prefix = FILE_COMMANDS[command]
    return [*prefix[:1], scenario, *prefix[1:]]


def assert_one_line_error(args: list[str], names: str) -> None:
    code, output = invoke(args)
    lines = output.strip().splitlines()
    assert code == 2, (args, code, output)
    assert len(lines) == 1, (args, output)
    assert lines[0].startswith("error: "), (args, output)
    assert names in lines[0], (args, output)
    assert "Traceback" not in output


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("bad", "names"), COMMON_BAD)
def test_bad_common_option_is_one_line(command: str, bad: list[str], names: str) -> None:
    assert_one_line_error(COMMANDS[command] + bad, names)


@pytest.mark.parametrize(("command", "bad", "names"), SPECIFIC_BAD)
def test_bad_specific_option_is_one_line(command: str, bad: list[str], names: str) -> None:
    assert_one_line_error(COMMANDS[command] + bad, names)


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_directory_as_scenario_is_one_line(command: str, tmp_path: Path) -> None:
    assert_one_line_error(with_scenario(command, str(tmp_path)), "scenario")


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_missing_scenario_file_is_one_line(command: str, tmp_path: Path) -> None:
    assert_one_line_error(with_scenario(command, str(tmp_path / "gone.toml")), "gone.toml")


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_binary_scenario_file_is_one_line(command: str, tmp_path: Path) -> None:
    junk = tmp_path / "junk.toml"
    junk.write_bytes(b"\xff\xfe\x00battle")
    assert_one_line_error(with_scenario(command, str(junk)), "junk.toml")


def test_unreadable_scenario_file_is_one_line(tmp_path: Path) -> None:
    """A file that exists and cannot be read. Permissions do not stop root (as CI runs),
    so the file is a link to this process's own memory map, which any user may open and
    nobody can read from its start (Linux: the read fails with an I/O error); where that
    file is missing, a file without read permission (run as another user than root)."""
    locked = tmp_path / "locked.toml"
    memory = Path("/proc/self/mem")
    if memory.exists():
        locked.symlink_to(memory)
    else:
        locked.write_text(Path(SCENARIO).read_text())
        locked.chmod(0)
        if os.access(locked, os.R_OK):
            pytest.skip("no file this user cannot read: no /proc/self/mem, and root reads any")
    assert_one_line_error(["run", str(locked)], "locked.toml")


def test_replay_bad_battle_index() -> None:
    assert_one_line_error(["replay", SKIRMISH, "--battle", "-1"], "--battle")


def test_regress_bad_options(tmp_path: Path) -> None:
    baseline = str(tmp_path / "b.toml")
    assert_one_line_error(
        ["regress", "scenarios/skirmish", "--baseline", baseline, "--update", "--battles", "0"],
        "--battles",
    )
    assert_one_line_error(
        ["regress", "scenarios/skirmish", "--baseline", baseline, "--level", "2"], "--level"
    )
    assert_one_line_error(["regress", "scenarios/skirmish", "--baseline", "scenarios"], "scenarios")


#: The first rejected value above each option's range (--chunk has none: a chunk is
#: never larger than the run).
TOO_HIGH = {"--battles": MAX_BATTLES + 1, "--seed": 2**63, "--threads": 100_000, "--chunk": None}


@st.composite
def bad_option_values(draw: st.DrawFn) -> tuple[str, str]:
    option = draw(st.sampled_from(sorted(TOO_HIGH)))
    lowest = 0 if option == "--seed" else 1
    candidates = [
        st.integers(max_value=lowest - 1),
        st.sampled_from(["", "nan", "inf", "1e3", "ten", "0x10", "1.5"]),
    ]
    high = TOO_HIGH[option]
    if high is not None:
        candidates.append(st.integers(min_value=high))
    return option, str(draw(st.one_of(candidates)))


# Slow tier (docs/testing.md): 4.4 s, quiet, the kernels cached
@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad=bad_option_values())
def test_bad_option_values_never_run(bad: tuple[str, str]) -> None:
    """No value outside an option's range, and nothing that is not a whole number, gets
    past ``run``'s options: exit 2 with one line naming the option."""
    option, value = bad
    assert_one_line_error(["run", SCENARIO, option, value], option)


PLAIN_CASES: list[tuple[object, dict[str, object], list[object]]] = [
    (str, {}, ["noble, 5 knight", "", " spaced ", "ünïcode", b"bytes"]),
    (bool, {}, [True, False, "true", "no", 1]),
    (list[str], {}, [("a=1", "b=2"), [], ("x",), (b"y",)]),
    (
        int,
        {"min": 1, "max": MAX_BATTLES},
        [
            "100000",
            "1",
            "0",
            "12" * 9,
            "99999999999999999",
            "+5",
            "-3",
            " 12",
            "1_000",
            "1e3",
            "1.5",
            "\uff19",
            "abc",
            "",
            7,
            0,
            True,
        ],
    ),
    (int, {"min": 0, "max": 100}, ["100", "101", "0", "00", "-0"]),
    (int, {"min": 1}, ["5", "0"]),
    (int, {"min": 0, "max": 9, "clamp": True}, ["12", "3"]),
    (float, {"min": 1e-6, "max": 0.5}, ["0.002", "1", "x", "1e-3"]),
]


@pytest.mark.parametrize(("annotation", "limits", "values"), PLAIN_CASES)
def test_plain_option_values_read_as_typer_reads_them(
    annotation: object, limits: dict[str, object], values: list[object]
) -> None:
    """simulator/cli/coercion.py reads plain values without pydantic: each value gives
    what typer's own coercion gives, the same value or the same error message."""
    pytest.importorskip("typer._coercion")
    import typer._coercion as typers
    import typer.core
    from typer.models import OptionInfo

    assert getattr(typer.core.build_runtime_param, "plain_first", False)  # installed
    for value in values:
        descriptor = typers.resolve_type_descriptor(annotation, OptionInfo(**limits))
        answers = []
        for build in (typer.core.build_runtime_param, typers.build_runtime_param):
            try:
                answers.append(("value", build(descriptor)._coerce_value(value, None, None)))
            except Exception as error:  # the message typer prints
                answers.append((type(error).__name__, str(error)))
        plain, typers_own = answers
        assert plain == typers_own, (annotation, limits, value)
        assert type(plain[1]) is type(typers_own[1])


def test_plain_paths_read_as_typer_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path is read without pydantic where it passes its checks, and each value gives
    what typer's own coercion gives (the same path or the same message), for the checks
    the commands ask of their paths and the ones they might."""
    pytest.importorskip("typer._coercion")
    import typer._coercion as typers
    import typer.core
    from typer.models import ArgumentInfo, OptionInfo

    monkeypatch.chdir(tmp_path)
    (tmp_path / "battle.toml").write_text("")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inner.toml").write_text("")
    values: list[object] = [
        "battle.toml", "./battle.toml", "folder//inner.toml", "folder/./inner.toml",
        str(tmp_path / "battle.toml"), "folder", "folder/", "missing.toml", "", "-",
        "a\0b", b"battle.toml", Path("battle.toml"), 5,
    ]  # fmt: skip
    checks: list[dict[str, object]] = [
        {},
        {"exists": True, "dir_okay": False, "readable": True},
        {"exists": True},
        {"file_okay": False},
        {"writable": True},
        {"resolve_path": True, "exists": True},
        {"allow_dash": True},
    ]
    plain = typer.core.build_runtime_param
    for check in checks:
        for info in (ArgumentInfo(**check), OptionInfo(**check)):  # type: ignore[arg-type]
            for annotation, value in [(Path, v) for v in values] + [
                (list[Path], ("battle.toml", "folder")),
                (list[Path], ("battle.toml", "missing.toml")),
                (list[Path], ()),
            ]:
                descriptor = typers.resolve_type_descriptor(annotation, info)
                answers = []
                for build in (plain, typers.build_runtime_param):
                    try:
                        read = build(descriptor)._coerce_value(value, None, None)
                        answers.append(("value", read))
                    except Exception as error:  # the message typer prints
                        answers.append((type(error).__name__, str(error)))
                assert answers[0] == answers[1], (annotation, check, value)
                assert type(answers[0][1]) is type(answers[1][1])


def test_a_run_of_a_scenario_file_imports_no_pydantic() -> None:
    """A scenario file's path is read without typer's pydantic coercion (0.04 s of a warm
    ``run``, and before a cold run's compile notice)."""
    from tests.test_startup import AT_EXIT, query_in_process

    done = query_in_process(AT_EXIT, ["run", SCENARIO, "--battles", "20", "--json"])
    assert '"win"' in done.stdout
    line = next(x for x in done.stderr.splitlines() if x.startswith("loaded:"))
    assert "pydantic" not in line.split()[1:]
