"""What should I bring? ``battle-odds best`` and :func:`best`.

The scenario fixes the enemy, the conditions and any core of one side; every whole
composition of the offered unit types within a budget (and the ``--max`` caps) is an
army that joins that side as ``worth`` adds men (:meth:`Ruleset.add_men`). Without a
target the answer is the army with the greatest P(side wins); with ``target`` the
cheapest army that surely reaches it, the likeliest to win among equally cheap ones.

Every army fights the same battles (common random numbers), in blocks through its
prepared kernel (no compile per army, no loop over battles in Python), and the races of
:mod:`simulator.studies.machinery.racing` choose with a stated guarantee. When the
armies are more than ``EXHAUSTIVE_LIMIT`` a local search (neighbouring armies, from
several starts, a race at each step) gathers the armies to race, and the answer says
how many it evaluated.

Ctrl-C (see :mod:`simulator.running.interrupt`) stops the kernels between calls. A race
that has fought a look answers with it, as at ``max_battles`` (its guarantee holds after
any look), marked ``partial``; interrupted before the choosing race's first look, the
answer is ``partial`` with no choice and no guarantee, the armies the search evaluated
so far in its tallies.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernels._aside import counting_nothing

from .. import rulesets
from ..errors import BattleOddsError, ParameterError
from ..results.stats import wilson
from ..running.interrupt import Interrupted, check_stop, stop_requested
from ..running.plan import Progress, StudyPlan
from ..running.progress import or_plain_lines
from ..scenario.scenario import Scenario
from .machinery.armies import Army, Offer, all_armies, count_armies, make_offer, neighbours, starts
from .machinery.army_battles import ArmyBattles
from .machinery.planned import takes_plan
from .machinery.racing import Choice, Race, TargetChoice, choose_best, choose_cheapest, looks
from .machinery.sides import check_side

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster

#: More armies than this are not raced all: a local search gathers the ones to race.
#: 10,000 armies at the first look's 500 battles are 5*10**6 battles, some seconds of an
#: olympia kernel on two cores.
EXHAUSTIVE_LIMIT = 10_000
#: The first look of a race of every army within budget, unless ``battles`` says: most of
#: the armies are dropped at it, and a race's guarantee holds whatever its looks (the
#: bounds are Bonferroni over them). At 2,000 battles the docs' example (1,490 armies)
#: fought 3,144,000 battles, at 500 1,006,500 for the same answer (docs/designer.md,
#: "Speed").
FIRST_LOOK = 500
#: The first look of a search's races (its steps' and its final one), unless ``battles``
#: says: a step's race stops at STEP_LOOKS times it, and its climb decides on that.
SEARCH_FIRST_LOOK = 2_000
#: The search races the starts and climbs from this many of them.
SEARCH_STARTS = 4
#: Random starts drawn (from the seed) beside each type alone and the even mix.
RANDOM_STARTS = 2
#: Steps of one climb at most.
SEARCH_STEPS = 60
#: A step's race stops at this many times the first look's battles.
STEP_LOOKS = 16
#: The final race of a search fights battles from this index on: fresh luck, so that
#: its guarantee holds whatever the search saw.
FRESH_BATTLES = 2**40


@dataclass
class BestArmy:
    """The answer of ``best``: the chosen army, the ones not told apart from it, the
    frontier (best army found at each cost) and every army evaluated."""

    scenario: Scenario
    side: str
    offer: Offer
    target: float | None
    confidence: float
    tolerance: float
    seed: int
    #: Armies within the budget (M), and whether every one of them was raced.
    candidates: int
    exhaustive: bool
    #: (wins, battles) of every army evaluated, from its last race.
    tallies: dict[Army, tuple[int, int]]
    #: What the races made of each army: chosen, tied, worse, below target, ...
    status: dict[Army, str]
    chosen: Army | None
    tied: list[Army]
    #: With probability >= confidence no army (of the ones raced) beats the chosen
    #: one by more than this.
    within: float
    #: The race stopped by its rule, not at --max-battles.
    sure: bool
    battles: int
    seconds: float = 0.0
    kernel_seconds: float = 0.0
    #: With a target: armies cheaper than the chosen one left undecided at the cap.
    undecided: list[Army] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    #: Interrupted by Ctrl-C: the answer of the looks fought (``raced``), or none.
    partial: bool = False
    #: The choosing race fought at least one look (else no choice, no guarantee).
    raced: bool = True

    @property
    def evaluated(self) -> int:
        return len(self.tallies)

    def win(self, army: Army) -> tuple[float, float, float]:
        """P(side wins) of an evaluated army with its Wilson interval at the confidence."""
        wins, n = self.tallies[army]
        from statistics import NormalDist

        return wilson(wins, n, NormalDist().inv_cdf(1 - (1 - self.confidence) / 2))

    def entry(self, army: Army) -> dict[str, Any]:
        """``army`` (type -> count), ``cost`` and ``win`` (p, low, high) of one army."""
        p, low, high = self.win(army)
        return {
            "army": self.offer.as_dict(army),
            "cost": self.offer.cost(army),
            "win": {"p": p, "low": low, "high": high},
        }

    def frontier_armies(self) -> list[Army]:
        """At each cost of the armies evaluated, the one with the greatest estimated P."""
        best: dict[float, Army] = {}
        for army in self.tallies:
            cost = round(self.offer.cost(army), 9)
            held = best.get(cost)
            if held is None or self._rank(army) > self._rank(held):
                best[cost] = army
        return [best[c] for c in sorted(best)]

    def _rank(self, army: Army) -> tuple[float, int]:
        wins, n = self.tallies[army]
        return (wins / n, n)

    def _rows(self, armies: Sequence[Army]) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for army in armies:
            p, low, high = self.win(army)
            row: dict[str, Any] = {"army": self.offer.label(army), "cost": self.offer.cost(army)}
            row.update(zip(self.offer.types, army, strict=True))
            row.update(p=p, low=low, high=high, battles=self.tallies[army][1])
            row["status"] = self.status.get(army, "evaluated")
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def frontier(self) -> pd.DataFrame:
        """One row per cost: the best army found at that cost, its men of each type, P
        with its interval, battles and what the race made of it."""
        return self._rows(self.frontier_armies())

    @property
    def frame(self) -> pd.DataFrame:
        """Every army evaluated, one row each, cheapest first then most likely to win."""
        armies = sorted(self.tallies, key=lambda a: (self.offer.cost(a), -self._rank(a)[0]))
        return self._rows(armies)

    def _percent(self) -> str:
        return f"{100 * self.confidence:g}%"

    def sentence(self) -> str:
        """The answer in words."""
        if not self.raced:
            return self._unraced()
        found = (
            ""
            if self.exhaustive
            else f"best found among {self.evaluated:,} evaluated of {self.candidates:,}: "
        )
        if self.partial:
            found = f"so far (interrupted after {self._most_battles():,} battles an army): " + found
        if self.chosen is None:
            assert self.target is not None
            closest = max(self.tallies, key=self._rank)
            return (
                f"{found}no army within budget {self.offer.budget:g} surely reaches P "
                f"{self.target:g} for the {self.side}; the likeliest to win: "
                f"{self._described(closest)}"
            )
        head = self._described(self.chosen)
        if self.target is not None:
            head += f", the cheapest army that surely reaches P {self.target:g}"
        others = len(self.tied)
        if others == 0:
            tail = f"every other army{' of its cost' if self.target else ''} is surely worse"
        else:
            tail = (
                f"{others} other{'s' if others > 1 else ''} could not be told apart from it at "
                f"{self._percent()}, none better by more than {self.within:.3g}"
            )
        stopped = "when interrupted" if self.partial else "at --max-battles"
        if self.undecided:
            tail += (
                f"; {len(self.undecided)} cheaper armies undecided {stopped} "
                "(more battles may find a cheaper one)"
            )
        elif not self.sure:
            tail += f" (not settled within the tolerance {stopped})"
        return f"{found}{head}; {tail}"

    def _most_battles(self) -> int:
        return max((n for _, n in self.tallies.values()), default=0)

    def _unraced(self) -> str:
        """Interrupted before the choosing race's first look: no choice."""
        if not self.tallies:
            return "interrupted before the armies finished their first look: no answer"
        likeliest = max(self.tallies, key=self._rank)
        return (
            f"interrupted before the race that chooses: no answer; the likeliest of the "
            f"{self.evaluated:,} armies the search evaluated so far: {self._described(likeliest)}"
        )

    def _described(self, army: Army) -> str:
        p, low, high = self.win(army)
        return (
            f"{self.offer.label(army)} (cost {self.offer.cost(army):g}): "
            f"P {p:.3f} ({low:.3f}..{high:.3f})"
        )

    def guarantee(self) -> str:
        """What the answer is sure of, in words."""
        if not self.raced:
            return "No guarantee: the race that chooses was interrupted before its first look."
        pool = (
            f"of the {self.candidates:,} armies within budget"
            if self.exhaustive
            else f"of the {self.evaluated:,} armies the search evaluated (not all "
            f"{self.candidates:,}: an army never evaluated may be better)"
        )
        level = f"With probability at least {self._percent()}"
        by_more = "" if self.within == 0 else f" by more than {self.within:.3g}"
        aside = (
            f" ({len(self.undecided):,} armies undecided at --max-battles aside)"
            if self.undecided
            else ""
        )
        if self.target is None:
            return f"{level}, no army {pool} wins more often than the chosen one{by_more}."
        if self.chosen is None:
            return (
                f"{level}, no army {pool} wins with P {self.target + self.tolerance:g} or "
                f"more{aside}."
            )
        return (
            f"{level}: the chosen army wins with P {self.target:g} or more; no cheaper army "
            f"{pool} wins with P {self.target + self.tolerance:g} or more{aside}; and no army "
            f"of its cost wins more often than it{by_more}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "side": self.side,
            "budget": self.offer.budget,
            "types": list(self.offer.types),
            "costs": dict(zip(self.offer.types, self.offer.costs, strict=True)),
            "target": self.target,
            "best": None if self.chosen is None else self.entry(self.chosen),
            "tied": [self.entry(a) for a in self.tied],
            "frontier": [self.entry(a) for a in self.frontier_armies()],
            "candidates": self.candidates,
            "evaluated": self.evaluated,
            "battles": self.battles,
            "exhaustive": self.exhaustive,
            "sure": self.sure,
            "within": None if math.isnan(self.within) else self.within,
            "undecided": len(self.undecided),
            "confidence": self.confidence,
            "tolerance": self.tolerance,
            "seed": self.seed,
            "answer": self.sentence(),
            "guarantee": self.guarantee(),
            "notes": list(self.notes),
            "partial": self.partial,
        }


@takes_plan
def best(
    scenario: Scenario,
    *,
    plan: StudyPlan | None = None,
    budget: float,
    side: str = "attacker",
    types: Sequence[str] | str | None = None,
    costs: Mapping[str, float] | str | Path | None = None,
    caps: str | Mapping[str, int] | None = None,
    target: float | None = None,
    confidence: float = 0.95,
    tolerance: float = 0.005,
    battles: int | None = None,
    max_battles: int = 256_000,
    seed: int | None = None,
    threads: int | None = None,
    executor: Cluster | None = None,
    progress: Progress | None = None,
    exhaustive_limit: int = EXHAUSTIVE_LIMIT,
    max_total: int | None = None,
) -> BestArmy:
    """The army to add to ``side`` within ``budget``: the likeliest to win, or with
    ``target`` the cheapest that surely reaches it (see the module docstring).

    ``types``: the unit types offered (default: every type that can fight alone);
    ``costs``: costs over the unit table's and the scenario's (a mapping or a TOML file);
    ``caps``: the most men of some types (``{"knight": 8}`` or ``"knight=8"``, the
    command's ``--max``); ``battles``: the first look of a race, doubled up to
    ``max_battles`` (default :data:`FIRST_LOOK` where every army is raced,
    :data:`SEARCH_FIRST_LOOK` where a search gathers them); ``executor``: a Dask cluster
    (:func:`simulator.running.distributed.executor_for`); ``max_total``: the most battles
    in all (default :data:`simulator.running.bounds.DEFAULT_MAX_TOTAL`), checked before
    the first."""
    started = time.perf_counter()
    ruleset = rulesets.get(scenario.ruleset)
    why_not = ruleset.not_for_worth()
    if why_not is not None:
        raise BattleOddsError(
            f"best does not apply to {ruleset.name}: " + why_not.split(": ", 1)[-1]
        )
    check_side(side)
    if target is not None and not 0 < target < 1:
        raise ParameterError("target", target, "expected a probability between 0 and 1")
    if not 0 < tolerance < 1:
        raise ParameterError("tolerance", tolerance, "expected a probability above 0, e.g. 0.005")
    seed = scenario.seed if seed is None else seed
    offer, notes = make_offer(
        ruleset, scenario.data, budget, types, costs, caps, ruleset.room(scenario, side)
    )
    candidates = count_armies(offer)
    exhaustive = candidates <= exhaustive_limit
    if battles is None:
        battles = FIRST_LOOK if exhaustive else SEARCH_FIRST_LOOK
    plan = StudyPlan.of(
        seed=seed,
        battles=battles,
        max_battles=max_battles,
        threads=threads,
        executor=executor,
        progress=progress,
        max_total=max_total,
        confidence=confidence,
    )
    plan.check_total(*_work(offer, candidates, exhaustive, battles, max_battles))
    said = ExitStack()
    # No progress asked (the Python API): plain lines on stderr if the race is long.
    plan = replace(
        plan,
        progress=said.enter_context(
            or_plain_lines(progress, "best", "battles of this race", at_most=True)
        ),
    )
    # The races count wins, no outcomes: a cold kernel's wait compiles no tally.
    said.enter_context(counting_nothing())
    evaluate = ArmyBattles(scenario, side, offer, plan)
    searched: dict[int, tuple[int, int]] = {}
    pool: list[int] = []
    choice: Choice | TargetChoice | None = None
    status: dict[int, str] = {}
    try:
        if exhaustive:
            pool = _register_all(evaluate, all_armies(offer))
        else:
            pool = _search(
                evaluate, offer, seed, confidence, tolerance, battles, max_battles, searched
            )
        schedule = looks(battles, max_battles)
        race = Race(
            pool,
            evaluate.race(pool, schedule),
            schedule,
            first_battle=0 if exhaustive else FRESH_BATTLES,
        )
        if target is None:
            best_choice = choose_best(race, confidence, tolerance)
            status = {x: "worse" for x in pool if x not in race.alive}
            status.update(dict.fromkeys(best_choice.tied, "tied"))
            status[best_choice.chosen] = "chosen"
            choice = best_choice
        else:
            costs_of = {x: offer.cost(evaluate.armies[x]) for x in pool}
            choice = choose_cheapest(race, costs_of, target, confidence, tolerance)
            status = choice.status
    except Interrupted:
        pass  # before the choosing race's first look: no choice (see the module text)
    finally:
        evaluate.close()
        said.close()
    armies = evaluate.armies
    if choice is None:
        tallies = {armies[x]: counts for x, counts in searched.items()}
    else:
        tallies = {armies[x]: (race.wins[x], race.battles[x]) for x in pool}
    return BestArmy(
        scenario=scenario,
        side=side,
        offer=offer,
        target=target,
        confidence=confidence,
        tolerance=tolerance,
        seed=seed,
        candidates=candidates,
        exhaustive=exhaustive,
        tallies=tallies,
        status={armies[x]: s for x, s in status.items()},
        chosen=None if choice is None or choice.chosen is None else armies[choice.chosen],
        tied=[] if choice is None else [armies[x] for x in choice.tied],
        within=math.nan if choice is None else choice.within,
        sure=choice is not None and choice.sure,
        battles=evaluate.battles,
        seconds=time.perf_counter() - started,
        kernel_seconds=evaluate.kernel_seconds,
        undecided=[armies[x] for x in getattr(choice, "undecided", [])],
        notes=tuple(notes),
        partial=stop_requested(),
        raced=choice is not None,
    )


def _work(
    offer: Offer, candidates: int, exhaustive: bool, battles: int, max_battles: int
) -> tuple[str, int]:
    """What ``best`` may fight at most, in words and in battles: every army to
    ``max_battles``, or the search's step races (its starts' race and ``SEARCH_STARTS``
    climbs of ``SEARCH_STEPS`` steps, an army and its neighbours each) and a final race
    of the armies they gathered."""
    if exhaustive:
        return (
            f"best: {candidates:,} armies x {{max_battles=}}{max_battles:,}",
            candidates * max_battles,
        )
    k = len(offer.types)
    step = 1 + k * (2 + 4 * (k - 1))  # an army and its neighbours (armies.neighbours)
    races = 1 + SEARCH_STARTS * SEARCH_STEPS
    raced = min(candidates, k + 1 + RANDOM_STARTS + SEARCH_STARTS * SEARCH_STEPS * step)
    step_battles = min(max_battles, STEP_LOOKS * battles)
    return (
        f"best: a search of up to {races:,} races of {step:,} armies x {step_battles:,} "
        f"battles, then {raced:,} armies x {{max_battles=}}{max_battles:,}",
        races * max(step, k + 1 + RANDOM_STARTS) * step_battles + raced * max_battles,
    )


def _register_all(evaluate: ArmyBattles, armies: Any) -> list[int]:
    """Every army's number; the empty army is left out when the side cannot fight
    without men (its core alone is not a valid scenario)."""
    pool = []
    for army in armies:
        check_stop()  # thousands of scenarios are built here before a battle
        try:
            pool.append(evaluate.register(army))
        except BattleOddsError:
            if any(army):
                raise
    return pool


def _search(
    evaluate: ArmyBattles,
    offer: Offer,
    seed: int,
    confidence: float,
    tolerance: float,
    battles: int,
    max_battles: int,
    searched: dict[int, tuple[int, int]],
) -> list[int]:
    """Armies gathered by climbing from several starts: at each step the army and its
    neighbours race (on battles 0..; the final race fights fresh ones) and the climb
    moves to the leader, until the army itself leads or a step revisits an army.
    ``searched`` gets each army's (wins, battles) of its longest step race: the answer
    of a search interrupted by Ctrl-C, which ends it with the armies gathered so far."""
    schedule = looks(battles, min(max_battles, STEP_LOOKS * battles))
    gathered: dict[int, None] = {}

    def race_of(armies: list[Army]) -> tuple[Race, Choice]:
        ids = _register_all(evaluate, armies)
        gathered.update(dict.fromkeys(ids))
        race = Race(ids, evaluate.race(ids, schedule, "a search step's race"), schedule)
        try:
            return race, choose_best(race, confidence, tolerance)
        finally:
            for x, n in race.battles.items():
                if n > searched.get(x, (0, 0))[1]:
                    searched[x] = (race.wins[x], n)

    try:
        opening, _ = race_of(starts(offer, seed, RANDOM_STARTS))
        for start in opening.ranked(opening.armies)[:SEARCH_STARTS]:
            current = start
            visited = {current}
            for _ in range(SEARCH_STEPS):
                army = evaluate.armies[current]
                _, choice = race_of([army, *neighbours(offer, army)])
                check_stop()
                if choice.chosen in visited:
                    break
                current = choice.chosen
                visited.add(current)
    except Interrupted:
        pass  # the final race finds the stop request and ends before its first look
    return list(gathered)
