"""The page's retreat panel: the best retreat rule of one side of the question asked
(``battle-odds retreat``'s answer, docs/retreat.md), as JSON.

The panel's fields (``side``, ``win_value``, ``method``) are refused as the command line
refuses its options, in the same words; the question is read off the event loop
(:meth:`Calculator.read`); the work is bounded: at most :data:`RETREAT_STATES` positions
solved exactly, :data:`RETREAT_BATTLES` training and as many fresh battles simulated,
within the server's time a question, each kernel call taking turns with other
questions', and the server's stop ends it with the rule so far, marked partial.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool

from ..errors import BattleOddsError
from ..report.retreat import chances_words, value_words
from ..studies.machinery.retreat_simulated import cell_rows
from ..studies.machinery.retreat_words import stop_now_words
from ..studies.machinery.sides import check_side
from ..studies.retreat import best_retreat, check_given_win_value, check_retreat_options
from .warming import EXACT_STATES

if TYPE_CHECKING:
    from .app import Calculator

#: The largest chain the panel solves exactly (a larger one is simulated).
RETREAT_STATES = EXACT_STATES
#: The panel's training battles, and its fresh battles (the command line's default is
#: 20,000 each: the page answers in seconds, its intervals about 1.4 times as wide).
RETREAT_BATTLES = 10_000
#: The figures the panel shows, as both methods' answers name them.
PANEL_FIGURES = ("value", "never", "own", "gain_over_never", "gain_over_own", "win", "withdrew")
#: The panel's fields, beside the question's own.
FIELDS = ("side", "win_value", "method")


def panel_fields(params: dict[str, str]) -> tuple[dict[str, str], str, float | None, str | None]:
    """The question's parameters without the panel's, and the panel's side, win value
    (None: the other army's cost) and method (None: exact where it reaches), checked as
    ``battle-odds retreat`` checks them."""
    question = {k: v for k, v in params.items() if k not in FIELDS}
    side = params.get("side", "").strip() or "attacker"
    said = params.get("win_value", "").strip()
    win_value = None
    if said:
        try:
            win_value = float(said)
        except ValueError:
            raise BattleOddsError(f"--win-value {said}: expected a number more than 0") from None
        if not math.isfinite(win_value):
            raise BattleOddsError(f"--win-value {said}: expected a number more than 0")
    method = params.get("method", "").strip() or None
    if side == "both":  # not check_side: its line would offer "both"
        raise BattleOddsError(
            "--side both: the panel finds one side's rule; for both sides choosing, "
            "battle-odds retreat FILE --side both"
        )
    check_side(side)
    check_retreat_options(side, win_value, method)
    check_given_win_value(win_value)
    return question, side, win_value, method


async def retreat_answer(calculator: Calculator, params: dict[str, str]) -> dict[str, Any]:
    """The best retreat rule the panel asks (:class:`BattleOddsError`: a bad field or
    question, a method the battle cannot take, a busy server)."""
    asked, side, win_value, method = panel_fields(params)
    question = await calculator.read(asked, lambda q: q)
    scenario, seed = question.scenario, question.plan().seed
    run_id = uuid.uuid4().hex[:12]
    halt = threading.Event()
    calculator.runs[run_id] = halt
    deadline = time.monotonic() + calculator.max_seconds

    def should_stop() -> bool:
        return halt.is_set() or calculator.stopping.is_set() or time.monotonic() > deadline

    def solve() -> dict[str, Any]:
        result = best_retreat(
            scenario,
            side,
            win_value,
            method=method,
            max_states=RETREAT_STATES,
            stop=should_stop,
            lock=calculator.lock,
            **(
                {"paths": RETREAT_BATTLES, "battles": RETREAT_BATTLES, "seed": seed}
                if method == "simulated"
                else {}
            ),
        )
        answer = retreat_payload(result)
        if answer["partial"] and time.monotonic() > deadline:
            answer["notes"].append(
                f"stopped at the server's limit of {calculator.max_seconds:g} s a question"
            )
        return answer

    try:
        if method is None:
            # Exact where the chain is small; else simulated on the panel's battles.
            try:
                return await run_in_threadpool(
                    lambda: retreat_payload(
                        best_retreat(
                            scenario,
                            side,
                            win_value,
                            method="exact",
                            max_states=RETREAT_STATES,
                            lock=calculator.lock,
                        )
                    )
                )
            except BattleOddsError:
                pass
            method = "simulated"
        return await run_in_threadpool(solve)
    finally:
        calculator.runs.pop(run_id, None)


def _estimate(value: Any) -> dict[str, float | None] | None:
    """A figure as ``{value, low, high}``: an exact one has no interval."""
    if value is None or isinstance(value, dict):
        return value
    return {"value": float(value), "low": None, "high": None}


def retreat_payload(result: Any) -> dict[str, Any]:
    """What the panel draws of a best retreat rule (exact or simulated): the rule in
    words, its value and the option's against never retreating and the side's own rule,
    the outcomes under it, and the map's cells (positions, or fresh battles, that fight
    on and withdraw at each count of the side's men left and the other's)."""
    if result.method == "exact":
        # Not to_dict: its one row per position is up to RETREAT_STATES rows.
        figures: dict[str, Any] = {k: v for k, v in result.figures().items() if k in PANEL_FIGURES}
        figures.update(
            upper=None,  # exact: the value is the optimum
            partial=False,
            size=f"exact: {result.rule.states:,} positions solved in {result.seconds:.2f} s",
        )
    else:
        full = result.to_dict()
        figures = {k: full[k] for k in PANEL_FIGURES}
        figures.update(
            upper=full["upper_bound"],
            partial=full["partial"],
            size=f"simulated: fitted on {full['paths']:,} battles, valued on "
            f"{full['battles']:,} fresh ones (seed {full['seed']}); 95% intervals",
        )
    for key in ("value", "never", "own", "gain_over_never", "gain_over_own"):
        figures[key] = _estimate(figures[key])
    return {
        "method": result.method,
        "side": result.side,
        "win_value": result.win_value,
        "win_value_said": result.win_value_said,
        "rule": result.words(),
        "own_rule": result.own_words,
        **figures,
        "stop_now_or_go_on": result.stop_now(),
        "words": [
            value_words(result) + ".",
            chances_words(result),
            *filter(None, [stop_now_words(result.stop_now())]),
        ],
        "cells": cell_rows(result.cells()),
        "notes": [],
    }
