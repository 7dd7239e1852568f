"""A bad value in the caller's words: a Python caller reads the parameter's name
(``confidence=1.5``), the command line the flag (``--confidence 1.5``) and exit status 2.
The library raises one error (:class:`simulator.errors.ParameterError`); the command
line's one table (:data:`simulator.cli.options.FLAGS`) turns its names into flags."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli.app import app
from simulator.cli.options import FLAGS, error_words, flag_of
from simulator.errors import BattleOddsError, ParameterError, literal

SCENARIO = "scenarios/olympia/knights_vs_pikemen.toml"


def _worth(knights_vs_pikemen: simulator.Scenario, **given: Any) -> Any:
    return simulator.worth(knights_vs_pikemen, **{"add": "1 knight", "in_": "soldier", **given})


#: (the Python call, what its error says; the command's arguments, what it says).
CASES: list[tuple[Callable[[simulator.Scenario], Any], str, list[str], str]] = [
    (
        lambda s: _worth(s, confidence=1.5),
        "confidence=1.5: expected a probability",
        ["worth", SCENARIO, "--add", "1 knight", "--in", "soldier", "--confidence", "1.5"],
        "--confidence 1.5: expected a probability",
    ),
    (
        lambda s: _worth(s, add="knight"),
        "add='knight': expected a count of at least 1",
        ["worth", SCENARIO, "--add", "knight", "--in", "soldier"],
        "--add 'knight': expected a count of at least 1",
    ),
    (
        lambda s: _worth(s, in_="soldiex"),
        "in_: unknown unit type 'soldiex'",
        ["worth", SCENARIO, "--add", "1 knight", "--in", "soldiex"],
        "--in: unknown unit type 'soldiex'",
    ),
    (
        lambda s: _worth(s, battles=10, max_battles=5),
        "battles=10 / max_battles=5: expected 1 <= battles <= max battles",
        [
            "worth",
            SCENARIO,
            "--add",
            "1 knight",
            "--in",
            "soldier",
            "-n",
            "10",
            "--max-battles",
            "5",
        ],
        "--battles 10 / --max-battles 5: expected 1 <= battles <= max battles",
    ),
    (
        lambda s: simulator.sweep(s, ["attacker.knight=1..3"], outcome="nobody"),
        "outcome=nobody: expected one of",
        ["sweep", SCENARIO, "--vary", "attacker.knight=1..3", "--outcome", "nobody"],
        "--outcome nobody: expected one of",
    ),
    (
        lambda s: simulator.sweep(s, ["attacker.knight"]),
        "vary='attacker.knight': expected PATH=LOW..HIGH",
        ["sweep", SCENARIO, "--vary", "attacker.knight"],
        "--vary 'attacker.knight': expected PATH=LOW..HIGH",
    ),
    (
        lambda s: simulator.sensitivity(s, count_step=0),
        "count_step=0: expected at least 1",
        ["sensitivity", SCENARIO, "--count-step", "0"],
        "--count-step 0: expected at least 1",
    ),
    (
        lambda s: simulator.sensitivity(s, side="middle"),
        "side=middle: expected attacker or defender",
        ["sensitivity", SCENARIO, "--side", "middle"],
        "--side middle: expected attacker or defender",
    ),
    (
        lambda s: simulator.best(s, budget=20, tolerance=2),
        "tolerance=2: expected a probability above 0",
        ["best", SCENARIO, "--budget", "20", "--tolerance", "2"],
        "--tolerance 2.0: expected a probability above 0",
    ),
    (
        lambda s: simulator.best(s, budget=20, types="knight,soldier", caps="archer=3"),
        "caps=archer: not a type offered (types=knight,soldier)",
        ["best", SCENARIO, "--budget", "20", "--types", "knight,soldier", "--max", "archer=3"],
        "--max archer: not a type offered (--types knight,soldier)",
    ),
    (
        lambda s: simulator.matrix("olympa", budget=20),
        "ruleset: unknown ruleset 'olympa' (did you mean 'olympia'?)",
        ["matrix", "--ruleset", "olympa", "--budget", "20"],
        "--ruleset: unknown ruleset 'olympa' (did you mean 'olympia'?)",
    ),
    (
        lambda s: simulator.matrix("olympia", budget=20, settings={"strike_order": "sideways"}),
        "settings=strike_order: ",
        ["matrix", "--ruleset", "olympia", "--budget", "20", "--set", "strike_order=sideways"],
        "--set strike_order: ",
    ),
    (
        lambda s: simulator.meta("olympia", budget=20, types="knight"),
        "types: a game needs at least two types",
        ["meta", "--ruleset", "olympia", "--budget", "20", "--types", "knight"],
        "--types: a game needs at least two types",
    ),
    (
        lambda s: simulator.prices("olympia", types="knight,pikeman", base="archer"),
        "base=archer: not one of the types offered",
        ["prices", "--ruleset", "olympia", "--types", "knight,pikeman", "--base", "archer"],
        "--base archer: not one of the types offered",
    ),
    (
        lambda s: simulator.prices("olympia", budgets="10,x"),
        "budgets='x': expected numbers separated by commas",
        ["prices", "--ruleset", "olympia", "--budgets", "10,x"],
        "--budgets 'x': expected numbers separated by commas",
    ),
    (
        lambda s: simulator.simulate(s, 1_000, threads=999),
        "threads=999: expected 1..",
        ["run", SCENARIO, "-n", "1000", "--threads", "999"],
        "--threads 999: expected 1..",
    ),
    (
        lambda s: simulator.sweep(s, ["attacker.knight=1..2000"], battles=10**8),
        "more than max_total 10,000,000,000: fewer values or battles, or raise max_total",
        ["sweep", SCENARIO, "--vary", "attacker.knight=1..2000", "-n", "100000000"],
        "more than --max-total 10,000,000,000: fewer values or battles, or raise --max-total",
    ),
]


@pytest.mark.parametrize(("call", "said", "args", "flagged"), CASES, ids=lambda c: None)
def test_a_python_caller_reads_the_parameter_and_the_command_line_the_flag(
    knights_vs_pikemen: simulator.Scenario,
    call: Callable[[simulator.Scenario], Any],
    said: str,
    args: list[str],
    flagged: str,
) -> None:
    with pytest.raises(simulator.ParameterError) as raised:  # a BattleOddsError too
        call(knights_vs_pikemen)
    assert said in str(raised.value)
    assert "--" not in str(raised.value)  # no flag of a command the caller did not run
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output.count("error:") == 1
    assert flagged in " ".join(result.output.split())


def test_a_bad_checkpoint_says_what_to_do_in_the_callers_words(
    knights_vs_pikemen: simulator.Scenario, tmp_path: Any
) -> None:
    damaged = tmp_path / "run.ckpt"
    damaged.write_text("{")
    with pytest.raises(BattleOddsError) as raised:
        simulator.simulate(knights_vs_pikemen, 1_000, checkpoint=damaged)
    assert str(raised.value).endswith("not JSON); delete it or choose another checkpoint file")
    result = CliRunner().invoke(app, ["run", SCENARIO, "-n", "1000", "--checkpoint", str(damaged)])
    assert result.exit_code == 2
    assert "delete it or choose another --checkpoint file" in " ".join(result.output.split())


def test_the_command_lines_table_names_each_flag() -> None:
    assert flag_of("max_battles") == "--max-battles"
    assert flag_of("max_n") == "--max" and flag_of("in_") == "--in"
    assert flag_of("executor") == "--scheduler" and flag_of("settings") == "--set"
    # Every irregular flag of the table is a flag some command has.
    commands = " ".join(
        str(param.opts) for command in app.registered_commands for param in _params(command)
    )
    for flag in FLAGS.values():
        assert f"'{flag}'" in commands, flag


def _params(command: Any) -> list[Any]:
    import typer.main

    return typer.main.get_command_from_info(
        command, pretty_exceptions_short=True, rich_markup_mode=None
    ).params


def test_an_error_names_other_parameters_and_keeps_a_users_braces() -> None:
    error = ParameterError(
        "battles",
        None,
        "{battles=}10 / {max_battles=}5 in " + literal("{seed}/out.json") + ": {x",
        whole=True,
    )
    assert str(error) == "battles=10 / max_battles=5 in {seed}/out.json: {x"
    assert error_words(error) == "--battles 10 / --max-battles 5 in {seed}/out.json: {x"
    assert error_words(BattleOddsError("plain --words")) == "plain --words"


def test_an_error_of_a_helper_told_the_parameter_names_it() -> None:
    named = ParameterError.naming("checkpoint", BattleOddsError("checkpoint out: is a folder"))
    assert (str(named), named.words(flag_of)) == (
        "checkpoint=out: is a folder",
        "--checkpoint out: is a folder",
    )
    other = ParameterError.naming("ruleset", BattleOddsError("rulesets {x}: broken"))
    assert str(other) == other.words(flag_of) == "rulesets {x}: broken"


def test_an_error_crosses_a_process_whole() -> None:
    """A Dask worker's error is pickled: it comes back with its parts, still in the
    caller's words on each side."""
    error = ParameterError("max_total", 5, "expected {battles} or more")
    back = pickle.loads(pickle.dumps(error))
    assert isinstance(back, ParameterError)
    assert (str(back), back.words(flag_of)) == (
        "max_total=5: expected battles or more",
        "--max-total 5: expected --battles or more",
    )
