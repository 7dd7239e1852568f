"""A slow, obviously-correct Age of Gods battle, one Python object per man.

Follows docs/age_of_gods.md step by step with Python's own random numbers. It reads
the validated model, not the kernel's group table, so agreement in distribution
checks the kernel's bookkeeping (group table, shielding, caps, wasted hits, bands,
phases) against a plain reading of the rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from simulator.rulesets.age_of_gods.model import (
    CONTROL_LIMIT,
    CONTROL_LIMIT_DEFENDING_EXTRA,
    SIDES,
    Battle,
    noble_in_battle,
)
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared

PHASES = ("volley", "special", "missile", "melee", "stalemate")
COLLAPSE = 100
ATTACKER, DEFENDER, DRAW = 0, 1, 2


@dataclass
class Man:
    side: int
    unit: int
    row: int
    noble: bool
    type: str
    attack: int
    defense: int
    missile: int
    value: int
    band: tuple[int, int, str, int]  # side, unit, type, row: who flees together
    mounted: bool = False
    pike: bool = False
    special: int = 0
    targets: int = 0
    survive: float = 0.0
    flee: float = 0.0
    leader: bool = False
    inside: bool = False
    health: int = 100
    present: bool = True
    hit: bool = False


@dataclass
class Structure:
    defense: int
    damage: int
    standing: bool = True
    pending: int = 0


class Fight:
    def __init__(self, battle: Battle, rng: random.Random) -> None:
        self.battle = battle
        self.rng = rng
        self.men: list[Man] = []
        self.structures: list[Structure | None] = []
        self.start = [0, 0]
        self.quarters = [4, battle.defender_quarters]
        self.row: dict[str, int] = {}
        self.fronts = [0, 0]
        for s, side in enumerate(battle.sides):
            st = side.structure
            self.structures.append(Structure(st.defense, st.damage) if st else None)
            room = battle.capacity[st.kind] if st else 0
            for u, unit in enumerate(side.units):
                nb = noble_in_battle(battle, unit.noble)
                people = [
                    Man(
                        s,
                        u,
                        unit.behind,
                        True,
                        "noble",
                        nb.attack,
                        nb.defense,
                        nb.missile,
                        nb.value,
                        (s, u, "noble", unit.behind),
                        leader=u == 0,
                        health=unit.noble.health,
                    )
                ]
                people += self.fielded(s, u, unit)
                for man in people:
                    man.inside = room > 0
                    room -= 1
                    self.start[s] += man.value
                self.men += people

    def fielded(self, s: int, u: int, unit) -> list[Man]:  # type: ignore[no-untyped-def]
        battle = self.battle
        men = []
        for entry in unit.men:
            f = battle.fighters[entry.type]
            r = f.ratings(battle.terrain, battle.weather)
            for _ in range(entry.count):
                men.append(
                    Man(
                        s,
                        u,
                        entry.behind,
                        False,
                        entry.type,
                        r.attack,
                        r.defense,
                        r.missile,
                        r.value,
                        (s, u, entry.type, entry.behind),
                        f.mounted,
                        f.pike,
                        f.special.strength if f.special else 0,
                        f.special.targets if f.special else 0,
                        f.survive,
                        f.flee,
                    )
                )
        if battle.control_limits:
            limit = CONTROL_LIMIT + (CONTROL_LIMIT_DEFENDING_EXTRA if s == 1 else 0)
            strongest = sorted(
                range(len(men)), key=lambda i: -(men[i].attack + men[i].defense + men[i].missile)
            )
            keep = set(strongest[:limit])
            men = [m for i, m in enumerate(men) if i in keep]
        return men

    # --- who is where -------------------------------------------------------------
    def present(self, s: int) -> list[Man]:
        return [m for m in self.men if m.present and m.side == s]

    def shielded(self, noble: Man) -> bool:
        """Olympia: a noble is a target only once his own men are down; the stack
        leader only once everyone else of his side is down."""
        own = [m for m in self.present(noble.side) if m.unit == noble.unit and not m.noble]
        if own:
            return True
        if noble.leader:
            return any(m.unit != noble.unit for m in self.present(noble.side))
        return False

    def targetable(self, s: int) -> list[Man]:
        return [m for m in self.present(s) if not (m.noble and self.shielded(m))]

    def front_row(self, s: int) -> int:
        rows = [m.row for m in self.targetable(s)]
        return min(rows) if rows else 1 << 30

    def in_front(self, m: Man) -> bool:
        """Everyone at or before his side's front row (set at the start of the phase)."""
        return m.row <= self.fronts[m.side]

    def survey(self) -> None:
        self.fronts = [self.front_row(0), self.front_row(1)]

    # --- one strike -----------------------------------------------------------------
    def strike(self, rating: int, mounted: bool, pool: list[Man | Structure]) -> None:
        target = pool[self.rng.randrange(len(pool))]
        if isinstance(target, Structure):
            defense = 4 * target.defense
        else:
            defense = target.defense * self.quarters[target.side]
            if mounted and target.pike:
                defense *= 2
            st = self.structures[target.side]
            if target.inside and st is not None and st.standing:
                defense += 4 * st.defense
        if self.rng.random() * (rating + defense) < rating:
            if isinstance(target, Structure):
                target.pending += 1
            else:
                target.hit = True  # a second hit on a man already hit is wasted

    def front_pool(self, e: int) -> list[Man | Structure]:
        pool: list[Man | Structure] = [m for m in self.targetable(e) if m.row == self.fronts[e]]
        st = self.structures[e]
        if st is not None and st.standing:
            pool.append(st)
        return pool

    # --- phases ---------------------------------------------------------------------
    def caps(self, s: int) -> tuple[int, int]:
        """Side ``s``'s missile and melee caps. Defenders are what a strike of the
        phase can target: a side shoots at most one missile per defender of its own
        and strikes at most 4 times per enemy defender in melee; an enemy with more
        targetable men behind its front than in it counts half of all its targetable
        men (rounded down), structure included, so men hidden behind a thin front
        still draw melee strikes."""
        e = 1 - s
        defenders = len(self.front_pool(e))
        structure = self.structures[e]
        every = len(self.targetable(e)) + int(structure is not None and structure.standing)
        if every - defenders > defenders:
            defenders = every // 2
        return len(self.front_pool(s)), 4 * defenders

    def shoot_or_fight(self, s: int, phase: str) -> int:
        missile_cap, melee_cap = self.caps(s)
        if phase == "missile":
            strikers = [m for m in self.present(s) if not self.in_front(m) and m.missile > 0]
            cap = missile_cap
        else:
            strikers = [m for m in self.present(s) if self.in_front(m) and m.attack > 0]
            cap = melee_cap
        self.rng.shuffle(strikers)
        strikers = strikers[:cap]
        pool = self.front_pool(1 - s)
        for m in strikers:
            if phase == "missile":
                self.strike(4 * m.missile, m.mounted, pool)
            else:
                self.strike(m.attack * self.quarters[s], m.mounted, pool)
        return len(strikers)

    def specials(self) -> int:
        first = self.rng.randrange(2)
        strikes = 0
        for s in (first, 1 - first):
            pool: list[Man | Structure] = list(self.targetable(1 - s))
            if not pool:
                continue
            for m in self.present(s):
                for _ in range(m.targets if m.special else 0):
                    self.strike(4 * m.special, m.mounted, pool)
                    strikes += 1
        return strikes

    def apply(self) -> None:
        losses: dict[tuple[int, int, str, int], int] = {}
        for m in self.men:
            if not m.hit:
                continue
            m.hit = False
            if m.noble:
                m.present = False
                m.health -= self.rng.randint(1, 100)
                what = "killed" if m.health <= 0 else "wounded"
                self.count(f"nobles_{what}.{SIDES[m.side]}")
                if m.leader:
                    self.row[f"leader_{what}.{SIDES[m.side]}"] = 1
            elif not (m.survive and self.rng.random() < m.survive):
                m.present = False
                self.count(f"casualties.{SIDES[m.side]}.{m.type}")
                losses[m.band] = losses.get(m.band, 0) + 1
        for m in self.men:
            if m.present and m.flee and losses.get(m.band) and self.rng.random() < m.flee:
                m.present = False
                self.count(f"casualties.{SIDES[m.side]}.{m.type}")
                self.count(f"fled.{SIDES[m.side]}.{m.type}")
        for s, st in enumerate(self.structures):
            if st is None:
                continue
            used = min(st.pending, st.defense)
            st.defense -= used
            st.damage = min(COLLAPSE, st.damage + st.pending - used)
            st.pending = 0
            if st.standing and st.damage >= COLLAPSE:
                st.standing = False
                self.row[f"structure_collapsed.{SIDES[s]}"] = 1

    def count(self, column: str) -> None:
        self.row[column] = self.row.get(column, 0) + 1

    def lost(self, s: int, threshold: list[float]) -> bool:
        people = self.present(s)
        return not people or sum(m.value for m in people) <= threshold[s]

    def run(self) -> tuple[int, int, str]:
        threshold = [
            self.start[s] * side.break_point / 100 for s, side in enumerate(self.battle.sides)
        ]

        def verdict() -> int | None:
            a, d = self.lost(0, threshold), self.lost(1, threshold)
            if a or d:
                return DRAW if a and d else (DEFENDER if a else ATTACKER)
            return None

        self.survey()
        self.shoot_or_fight(DEFENDER, "missile")
        self.apply()
        winner = verdict()
        if winner is not None:
            return winner, 0, "volley"
        rounds = 0
        while True:
            rounds += 1
            strikes = self.specials()
            self.apply()
            if (winner := verdict()) is not None:
                return winner, rounds, "special"
            for phase in ("missile", "melee"):
                self.survey()
                strikes += self.shoot_or_fight(ATTACKER, phase) + self.shoot_or_fight(
                    DEFENDER, phase
                )
                self.apply()
                if (winner := verdict()) is not None:
                    return winner, rounds, phase
            if strikes == 0:
                return DRAW, rounds, "stalemate"

    def prisoners(self, winner: int) -> None:
        """Olympia: each surviving noble of the loser is taken with chance
        clamp(25 W / L, 25, 75) percent, W and L the men and nobles still standing."""
        loser = 1 - winner
        standing = [len(self.present(s)) for s in (0, 1)]
        percent = 75
        if standing[loser]:
            percent = min(75, max(25, 25 * standing[winner] // standing[loser]))
        for m in self.men:
            if m.side == loser and m.noble and m.health > 0 and self.rng.randrange(100) < percent:
                self.count(f"nobles_captured.{SIDES[loser]}")
                if m.leader:
                    self.row[f"leader_captured.{SIDES[loser]}"] = 1


def simulate(battle: Battle, battles: int, seed: int) -> dict[str, np.ndarray]:
    """Outcome columns, named as the kernel's, of ``battles`` reference battles."""
    names = list(AgeOfGodsPrepared(battle).run(0, 0, 0))
    rng = random.Random(seed)
    rows = []
    for _ in range(battles):
        fight = Fight(battle, rng)
        winner, steps, phase = fight.run()
        if winner != DRAW:
            fight.prisoners(winner)
        for s, st in enumerate(fight.structures):
            if st is not None:
                fight.row[f"structure_defense.{SIDES[s]}"] = st.defense
                fight.row[f"structure_damage.{SIDES[s]}"] = st.damage
        fight.row.update({"winner": winner, "steps": steps, f"decided_in.{phase}": 1})
        rows.append(fight.row)
    return {name: np.array([r.get(name, 0) for r in rows], np.int64) for name in names}
