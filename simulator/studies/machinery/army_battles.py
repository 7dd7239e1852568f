"""The armies of ``best`` on the study engine (:mod:`simulator.running.scenarios`): each
army's scenario built once from the scenario of its smaller prefix (armies share them),
numbered for the races, and raced on one kernel per race."""

from __future__ import annotations

import numpy as np

from ...results.stats import OUTCOMES
from ...running.plan import StudyPlan
from ...running.scenarios import ScenarioBattles
from ...scenario.scenario import Scenario
from .armies import Army, Offer, reinforced
from .racing import WinsOf


class ArmyBattles:
    """Battles of many armies joining ``side`` of ``scenario`` on the plan's seed: an
    army's number for the races, its scenario, and :meth:`race` (a race's
    :data:`.racing.WinsOf`)."""

    def __init__(self, scenario: Scenario, side: str, offer: Offer, plan: StudyPlan) -> None:
        self.scenario, self.side, self.offer = scenario, side, offer
        self.engine = ScenarioBattles(plan)
        self.engine.add((0,) * len(offer.types), scenario)
        self.armies: list[Army] = []
        self.number: dict[Army, int] = {}
        self.outcome = OUTCOMES.index(side)

    def close(self) -> None:
        self.engine.close()

    @property
    def battles(self) -> int:
        return self.engine.battles

    @property
    def kernel_seconds(self) -> float:
        return self.engine.kernel_seconds

    def register(self, army: Army) -> int:
        """The army's number, building (and so checking) its scenario the first time."""
        if army not in self.number:
            self.scenario_of(army)
            self.number[army] = len(self.armies)
            self.armies.append(army)
        return self.number[army]

    def scenario_of(self, army: Army) -> Scenario:
        if army in self.engine:
            return self.engine.scenario(army)
        last = max(i for i, n in enumerate(army) if n)
        prefix = tuple(n if i < last else 0 for i, n in enumerate(army))
        kind, count = self.offer.types[last], army[last]
        return self.engine.add_built(
            army,
            lambda: reinforced(
                self.scenario_of(prefix), self.side, kind, count, f"+{count} {kind}"
            ),
        )

    def race(self, ids: list[int], schedule: list[int], what: str = "the race") -> WinsOf:
        """What a race of the armies ``ids`` fights in looks ending at the battles of
        ``schedule``: their kernel settled once for the race (one kernel for all, so that
        battle i is the same luck for every army). The plan's progress hears the race's
        battles done of the most it may still fight (every army left to the last look),
        and the look and armies left (``what``: the race's name)."""
        keys = [self.armies[i] for i in ids]
        kernel = self.engine.settle(keys, schedule[0])
        running = list(keys)
        report = self.engine.plan.progress
        started = self.engine.battles
        looked = 0

        def wins_of(alive: list[int], first: int, count: int) -> np.ndarray:
            nonlocal looked
            looked += 1
            if report is not None:
                before = self.engine.battles - started
                most = before + len(alive) * (schedule[-1] - schedule[looked - 1] + count)
                detail = (
                    f"{what}, look {looked} of {len(schedule)}: "
                    f"{len(alive):,} armies left of {len(ids):,}"
                )
                self.engine.on_battles = lambda: report(self.engine.battles - started, most, detail)
                self.engine.on_battles()
            armies = [self.armies[i] for i in alive]
            # An army out of the race runs no more battles in it: its tables go.
            for gone in set(running) - set(armies):
                self.engine.forget(gone)
            running[:] = armies
            return self.engine.wins(armies, self.outcome, first, count, kernel)

        return wins_of
