"""One battle read through: the move log of battle K of a run (``battle-odds replay``).

The log is the one of exactly the battle that ``simulate`` runs as battle K with the
same seed: the kernel fights it again from battle K's own stream, with logging on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import BattleOddsError
from .model import SIDES, field_tiles
from .prepare import Move, SkirmishPrepared, health_column

if TYPE_CHECKING:
    from ...scenario.scenario import Scenario

#: By ``winner``: 0..2 the battle's own ends, 3 and 4 a side's stop rule (kernels/stops.py).
OUTCOMES = ("attacker wins", "defender wins", "stalemate", "attacker withdrew", "defender withdrew")


@dataclass(frozen=True)
class Replay:
    scenario: Scenario
    seed: int
    battle: int
    outcome: dict[str, int]
    moves: list[Move]
    prepared: SkirmishPrepared

    def move_log(self) -> list[tuple[int, int, str, int]]:
        return [m.as_tuple() for m in self.moves]

    def lines(self) -> list[str]:
        """The battle as text: participants, then every move with the target's health."""
        model = self.prepared.battle
        tiles = field_tiles(model.attacked)
        out = [
            f"{self.scenario.name}: battle {self.battle} of seed {self.seed}: "
            f"{OUTCOMES[self.outcome['winner']]} after {self.outcome['steps']} "
            + ("turn" if self.outcome["steps"] == 1 else "turns"),
            f"rules: {model.rules} (expected values: {model.expected_value})",
        ]
        if model.from_step:
            out.append(
                f"a battle in progress: {model.from_step} "
                + ("turn" if model.from_step == 1 else "turns")
                + " fought before, the log goes on from the next"
            )
        for side, rule in zip(SIDES, model.retreat, strict=True):
            if not rule.never:
                out.append(f"the {side} withdraws {rule.words('turns')}")
        out.append("participants:")
        health = {p.id: p.health for p in model.participants}
        for p in model.participants:
            x, y = tiles[p.direction]
            out.append(
                f"  {p.id:>3}  {SIDES[p.side]:<8} tile [{x}, {y}] stack {p.stack} "
                f"unit {p.unit_number}  {p.unit.name} {p.health}/{p.unit.health}  "
                f"{'+'.join(p.unit.abilities) or '-'}"
            )
        out.append("moves (participant, target, move type, effect):")
        names = {p.id: p.unit.name for p in model.participants}
        maximum = {p.id: p.unit.health for p in model.participants}
        turn = 0
        for m in self.moves:
            if m.turn != turn:
                turn = m.turn
                out.append(f"  turn {turn}")
            before = health[m.target]
            if m.move_type == "healing":
                health[m.target] = min(before + m.effect, maximum[m.target])
            else:
                health[m.target] = max(before - m.effect, 0)
            note = (
                f"{names[m.participant]} -> {names[m.target]}: "
                f"health {before} -> {health[m.target]}"
            )
            if health[m.target] == 0:
                note += " (dead)"
            out.append(f"    {m.as_tuple()!r:<30} # {note}")
        out.append(
            "health left: "
            + ", ".join(f"{p.id}:{self.outcome[health_column(p)]}" for p in model.participants)
        )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.name,
            "seed": self.seed,
            "battle": self.battle,
            "rules": self.prepared.battle.rules,
            "expected_value": self.prepared.battle.expected_value,
            "outcome": self.outcome,
            "moves": [list(m.as_tuple()) for m in self.moves],
            "turns": [m.turn for m in self.moves],
        }


def replay(
    scenario: Scenario, battle: int, seed: int | None = None, battles: int | None = None
) -> Replay:
    """Battle ``battle`` of the run of ``battles`` battles (default: the scenario's) of
    ``scenario`` with ``seed`` (default: the scenario's)."""
    if scenario.ruleset != "skirmish":
        raise BattleOddsError(
            f"replay: the {scenario.ruleset} ruleset keeps no move log (only skirmish does)"
        )
    seed = scenario.seed if seed is None else seed
    if not 0 <= seed < 2**63:
        raise BattleOddsError(f"seed: {seed}: expected 0..2**63-1")
    battles = scenario.battles if battles is None else battles
    if not 0 <= battle < battles:
        raise BattleOddsError(
            f"--battle {battle}: expected 0..{battles - 1:,}: the run has {battles:,} "
            "battles, counted from 0 (--battles sets the run's battles)"
        )
    prepared = SkirmishPrepared(scenario.model)
    outcome, moves = prepared.replay(seed, battle)
    return Replay(scenario, seed, battle, outcome, moves, prepared)


def move_log(
    scenario: Scenario, battle: int, seed: int | None = None
) -> list[tuple[int, int, str, int]]:
    """``(participant, target, move_type, effect)`` for every move of battle ``battle``."""
    return replay(scenario, battle, seed).move_log()
