"""A small ruleset for the tests of stop rules and battles in progress before (and apart
from) the real rulesets' kernels: two sides of men, one man falls each step (the
attacker's with chance d / (a + d)), the battle ends when a side has none left or after
``LIMIT`` steps (a draw). Stop rules are read as every ruleset reads them
(``read_stop_rule``) and checked after every undecided step, the attacker's first (the
order of kernels/stops.py); ``[battle] from_step`` starts the step counter. Plain
Python: slow, obviously correct, for a few thousand battles.

``Duel(declares=...)`` is the same ruleset declaring fewer capabilities (a plugin
written before stop rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from simulator.errors import Source
from simulator.input.reader import Node
from simulator.rulesets import InlineQuery, Prepared, Registration, Ruleset
from simulator.rulesets.base import BY_STEP, FIGHTING, FROM_STEP, STOP_RULES
from simulator.rulesets.stop_rules import NEVER, StopRule, read_stop_rule

LIMIT = 40
TYPES = ("man",)
COLUMNS = ("winner", "steps", "casualties.attacker.man", "casualties.defender.man")


@dataclass(frozen=True)
class DuelModel:
    men: tuple[int, int]
    stop_rules: tuple[StopRule, StopRule]
    from_step: int


def holds(rule: StopRule, men: int, enemy: int, step: int, at_start: int) -> bool:
    """kernels/stops.py's ``stop_holds``, for the one type (``gone``: no man left)."""
    k = rule.men_at_most(at_start)
    return (
        (k is not None and men <= k)
        or (rule.after is not None and step >= rule.after)
        or (rule.outnumbered is not None and enemy >= rule.outnumbered * men)
        or (rule.gone is not None and men <= 0)
    )


class DuelPrepared(Prepared):
    kernel = "duel"

    def __init__(self, model: DuelModel, declares: frozenset[str]) -> None:
        self.model = model
        self.unfolds = declares
        self.stop_rules = model.stop_rules
        self.from_step = model.from_step
        self.step_limit = LIMIT
        self.columns = {name: i for i, name in enumerate(COLUMNS)}
        a, d = model.men
        self.column_bounds = {"casualties.attacker.man": (0, a), "casualties.defender.man": (0, d)}

    def battle(self, seed: int, index: int, cut: int) -> tuple[int, int, int, int]:
        rng = np.random.default_rng([seed, index])
        a0, d0 = self.model.men
        a, d, step = a0, d0, self.from_step
        while True:
            step += 1
            if rng.random() < d / (a + d):
                a -= 1
            else:
                d -= 1
            if a == 0 or d == 0:
                return (1 if a == 0 else 0), step, a0 - a, d0 - d
            if step >= LIMIT:
                return 2, step, a0 - a, d0 - d
            if holds(self.stop_rules[0], a, d, step, a0):
                return 3, step, a0 - a, d0 - d
            if holds(self.stop_rules[1], d, a, step, d0):
                return 4, step, a0 - a, d0 - d
            if step >= cut:
                return FIGHTING, step, a0 - a, d0 - d

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        rows = np.array(
            [self.battle(seed, i, step) for i in range(first, first + count)], np.int64
        ).reshape(count, len(COLUMNS))
        return {name: rows[:, k] for k, name in enumerate(COLUMNS)}

    def run(self, seed: int, first: int, count: int) -> dict[str, np.ndarray]:
        return self.run_until(seed, first, count, LIMIT + 1)


class OnePassDuel(DuelPrepared):
    """The same battles, every step recorded in one call (as a kernel that overrides
    ``run_through`` does): each battle fought once, its state after each step kept."""

    #: The steps each call was asked for.
    calls: ClassVar[list[list[int]]] = []

    def run_through(self, seed: int, first: int, count: int, steps: Any) -> dict[str, np.ndarray]:
        type(self).calls.append(list(steps))
        out = np.zeros((len(steps), count, len(COLUMNS)), np.int64)
        for i in range(count):
            whole = self.battle(seed, first + i, LIMIT + 1)
            for k, step in enumerate(steps):
                out[k, i] = whole if whole[1] <= step else self.battle(seed, first + i, step)
        return {name: out[:, :, c] for c, name in enumerate(COLUMNS)}


ALL = frozenset({BY_STEP, STOP_RULES, FROM_STEP})


class Duel(Ruleset):
    name = "duel"
    title = "Duel (a test ruleset)"
    step_unit = "blows"

    def __init__(self, declares: frozenset[str] = ALL, one_pass: bool = False) -> None:
        self.declares = declares
        self.one_pass = one_pass

    def validate(self, data: Mapping[str, Any], source: Source) -> DuelModel:
        top = Node(data, "", source)
        top.only(("attacker", "defender", "battle"))
        men, rules = [], []
        for side in ("attacker", "defender"):
            node = top.child(side, {})
            node.only(("men", "retreat"))
            men.append(node.integer("men", lo=1, hi=1000))
            rules.append(read_stop_rule(node, TYPES))
        battle = top.child("battle", {})
        battle.only(("from_step",))
        from_step = battle.integer("from_step", 0, lo=0, hi=LIMIT - 1)
        return DuelModel((men[0], men[1]), (rules[0], rules[1]), from_step)

    def prepare(self, model: DuelModel) -> Prepared:
        kind = OnePassDuel if self.one_pass else DuelPrepared
        return kind(model, self.declares)

    def inline(self, query: InlineQuery) -> dict[str, Any]:
        def men(text: str) -> int | str:
            return int(text) if text.strip().isdigit() else text

        return {
            "ruleset": "duel",
            "attacker": {"men": men(query.attacker)},
            "defender": {"men": men(query.defender)},
        }

    def units(self) -> pd.DataFrame:
        return pd.DataFrame([{"type": "man", "cost": 1.0}])


def registration(ruleset: Ruleset) -> Registration:
    return Registration("duel", "duel_plugin:RULESET", "duel-plugin 1.0", lambda: ruleset)


__all__ = ["ALL", "NEVER", "Duel", "DuelPrepared", "OnePassDuel", "registration"]
