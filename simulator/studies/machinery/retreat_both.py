"""Both sides choosing their retreat rules (``battle-odds retreat --side both``):
alternate best responses on simulated battles (docs/retreat.md).

Three sets of battles are recorded once, each with neither side's stop rule (so each
battle is followed to its end) after every decision step, as the one-side method
records them: training battles (the run's seed), judging battles and fresh battles
(two other seed streams derived from it). A pair of rules is valued on recorded
battles without running them again: a rule only ends a battle, so up to the first
withdrawal a battle is the one recorded. Each side's first withdrawal is found on it,
the earlier one ends the battle (the attacker's rule is looked at first: when both
hold after the same step the attacker withdraws), and each side's value is then what
its men lost so far cost (a withdrawal is nobody's win).

The attacker's best response to the defender's rule is fitted (Longstaff-Schwartz, as
for one side) on the training battles, each cut where the defender's rule withdraws;
then the defender's to that rule, and so on. A side's new rule replaces its old one
only where it gains over it on the judging battles beyond noise (the paired gain's 95%
interval above 0). The rules have settled when neither side improves in turn; after
:data:`MOST_ROUNDS` rounds they have not, and the answer says so, with the rules
reached. The values of the rules reached are then estimated on the fresh battles,
which took no part in fitting or judging them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import ParameterError
from ...results.steps import men_brought
from ...rulesets.base import Prepared
from ...running.capabilities import check_capabilities, check_unfolds
from ...running.chunking import ChunkSizes, sized_chunks
from ...running.interrupt import stop_requested
from ...running.runner import thread_count
from ...scenario.scenario import Scenario, prepare
from .retreat_simulated import (
    KERNEL_WITHDRAWAL,
    WON,
    Estimate,
    Features,
    Paths,
    SimulatedRule,
    Simulation,
    asked_counts,
    cell_rows,
    cells_words,
    decision_steps,
    first_withdrawal,
    fit_rule,
    fresh_seed,
    prices_for,
    record,
    value_of_rows,
    without_rule,
)
from .sides import SIDES

#: The most rounds (an attacker's turn and a defender's) before the alternation stops
#: unsettled.
MOST_ROUNDS = 5
#: Judging and fresh battles recorded after Ctrl-C stopped the recording: the rules
#: reached so far are valued on these.
STOPPED_BATTLES = 500


@dataclass
class Recorded:
    """Battles recorded with neither side's rule: still fighting after each decision
    step ``(dates, n)``, each side's men left by type ``(dates, n, types)``, each
    side's value fought to the end ``(n,)``, and the winner at the end."""

    fighting: np.ndarray
    men: tuple[np.ndarray, np.ndarray]
    end: tuple[np.ndarray, np.ndarray]
    winner: np.ndarray

    @property
    def count(self) -> int:
        return int(self.fighting.shape[1])


def _record_all(
    prepared: Prepared,
    seed: int,
    count: int,
    dates: Sequence[int],
    features: tuple[Features, Features],
    wins: tuple[float, float],
    block: int,
    stopped: Callable[[], bool],
    lock: AbstractContextManager[object] | None,
    tick: Callable[[int], None],
) -> Recorded:
    """Battles ``0 .. count - 1`` of ``seed``, in kernel calls sized by time; fewer
    when ``stopped()`` (Ctrl-C): those recorded so far."""
    fa, fd = features
    fighting = np.zeros((len(dates), count), bool)
    men = (
        np.zeros((len(dates), count, len(fa.own)), fa.dtype(fa.own)),
        np.zeros((len(dates), count, len(fd.own)), fd.dtype(fd.own)),
    )
    end = (np.zeros(count), np.zeros(count))
    winner = np.zeros(count, np.int64)
    done = 0
    if not stopped():
        for first, n, part in sized_chunks(
            [(0, count)],
            ChunkSizes(block),
            lambda at, n: record(prepared, seed, at, n, dates, fa, lock),
        ):
            cut = slice(first, first + n)
            fighting[:, cut] = part.fighting
            men[0][:, cut] = part.own
            men[1][:, cut] = part.enemy
            for s in range(2):
                end[s][cut] = value_of_rows(part.final, s, wins[s], features[s])
            winner[cut] = part.final["winner"]
            done = first + n
            tick(n)
            if stopped():
                break
    return Recorded(
        fighting[:, :done], (men[0][:, :done], men[1][:, :done]), (end[0][:done], end[1][:done]),
        winner[:done],
    )  # fmt: skip


def _paths(rec: Recorded, s: int) -> Paths:
    """The battles as side ``s`` sees them (its men first), neither side's rule cut in."""
    return Paths(rec.fighting, rec.men[s], rec.men[1 - s], {})


def alone(rule: SimulatedRule, rec: Recorded, s: int) -> np.ndarray:
    """Each battle's decision step (index) at which side ``s``'s rule withdraws when the
    other side never does; -1 for none."""
    return first_withdrawal(rule, _paths(rec, s))


def against(rec: Recorded, s: int, f: Features, their_at: np.ndarray) -> tuple[Paths, np.ndarray]:
    """The battles as side ``s`` sees them when the other side withdraws at
    ``their_at`` (each battle's decision step, -1 for never): still fighting only up to
    that step (the attacker may still withdraw at it: it is looked at first), and each
    worth, fought on from there, what side ``s``'s men lost by then cost."""
    k = np.arange(rec.fighting.shape[0])[:, None]
    cut = their_at[None, :]
    going = (cut < 0) | (k <= cut if s == 0 else k < cut)
    worth = rec.end[s].copy()
    hit = np.flatnonzero(their_at >= 0)
    worth[hit] = -f.price_lost(rec.men[s][their_at[hit], hit])
    return Paths(rec.fighting & going, rec.men[s], rec.men[1 - s], {}), worth


@dataclass(frozen=True)
class Played:
    """A pair of rules played out on recorded battles: each side's value per battle,
    which side withdrew (-1 none, 0 the attacker, 1 the defender) and at which step."""

    values: tuple[np.ndarray, np.ndarray]
    withdrew: np.ndarray
    at: np.ndarray
    alone: tuple[np.ndarray, np.ndarray]


def play(rules: Sequence[SimulatedRule], rec: Recorded, features: Sequence[Features]) -> Played:
    """Both rules on the recorded battles: the earlier withdrawal ends a battle, the
    attacker's on a tie."""
    a, d = alone(rules[0], rec, 0), alone(rules[1], rec, 1)
    attacker_out = (a >= 0) & ((d < 0) | (a <= d))
    defender_out = (d >= 0) & ~attacker_out
    at = np.where(attacker_out, a, np.where(defender_out, d, -1))
    withdrew = np.where(attacker_out, 0, np.where(defender_out, 1, -1))
    values = (rec.end[0].copy(), rec.end[1].copy())
    hit = np.flatnonzero(at >= 0)
    for s in range(2):
        values[s][hit] = -features[s].price_lost(rec.men[s][at[hit], hit])
    return Played(values, withdrew, at, (a, d))


def never_rule(dates: Sequence[int], f: Features) -> SimulatedRule:
    return SimulatedRule(tuple(dates), (None,) * len(dates), f)


@dataclass
class BothSidesAnswer:
    """The rules both sides reached, their values on the fresh battles (each side's,
    with its 95% interval), what each gains over never withdrawing against the other's
    rule, the rounds of the alternation, and whether it settled."""

    rules: tuple[SimulatedRule, SimulatedRule]
    values: tuple[Estimate, Estimate]
    never: tuple[Estimate, Estimate]
    gain_over_never: tuple[Estimate, Estimate]
    cells: tuple[np.ndarray, np.ndarray]
    outcomes: dict[str, float]
    rounds: list[dict[str, Any]]
    settled: bool
    #: The seed of the training battles and that of the fresh ones.
    seeds: tuple[int, int]
    #: Training, judging and fresh battles recorded.
    battles: tuple[int, int, int]
    partial: bool
    seconds: float


def both_sides_retreat(
    scenario: Scenario, win: float | None, how: Simulation
) -> tuple[BothSidesAnswer, tuple[dict[str, float], dict[str, float]], tuple[float, float]]:
    """Both sides' retreat rules by alternate best responses; with each side's prices
    and win value (``win``, default: the other side's army's price)."""
    paths, fresh, seed, threads = how.paths, how.fresh, how.seed, how.threads
    costs, progress, stop, lock = how.costs, how.progress, how.stop, how.lock
    started = time.perf_counter()
    stopped = stop or (lambda: stop_requested())
    if scenario.ruleset in KERNEL_WITHDRAWAL:
        raise ParameterError(
            "side",
            "both",
            f"both sides choosing is not offered for {scenario.ruleset}: a withdrawal "
            "there may cost field blocks, which a recorded battle cannot say; find one "
            "side's rule ({side=}attacker or defender)",
        )
    bare = without_rule(without_rule(scenario, SIDES[0]), SIDES[1])
    prepared = prepare(bare)
    check_unfolds(prepared, scenario.ruleset)
    check_capabilities(prepared, scenario.ruleset)
    brought = men_brought(prepared.column_bounds)
    names = tuple([n for n in brought if n.startswith(f"{side}.")] for side in SIDES)
    counted = [n.split(".", 1)[1] for n in brought]
    prices = tuple(prices_for(scenario, s, names[s], costs, counted) for s in range(2))
    wins = tuple(
        float(win) if win is not None else sum(prices[1 - s][n] * brought[n] for n in names[1 - s])
        for s in range(2)
    )
    features = tuple(
        Features(names[s], names[1 - s], brought, np.array([prices[s][n] for n in names[s]]))
        for s in range(2)
    )
    seed = scenario.seed if seed is None else seed
    judge_seed = fresh_seed(seed)
    last_seed = fresh_seed(judge_seed)
    total = paths + 2 * fresh
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], total)

    with thread_count(threads):
        dates, block, _ = decision_steps(prepared, seed, paths, lock, stopped)
        fa, fd = features
        args = (dates, (fa, fd), (wins[0], wins[1]), block, stopped, lock, tick)
        training = _record_all(prepared, seed, paths, *args)
        judging = _record_all(prepared, judge_seed, fresh, *args)
        if judging.count < min(fresh, STOPPED_BATTLES):  # Ctrl-C: a small block to say
            small = (dates, (fa, fd), (wins[0], wins[1]), block, lambda: False, lock, tick)
            judging = _record_all(prepared, judge_seed, min(fresh, STOPPED_BATTLES), *small)
    rules = [never_rule(dates, features[0]), never_rule(dates, features[1])]
    rounds: list[dict[str, Any]] = []
    settled = False
    quiet = 0
    side = 0
    for _turn in range(2 * MOST_ROUNDS):
        if stopped():
            break
        their_at = alone(rules[1 - side], training, 1 - side)
        cut, worth = against(training, side, features[side], their_at)
        new = fit_rule(cut, worth, dates, features[side], stopped)
        trial = list(rules)
        trial[side] = new
        gain = Estimate.of(
            play(trial, judging, features).values[side]
            - play(rules, judging, features).values[side]
        )
        kept = bool(gain.low > 0)
        rounds.append({"side": SIDES[side], "gain": gain, "kept": kept})
        if kept:
            rules[side] = new
            quiet = 0
        else:
            quiet += 1
            if quiet >= 2:
                settled = True
                break
        side = 1 - side
    with thread_count(threads):
        reporting = _record_all(prepared, last_seed, fresh, *args) if not stopped() else None
    partial = stopped() or reporting is None or reporting.count < fresh
    shown = reporting if reporting is not None and reporting.count >= 2 else judging
    played = play(rules, shown, features)
    nevers = [never_rule(dates, f) for f in features]
    both_never = play(nevers, shown, features)
    gains = []
    cells = []
    for s in range(2):
        alone_pair = list(rules)
        alone_pair[s] = nevers[s]
        gains.append(Estimate.of(played.values[s] - play(alone_pair, shown, features).values[s]))
        cells.append(_side_cells(rules[s], shown, s, features[s], played))
    n = max(1, shown.count)
    withdrew = played.withdrew
    fought = withdrew < 0
    outcomes = {
        "attacker_wins": float(np.sum(fought & (shown.winner == WON[0])) / n),
        "defender_wins": float(np.sum(fought & (shown.winner == WON[1])) / n),
        "draw": float(np.sum(fought & ~np.isin(shown.winner, WON)) / n),
        "attacker_withdrew": float(np.sum(withdrew == 0) / n),
        "defender_withdrew": float(np.sum(withdrew == 1) / n),
    }
    answer = BothSidesAnswer(
        rules=(rules[0], rules[1]),
        values=(Estimate.of(played.values[0]), Estimate.of(played.values[1])),
        never=(Estimate.of(both_never.values[0]), Estimate.of(both_never.values[1])),
        gain_over_never=(gains[0], gains[1]),
        cells=(cells[0], cells[1]),
        outcomes=outcomes,
        rounds=rounds,
        settled=settled,
        seeds=(seed, last_seed if shown is reporting else judge_seed),
        battles=(training.count, judging.count, shown.count),
        partial=bool(partial),
        seconds=time.perf_counter() - started,
    )
    return answer, (prices[0], prices[1]), (wins[0], wins[1])


def _side_cells(
    rule: SimulatedRule, rec: Recorded, s: int, f: Features, played: Played
) -> np.ndarray:
    """How often side ``s``'s rule fought on and withdrew, by its men left and the
    other's, over the decision steps its battles reached under both rules."""
    shape = (
        len(rule.dates),
        1 + sum(f.brought[n] for n in f.own),
        1 + sum(f.brought[n] for n in f.enemy),
        2,
    )
    their_at = np.where(played.withdrew == 1 - s, played.at, -1)
    cut, _ = against(rec, s, f, their_at)
    mine = np.where(played.withdrew == s, played.at, -1)
    return asked_counts(rule, cut, mine, shape).sum(axis=0)


@dataclass(frozen=True)
class BothSidesResult:
    """Both sides' retreat rules reached by alternate best responses (``answer``), with
    each side's win value and prices."""

    scenario: Scenario
    win_values: tuple[float, float]
    win_value_said: str
    prices: tuple[dict[str, float], dict[str, float]]
    answer: BothSidesAnswer

    method = "simulated"
    side = "both"

    @property
    def partial(self) -> bool:
        return self.answer.partial

    def words(self, s: int) -> str:
        """Side ``s``'s rule in words (its decisions on the fresh battles)."""
        return cells_words(self.answer.cells[s], self.answer.rules[s].never)

    def to_dict(self) -> dict[str, Any]:
        a = self.answer
        sides = {}
        for s, name in enumerate(SIDES):
            sides[name] = {
                "win_value": self.win_values[s],
                "prices": {k.split(".", 1)[1]: v for k, v in self.prices[s].items()},
                "value": a.values[s].to_dict(),
                "never": a.never[s].to_dict(),
                "gain_over_never": a.gain_over_never[s].to_dict(),
                "rule": self.words(s),
                "cells": cell_rows(a.cells[s]),
            }
        return {
            "scenario": self.scenario.source.label,
            "side": "both",
            "method": "simulated",
            **sides,
            **a.outcomes,
            "settled": a.settled,
            "rounds": [
                {"side": r["side"], "gain": r["gain"].to_dict(), "kept": r["kept"]}
                for r in a.rounds
            ],
            "paths": a.battles[0],
            "judging_battles": a.battles[1],
            "battles": a.battles[2],
            "seed": a.seeds[0],
            "fresh_seed": a.seeds[1],
            "partial": a.partial,
            "seconds": a.seconds,
        }
