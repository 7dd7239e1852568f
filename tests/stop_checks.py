"""Checks shared by the rulesets' tests of stop rules, a battle in progress and the
one-pass record of each step (tests/test_confrontation_unfolding.py,
tests/test_skirmish_unfolding.py): each takes prepared scenarios and asserts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from typer.testing import CliRunner

from kernels.stops import ATTACKER_WITHDREW, FIGHTING
from simulator import load_scenario, rulesets
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.rulesets.base import Prepared
from simulator.scenario.scenario import Scenario
from simulator.testing import same_distribution

runner = CliRunner()


def scenario(tmp_path: Path, text: str, extra: str = "", battle: str = "") -> Scenario:
    """``text`` with ``extra`` tables appended and ``battle`` keys added to [battle]."""
    if battle:
        assert "[battle]\n" in text
        text = text.replace("[battle]\n", f"[battle]\n{battle}\n", 1)
    path = tmp_path / "s.toml"
    path.write_text(text + "\n" + extra, encoding="utf-8")
    return load_scenario(path)


def prepared_of(s: Scenario) -> Prepared:
    return rulesets.get(s.ruleset).prepare(s.model)


def rule_only_ends_undecided_battles(plain: Prepared, ruled: Prepared, n: int = 2000) -> None:
    """Battle by battle on the same stream: a battle of ``ruled`` is the one ``plain``
    fights, or a withdrawal after a step that left that battle undecided, its row as the
    battle stood then (``plain.run_until``)."""
    whole, stopped = plain.run(3, 0, n), ruled.run(3, 0, n)
    withdrew = stopped["winner"] >= ATTACKER_WITHDREW
    assert withdrew.any() and (~withdrew).any()
    for column in stopped:
        assert np.array_equal(stopped[column][~withdrew], whole[column][~withdrew]), column
    assert (stopped["steps"][withdrew] < whole["steps"][withdrew]).all()
    for t in np.unique(stopped["steps"][withdrew]):
        at_t = withdrew & (stopped["steps"] == t)
        then = plain.run_until(3, 0, n, int(t))
        assert (then["winner"][at_t] == FIGHTING).all()
        for column in then:
            if column != "winner":
                assert np.array_equal(stopped[column][at_t], then[column][at_t]), column


def one_pass_is_run_until(p: Prepared, steps: Sequence[int] = (1, 2, 3, 4, 5, 7, 12)) -> None:
    """``run_through`` gives, step by step and battle by battle, ``run_until``'s rows."""
    through = p.run_through(8, 100, 1500, steps)
    assert set(through) == set(p.columns)
    for k, step in enumerate(steps):
        until = p.run_until(8, 100, 1500, step)
        for column in until:
            assert np.array_equal(through[column][k], until[column]), (step, column)
    assert (through["winner"] == FIGHTING).any()


def same_on_any_thread_count(p: Prepared) -> None:
    """One thread and all threads draw the same battles (run and run_through), and a
    range run alone is the same battles as in the whole run."""
    threads = numba.get_num_threads()
    assert threads >= 2, "the check needs 2 or more threads"
    every = p.run(6, 0, 3000), p.run_through(6, 0, 3000, [2, 3, 4])
    numba.set_num_threads(1)
    try:
        one = p.run(6, 0, 3000), p.run_through(6, 0, 3000, [2, 3, 4])
    finally:
        numba.set_num_threads(threads)
    for a, b in zip(every, one, strict=True):
        assert all(np.array_equal(a[c], b[c]) for c in a)
    alone = p.run(6, 2000, 1000)
    assert all(np.array_equal(every[0][c][2000:], alone[c]) for c in alone)


def fails_in_one_line(path: Path, *expected: str) -> None:
    """``battle-odds validate path`` exits 2 with one line holding each of ``expected``."""
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, BattleOddsError)
    assert len(result.output.strip().splitlines()) == 1, result.output
    for part in expected:
        assert part in result.output, (part, result.output)


def kernel_against_reference(
    fast: dict[str, np.ndarray], slow: dict[str, np.ndarray], shown: set[int], from_step: int
) -> list[str]:
    """What differs between the kernel's battles and the reference's (the outcome, its
    step, casualties and damage), once the reference shows each outcome of ``shown`` (a
    case that never withdraws tests no rule) and no battle ends by ``from_step``."""
    assert shown <= set(np.unique(slow["winner"]).tolist()), np.bincount(slow["winner"])
    assert (fast["steps"] > from_step).all() and (slow["steps"] > from_step).all()
    measured = [c for c in slow if c.startswith(("casualties.", "damage.")) and c in fast]
    return same_distribution(fast, slow, ["winner", "steps", *measured])


def slow_but(names: Sequence[str], quick: Sequence[str]) -> list[Any]:
    """Test parameters ``names``, each but the ``quick`` ones in the slow tier."""
    return [n if n in quick else pytest.param(n, marks=pytest.mark.slow) for n in names]
