"""Stop rules and battles in progress after the kernel, on a test ruleset (tests/duel.py)
whose battles withdraw: the outcome table and JSON gain the withdrawals (only where a
side has a stop rule), the command line reaches the rules (``--set``, ``--attacker-retreat``,
``--from-step``) with one-line errors, a plugin that does not declare them is refused
naming what it lacks, ``validate`` says what a rule does from the start, and the state
after each step is the same recorded in one pass or a step at a time."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import simulator
from simulator import rulesets
from simulator.cli import app
from simulator.results.stats import OUTCOMES, Tally
from simulator.rulesets.base import BY_STEP, STOP_RULES
from simulator.running.unfolding import FIRST_HORIZON, run_steps
from simulator.scenario.stop_text import parse_retreat, retreat_words
from tests import ROOT
from tests.duel import ALL, Duel, OnePassDuel, registration
from tests.tiers import slow_for

runner = CliRunner()
BATTLES = 3_000


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Duel], None]]:
    """Install a duel ruleset as the only plugin."""

    def put(ruleset: Duel) -> None:
        monkeypatch.setattr(rulesets, "entry_point_registrations", lambda: [registration(ruleset)])
        rulesets.refresh()

    yield put
    monkeypatch.undo()
    rulesets.refresh()


@pytest.fixture
def duel(install: Callable[[Duel], None]) -> None:
    install(Duel())


def scenario_file(tmp_path: Path, text: str, name: str = "duel.toml") -> str:
    path = tmp_path / name
    path.write_text(
        f'ruleset = "duel"\nname = "duel"\nbattles = {BATTLES}\nseed = 5\n' + text,
        encoding="utf-8",
    )
    return str(path)


ARMIES = "[attacker]\nmen = 10\n[defender]\nmen = 9\n"
RETREAT_AT_5 = ARMIES + "[attacker.retreat]\nat_most = 5\n"


def invoke(*args: str, columns: int = 120) -> Any:
    return runner.invoke(app, list(args), env={"COLUMNS": str(columns)})


def answer(*args: str) -> dict[str, Any]:
    done = invoke(*args, "--json")
    assert done.exit_code == 0, done.output
    return dict(json.loads(done.stdout))


def one_line_error(done: Any, *words: str) -> str:
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return str(lines[0])


def test_withdrawals_are_outcomes_of_their_own_in_text_and_json(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, RETREAT_AT_5 + "[defender.retreat]\nafter = 12\n")
    got = answer("run", path)
    assert list(got["win"]) == list(OUTCOMES)
    assert set(got["win"]["attacker_withdrew"]) == set(got["win"]["attacker"])
    # The very battles, counted from the prepared scenario's rows: nothing of a
    # withdrawal is counted as the other side's win.
    scenario = simulator.load_scenario(path)
    prepared = rulesets.get("duel").prepare(scenario.model)
    wins = Tally.of(prepared.run(5, 0, BATTLES)).wins
    assert wins[3] > 100 and wins[4] > 100
    for k, outcome in enumerate(OUTCOMES):
        assert got["win"][outcome]["p"] == wins[k] / BATTLES, outcome
    assert got["steps"]["attacker_withdrew"]["mean"] >= 1
    text = invoke("run", path).stdout
    # The question says the rules.
    assert "the attacker withdraws at 5 men left or fewer" in " ".join(text.split())
    assert "the defender withdraws after 12 blows" in " ".join(text.split())
    for row in ("attacker withdrew", "defender withdrew"):
        assert text.count(row) == 2, text  # the outcome table and "decided after"


def test_a_rule_that_never_holds_still_shows_the_withdrawals(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, ARMIES + "[attacker.retreat]\nafter = 1000\n")
    got = answer("run", path)
    assert got["win"]["attacker_withdrew"]["p"] == 0.0
    assert got["win"]["attacker_withdrew"]["high"] > 0.0
    assert "attacker withdrew" in invoke("run", path).stdout


def test_without_stop_rules_the_answer_is_as_before(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, ARMIES)
    got = answer("run", path)
    assert list(got["win"]) == ["attacker", "defender", "draw"]
    assert set(got["steps"]) <= {"all", "attacker", "defender", "draw"}
    assert "withdrew" not in invoke("run", path).stdout


@pytest.mark.parametrize(
    "options",
    [
        ["--set", "attacker.retreat.at_most=5"],
        ["--attacker-retreat", "at most 5"],
        ["--attacker-retreat", "at_most=5"],
    ],
)
def test_a_stop_rule_given_on_the_command_line_is_the_files(
    duel: None, tmp_path: Path, options: list[str]
) -> None:
    in_file = answer("run", scenario_file(tmp_path, RETREAT_AT_5))
    given = answer("run", scenario_file(tmp_path, ARMIES, "plain.toml"), *options)
    assert given["win"] == in_file["win"] and given["win"]["attacker_withdrew"]["p"] > 0
    odds = answer(
        "odds", "--ruleset", "duel", "--attacker", "10", "--defender", "9",
        "-n", str(BATTLES), "-s", "5", *options,
    )  # fmt: skip
    assert odds["win"] == in_file["win"]


def test_both_rules_and_a_type_gone_on_one_line(duel: None, tmp_path: Path) -> None:
    in_file = answer(
        "run",
        scenario_file(
            tmp_path,
            ARMIES
            + '[attacker.retreat]\nat_most = "30%"\nafter = 7\n'
            + '[defender.retreat]\ngone = "man"\noutnumbered = 1.5\n',
        ),
    )
    given = answer(
        "run",
        scenario_file(tmp_path, ARMIES, "plain.toml"),
        "--attacker-retreat",
        "at most 30%, after 7",
        "--defender-retreat",
        "gone man, outnumbered 1.5",
    )
    assert given["win"] == in_file["win"]


def test_the_one_line_rule_reads_back() -> None:
    table = parse_retreat("at most 30%, After 3, gone knight, outnumbered 2.5", "--x")
    assert table == {"at_most": "30%", "after": 3, "gone": "knight", "outnumbered": 2.5}
    assert parse_retreat(retreat_words(table), "--x") == table


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--attacker-retreat", "at least 5"], ["--attacker-retreat", "'at least 5'", "at most N"]),
        (["--attacker-retreat", ""], ["--attacker-retreat", "empty"]),
        (["--attacker-retreat", "after 2, after 3"], ["--attacker-retreat", "given twice"]),
        (["--attacker-retreat", "aftr 3"], ["--attacker-retreat", "did you mean 'after'"]),
        (["--attacker-retreat", "at most -1"], ["--attacker-retreat", "at most", "below 0"]),
        (["--attacker-retreat", "at most 130%"], ["--attacker-retreat", "0% to 100%"]),
        (["--defender-retreat", "after 0"], ["--defender-retreat", "after", "out of range"]),
        (["--defender-retreat", "gone horse"], ["--defender-retreat", "'horse'", "man"]),
        (["--defender-retreat", "outnumbered 0.5"], ["--defender-retreat", "out of range"]),
        (["--set", "attacker.retreat.at_most=-1"], ["--set attacker.retreat.at_most", "below 0"]),
        (["--set", "attacker.retreat.when=3"], ["--set attacker.retreat.when", "unknown key"]),
        (["--from-step", "40"], ["--from-step", "40", "0..39"]),
        (["--from-step", "-1"], ["--from-step -1", "0 or more"]),
        (["--from-step", "5", "--after", "3"], ["--after 3", "expected a step 6..40"]),
    ],
)
def test_bad_stop_rules_and_steps_are_one_line(
    duel: None, tmp_path: Path, args: list[str], words: list[str]
) -> None:
    path = scenario_file(tmp_path, ARMIES)
    one_line_error(invoke("run", path, *args), *words)
    odds = invoke("odds", "--ruleset", "duel", "--attacker", "10", "--defender", "9", *args)
    one_line_error(odds, *words)


def test_a_bad_rule_in_a_file_names_its_line(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, ARMIES + "[attacker.retreat]\nat_most = -2\n")
    line = one_line_error(invoke("run", path), "attacker.retreat.at_most", "below 0")
    assert f"{path}:10" in line


@pytest.mark.parametrize(
    ("declares", "args", "lacks"),
    [
        (frozenset({BY_STEP}), ["--from-step", "3"], "a battle in progress"),
        (frozenset({BY_STEP}), ["--attacker-retreat", "after 3"], "stop rules"),
        (frozenset({BY_STEP}), ["--set", "defender.retreat.at_most=2"], "stop rules"),
        (frozenset(), ["--by-round"], "the state after a step"),
        (ALL - {STOP_RULES}, ["--from-step", "3", "--attacker-retreat", "after 9"], "stop rules"),
    ],
)
def test_a_plugin_without_the_capability_is_refused_naming_it(
    install: Callable[[Duel], None],
    tmp_path: Path,
    declares: frozenset[str],
    args: list[str],
    lacks: str,
) -> None:
    install(Duel(declares))
    path = scenario_file(tmp_path, ARMIES)
    for command in (
        ["run", path],
        ["odds", "--ruleset", "duel", "--attacker", "5", "--defender", "4"],
    ):
        line = one_line_error(invoke(*command, *args), f"ruleset 'duel' does not give {lacks}")
        assert "docs/writing-a-ruleset.md" in line


def test_a_plugin_reading_rules_it_does_not_declare_is_refused_before_any_battle(
    install: Callable[[Duel], None], tmp_path: Path
) -> None:
    install(Duel(frozenset({BY_STEP})))
    path = scenario_file(tmp_path, RETREAT_AT_5)
    one_line_error(invoke("run", path), "does not give stop rules", "[attacker.retreat]")
    one_line_error(invoke("validate", path), "does not give stop rules")
    with pytest.raises(simulator.BattleOddsError, match="does not give stop rules"):
        simulator.simulate(simulator.load_scenario(path), 10)
    # A study's engine too (compare, sweep, ...).
    plain = simulator.load_scenario(scenario_file(tmp_path, ARMIES, "plain.toml"))
    with pytest.raises(simulator.BattleOddsError, match="does not give stop rules"):
        simulator.compare(plain, simulator.load_scenario(path), 10, 1)


def test_validate_says_what_a_rule_does_from_the_start(duel: None, tmp_path: Path) -> None:
    plain = invoke("validate", scenario_file(tmp_path, ARMIES))
    assert plain.exit_code == 0 and "note:" not in plain.stdout
    one_side = invoke("validate", scenario_file(tmp_path, RETREAT_AT_5, "one.toml"))
    assert one_side.exit_code == 0 and "note:" not in one_side.stdout
    at_once = scenario_file(
        tmp_path, ARMIES + "[attacker.retreat]\nat_most = 12\n[defender.retreat]\nafter = 4\n"
    )
    done = invoke("validate", at_once, columns=200)
    assert done.exit_code == 0, done.output
    notes = [line for line in done.stdout.splitlines() if line.startswith("note:")]
    assert len(notes) == 2, done.stdout
    assert "the attacker's stop rule (at 12 men left or fewer) holds from the start" in notes[0]
    assert "fights step 1 and withdraws after it" in notes[0]
    assert "the attacker withdraws and the defender holds the field" in notes[1]
    # And so it does: every battle ends after the first blow, the attacker withdrawn.
    assert answer("run", at_once)["win"]["attacker_withdrew"]["p"] == 1.0


def test_rules_that_exclude_each_other_get_no_note(duel: None, tmp_path: Path) -> None:
    path = scenario_file(
        tmp_path,
        ARMIES + "[attacker.retreat]\noutnumbered = 2\n[defender.retreat]\noutnumbered = 1.5\n",
    )
    done = invoke("validate", path)
    assert done.exit_code == 0 and "note:" not in done.stdout, done.stdout


# Slow tier (docs/testing.md): 1.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_battle_in_progress_counts_its_steps_from_the_start(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, RETREAT_AT_5)
    scenario = simulator.load_scenario(path)
    given = answer("run", path, "--from-step", "6", "--by-round")
    assert given["steps"]["all"]["q10"] >= 7
    steps = [row["step"] for row in given["by_step"]]
    assert steps[0] == 7 and steps == list(range(7, steps[-1] + 1))
    assert given["by_step"][-1]["fighting"]["p"] == 0.0
    # An after rule counts from the battle's start too: after 8 with 6 fought is 2 more.
    after = answer("run", path, "--from-step", "6", "--set", "attacker.retreat.after=8")
    assert after["steps"]["attacker_withdrew"]["q90"] <= 8
    assert after["win"]["attacker_withdrew"]["p"] > 0.5
    in_file = answer(
        "run", scenario_file(tmp_path, RETREAT_AT_5 + "[battle]\nfrom_step = 6\n", "b.toml")
    )
    assert in_file["win"] == given["win"]
    assert scenario.hash != simulator.load_scenario(tmp_path / "b.toml").hash


# Slow tier (docs/testing.md): 7.9 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("columns", [60, 80, 200])
def test_the_state_after_each_step_shows_the_withdrawals_at_any_width(
    duel: None, tmp_path: Path, columns: int
) -> None:
    path = scenario_file(tmp_path, RETREAT_AT_5 + "[defender.retreat]\nat_most = 3\n")
    done = invoke("run", path, "--by-round", "--after", "4", columns=columns)
    assert done.exit_code == 0, done.output
    text = done.stdout
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= columns
    part = text[text.index("The battle as it unfolds") :]
    for header in ("attacker", "withdrew", "fighting", "men left"):
        assert header in part, part
    got = answer("run", path, "--by-round")
    last = got["by_step"][-1]["decided"]
    assert set(last) == {"attacker", "defender", "draw", "attacker_withdrew", "defender_withdrew"}
    assert last["attacker_withdrew"]["p"] == got["win"]["attacker_withdrew"]["p"]


@pytest.mark.parametrize("every", [True, False])
def test_one_pass_and_a_step_at_a_time_record_the_same_states(
    install: Callable[[Duel], None], tmp_path: Path, every: bool
) -> None:
    path = scenario_file(tmp_path, RETREAT_AT_5 + "[battle]\nfrom_step = 2\n")
    steps = None if every else [4, 9]
    answers = []
    for one_pass in (False, True):
        install(Duel(one_pass=one_pass))
        OnePassDuel.calls = []
        result = run_steps(simulator.load_scenario(path), steps, 5, 100, 700, after=6)
        answers.append({t: json.dumps(c.to_dict()) for t, c in result.tally.steps.items()})
        if one_pass:  # one call a block of battles, every step in it (with every: the
            # steps to the horizon first, 16 after from_step, then more only if a battle
            # still fights at its end)
            first = list(range(3, 3 + FIRST_HORIZON)) if every else [4, 6, 9]
            assert OnePassDuel.calls and OnePassDuel.calls[0] == first
            assert all(set(c) <= set(range(3, 103)) for c in OnePassDuel.calls)
    assert answers[0] == answers[1]
    assert min(answers[0]) == (3 if every else 4)


def test_the_state_after_each_step_is_the_run_step_by_step(duel: None, tmp_path: Path) -> None:
    """The last step recorded is the run's answer, withdrawals included; each earlier
    step is each battle stopped then (the duel's own rows)."""
    path = scenario_file(tmp_path, RETREAT_AT_5)
    scenario = simulator.load_scenario(path)
    result = run_steps(scenario, None, 5, 0, 500)
    prepared = rulesets.get("duel").prepare(scenario.model)
    whole = prepared.run(5, 0, 500)
    last = result.tally.steps[max(result.tally.steps)]
    assert last.states[:5].tolist() == np.bincount(whole["winner"], minlength=5).tolist()
    for step in (1, 3, 6):
        rows = prepared.run_until(5, 0, 500, step)
        assert (
            result.tally.steps[step].states.tolist()
            == np.bincount(rows["winner"], minlength=6).tolist()
        )


def test_a_run_with_withdrawals_resumes_from_its_checkpoint(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, RETREAT_AT_5)
    checkpoint = tmp_path / "run.ckpt"
    first = answer("run", path, "--checkpoint", str(checkpoint))
    stored = json.loads(checkpoint.read_text())
    assert len(stored["tally"]["wins"]) == 5 and stored["tally"]["wins"][3] > 0
    again = answer("run", path, "--checkpoint", str(checkpoint))
    assert again["win"] == first["win"] and "resumed from" in " ".join(again["notes"])


def test_compare_and_precision_count_the_withdrawals(duel: None, tmp_path: Path) -> None:
    plain = simulator.load_scenario(scenario_file(tmp_path, ARMIES, "a.toml"))
    ruled = simulator.load_scenario(scenario_file(tmp_path, RETREAT_AT_5, "b.toml"))
    comparison = simulator.compare(plain, ruled, 800, 3)
    assert comparison.outcomes == OUTCOMES
    rows = comparison.to_dict()["win"]
    assert rows["attacker_withdrew"]["a"] == 0.0 and rows["attacker_withdrew"]["b"] > 0.1
    # Paired: every withdrawal was some other outcome in A, the battles the same.
    assert comparison.joint[:, 3].sum() == comparison.b.tally.wins[3]
    assert comparison.joint[3, :].sum() == 0
    assert rows["attacker"]["b"] < rows["attacker"]["a"]
    from simulator.running.precision import reported_probabilities

    assert "win.attacker_withdrew" in reported_probabilities(comparison.b.tally, frozenset())
    assert "win.attacker_withdrew" not in reported_probabilities(comparison.a.tally, frozenset())


def test_the_outcome_plot_shows_the_withdrawals(duel: None, tmp_path: Path) -> None:
    from simulator.report.plots import outcome_panel

    result = simulator.simulate(simulator.load_scenario(scenario_file(tmp_path, RETREAT_AT_5)), 300)
    labels = [t.get_text() for t in outcome_panel(result).get_yticklabels()]
    assert labels == [
        "attacker wins", "defender wins", "draw", "attacker withdrew", "defender withdrew"
    ]  # fmt: skip


def test_unknown_codes_keep_the_old_codes_and_carry_withdrawals() -> None:
    from simulator.scenario.unknowns import unknown_code, unknown_decode

    index = np.array([0, 1, 2, 2, 0, 1])
    winner = np.array([0, 2, 1, 3, 4, 4])
    codes = unknown_code(index, winner, 3)
    # A battle fought out: index x 3 + winner, as before stop rules.
    assert codes[:3].tolist() == [0, 5, 7]
    assert [unknown_decode(int(c), 3) for c in codes] == list(
        zip(index.tolist(), winner.tolist(), strict=True)
    )
    assert len(set(codes.tolist())) == len(codes)


def test_an_unknown_says_the_withdrawals_given_each_value(duel: None, tmp_path: Path) -> None:
    path = scenario_file(
        tmp_path,
        '[attacker]\nmen = "6..12"\n[defender]\nmen = 9\n[attacker.retreat]\nat_most = 5\n',
    )
    got = answer("run", path)
    (unknown,) = got["unknowns"]
    rows = {row["value"]: row for row in unknown["values"]}
    # Six men withdraw at the first man lost unless they win first; twelve seldom fall to 5.
    assert rows[6]["attacker_withdrew"] > 0.9 > 0.5 > rows[12]["attacker_withdrew"] > 0
    total = sum(row["attacker_withdrew"] * row["battles"] for row in rows.values())
    assert round(total) == round(got["win"]["attacker_withdrew"]["p"] * got["battles"])
    for row in rows.values():
        shares = ("defender", "draw", "attacker_withdrew", "defender_withdrew")
        assert abs(row["attacker"]["p"] + sum(row[s] for s in shares) - 1) < 1e-9


def test_ctrl_c_between_one_pass_blocks_keeps_the_whole_blocks(
    install: Callable[[Duel], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simulator.running import unfolding

    install(Duel(one_pass=True))
    asked: list[int] = []

    def stop_after_four() -> bool:
        asked.append(1)
        # Asked after each block, and before a block's second call (its steps past the
        # horizon): the block of the fourth is not counted.
        return len(asked) >= 4

    monkeypatch.setattr(unfolding, "stop_requested", stop_after_four)
    OnePassDuel.calls = []
    scenario = simulator.load_scenario(scenario_file(tmp_path, RETREAT_AT_5))
    answer = run_steps(scenario, None, 5, 0, 5_000)
    assert answer.partial and 3 <= len(OnePassDuel.calls) <= 4
    # Every step counts the same whole blocks (sized by time from one battle up: 1, 4,
    # 16, ... battles), at least the first.
    counted = {c.battles for c in answer.tally.steps.values()}
    assert len(counted) == 1 and counted.pop() in (1, 5, 21)


#: One bundled scenario of each built-in ruleset (tests/test_unfolding.py's pick).
BUNDLED = {
    "olympia": "scenarios/olympia/knights_vs_pikemen.toml",
    "age_of_gods": "scenarios/age_of_gods/pikemen_vs_knights.toml",
    "blocks": "scenarios/blocks/storm.toml",  # relief has a block arriving in round 2
    "confrontation": "scenarios/confrontation/attack.toml",
    "skirmish": "scenarios/skirmish/cavalry_charge.toml",
}


# Blocks' share is the slow tier's: its battle as it unfolds only the slow tier compiles
# (tests/tiers.py).
@pytest.mark.parametrize("ruleset", slow_for(sorted(BUNDLED), {"blocks"}))
def test_a_built_in_ruleset_that_declares_them_takes_them_from_the_command_line(
    ruleset: str,
) -> None:
    """Each built-in ruleset that declares stop rules (and a battle in progress) is
    reached by the options: an attacker withdrawing after step 1 ends every battle
    then, never the defender's withdrawal (the attacker's rule first, the defender's
    holding too); given 2 steps in, after step 3. A ruleset that does not declare them
    yet is refused in one line (its kernel's branch brings them)."""
    from simulator.rulesets.base import FROM_STEP

    path = str(ROOT / BUNDLED[ruleset])
    scenario = simulator.load_scenario(path)
    unfolds = rulesets.get(ruleset).prepare(scenario.model).unfolds
    rules = ["--set", "attacker.retreat.after=1", "--defender-retreat", "after 1"]
    if STOP_RULES not in unfolds:
        one_line_error(invoke("run", path, *rules), f"ruleset '{ruleset}' does not give stop")
        return
    got = answer("run", path, "-n", "400", *rules)
    # Every battle ends at step 1 (a battle lasts a step at least): decided, or the
    # attacker withdrawn; never the defender.
    assert got["steps"]["all"]["mean"] == 1.0
    assert got["win"]["defender_withdrew"]["p"] == 0.0
    if FROM_STEP not in unfolds:
        return
    later = answer("run", path, "-n", "400", "--from-step", "2", "--attacker-retreat", "after 3")
    assert later["steps"]["all"]["mean"] == 3.0


def test_plot_takes_the_rules_too(duel: None, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, ARMIES)
    image = tmp_path / "duel.png"
    done = invoke("plot", path, "-o", str(image), "-n", "300", "--attacker-retreat", "at most 5")
    assert done.exit_code == 0, done.output
    assert image.stat().st_size > 0
    one_line_error(
        invoke("plot", path, "-o", str(image), "--from-step", "99"), "--from-step", "0..39"
    )
    bad = invoke("plot", path, "-o", str(image), "--attacker-retreat", "gone horse")
    one_line_error(bad, "--attacker-retreat", "'horse'")


def test_a_rule_after_a_step_already_fought_holds_from_the_start(
    duel: None, tmp_path: Path
) -> None:
    path = scenario_file(
        tmp_path, ARMIES + "[battle]\nfrom_step = 6\n[attacker.retreat]\nafter = 4\n"
    )
    done = invoke("validate", path, columns=200)
    assert done.exit_code == 0, done.output
    assert "holds from the start" in done.stdout and "fights step 7" in done.stdout
    got = answer("run", path)
    assert got["steps"]["all"]["mean"] == 7.0
