"""Skirmish battles in plain Python, following docs/skirmish.md line by line.

Slow and obviously correct: objects, dicts and ``random.Random``. It reads only the
validated scenario (tiles, stacks, owners, alliances, unit types, the rules and how moves
are valued) and derives the field, the sides and the participant ids itself, so it checks
the compiler too. Both readings are here: ``rules = "text"`` as the rule text words it,
``"engine"`` as the released engine's code plays it (docs/skirmish.md, "Rule text and
released engine"). Returns the same outcome columns as the kernel (``SkirmishPrepared.run``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from simulator.rulesets.skirmish.model import Battle
from simulator.rulesets.stop_rules import NEVER, StopRule

#: ``winner`` of a battle stopped while still undecided (kernels/stops.py's code).
FIGHTING = 5
#: ``winner`` when the attacker (the defender) withdrew: 3 (4), kernels/stops.py's codes.
WITHDREW = (3, 4)


SIDES = ("attacker", "defender")
MOVE_ORDER = ("strike", "archery", "charge", "healing")  # inner loop of the choice
REPEATS = {"strike": 2, "archery": 2, "charge": 1, "healing": 1}


# "Hex neighbours use odd-q offset coordinates (columns shifted by x parity)."
def neighbours(x: int, y: int) -> list[tuple[int, int]]:
    if x % 2 == 0:  # even column: its diagonal neighbours are at rows y - 1 and y
        return [(x, y - 1), (x + 1, y - 1), (x + 1, y), (x, y + 1), (x - 1, y), (x - 1, y - 1)]
    return [(x, y - 1), (x + 1, y), (x + 1, y + 1), (x, y + 1), (x - 1, y + 1), (x - 1, y)]


@dataclass
class Fighter:
    id: int
    side: int
    type: str
    attack: int
    defence: int
    damage: int
    max_health: int
    health: int
    abilities: set[str]
    healed: bool = False  # its healing used already (a battle in progress)


def participants(battle: Battle) -> list[Fighter]:
    alliances = [set(group) for group in battle.alliances]

    def allied(a: str, b: str) -> bool:
        return a == b or any(a in g and b in g for g in alliances)

    attacker = next(s.owner for s in battle.stacks if s.tile == battle.attacking)
    defender = battle.defender_owner
    engine = battle.rules == "engine"
    # "the six neighbour tiles in direction order 0..5, then the attacked tile;
    #  within a tile, stack order, then unit order"
    order = [*neighbours(*battle.attacked), battle.attacked]
    out: list[Fighter] = []
    for tile in order:
        for stack in battle.stacks:
            if stack.tile != tile:
                continue
            if engine:
                # The engine's set-up: the attacking stack's owner attacks, anyone else defends.
                a, d = stack.owner == attacker, stack.owner != attacker
            else:
                a, d = allied(stack.owner, attacker), allied(stack.owner, defender)
            if a == d:
                continue  # allied with both or neither: stays out
            for unit in stack.units:
                t = battle.unit_types[unit.type]
                out.append(
                    Fighter(
                        len(out),
                        0 if a else 1,
                        t.name,
                        t.attack,
                        t.defence,
                        t.damage,
                        t.health,
                        unit.health,
                        set(t.abilities),
                        unit.healed,
                    )
                )
    return out


def damage_roll(rng: random.Random, attack: int, defence: int, damage: int) -> int:
    attack, defence, damage = max(attack, 1), max(defence, 1), max(damage, 1)
    attack_value = rng.randint(0, attack)
    defence_value = rng.randint(0, defence)
    if attack_value > defence_value:
        return rng.randint(0, damage)
    return 0


def exact_expected_damage(attack: int, defence: int, damage: int) -> float:
    attack, defence, damage = max(attack, 1), max(defence, 1), max(damage, 1)
    hits = sum(min(a, defence + 1) for a in range(attack + 1))
    return hits / ((attack + 1) * (defence + 1)) * damage / 2.0


class Fight:
    def __init__(
        self,
        fighters: list[Fighter],
        rng: random.Random,
        sampled: bool,
        turn_limit: int,
        engine: bool = False,
        from_step: int = 0,
        retreat: tuple[StopRule, StopRule] = (NEVER, NEVER),
    ) -> None:
        self.engine = engine
        self.retreat = retreat
        self.turn_limit = turn_limit
        self.hit_turn_limit = False
        self.p = fighters
        self.rng = rng
        self.sampled = sampled
        self.turn = from_step  # turns already fought
        self.men_at_start = (self.men(0), self.men(1))
        self.healer_ready = {f.id: "healing" in f.abilities and not f.healed for f in fighters}
        self.effect = {(s, m): 0 for s in (0, 1) for m in (*MOVE_ORDER, "riposte")}
        self.moves: list[tuple[int, int, str, int]] = []

    def viable(self, me: Fighter, target: Fighter, move: str) -> bool:
        if me.health <= 0 or target.health <= 0:
            return False
        if move == "healing":
            return self.healer_ready[me.id] and target.id != me.id and target.side == me.side
        if target.side == me.side:
            return False
        return move != "charge" or self.turn == 0

    def expected_value(self, me: Fighter, target: Fighter, move: str) -> float:
        if move == "healing":
            return float(min(target.max_health - target.health, 5))
        if self.sampled:
            mean = (
                sum(damage_roll(self.rng, me.attack, target.defence, me.damage) for _ in range(5))
                / 5
            )
        else:
            mean = exact_expected_damage(me.attack, target.defence, me.damage)
        return mean + 2 if move == "charge" else mean

    def make(self, me: Fighter, target: Fighter, move: str) -> None:
        if move == "healing":
            effect = 5
            self.healer_ready[me.id] = False
            before = target.health
            target.health = min(target.health + effect, target.max_health)
            self.effect[me.side, move] += target.health - before
        else:
            attack, damage = me.attack, me.damage
            if move == "charge":
                # text: "adds +2 to attack"; engine: and rolls its attack as the damage
                attack, damage = attack + 2, (me.attack if self.engine else damage)
            if move == "riposte":
                # text: "attack and damage scores reduced by 1"; engine: attack - 1 for both
                attack, damage = attack - 1, (attack if self.engine else damage) - 1
            effect = damage_roll(self.rng, attack, target.defence, damage)
            before = target.health
            target.health = max(target.health - effect, 0)
            self.effect[me.side, move] += before - target.health
        self.moves.append((me.id, target.id, move, effect))

    def act(self, me: Fighter) -> None:
        best, best_value = None, 0.0
        for target in self.p:
            for move in MOVE_ORDER:
                if move in me.abilities and self.viable(me, target, move):
                    value = self.expected_value(me, target, move) * REPEATS[move]
                    if value > best_value:
                        best, best_value = (target, move), value
        if best is None:
            return  # nothing strictly positive: waits
        target, move = best
        for _ in range(REPEATS[move]):
            if not self.viable(me, target, move):
                break
            self.make(me, target, move)
            if move == "strike" and target.health > 0 and "strike" in target.abilities:
                self.make(target, me, "riposte")

    def men(self, side: int) -> int:
        """A side's men: its participants alive."""
        return sum(1 for f in self.p if f.side == side and f.health > 0)

    def stops(self, side: int) -> bool:
        """Whether ``side``'s stop rule holds now: any of its parts (docs/unfolding.md)."""
        rule = self.retreat[side]
        men, enemy = self.men(side), self.men(1 - side)
        at_most = rule.men_at_most(self.men_at_start[side])
        if at_most is not None and men <= at_most:
            return True
        if rule.after is not None and self.turn >= rule.after:
            return True
        if rule.outnumbered is not None and enemy >= Fraction(repr(rule.outnumbered)) * men:
            return True
        return rule.gone is not None and not any(
            f.side == side and f.type == rule.gone and f.health > 0 for f in self.p
        )

    def totals(self) -> tuple[int, int]:
        return (
            sum(f.health for f in self.p if f.side == 0),
            sum(f.health for f in self.p if f.side == 1),
        )

    def run(self, until: int | None = None) -> int:
        """The winner; with ``until``, FIGHTING (still fighting) when the battle goes on
        after that turn, stopped there. A battle in progress goes on from its turn."""
        # The engine's last totals start at 0, so turn 1 always counts as a change; a
        # battle in progress compares its next turn with the totals as they stand.
        last = (0, 0) if self.engine and self.turn == 0 else self.totals()
        if until is not None and until <= self.turn:
            return FIGHTING
        unchanged = 0
        while True:
            for me in self.p:
                if me.health > 0:
                    self.act(me)
            self.turn += 1
            now = self.totals()
            unchanged = unchanged + 1 if now == last else 0
            last = now
            if now[0] == 0 and now[1] == 0:
                return 2
            if now[0] == 0:
                return 1
            if now[1] == 0:
                return 0
            if unchanged >= 3:
                return 2
            if self.turn >= self.turn_limit:
                self.hit_turn_limit = True
                return 2
            # Undecided: the attacker's rule first; the side leaves as it stands.
            for side in (0, 1):
                if self.stops(side):
                    return WITHDREW[side]
            if self.turn == until:
                return FIGHTING


Log = list[tuple[int, int, str, int]]


def fight(
    battle: Battle, rng: random.Random, until: int | None = None
) -> tuple[dict[str, int], Log]:
    fighters = participants(battle)
    f = Fight(
        fighters,
        rng,
        battle.expected_value == "sampled5",
        battle.turn_limit,
        engine=battle.rules == "engine",
        from_step=battle.from_step,
        retreat=battle.retreat,
    )
    row = {"winner": f.run(until), "steps": f.turn}
    row["turn_limit"] = int(f.hit_turn_limit)
    for s, side in enumerate(SIDES):
        for move in ("strike", "archery", "charge", "riposte"):
            row[f"damage.{side}.{move}"] = f.effect[s, move]
        row[f"healing.{side}"] = f.effect[s, "healing"]
    for x in fighters:
        row[f"health_left.{SIDES[x.side]}.{x.id}.{x.type}"] = x.health
        name = f"casualties.{SIDES[x.side]}.{x.type}"
        row[name] = row.get(name, 0) + (x.health == 0)
    return row, f.moves


def run(battle: Battle, seed: int, count: int, until: int | None = None) -> dict[str, np.ndarray]:
    rng = random.Random(seed)
    rows = [fight(battle, rng, until)[0] for _ in range(count)]
    return {name: np.array([r[name] for r in rows], np.int64) for name in rows[0]}
