"""Every public study takes its battles and how to run them as one value, ``plan=``.

A :class:`~simulator.running.plan.StudyPlan` (``StudyPlan.of(seed=1, battles=4_000,
max_battles=64_000, threads=2)``) says what the loose keywords of a study say: its seed,
battles (a search's first look), their cap, the first battle, threads or a Dask
executor, the progress callback, the most battles in all and the confidence. A study
given ``plan`` reads each of those it has from the plan; giving one of them beside the
plan is an error, and so is a plan that sets one the study has none of (a matrix has no
confidence), so that no number of a plan is silently dropped.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import fields
from typing import ParamSpec, TypeVar

from ...errors import ParameterError
from ...running.plan import StudyPlan

P = ParamSpec("P")
R = TypeVar("R")

#: The plan's fields, in the order a message lists them.
PLANNED = tuple(f.name for f in fields(StudyPlan))


def takes_plan(study: Callable[P, R]) -> Callable[P, R]:
    """``study`` (which declares ``plan: StudyPlan | None = None``, keyword-only, and
    never reads it) with ``plan``'s fields given as the keywords of the same names."""
    signature = inspect.signature(study)
    own = signature.parameters
    defaults = {f.name: f.default for f in fields(StudyPlan)}

    @functools.wraps(study)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        plan = kwargs.pop("plan", None)
        if plan is None:
            return study(*args, **kwargs)
        if not isinstance(plan, StudyPlan):
            raise ParameterError(
                "plan", type(plan).__name__, "expected a StudyPlan (StudyPlan.of(...))"
            )
        given = signature.bind_partial(*args, **kwargs).arguments
        both = [name for name in PLANNED if name in given]
        if both:
            said = ", ".join(f"{{{name}}}" for name in both)
            raise ParameterError("plan", None, f"and {said}: give them in the plan, or no plan")
        for name in PLANNED:
            value = getattr(plan, name)
            if name in own:
                kwargs[name] = value
            elif value != defaults[name] and not (name == "max_battles" and value == plan.battles):
                raise ParameterError(
                    "plan", None, f"its {name} {value!r}: {study.__name__} has no {name}"
                )
        return study(*args, **kwargs)

    return call
