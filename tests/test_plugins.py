"""Ruleset discovery: entry points and the built-in folder, and what a broken plugin does.

The installed entry points are replaced by fakes (``entry_point_registrations``), one
breakage each: the broken plugin is named in one line when asked for and in a warning
when rulesets are listed, and every other ruleset keeps working."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import simulator
from simulator import rulesets
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.rulesets import Prepared, Registration, Ruleset
from simulator.rulesets.olympia import RULESET as OLYMPIA

runner = CliRunner()
BUILTINS = ("age_of_gods", "blocks", "confrontation", "olympia", "skirmish")
ODDS = ["odds", "--attacker", "noble, 5 soldier", "--defender", "noble, 3 soldier"]


def plugin(name: str, load: Callable[[], Any], dist: str = "bad-plugin 1.0") -> Registration:
    return Registration(name, f"{name}_plugin:RULESET", dist, load)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Replace the installed entry points by the given registrations."""

    def install(*registrations: Registration) -> None:
        monkeypatch.setattr(rulesets, "entry_point_registrations", lambda: list(registrations))
        rulesets.refresh()

    yield install
    monkeypatch.undo()
    rulesets.refresh()


def failing_import() -> Any:
    raise ModuleNotFoundError("No module named 'numpyy'")


class NoUnits(Ruleset):
    name = "nounits"

    def validate(self, data: Any, source: Any) -> Any:
        return data

    def prepare(self, model: Any) -> Any:
        raise AssertionError("never prepared")

    def inline(self, query: Any) -> dict[str, Any]:
        return {}


def instantiate_without_units() -> Any:
    return NoUnits()  # type: ignore[abstract]


BROKEN = {
    "import error": (
        plugin("dice", failing_import),
        "failed to import: ModuleNotFoundError: No module named 'numpyy'",
    ),
    "abstract method at import": (
        plugin("nounits", instantiate_without_units),
        "failed to import: TypeError: Can't instantiate abstract class NoUnits",
    ),
    "class missing a method": (
        plugin("nounits", lambda: NoUnits),
        "NoUnits does not implement units",
    ),
    "not a Ruleset": (plugin("dice", lambda: object()), "RULESET is object, not a Ruleset"),
    "module without RULESET": (
        plugin("dice", lambda: ModuleType("dice_plugin")),
        "module dice_plugin has no RULESET",
    ),
    "name differs": (plugin("dice", lambda: OLYMPIA), "its RULESET is named 'olympia', not 'dice'"),
}


def test_built_ins_are_registered_as_entry_points_and_found_in_the_folder() -> None:
    assert set(BUILTINS) <= set(rulesets.names())
    folder = {r.name for r in rulesets.folder_registrations()}
    assert folder == set(BUILTINS)
    installed = {r.name: r.value for r in rulesets.entry_point_registrations()}
    for name in BUILTINS:
        assert installed.get(name) == f"simulator.rulesets.{name}:RULESET", (
            "reinstall battle-odds (pip install -e .) to register the built-in entry points"
        )


def test_a_checkout_without_entry_points_still_finds_the_built_ins(
    installed: Callable[..., None],
) -> None:
    installed()
    assert rulesets.names() == BUILTINS
    assert rulesets.get("olympia") is OLYMPIA


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_plugin_is_named_in_one_line_and_breaks_nothing_else(
    case: str, installed: Callable[..., None]
) -> None:
    registration, reason = BROKEN[case]
    installed(registration)
    with pytest.raises(BattleOddsError) as raised:
        rulesets.get(registration.name, "--ruleset")
    message = str(raised.value)
    assert "\n" not in message
    name = registration.name
    assert message.startswith(f"--ruleset: plugin bad-plugin 1.0 (entry point '{name} = ")
    assert f"in {rulesets.GROUP})" in message and reason in message
    # Listed (it is installed), but the others load and run.
    assert registration.name in rulesets.names()
    assert registration.name not in rulesets.available()
    assert set(BUILTINS) <= set(rulesets.available())
    assert [p for p in rulesets.problems() if reason in p]
    scenario = simulator.inline_scenario("olympia", "noble, 3 knight", "noble, 4 pikeman")
    assert simulator.simulate(scenario, 200, seed=1).n == 200


def test_the_command_line_names_the_broken_plugin(
    installed: Callable[..., None], tmp_path: Path
) -> None:
    registration, reason = BROKEN["import error"]
    installed(registration)
    odds = runner.invoke(app, ["odds", "--ruleset", "dice", "--attacker", "3", "--defender", "2"])
    assert odds.exit_code == 2 and "Traceback" not in odds.output
    assert odds.stderr.count("\n") == 1 and reason in odds.stderr
    assert "bad-plugin 1.0" in odds.stderr
    path = tmp_path / "dice.toml"
    path.write_text('ruleset = "dice"\n')
    validate = runner.invoke(app, ["validate", str(path)])
    assert validate.exit_code == 2 and validate.stderr.count("\n") == 1
    assert "dice.toml" in validate.stderr and reason in validate.stderr
    listing = runner.invoke(app, ["units"])
    assert listing.exit_code == 0, listing.output
    assert "olympia unit types" in listing.stdout
    assert [line for line in listing.stderr.splitlines() if line.startswith("warning:")] == [
        line for line in listing.stderr.splitlines() if reason in line
    ]


def test_two_plugins_with_one_name_are_both_named(installed: Callable[..., None]) -> None:
    installed(
        plugin("dice", lambda: OLYMPIA, "dice-a 1.0"),
        Registration("dice", "other_dice:RULESET", "dice-b 2.0", lambda: OLYMPIA),
    )
    with pytest.raises(BattleOddsError, match="more than one plugin") as raised:
        rulesets.get("dice")
    assert "dice-a 1.0" in str(raised.value) and "dice-b 2.0" in str(raised.value)
    assert rulesets.get("olympia") is OLYMPIA


def test_a_plugin_named_like_a_built_in_is_ignored_with_a_warning(
    installed: Callable[..., None],
) -> None:
    installed(plugin("olympia", failing_import))
    assert rulesets.get("olympia") is OLYMPIA
    assert [p for p in rulesets.problems() if "bad-plugin 1.0" in p and "built-in" in p]
    listing = runner.invoke(app, ["units", "--json"])
    assert listing.exit_code == 0 and "warning: ruleset 'olympia'" in listing.stderr


def test_a_built_in_loads_without_reading_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in wins over any plugin of its name, so a query of one reads no installed
    distribution's metadata (0.01 s of each query); an unknown name still does."""

    def unread() -> list[Registration]:
        raise AssertionError("the plugins' metadata was read")

    monkeypatch.setattr(rulesets, "entry_point_registrations", unread)
    rulesets.refresh()
    try:
        assert rulesets.get("olympia") is OLYMPIA
        assert rulesets.known("skirmish")
        done = runner.invoke(app, [*ODDS, "--battles", "200", "--json"])
        assert done.exit_code == 0, done.output
        with pytest.raises(AssertionError, match="metadata was read"):
            rulesets.get("risk")
    finally:
        monkeypatch.undo()
        rulesets.refresh()


def test_the_ruleset_option_lists_plugins_in_its_help(installed: Callable[..., None]) -> None:
    """The names are read when help is drawn (cli/help.py's when_drawn), plugins' too."""
    installed(plugin("coin", lambda: Coin()))
    for command in (["odds"], ["new"]):
        shown = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        line = next(x for x in shown.output.splitlines() if "--ruleset" in x)
        assert "Rule system: age_of_gods, blocks, coin, confrontation, olympia, skirmish" in line
        assert "<help-text" not in shown.output


def test_a_module_entry_point_and_a_ruleset_class_both_work(
    installed: Callable[..., None],
) -> None:
    module = ModuleType("olympia_again")
    module.RULESET = OLYMPIA  # type: ignore[attr-defined]
    installed(plugin("risky", lambda: type(OLYMPIA)), plugin("olympia", lambda: module))
    assert rulesets.problems() == (
        "plugin bad-plugin 1.0 (entry point 'risky = risky_plugin:RULESET' in "
        "battle_odds.rulesets): its RULESET is named 'olympia', not 'risky'; the entry "
        "point's name and Ruleset.name must be the same",
        "ruleset 'olympia': plugin bad-plugin 1.0 (entry point 'olympia = olympia_plugin:RULESET' "
        "in battle_odds.rulesets) is ignored: the name is a built-in ruleset's; rename the "
        "entry point",
    )


class CoinPrepared(Prepared):
    kernel = "coin"

    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        battle = np.arange(first, first + count, dtype=np.int64)
        return {"winner": battle % 2, "steps": np.ones(count, np.int64)}


class Coin(Ruleset):
    """A plugin with the four required methods and none of the optional hooks."""

    name = "coin"

    def validate(self, data: Any, source: Any) -> Any:
        return dict(data)

    def prepare(self, model: Any) -> Prepared:
        return CoinPrepared()

    def inline(self, query: Any) -> dict[str, Any]:
        return {"ruleset": "coin"}

    def units(self) -> pd.DataFrame:
        return pd.DataFrame([{"type": "man"}])


def test_a_command_needing_a_hook_the_plugin_lacks_says_which(
    installed: Callable[..., None], tmp_path: Path
) -> None:
    installed(plugin("coin", lambda: Coin(), "coin-plugin 1.0"))
    path = tmp_path / "coin.toml"
    path.write_text('ruleset = "coin"\nseed = 3\n', encoding="utf-8")
    ran = runner.invoke(app, ["run", str(path), "-n", "100", "--json"])
    assert ran.exit_code == 0, ran.output
    file = str(path)
    needs = {
        "no exact solver for the 'coin' ruleset": ["exact", file],
        "declares no scenario keys (Ruleset.scenario_keys)": ["schema", "--ruleset", "coin"],
        "ships no starter scenario": ["new", str(tmp_path / "new.toml"), "--ruleset", "coin"],
        "does not say where added men go (Ruleset.add_men)": [
            *("worth", file, "--add", "1 man", "--in", "man"),
        ],
        "does not say what each side fields (Ruleset.forces)": ["sensitivity", file],
        "no matrix of types to fight": ["matrix", "--ruleset", "coin", "--budget", "10"],
    }
    for reason, args in needs.items():
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1 and reason in result.stderr, (args, result.stderr)
    assert not (tmp_path / "new.toml").exists()
