"""A slow, obviously-correct confrontation battle, one Python object per unit.

Follows docs/confrontation.md paragraph by paragraph with Python's own random
numbers and works from the validated model (not the kernel's tables), so agreement
with the Numba kernel in distribution checks the compilation to arrays as well as the
kernel. Resolve is kept as a float (it moves in exact half points).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from simulator.rulesets.confrontation.model import (
    SIDES,
    Action,
    Battle,
    Stack,
    Unit,
    hex_distance,
    unit_column,
)

#: ``winner`` of a battle stopped while still undecided (kernels/stops.py's code).
FIGHTING = 5
#: ``winner`` when the attacker (the defender) withdrew: 3 (4), kernels/stops.py's codes.
WITHDREW = (3, 4)


@dataclass
class Fighter:
    label: str
    side: int
    stack: int  # index of its stack (its space: stacks never move)
    unit: Unit
    advantages: int  # its own plus its space's
    integrity: int
    resolve: float
    alive: bool = True

    def strength(self) -> Fraction:
        # Strength = ((arms x a) + (resolve x b)) x (1 + advantages / 4); never below 0,
        # exact on the decimals the scenario wrote (Fraction of each value's decimal text).
        u = self.unit
        arms, a, b = (Fraction(repr(x)) for x in (u.arms, u.a, u.b))
        resolve = Fraction(repr(self.resolve))
        return max(Fraction(0), (arms * a + resolve * b) * (1 + Fraction(self.advantages, 4)))


class ReferenceBattle:
    def __init__(self, battle: Battle, rng: random.Random) -> None:
        self.battle = battle
        self.rng = rng
        self.stacks: list[Stack] = list(battle.stacks)
        self.fighters: list[Fighter] = []
        self.of_stack: list[list[Fighter]] = []
        for s, stack in enumerate(battle.stacks):
            members = []
            for unit in stack.units:
                f = Fighter(
                    unit_column(stack, unit),
                    stack.side,
                    s,
                    unit,
                    unit.advantages + stack.advantages,
                    unit.integrity,
                    unit.resolve,
                )
                self.fighters.append(f)
                members.append(f)
            self.of_stack.append(members)
        self.damage = [0, 0]
        self.men_at_start = [self.men(0), self.men(1)]

    def distance(self, s: int, t: int) -> int:
        a, b = self.stacks[s], self.stacks[t]
        return hex_distance(a.q, a.r, b.q, b.r)

    def men(self, side: int) -> int:
        """A side's men: its units still in the battle."""
        return sum(1 for f in self.fighters if f.alive and f.side == side)

    def side_alive(self, side: int) -> bool:
        return any(f.alive and f.side == side for f in self.fighters)

    # -- Confrontation (one unit against another) ---------------------------------------
    def confront(self, attacker: Fighter, defender: Fighter) -> None:
        sa, sd = attacker.strength(), defender.strength()
        if self.battle.min_damage_rule == "flat1" and sa <= sd:
            damage = 1
        else:
            n = max(1, math.floor(sa - sd))
            damage = self.rng.randint(1, n) + self.rng.randint(1, n)
        defender.integrity -= damage
        self.damage[defender.side] += damage
        if defender.integrity <= 0:
            self.destroyed(defender)

    # -- Morale ----------------------------------------------------------------------------
    def destroyed(self, unit: Fighter) -> None:
        unit.alive = False
        for other in self.fighters:
            if other.alive and self.distance(other.stack, unit.stack) <= self.battle.nearby:
                other.resolve += -1 if other.side == unit.side else 1

    def end_of_turn(self) -> None:
        for f in self.fighters:
            if f.alive:
                if f.resolve < 1:
                    f.resolve = min(1.0, f.resolve + 0.5)
                elif f.resolve > 3:
                    f.resolve = max(3.0, f.resolve - 0.5)

    # -- Abilities -------------------------------------------------------------------------
    def highest(self, candidates: list[Fighter]) -> Fighter | None:
        best = None
        for f in candidates:  # ties: the first listed
            if best is None or f.strength() > best.strength():
                best = f
        return best

    def living(self, stack: int) -> list[Fighter]:
        return [f for f in self.of_stack[stack] if f.alive]

    def interceptors(self, target: int) -> list[Fighter]:
        side = self.stacks[target].side
        return [
            f
            for f in self.fighters
            if f.alive
            and f.side == side
            and (
                (f.stack == target and f.unit.reach)
                or (f.unit.aerial and self.distance(f.stack, target) <= f.unit.speed)
            )
        ]

    def attack(self, x: Fighter, target: int) -> None:
        d = self.highest(self.living(target))
        assert d is not None
        for first, second in ((x, d), (d, x), (x, d)):
            self.confront(first, second)
            if not (x.alive and d.alive):
                return

    def bombard(self, x: Fighter, target: int) -> None:
        for f in list(self.of_stack[target]):
            if f.alive:
                self.confront(x, f)

    def strike(self, x: Fighter, target: int) -> None:
        d = self.highest(self.interceptors(target))
        if d is None:
            self.bombard(x, target)
            return
        self.confront(x, d)
        if x.alive and d.alive:
            self.confront(d, x)

    # -- The simple policy -----------------------------------------------------------------
    def expected(self, x: Fighter, y: Fighter) -> int:
        sx, sy = x.strength(), y.strength()
        if self.battle.min_damage_rule == "flat1" and sx <= sy:
            return 1
        return max(1, math.floor(sx - sy)) + 1  # the mean of 2dN

    def value(self, x: Fighter, ability: str, target: int) -> int:
        bombard = sum(self.expected(x, f) for f in self.living(target))
        if ability == "attack":
            d = self.highest(self.living(target))
            assert d is not None
            return 2 * self.expected(x, d) - self.expected(d, x)
        if ability == "strike":
            c = self.highest(self.interceptors(target))
            if c is not None:
                return self.expected(x, c) - self.expected(c, x)
        return bombard

    def nearest(self, x: Fighter) -> int | None:
        best = None
        for s, stack in enumerate(self.stacks):
            if (
                stack.side != x.side
                and self.living(s)
                and (best is None or self.distance(x.stack, s) < self.distance(x.stack, best))
            ):
                best = s
        return best

    def act(self, x: Fighter, ability: str | None, target: int | None) -> None:
        if not x.alive:
            return
        if target is None:
            target = self.nearest(x)
            if target is None:
                return
        if not self.living(target):
            return
        if ability is None:
            values = [(self.value(x, a, target), a) for a in x.unit.abilities]
            ability = max(values, key=lambda v: v[0])[1]  # max keeps the first of equals
        {"attack": self.attack, "bombard": self.bombard, "strike": self.strike}[ability](x, target)

    # -- Stop rules (docs/unfolding.md) ---------------------------------------------------
    def stops(self, side: int, turn: int) -> bool:
        """Whether ``side``'s stop rule holds after ``turn``: any of its parts."""
        rule = self.battle.retreat[side]
        men, enemy = self.men(side), self.men(1 - side)
        at_most = rule.men_at_most(self.men_at_start[side])
        if at_most is not None and men <= at_most:
            return True
        if rule.after is not None and turn >= rule.after:
            return True
        if rule.outnumbered is not None and enemy >= Fraction(repr(rule.outnumbered)) * men:
            return True
        return rule.gone is not None and not any(
            f.alive and f.side == side and f.unit.type == rule.gone for f in self.fighters
        )

    # -- Turns -----------------------------------------------------------------------------
    def turn_units(self, actions: tuple[Action, ...]) -> list[tuple[Fighter, Action]]:
        out = []
        for action in actions:
            members = self.of_stack[action.stack]
            chosen = members if action.unit is None else [members[action.unit]]
            out.extend((f, action) for f in chosen)
        return out

    def play(self, until: int | None = None) -> tuple[int, int]:
        """The winner and the turn it was decided; with ``until``, FIGHTING (still fighting)
        and ``until`` when the battle is undecided after that turn, the state then.
        A battle in progress goes on from the turn after ``from_step``."""
        start = self.battle.from_step
        if until is not None and until <= start:
            return FIGHTING, start
        for turn in range(start + 1, self.battle.turns + 1):
            actions = self.battle.turn_actions(turn)
            for unit, action in self.turn_units(actions or ()):
                self.act(unit, action.ability, action.target)
                a, d = self.side_alive(0), self.side_alive(1)
                if not (a and d):
                    return (0 if a else 1), turn
            self.end_of_turn()
            if turn == self.battle.turns:
                break  # a draw: the last turn is over
            # An undecided battle: the attacker's rule first, then the defender's; the
            # side leaves as it stands.
            for side in (0, 1):
                if self.stops(side, turn):
                    return WITHDREW[side], turn
            if turn == until:
                return FIGHTING, turn
        return 2, self.battle.turns


def run(battle: Battle, battles: int, seed: int, until: int | None = None) -> dict[str, np.ndarray]:
    """Outcome columns of ``battles`` reference battles (the kernel's column names);
    with ``until``, each stopped after that turn when still undecided (``run_until``)."""
    rng = random.Random(seed)
    rows: dict[str, list[int]] = {"winner": [], "steps": []}
    for _ in range(battles):
        b = ReferenceBattle(battle, rng)
        winner, steps = b.play(until)
        row = {"winner": winner, "steps": steps}
        row["turn_limit"] = int(winner == 2 and steps == battle.turns)
        for s, side in enumerate(SIDES):
            row[f"damage.{side}"] = b.damage[s]
        for f in b.fighters:
            row[f"destroyed.{f.label}"] = int(not f.alive)
            row[f"integrity.{f.label}"] = max(0, f.integrity)
            row[f"resolve_x2.{f.label}"] = round(2 * f.resolve)
            key = f"casualties.{SIDES[f.side]}.{f.unit.type}"
            row[key] = row.get(key, 0) + int(not f.alive)
        for key, value in row.items():
            rows.setdefault(key, []).append(value)
    return {k: np.array(v, np.int64) for k, v in rows.items()}
