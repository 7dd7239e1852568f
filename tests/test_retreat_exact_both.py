"""Both sides choosing their retreat rules exactly (``battle-odds retreat --side both
--method exact``): alternate exact best responses over olympia's chain.

Checked: the rules reached are a mutual best response (neither side's value rises by its
own exact best response to the other's rule); each side's value by backward induction
is the one the chances pushed forward give; the first turn is the one-side exact
method's gain over never retreating; the pair played battle by battle in the
plain-Python reference simulator gives each side's value inside its 99.9% interval; the
simulated method's values hold the exact ones inside their intervals; what it cannot
take is one line, exit 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.rulesets.olympia import retreat as olympia_retreat
from simulator.studies.machinery.retreat_simulated import without_rule
from simulator.studies.retreat import best_retreat
from tests.reference import olympia as reference
from tests.test_retreat import Z999, load, standing

FORD = "examples/retreat/knights_at_the_ford.toml"
SIDES = ("attacker", "defender")
runner = CliRunner()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory):
    """Two soldiers and a knight against four soldiers, a win worth 8 to each: both
    sides withdraw in some battles under the rules reached (five turns)."""
    scenario = load(tmp_path_factory.mktemp("both"), "soldier = 2, knight = 1", "soldier = 4")
    return scenario, best_retreat(scenario, "both", 8.0, method="exact")


def test_the_rules_reached_are_a_mutual_best_response(small) -> None:
    scenario, result = small
    r = result.rules
    assert r.settled and [t["kept"] for t in r.rounds[-2:]] == [False, False]
    assert r.chances["attacker_withdrew"] > 0.05 and r.chances["defender_withdrew"] > 0.05
    chain = olympia_retreat._Chain(scenario, olympia_retreat.MAX_STATES)
    for s in range(2):
        best, _ = chain.respond(s, 8.0, None, r.outs[1 - s])
        assert best == pytest.approx(r.values[s], abs=1e-12)
        # Any other rule of its own does no better: never withdrawing, withdrawing at
        # every position.
        for own in (np.zeros_like(r.outs[s]), np.ones_like(r.outs[s])):
            assert chain.respond(s, 8.0, own, r.outs[1 - s])[0] <= r.values[s] + 1e-12
    total = sum(r.chances.values())
    assert total == pytest.approx(1.0, abs=1e-12)
    won = (r.chances["attacker_wins"], r.chances["defender_wins"])
    for s in range(2):
        assert r.values[s] == pytest.approx(8.0 * won[s] - r.price_lost[s], abs=1e-12)


def test_the_first_turn_is_the_one_side_exact_rule(small) -> None:
    """The attacker's first turn (against a defender fighting to the end) gains what the
    one-side exact method's best rule gains over never retreating."""
    scenario, result = small
    one = best_retreat(scenario, "attacker", win_value=8.0, method="exact")
    first = result.rules.rounds[0]
    assert first["side"] == "attacker" and first["kept"]
    assert first["gain"] == pytest.approx(one.value - one.never, abs=1e-12)


def test_the_pair_played_in_the_reference_simulator_agrees(small) -> None:
    """Each side withdrawing where its rule says (looked up by the men standing, the
    attacker looked at first), 10,000 reference battles: each side's mean value and the
    share of each side's withdrawals in their 99.9% intervals around the exact ones."""
    scenario, result = small
    decide = []
    for s in range(2):
        frame = result.view(s).frame
        keys = [c for c in frame.columns if c not in ("decision", "value")]
        decide.append(
            {tuple(int(x) for x in row[keys]): row["decision"] for _, row in frame.iterrows()}
        )

    def withdrawing(_battle: object, men: list[reference.Man], steps: int) -> int | None:
        key = standing(men, keys)
        for who in (0, 1):
            if decide[who][key] == "withdraw":
                return who
        return None

    original = reference.withdrawing
    reference.withdrawing = withdrawing  # type: ignore[assignment]
    try:
        n = 10_000
        rows = reference.simulate(scenario.model, n, 52)
    finally:
        reference.withdrawing = original
    r = result.rules
    battle = scenario.model
    for s, side in enumerate(SIDES):
        price = {t: battle.fighters[t].cost for t in battle.sides[s].fielded}
        lost = sum(p * rows[f"casualties.{side}.{t}"] for t, p in price.items())
        values = 8.0 * (rows["winner"] == s) - lost
        assert abs(values.mean() - r.values[s]) <= Z999 * values.std(ddof=1) / math.sqrt(n)
        p = r.chances[f"{side}_withdrew"]
        share = (rows["winner"] == reference.ATTACKER_WITHDREW + s).mean()
        assert abs(share - p) <= Z999 * math.sqrt(p * (1 - p) / n)


def test_the_simulated_method_holds_the_exact_values_in_its_intervals() -> None:
    """The knights at the ford, a win worth 20 to each: the simulated alternation's
    values (3,000 training and 3,000 fresh battles) hold the exact pair's in their 99.9%
    intervals, and both settle on the defender withdrawing after the first strike."""
    scenario = simulator.load_scenario(FORD)
    exact = best_retreat(scenario, "both", 20.0, method="exact")
    simulated = best_retreat(scenario, "both", 20.0, paths=3000, battles=3000, seed=5)
    assert exact.rules.settled and simulated.answer.settled
    assert exact.rules.chances["defender_withdrew"] == pytest.approx(1.0)
    for s in range(2):
        e = simulated.answer.values[s]
        half = (e.high - e.low) / 2 * Z999 / 1.959963984540054
        assert abs(e.value - exact.rules.values[s]) <= half


def test_an_alternation_cut_short_says_it_did_not_settle(small, monkeypatch) -> None:
    from simulator.report.retreat import both_sides_lines

    monkeypatch.setattr(olympia_retreat, "MOST_ROUNDS", 1)
    scenario, _ = small
    result = best_retreat(scenario, "both", 8.0, method="exact")
    assert not result.rules.settled and len(result.rules.rounds) == 2
    assert "Did not settle in 2 turns" in "\n".join(both_sides_lines(result, 80))


@pytest.mark.parametrize("width", ["60", "200"])
def test_the_command_says_both_exact_rules(width: str) -> None:
    text = runner.invoke(
        app, ["retreat", FORD, "--side", "both", "--win-value", "20"], env={"COLUMNS": width}
    )
    assert text.exit_code == 0, text.output
    assert "Settled after 4 turns" in text.output and "exact" in text.output
    assert max(len(line) for line in text.output.splitlines()) <= int(width)
    said = runner.invoke(app, ["retreat", FORD, "--side", "both", "--method", "exact", "--json"])
    assert said.exit_code == 0, said.output
    answer = json.loads(said.output)
    assert answer["method"] == "exact" and answer["settled"] is True
    for side in SIDES:
        got = answer[side]
        assert got["gain_over_never"] == pytest.approx(got["value"] - got["never"])
        assert got["rule"] and isinstance(got["cells"], list)
    assert [r["side"] for r in answer["rounds"]][:2] == ["attacker", "defender"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (
            [FORD, "--method", "exact", "--paths", "100"],
            "--paths: only the simulated method takes it",
        ),
        (
            ["scenarios/confrontation/attack.toml", "--method", "exact"],
            "--method exact: scenarios/confrontation/attack.toml: the best retreat rules are "
            "solved exactly for olympia battles only",
        ),
        (
            ["scenarios/olympia/castle_siege.toml", "--method", "exact"],
            "--method exact: scenarios/olympia/castle_siege.toml: too large for an exact",
        ),
    ],
)
def test_what_it_cannot_take_is_one_line(arguments: list[str], said: str) -> None:
    refused = runner.invoke(app, ["retreat", *arguments[:1], "--side", "both", *arguments[1:]])
    assert refused.exit_code == 2, refused.output
    assert refused.output.startswith(f"error: {said}"), refused.output
    assert len(refused.output.strip().splitlines()) == 1


def test_the_files_rules_are_left_out(tmp_path: Path) -> None:
    """Both sides choosing start from both fighting to the end: a stop rule in the file
    changes nothing."""
    bare = load(tmp_path, "soldier = 2, knight = 1", "soldier = 4")
    ruled = load(
        tmp_path, "soldier = 2, knight = 1", "soldier = 4", "[defender.retreat]\nat_most = 2\n"
    )
    a = best_retreat(bare, "both", 8.0, method="exact").rules
    b = best_retreat(ruled, "both", 8.0, method="exact").rules
    assert a.values == b.values and without_rule(ruled, "defender").model.retreat[1].never
