"""What a person reads, from every command on every bundled ruleset: words, not the
program's identifiers; nothing cut or wider than the terminal; the question restated;
``-n`` taken by every command that runs battles; --help's defaults the functions'.

Most commands are run in-process at COLUMNS=80 (few battles each: the words and the
layout are under test, not the odds); a few are also run as a real process in a
pseudo-terminal of 80 and of 120 columns, where rich measures the terminal itself.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import simulator
from simulator import rulesets
from simulator.cli import app
from simulator.report.question import question
from tests import ROOT
from tests.terminal import terminal_bytes, too_wide

SCENARIOS = ROOT / "scenarios"


#: Per bundled ruleset: a scenario, a second one to compare with it, a --vary, one-line
#: armies (with a setting the question must restate), and two unit types for matrix.
RULESETS: dict[str, dict[str, Any]] = {
    "olympia": {
        "scenario": "olympia/knights_vs_pikemen.toml",
        "other": "olympia/knights_in_swamp.toml",
        "vary": "attacker.knight=9..10",
        "odds": ["--attacker", "noble, 10 soldier", "--defender", "noble, 12 pikeman"],
        "setting": (["--weather", "rain"], "weather rain"),
        "types": "soldier,blessed_soldier,elite_guard",
        "budget": "6",
    },
    "age_of_gods": {
        "scenario": "age_of_gods/pikemen_vs_knights.toml",
        "other": "age_of_gods/swamp_ambush.toml",
        "vary": "battle.terrain=land,swamp",
        "odds": ["--attacker", "noble, 10 hvy_foot", "--defender", "noble, 12 pikeman"],
        "setting": (["--terrain", "forest"], "terrain forest"),
        "types": "lt_foot,hvy_foot",
        "budget": "4",
    },
    "blocks": {
        "scenario": "blocks/field_battle.toml",
        "other": "blocks/field_reserves.toml",
        "vary": "battle.turns=1,2",
        "odds": ["--attacker", "B2:4, A3:3", "--defender", "B3:3, A2:2"],
        "setting": None,
        "types": "A2,C3",
        "budget": "2",
    },
    "confrontation": {
        "scenario": "confrontation/open_field.toml",
        "other": "confrontation/attack.toml",
        "vary": "battle.turns=9,10",
        "odds": ["--attacker", "2 trooper, veteran", "--defender", "spearman, trooper"],
        "setting": (["--ability", "attack"], "ability attack"),
        "types": "trooper,spearman",
        "budget": "4",
    },
    "skirmish": {
        "scenario": "skirmish/cavalry_charge.toml",
        "other": "skirmish/archers_and_healer.toml",
        "vary": "battle.turn_limit=9,10",
        "odds": ["--attacker", "cavalry, 2 swordsman", "--defender", "giant, priest"],
        "setting": None,
        "types": "swordsman,cavalry",
        "budget": "4",
    },
}
FEW = ["-n", "200"]


def path_of(ruleset: str, key: str = "scenario") -> str:
    return str(SCENARIOS / RULESETS[ruleset][key])


def invoke(args: list[str], columns: int = 80) -> str:
    """What the command prints (stdout) in a terminal ``columns`` wide; it must succeed."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (args, result.output)
    return result.stdout


def commands(ruleset: str, tmp_path: Path) -> dict[str, list[str]]:
    """Every command of a reader's session on this ruleset, each with -n where it runs
    battles."""
    info = RULESETS[ruleset]
    scenario = path_of(ruleset)
    found: dict[str, list[str]] = {
        "run": ["run", scenario, *FEW],
        "odds": ["odds", "--ruleset", ruleset, *info["odds"], *FEW],
        "compare": ["compare", scenario, path_of(ruleset, "other"), *FEW],
        "sweep": ["sweep", scenario, "--vary", info["vary"], *FEW],
        "sensitivity": ["sensitivity", scenario, "-n", "100"],
        "plot": ["plot", scenario, "-o", str(tmp_path / "report.png"), *FEW],
        "validate": ["validate", scenario],
        "units": ["units", "--ruleset", ruleset],
        "new": ["new", str(tmp_path / "mine.toml"), "--ruleset", ruleset],
    }
    if info["setting"] is not None:
        found["odds with a setting"] = [*found["odds"], *info["setting"][0]]
    if info["types"] is not None:
        matrix = ["--ruleset", ruleset, "--budget", info["budget"], "--types", info["types"]]
        found["matrix"] = ["matrix", *matrix, "-n", "40"]
        found["meta"] = ["meta", *matrix, "-n", "40", "--bootstrap", "20"]
    if ruleset == "olympia":
        found["exact"] = ["exact", scenario]
        found["worth"] = [
            "worth", scenario, "--add", "1 knight", "--in", "soldier", "--max", "4",
            "-n", "200", "--max-battles", "400",
        ]  # fmt: skip
        found["sweep grid"] = [
            "sweep", scenario, "--vary", "attacker.knight=9..10", "--vary",
            "defender.pikeman=39..41", *FEW,
        ]  # fmt: skip
        found["sweep --target"] = [
            "sweep", scenario, "--vary", "attacker.knight=1..20", "--target", "0.5",
            "-n", "200", "--max-battles", "400",
        ]  # fmt: skip
        found["best"] = [
            "best", scenario, "--budget", "4", "--types", "soldier,knight", "-n", "100",
            "--max-battles", "200",
        ]  # fmt: skip
        found["prices"] = [
            "prices", "--types", "soldier,knight", "--budgets", "4", "-n", "40",
        ]  # fmt: skip
    if ruleset == "skirmish":
        found["replay"] = ["replay", scenario, "-k", "1", *FEW]
    return found


#: A program's identifiers where words belong: dotted columns (casualties.attacker.knight,
#: leader_captured.defender), list indices, TOML's 100_000, Python's literals; and a
#: parenthesis opened after a space inside another, as a name with its gloss put in a
#: title's brackets made it ("Decided after (phases (rounds 1-3, ...))"; a probability's
#: "(P(attacker wins) 0.53, ...)" reads well).
RAW = [
    re.compile(r"\([^()\n]*\s\("),
    re.compile(r"\b\w+\.(?:attacker|defender)\b"),
    re.compile(r"\b(?:attacker|defender)\.\w+"),
    re.compile(r"\w\[\d+\]"),
    re.compile(r"\b\d{1,3}(?:_\d{3})+\b"),
    re.compile(r"\bP\(\w+_\w+"),
    re.compile(r"(?<![\w-])(?:None|True|False|nan)(?![\w-])"),
    re.compile(r"[\[{(]'\w+'"),
]


def raw_identifiers(text: str, ruleset: str) -> list[str]:
    """The identifiers a person should not have to read in ``text``: the patterns above,
    and any snake_case word that is not one of the ruleset's unit type names (the names a
    reader writes in scenarios and --types), a file name or a command-line option."""
    names = set(rulesets.get(ruleset).units()["type"]) | set(rulesets.names())
    cleaned = re.sub(r"--[\w-]+(?:[ =]\S+)?|\S*[/\\]\S*|\S+\.(?:toml|png|json)\b", " ", text)
    found = [m.group(0) for pattern in RAW for m in pattern.finditer(cleaned)]
    for word in re.findall(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", cleaned):
        if word not in names:
            found.append(word)
    return found


# Slow tier (docs/testing.md): 13.4 s for its 5 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_command_speaks_words_and_fits_80_columns(ruleset: str, tmp_path: Path) -> None:
    problems = []
    for name, args in commands(ruleset, tmp_path).items():
        text = invoke(args)
        if name == "units":
            # The unit table is the reference of the names a scenario is written with:
            # its snake_case values (when_weaker) are what the reader copies.
            text = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", "", text)
        problems += [f"{name}: raw {word!r}" for word in raw_identifiers(text, ruleset)]
        problems += [f"{name}: wider than 80: {line!r}" for line in too_wide(text, 80)]
        (tmp_path / "mine.toml").unlink(missing_ok=True)
    assert problems == []


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_answer_restates_its_question(ruleset: str, tmp_path: Path) -> None:
    scenario = simulator.load_scenario(path_of(ruleset))
    asked = " ".join(question(scenario, ruleset=False).split())
    for name in ("run", "sweep", "sensitivity", "compare"):
        text = " ".join(invoke(commands(ruleset, tmp_path)[name]).split())
        assert asked in text, (name, asked, text[:400])
    setting = RULESETS[ruleset]["setting"]
    odds = commands(ruleset, tmp_path)
    plain = " ".join(invoke(odds["odds"]).split())
    assert "attacker " in plain and " against defender " in plain, plain[:300]
    if setting is not None:
        told = " ".join(invoke(odds["odds with a setting"]).split())
        assert setting[1] in told and setting[1] not in plain, (told[:300], plain[:300])


def test_the_question_names_armies_settings_and_ruleset() -> None:
    rain = simulator.load_scenario(SCENARIOS / "olympia" / "archers_in_rain.toml")
    said = question(rain)
    assert said.endswith("(olympia)") and "weather rain" in said
    assert re.match(r"attacker \d+ \w+.* against defender \d+ \w+", said), said
    blocks = question(simulator.load_scenario(path_of("blocks")))
    assert "Richard (4 steps)" in blocks and "(blocks)" in blocks


#: The commands that run battles: each must take -n (its battles, or its first look).
BATTLE_COMMANDS = [
    "run", "odds", "compare", "sweep", "plot", "worth", "sensitivity", "matrix", "meta",
    "prices", "best", "regress", "replay", "calibrate",
]  # fmt: skip


@pytest.mark.parametrize("command", BATTLE_COMMANDS)
def test_every_command_that_runs_battles_takes_n(command: str) -> None:
    click_command = _click_command(command)
    option = next((p for p in click_command.params if "--battles" in p.opts), None)
    assert option is not None and "-n" in option.opts, command


@functools.cache
def _click_group() -> Any:
    """The app as click's group, built once: typer builds every command anew on each
    call (about 80 ms), and the defaults' test looks up each of some 500 options."""
    import typer.main

    return typer.main.get_command(app)


def _click_command(name: str) -> Any:
    return _click_group().get_command(None, name)


def _help_defaults(command: str, option: str) -> list[float]:
    """The numbers --help states as the option's default: each "(default 4,000)" of its
    text, or click's "[default: 2,000]" (the default typer passes to the command)."""
    param = next(p for p in _click_command(command).params if option in p.opts)
    said = re.findall(r"\(default (?:of )?([\d,.]+)\)", param.help or "")
    if said:
        return [float(s.replace(",", "")) for s in said]
    default = param.default
    stated = (
        isinstance(default, int | float)
        and not isinstance(default, bool)
        and getattr(param, "show_default", None) is not False
        and not getattr(param, "is_flag", False)
    )
    return [float(default)] if stated else []


def _default(function: Any, name: str) -> float:
    return float(inspect.signature(function).parameters[name].default)


def _defaults_in_behaviour() -> dict[tuple[str, str], list[float]]:
    """Per command and option, the default that the code which runs uses when the option
    is left out: the study function's, or the constant the running code falls back to."""
    from simulator.report.figures import new_figure
    from simulator.running.bounds import DEFAULT_MAX_TOTAL
    from simulator.running.plan import RunPlan
    from simulator.running.precision import simulate_to_precision
    from simulator.serve import app as serving
    from simulator.serve import server
    from simulator.studies import best, calibrate, matrix, meta, prices, sensitivity, sweep, worth
    from simulator.studies.machinery import retreat_simulated

    precision_cap = _default(simulate_to_precision, "max_battles")
    armies = ["--attacker", "noble, 2 soldier", "--defender", "noble, 2 soldier"]
    odds = json.loads(invoke(["odds", "--ruleset", "olympia", *armies, "--json"]))
    dpi = _default(new_figure, "dpi")
    expected: dict[tuple[str, str], list[float]] = {
        ("run", "--max-battles"): [precision_cap],
        ("run", "--chunk"): [_default(RunPlan.of, "chunk")],
        # odds with neither: what it ran.
        ("odds", "--battles"): [odds["battles"]],
        ("odds", "--seed"): [odds["seed"]],
        ("odds", "--max-battles"): [precision_cap],
        ("plot", "--max-battles"): [precision_cap],
        ("sweep", "--max-battles"): [
            _default(sweep.sweep, "max_battles"),
            _default(sweep.find_target, "max_battles"),
        ],
        ("worth", "--battles"): [_default(worth.worth, "battles")],
        ("worth", "--max-battles"): [_default(worth.worth, "max_battles")],
        ("worth", "--confidence"): [_default(worth.worth, "confidence")],
        ("worth", "--max"): [_default(worth.worth, "max_n")],
        ("sensitivity", "--battles"): [sensitivity.DEFAULT_BATTLES],
        ("sensitivity", "--count-step"): [_default(sensitivity.sensitivity, "count_step")],
        ("sensitivity", "--rating-step"): [_default(sensitivity.sensitivity, "rating_step")],
        ("matrix", "--battles"): [_default(matrix.equal_cost_matrix, "battles")],
        ("matrix", "--seed"): [_default(matrix.equal_cost_matrix, "seed")],
        # None: FIRST_LOOK where every army is raced, else SEARCH_FIRST_LOOK.
        ("best", "--battles"): [best.FIRST_LOOK, best.SEARCH_FIRST_LOOK],
        ("best", "--max-battles"): [_default(best.best, "max_battles")],
        ("best", "--confidence"): [_default(best.best, "confidence")],
        ("best", "--tolerance"): [_default(best.best, "tolerance")],
        ("prices", "--battles"): [_default(prices.fair_prices, "battles")],
        ("prices", "--seed"): [_default(prices.fair_prices, "seed")],
        ("prices", "--confidence"): [_default(prices.fair_prices, "confidence")],
        ("meta", "--battles"): [_default(meta.meta, "battles")],
        ("meta", "--seed"): [_default(meta.meta, "seed")],
        ("meta", "--bootstrap"): [_default(meta.meta, "bootstrap")],
        ("replay", "--battle"): [0.0],  # the first battle of the run
        ("serve", "--port"): [_default(server.serve, "port")],
        ("serve", "--max-seconds"): [serving.MAX_SECONDS],
        ("calibrate", "--battles"): [_default(calibrate.calibrate, "battles")],
        ("calibrate", "--seed"): [_default(calibrate.calibrate, "seed")],
        ("retreat", "--paths"): [retreat_simulated.DEFAULT_PATHS],
        ("retreat", "--battles"): [retreat_simulated.DEFAULT_FRESH],
    }
    for command in ("run", "odds", "regress", "plot", "compare", "sweep", "worth",
                    "sensitivity", "matrix", "best", "prices", "meta"):  # fmt: skip
        expected[(command, "--max-total")] = [DEFAULT_MAX_TOTAL]
    for command in (
        "plot",
        "worth",
        "sensitivity",
        "matrix",
        "best",
        "prices",
        "meta",
        "calibrate",
    ):
        expected[(command, "--dpi")] = [dpi]
    return expected


def test_help_defaults_are_the_functions_defaults() -> None:
    """Every number --help gives as a default, on every command and option, is the one the
    command uses when the option is left out; an option that states a default and is not
    in the table of behaviour defaults fails here too (a new one is added to it)."""
    from simulator.cli.app import COMMANDS

    expected = _defaults_in_behaviour()
    stated = {}
    for command in COMMANDS:
        for param in _click_command(command).params:
            option = max(param.opts, key=len)
            said = _help_defaults(command, option)
            if said:
                stated[(command, option)] = said
    assert sorted(stated) == sorted(expected), set(stated) ^ set(expected)
    wrong = {key: (said, expected[key]) for key, said in stated.items() if said != expected[key]}
    assert wrong == {}


# Slow tier (docs/testing.md): 2.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_help_shows_ranges_and_defaults_as_plain_numbers() -> None:
    from simulator.cli.app import COMMANDS

    for command in COMMANDS:
        text = " ".join(invoke([command, "--help"], 120).split())
        # A seed is a name, not a quantity: its digits stand alone.
        text = re.sub(r"Random seed[^[]*\(default \d+\)|\[default: 20261121\]", "", text)
        unreadable = (
            r"\d_\d{3}|\[0\. |(?<![.\d])\d{4,}\]|\(default \d{4,}\)|\d\.?\d*e[-+]?\d"
            r"|\.0\]|20,261,121"  # the seed as a quantity
        )
        assert not re.search(unreadable, text), (command, re.findall(unreadable, text))
    assert "[0.000000001 to 0.5]" in " ".join(invoke(["regress", "--help"], 120).split())
    assert "[default: 256,000]" in invoke(["best", "--help"], 120)
    assert "[default: 20261121]" in invoke(["matrix", "--help"], 120)


def test_a_one_line_army_error_says_where_in_words() -> None:
    result = CliRunner().invoke(
        app, ["odds", "--attacker", "noble, 200000 knight", "--defender", "noble, 5 soldier"]
    )
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line == (
        "error: --attacker: unit 1, item 1, count: 200000 is out of range: expected 0..100,000"
    ), line


def test_json_labels_stand_beside_the_keys() -> None:
    answer = json.loads(invoke(["run", path_of("olympia"), *FEW, "--json"]))
    knight = answer["casualties"]["attacker.knight"]
    assert knight["label"] == "knights lost by the attacking army" and "mean" in knight
    captured = answer["extras"]["leader_captured.attacker"]
    assert captured["label"] == "attacker's leader captured"


# -- a real terminal -----------------------------------------------------------------


def in_terminal(args: list[str], columns: int) -> str:
    """What the command shows in a pseudo-terminal ``columns`` wide (no COLUMNS: rich
    asks the terminal), escape sequences removed."""
    text = terminal_bytes(args, columns, "stdout").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07", "", text)


# Slow tier (docs/testing.md): 8.0 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
def test_tables_fit_a_real_terminal(columns: int) -> None:
    knights, swamp = path_of("olympia"), path_of("olympia", "other")
    for args in (
        ["run", knights, *FEW],
        ["compare", knights, swamp, *FEW],
        ["matrix", "--budget", "6", "-n", "20"],
    ):
        text = in_terminal(args, columns)
        assert too_wide(text, columns) == [], (args, text)
        if args[0] == "run":
            # The terminal's own width is used: the question (115 characters) is one line
            # at 120 columns and wraps at 80.
            asked = question(simulator.load_scenario(knights), ruleset=False)
            assert (asked in text.splitlines()) == (columns >= len(asked)), text
        assert raw_identifiers(text, "olympia") == [], (args, text)
        if args[0] == "compare":
            # Every number of the outcome table is whole: A, B, B - A and two intervals.
            row = next(line for line in text.splitlines() if "attacker wins" in line)
            assert len(re.findall(r"[-+]?\d+\.\d\d", row)) == 7, row


def test_regress_says_what_a_changed_scenario_held(tmp_path: Path) -> None:
    battle = tmp_path / "battle.toml"
    battle.write_text((SCENARIOS / "olympia" / "knights_vs_pikemen.toml").read_text())
    baseline = tmp_path / "baseline.toml"
    invoke(["regress", str(tmp_path), "--baseline", str(baseline), "--update", "-n", "300"])
    battle.write_text(battle.read_text().replace("knight = 10", "knight = 11"))
    result = CliRunner().invoke(
        app, ["regress", str(tmp_path), "--baseline", str(baseline)], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 1, result.output
    said = " ".join(result.stdout.split())
    assert re.search(
        r"battle\.toml: changed since the baseline \(scenario hash \w+ -> \w+\); not run: the "
        r"baseline's \d+ numbers \(P\(attacker wins\) [\d.]+, P\(defender wins\) [\d.]+, "
        r"P\(draw\) [\d.]+, \.\.\.\)",
        said,
    ), said
    assert raw_identifiers(result.stdout, "olympia") == []
