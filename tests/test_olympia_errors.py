"""Bad input gets one clear line (file and line or key, what was expected, the nearest
valid name) and exit status 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator.cli import app

runner = CliRunner()

DEFENDER = "[[defender.units]]\nmen = { soldier = 3 }\n"
BAD_FILES = {
    "malformed TOML": (
        'ruleset = "olympia"\n[[attacker.units]]\nmen = { knight = 3 \n',
        [":3:", "malformed TOML"],
    ),
    "unknown unit type": (
        'ruleset = "olympia"\n[[attacker.units]]\nmen = { knigt = 3 }\n' + DEFENDER,
        [
            ":3:",
            "attacker.units[0].men.knigt",
            "unknown unit type 'knigt'",
            "did you mean 'knight'",
        ],
    ),
    "negative count": (
        'ruleset = "olympia"\n[[attacker.units]]\nmen = { knight = -3 }\n' + DEFENDER,
        [":3:", "men.knight", "-3", "expected 0..100,000"],
    ),
    "break point 150": (
        'ruleset = "olympia"\n[attacker]\nbreak_point = 150\n[[attacker.units]]\n'
        "men = { knight = 3 }\n" + DEFENDER,
        [":3:", "attacker.break_point", "150", "expected 0..100"],
    ),
    "rear row without front row": (
        'ruleset = "olympia"\n[[attacker.units]]\nbehind = 1\nmen = { archer = 3 }\n' + DEFENDER,
        ["attacker.units", "rear row 1", "front row"],
    ),
    "empty side": (
        'ruleset = "olympia"\n[attacker]\nunits = []\n' + DEFENDER,
        [":3:", "attacker.units", "empty side", "[[units]]"],
    ),
    "missing side": ('ruleset = "olympia"\n' + DEFENDER, ["attacker", "is required"]),
    "siege engine at sea": (
        'ruleset = "olympia"\n[battle]\nterrain = "ship"\n[attacker]\n'
        "siege_engines = { catapult = 1 }\n[[attacker.units]]\n"
        "men = { pirate = 3 }\n" + DEFENDER,
        [":5:", "siege_engines.catapult", "not used in combat at sea"],
    ),
    "misspelt key": (
        'ruleset = "olympia"\n[battle]\nterain = "ship"\n[[attacker.units]]\n' + DEFENDER,
        [":3:", "unknown key 'terain'", "did you mean 'terrain'"],
    ),
    "bad value in the third unit": (
        'ruleset = "olympia"\n[[attacker.units]]\nnoble = { health = 50 }\n[[attacker.units]]\n'
        "noble = { health = 50 }\n[[attacker.units]]\nnoble = { health = 0 }\n" + DEFENDER,
        [":7:", "attacker.units[2].noble.health", "expected 1..100"],
    ),
    "misspelt ruleset": ('ruleset = "olimpia"\n', [":1:", "did you mean 'olympia'"]),
    "unknown structure": (
        'ruleset = "olympia"\n[attacker]\nstructure = { kind = "towr", defense = 4 }\n'
        "[[attacker.units]]\n" + DEFENDER,
        ["structure.kind", "did you mean 'tower'"],
    ),
}


def assert_clean_failure(result: object, expected: list[str]) -> str:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    message = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]
    assert message.startswith("error: ") and message.count("\n") == 1, message
    for text in expected:
        assert text in message, (text, message)
    assert result.stdout == ""  # type: ignore[attr-defined]
    return message


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_scenario_file(case: str, tmp_path: Path) -> None:
    text, expected = BAD_FILES[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    for command in (["run", str(path), "-n", "10"], ["validate", str(path)]):
        message = assert_clean_failure(runner.invoke(app, command), expected)
        assert message.startswith(f"error: {path}")


BAD_INLINE = {
    "unknown type": (
        ["--attacker", "noble, 20 soldier, 10 archr@1"],
        ["--attacker", "'10 archr@1'", "unknown unit type 'archr'", "did you mean 'archer'"],
    ),
    "does not parse": (
        ["--attacker", "noble, 20 soldiers, x y z@@"],
        ["--attacker", "cannot parse"],
    ),
    "no noble": (["--attacker", "20 soldier"], ["--attacker", "each unit begins with 'noble'"]),
    "negative count": (["--attacker", "noble, -5 soldier"], ["--attacker", "-5 is out of range"]),
    "bad row": (["--attacker", "noble, 5 archer@back"], ["'@back'", "@rear"]),
    "bad noble option": (["--attacker", "noble(helth=5)"], ["helth", "did you mean 'health'"]),
    "empty army": (["--attacker", " "], ["--attacker", "empty army"]),
    "bad structure": (["--structure", "tower"], ["--structure", "KIND:DEFENSE"]),
    "misspelt ruleset": (["--ruleset", "olympa"], ["--ruleset", "did you mean 'olympia'"]),
    "bad terrain": (["--terrain", "sea"], ["--terrain: 'sea'", "land, swamp, ship"]),
    "bad weather": (["--weather", "wind,snow"], ["'snow'"]),
    "engine at sea": (["--attacker", "noble, 1 catapult", "--terrain", "ship"], ["at sea"]),
    "another ruleset's option": (["--ability", "attack"], ["--ability", "not an olympia option"]),
    "misspelt --set option": (["--set", "terain=ship"], ["--terain", "did you mean 'terrain'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_INLINE))
def test_bad_inline_army(case: str) -> None:
    args, expected = BAD_INLINE[case]
    command = [
        "odds",
        "--attacker",
        "noble, 5 soldier",
        "--defender",
        "noble, 5 pikeman",
        "-n",
        "10",
    ]
    assert_clean_failure(runner.invoke(app, command + args), expected)


@pytest.mark.parametrize("option", ["--attacker-break", "--defender-break"])
def test_break_point_out_of_range_on_the_command_line(option: str) -> None:
    result = runner.invoke(
        app, ["odds", "--attacker", "noble", "--defender", "noble", option, "150"]
    )
    assert result.exit_code == 2
    assert option in result.output and "Traceback" not in result.output


def test_missing_file_is_a_usage_error() -> None:
    result = runner.invoke(app, ["run", "no/such/file.toml"])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output
