"""The public studies speak one vocabulary: a ``plan`` in every one, one progress
callback, one type of executor, ``battles`` for a scenario's battles (a search's first
look) and ``.frame`` a property of every answer; the old spellings of 0.1 still work
with a DeprecationWarning (simulator.studies.machinery.renamed)."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import pandas as pd
import pytest

import simulator
from simulator.errors import ParameterError
from simulator.running.plan import RunPlan, StudyPlan
from simulator.studies.best import BestArmy
from simulator.studies.machinery.price_list import Prices
from simulator.studies.matrix import Matrix
from simulator.studies.meta import Meta
from simulator.studies.sensitivity import Sensitivity
from simulator.studies.sweep import Sweep, TargetSearch, find_target
from simulator.studies.worth import Worth

STUDIES = [
    simulator.best,
    simulator.compare,
    simulator.matrix,
    simulator.meta,
    simulator.prices,
    simulator.sensitivity,
    simulator.sweep,
    find_target,
    simulator.worth,
]
ANSWERS = [BestArmy, Matrix, Meta, Prices, Sensitivity, Sweep, TargetSearch, Worth]


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.__name__)
def test_every_public_study_takes_a_plan_one_progress_and_one_executor(study: Any) -> None:
    parameters = inspect.signature(study).parameters
    assert parameters["plan"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["plan"].annotation == "StudyPlan | None"
    assert parameters["progress"].annotation == "Progress | None"
    assert parameters["executor"].annotation == "Cluster | None"
    assert "first_battles" not in parameters and "battles" in parameters


def test_the_best_retreat_takes_a_plan_and_the_one_progress(
    knights_vs_pikemen: simulator.Scenario,
) -> None:
    """best_retreat runs here alone (no executor), but takes a plan as every study."""
    parameters = inspect.signature(simulator.best_retreat).parameters
    assert parameters["plan"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["plan"].annotation == "StudyPlan | None"
    assert parameters["progress"].annotation == "Progress | None"
    with pytest.raises(ParameterError, match=r"its confidence 0\.9: best_retreat has no"):
        simulator.best_retreat(
            knights_vs_pikemen, plan=StudyPlan.of(seed=5, battles=300, confidence=0.9)
        )


def test_a_run_takes_the_executor_every_study_takes() -> None:
    """One type of executor: a run's (simulate, its plan) is the studies' Cluster."""
    for takes in (simulator.simulate, RunPlan.of, RunPlan.on):
        assert inspect.signature(takes).parameters["executor"].annotation == "Cluster | None"


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: a.__name__)
def test_every_answers_frame_is_a_property(answer: type) -> None:
    assert isinstance(inspect.getattr_static(answer, "frame"), property)


def test_a_plan_answers_as_its_keywords(knights_vs_pikemen: simulator.Scenario) -> None:
    asked = {"seed": 5, "battles": 300, "threads": 1}
    loose = simulator.matrix("olympia", 12, "knight,soldier", **asked)
    planned = simulator.matrix("olympia", 12, "knight,soldier", plan=StudyPlan.of(**asked))
    pd.testing.assert_frame_equal(loose.frame, planned.frame)
    assert planned.to_dict() == loose.to_dict()
    curve = simulator.sweep(
        knights_vs_pikemen, ["attacker.knight=2..4:2"], plan=StudyPlan.of(**asked)
    )
    assert [r.n for r in curve.results] == [300, 300]
    assert {r.seed for r in curve.results} == {5}


def test_a_plan_and_its_keywords_at_once_are_refused(
    knights_vs_pikemen: simulator.Scenario,
) -> None:
    plan = StudyPlan.of(seed=5, battles=300)
    with pytest.raises(ParameterError, match=r"^plan: and seed, battles: give them in the plan"):
        simulator.matrix("olympia", 12, "knight,soldier", None, 300, 5, plan=plan)
    with pytest.raises(ParameterError, match=r"its confidence 0\.9: equal_cost_matrix has no"):
        simulator.matrix("olympia", 12, plan=StudyPlan.of(seed=5, battles=300, confidence=0.9))
    with pytest.raises(ParameterError, match="plan=dict: expected a StudyPlan"):
        simulator.sensitivity(knights_vs_pikemen, plan={"seed": 5})  # type: ignore[arg-type]


def test_first_battles_is_battles_with_a_warning(knights_vs_pikemen: simulator.Scenario) -> None:
    asked: dict[str, Any] = {"target": 0.5, "seed": 3, "max_battles": 800, "threads": 1}
    new = find_target(knights_vs_pikemen, "attacker.knight=1..8", battles=200, **asked)
    with pytest.warns(DeprecationWarning, match=r"find_target\(first_battles=...\) is now"):
        old = find_target(knights_vs_pikemen, "attacker.knight=1..8", first_battles=200, **asked)
    assert old.to_dict() == new.to_dict()
    with pytest.raises(ParameterError, match="first_battles: the old name of battles"):
        find_target(
            knights_vs_pikemen, "attacker.knight=1..8", first_battles=200, battles=200, **asked
        )


def test_a_frame_called_as_the_method_it_was_warns_and_answers(
    knights_vs_pikemen: simulator.Scenario,
) -> None:
    curve = simulator.sweep(knights_vs_pikemen, ["attacker.knight=2..4:2"], 200, 1, threads=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = curve.frame  # the property: no warning
    with pytest.warns(DeprecationWarning, match=r"Sweep.frame is a property now"):
        called = curve.frame()
    pd.testing.assert_frame_equal(pd.DataFrame(called), pd.DataFrame(frame))
    assert type(frame[["p"]]) is pd.DataFrame  # what is derived from it is a plain frame


def test_a_price_search_reports_as_every_study(knights_vs_pikemen: simulator.Scenario) -> None:
    """``progress(done, total, detail)``, total 0 (not known); a callback of 0.1 that
    takes the pairs fought alone still works."""
    said: list[tuple[Any, ...]] = []
    counted: list[int] = []
    asked: dict[str, Any] = {"types": "knight,soldier", "budgets": [10], "battles": 200}
    simulator.prices("olympia", **asked, progress=lambda *a: said.append(a))
    simulator.prices("olympia", **asked, progress=lambda cells: counted.append(cells))
    assert said and all(total == 0 and "200 battles" in detail for _, total, detail in said)
    assert [done for done, _, _ in said] == counted == sorted(counted)
