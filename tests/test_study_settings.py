"""``--set KEY=VALUE`` of ``matrix``, ``prices`` and ``meta`` (``settings=`` in Python):
the ``[battle]`` table of every one-type battle they build, checked by the ruleset,
recorded in the answer, and reaching the kernel (skirmish ``rules = "engine"``, olympia
``strike_order = "alternating"``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import kernels.skirmish as k
import simulator
from simulator import rulesets
from simulator.cli import app
from simulator.cli.options import battle_settings
from simulator.errors import BattleOddsError
from simulator.rulesets import Army
from simulator.studies.machinery.one_type import one_type_scenario
from simulator.studies.machinery.price_cells import CellBank
from tests.test_matrix import one_error_line

SEED = 11
#: |z| beyond this is a failure: a two-sided 99.9% level.
Z999 = 3.290526731491926
ENGINE = {"rules": "engine"}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def skirmish_matrices():
    """Two giants and two unicorns a side, under the text's rules and the engine's."""
    return {
        rules: simulator.matrix(
            "skirmish", 2, "giant,unicorn", battles=400, seed=SEED, settings=settings
        )
        for rules, settings in (("text", None), ("engine", ENGINE))
    }


def test_the_engine_rules_move_a_matrix_cell_far_beyond_noise(skirmish_matrices):
    # Unicorns charging giants: the engine's charge hits for the attack (0..6), the text's
    # for the damage (0..4), so the unicorns win far more often under the engine's rules.
    cells = {r: m.cell("unicorn", "giant").result for r, m in skirmish_matrices.items()}
    p = {r: res.tally.wins[0] / res.n for r, res in cells.items()}
    error = math.sqrt(sum(p[r] * (1 - p[r]) / cells[r].n for r in cells))
    assert (p["engine"] - p["text"]) / error > Z999, p


def test_a_matrix_records_its_settings(skirmish_matrices):
    text, engine = skirmish_matrices["text"], skirmish_matrices["engine"]
    assert engine.settings == ENGINE and text.settings == {}
    assert engine.to_dict()["settings"] == ENGINE and text.to_dict()["settings"] == {}
    assert set(engine.frame["battle.rules"]) == {"engine"}
    assert "battle.rules" not in text.frame


def prepared_params(monkeypatch) -> list[np.ndarray]:
    """The skirmish kernel's rule switches of every battle prepared from now on."""
    seen: list[np.ndarray] = []
    ruleset = rulesets.get("skirmish")
    prepare = ruleset.prepare

    def spy(model):
        prepared = prepare(model)
        seen.append(prepared.params.copy())
        return prepared

    monkeypatch.setattr(ruleset, "prepare", spy)
    return seen


def engine_switches(params: np.ndarray) -> tuple[int, ...]:
    return tuple(
        int(params[i])
        for i in (
            k.PARAM_RIPOSTE_DAMAGE,
            k.PARAM_CHARGE_DAMAGE,
            k.PARAM_STALEMATE_START,
            k.PARAM_EXPECTED_VALUE,
        )
    )


def test_the_engine_switch_reaches_the_kernel_of_every_matrix_battle(monkeypatch):
    seen = prepared_params(monkeypatch)
    simulator.matrix("skirmish", 1, "giant,unicorn", battles=20, settings=ENGINE)
    assert len(seen) == 4
    assert {engine_switches(p) for p in seen} == {(1, 1, 1, k.SAMPLED5)}
    seen.clear()
    simulator.matrix("skirmish", 1, "giant,unicorn", battles=20)
    assert {engine_switches(p) for p in seen} == {(0, 0, 0, k.EXACT)}


def test_a_price_search_fights_its_cells_under_the_settings(monkeypatch):
    seen = prepared_params(monkeypatch)
    banks = {
        rules: CellBank("skirmish", 400, SEED, settings=settings)
        for rules, settings in (("text", None), ("engine", ENGINE))
    }
    scores = {r: bank.estimate(bank.score("unicorn", 2, "giant", 2)) for r, bank in banks.items()}
    assert [engine_switches(p) for p in seen] == [(0, 0, 0, k.EXACT), (1, 1, 1, k.SAMPLED5)]
    # The unicorns' net score, with the batch-means errors the price search uses.
    error = math.hypot(scores["engine"].error, scores["text"].error)
    assert (scores["engine"].value - scores["text"].value) / error > Z999


def test_settings_overrule_the_rulesets_own_battle_table():
    rs = rulesets.get("skirmish")
    scenario = one_type_scenario(
        rs, Army("giant", 2), Army("unicorn", 2), {"rules": "engine", "turn_limit": 7}
    )
    assert scenario.data["battle"]["rules"] == "engine"
    assert scenario.data["battle"]["turn_limit"] == 7
    # The rest of the ruleset's table (where the battle is fought) is kept.
    plain = rs.one_type_battle(Army("giant", 2), Army("unicorn", 2))["battle"]
    assert {key: scenario.data["battle"][key] for key in plain} == plain


def test_matrix_cli_under_olympias_alternating_strikes():
    args = ["matrix", "--ruleset", "olympia", "--budget", "3", "--types", "soldier,knight"]
    run = invoke(*args, "-n", "40", "--set", "strike_order=alternating", "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["settings"] == {"strike_order": "alternating"}
    table = invoke(*args, "-n", "40", "--set", "strike_order=alternating")
    assert table.exit_code == 0, table.output
    assert "--set strike_order=alternating" in " ".join(table.stdout.split())


def test_prices_accept_and_record_the_settings(tmp_path):
    costs = tmp_path / "costs.toml"
    run = invoke(
        "prices",
        "--types",
        "soldier,knight",
        "--budgets",
        "6,10",
        "-n",
        "100",
        "--set",
        "strike_order=alternating",
        "--write",
        str(costs),
        "--json",
    )
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["settings"] == {"strike_order": "alternating"}
    assert "--set strike_order=alternating" in costs.read_text()
    fair = simulator.prices(
        "olympia",
        "soldier,knight",
        budgets=[6],
        battles=100,
        settings={"strike_order": "alternating"},
    )
    assert fair.settings == {"strike_order": "alternating"}
    assert set(fair.frame["battle.strike_order"]) == {"alternating"}
    assert set(fair.pairwise_frame["battle.strike_order"]) == {"alternating"}


def test_meta_accepts_and_records_the_settings():
    args = ["meta", "--ruleset", "skirmish", "--budget", "2", "--types", "giant,unicorn"]
    run = invoke(*args, "-n", "100", "--bootstrap", "10", "--set", "rules=engine", "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["settings"] == ENGINE
    table = invoke(*args, "-n", "100", "--bootstrap", "10", "--set", "rules=engine")
    assert table.exit_code == 0, table.output
    assert "--set rules=engine" in " ".join(table.stdout.split())
    game = simulator.meta(
        "skirmish", 2, "giant,unicorn", battles=100, bootstrap=10, settings=ENGINE
    )
    assert game.matrix is not None and game.matrix.settings == ENGINE
    assert set(game.frame["battle.rules"]) == {"engine"}


STUDIES = [
    ["matrix", "--budget", "2", "-n", "10"],
    ["prices", "--budgets", "2", "-n", "20"],
    ["meta", "--budget", "2", "-n", "10"],
]


@pytest.mark.parametrize("study", STUDIES, ids=[s[0] for s in STUDIES])
@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("rulez=engine", "--set rulez: unknown key 'rulez' (did you mean 'rules'?)"),
        ("rules=engin", "--set rules: 'engin' is not one of text, engine"),
        ("rules", "--set 'rules': expected KEY=VALUE"),
    ],
)
def test_a_bad_setting_is_one_line(study, setting, expected):
    run = invoke(*study, "--ruleset", "skirmish", "--types", "giant,unicorn", "--set", setting)
    assert expected in one_error_line(run)


def test_a_setting_of_the_wrong_kind_is_one_line():
    run = invoke(
        "matrix", "--ruleset", "age_of_gods", "--budget", "2", "--types", "soldier,knight",
        "--set", "control_limits=yes",
    )  # fmt: skip
    assert "--set control_limits: expected true or false" in (one_error_line(run))


def test_values_are_read_as_a_scenario_file_writes_them():
    assert battle_settings(
        ["rules=engine", "turn_limit=7", "control_limits=true", 'weather=["rain"]', "a=b=c"]
    ) == {
        "rules": "engine",
        "turn_limit": 7,
        "control_limits": True,
        "weather": ["rain"],
        "a": "b=c",
    }
    assert battle_settings(["turn_limit=1", "turn_limit=2"]) == {"turn_limit": 2}


def test_python_settings_must_be_a_mapping():
    with pytest.raises(BattleOddsError, match="settings: expected a mapping"):
        simulator.matrix("skirmish", 1, "giant,unicorn", battles=10, settings=["rules"])  # type: ignore[arg-type]
