"""A slow, obviously-correct Age of Gods battle, one Python object per man.

Follows docs/age_of_gods.md step by step with Python's own random numbers. It reads
the validated model, not the kernel's group table, so agreement in distribution
checks the kernel's bookkeeping (group table, shielding, caps, wasted hits, bands,
phases) against a plain reading of the rules. Every point where the text's and the
released engine's readings part is followed as the model's settings say (terrain,
control limits, structures, prisoners, the sea), and so are allies arriving in a later
round, nobles' own ratings and tactics, garrisons and monster stacks; a battle in
progress (``from_step``: rounds already fought) and the sides' stop rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from simulator.rulesets.age_of_gods.keys import RANKS
from simulator.rulesets.age_of_gods.model import (
    CONTROL_LIMIT,
    CONTROL_LIMIT_DEFENDING_EXTRA,
    SIDES,
    Battle,
    Leader,
    noble_in_battle,
)
from simulator.rulesets.age_of_gods.prepare import AgeOfGodsPrepared

#: ``winner`` of a side that withdrew, and of a battle stopped while still undecided
#: (kernels/stops.py's codes).
ATTACKER_WITHDREW, DEFENDER_WITHDREW, FIGHTING = 3, 4, 5


PHASES = ("volley", "special", "missile", "melee", "stalemate", "withdrawal")
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
    attack_percent: int = 100  # his unit's tactics
    defense_percent: int = 100
    arrives: int = 0  # the round he joins in (allies)


@dataclass
class Structure:
    defense: int
    damage: int
    covers: int  # the men its bonus covers under the engine's rules (0: the text's)
    standing: bool = True
    pending: int = 0


class Fight:
    def __init__(self, battle: Battle, rng: random.Random) -> None:
        self.battle = battle
        self.rng = rng
        self.men: list[Man] = []
        self.structures: list[Structure | None] = []
        self.start = [0, 0]
        text_terrain = battle.terrain_rules == "text"
        # The terrain multiplier on each side's defense and melee attack, in quarters.
        self.quarters = [4, battle.defender_quarters]
        self.attack_quarters = self.quarters if text_terrain else [4, 4]
        self.row: dict[str, int] = {}
        self.fronts = [0, 0]
        # A battle in progress: the rounds fought already; allies of those rounds are there.
        self.round = battle.from_step
        for s, side in enumerate(battle.sides):
            st = side.structure
            engine = battle.structure_rules == "engine"
            covers = battle.capacity[st.kind] if st and engine else 0
            self.structures.append(Structure(st.defense, st.damage, covers) if st else None)
            room = battle.capacity[st.kind] if st and not engine else 0
            for u, (unit, leader, arrives) in enumerate(battle.units_of(s)):
                nb = noble_in_battle(battle, unit.noble, leader)
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
                people += self.fielded(s, u, unit, leader)
                for man in people:
                    man.attack_percent = leader.attack_percent
                    man.defense_percent = leader.defense_percent
                    man.arrives = arrives
                    man.present = arrives <= battle.from_step
                    if engine:
                        man.inside = st is not None and arrives == 0
                    else:
                        man.inside = room > 0 and arrives == 0
                        room -= arrives == 0
                    if man.present:
                        self.start[s] += man.value
                self.men += people

    def limits(self, s: int, leader: Leader) -> tuple[int, int | None]:
        """Men and beasts a leader fields (None: beasts count as men)."""
        battle = self.battle
        extra = CONTROL_LIMIT_DEFENDING_EXTRA if s == 1 else 0
        if battle.control_rules == "text":
            return CONTROL_LIMIT + extra, None
        if leader.kind == "beast":
            return 10**12, 10**12
        if leader.kind == "garrison":
            return 20 + extra, 0
        return CONTROL_LIMIT + leader.control_battle + RANKS[leader.rank] + extra, leader.use_beasts

    def fielded(self, s: int, u: int, unit, leader: Leader) -> list[Man]:  # type: ignore[no-untyped-def]
        battle = self.battle
        entries = [e for e in unit.men if e.count > 0]
        engine_list = battle.structure_rules == "engine" or (
            battle.control_limits and battle.control_rules == "engine"
        )
        if engine_list:
            # The engine's list: attack + defense + missile, then attack + missile, of
            # the type's own (land) ratings, highest first.
            def own(e):  # type: ignore[no-untyped-def]
                r = battle.fighters[e.type].land
                return (-(r.attack + r.defense + r.missile), -(r.attack + r.missile))

            entries = sorted(entries, key=own)
        men = []
        for entry in entries:
            f = battle.fighters[entry.type]
            r = battle.fighter_ratings(f)
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
            limit, beasts = self.limits(s, leader)
            if beasts is None:
                strongest = sorted(
                    range(len(men)),
                    key=lambda i: -(men[i].attack + men[i].defense + men[i].missile),
                )
                keep = set(strongest[:limit])
            else:
                keep = set()
                for i, m in enumerate(men):
                    if battle.fighters[m.type].animal:
                        if beasts > 0:
                            keep.add(i)
                            beasts -= 1
                    elif limit > 0:
                        keep.add(i)
                        limit -= 1
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
        """The first row holding a target; under the engine's structure rules a
        standing structure stands in row 0 (the engine's fort is a fighter with
        behind = 0), so the men behind it stay behind until it falls."""
        st = self.structures[s]
        if st is not None and st.covers and st.standing:
            return 0
        rows = [m.row for m in self.targetable(s)]
        return min(rows) if rows else 1 << 30

    def in_front(self, m: Man) -> bool:
        """Everyone at or before his side's front row (set at the start of the phase)."""
        return m.row <= self.fronts[m.side]

    def survey(self) -> None:
        self.fronts = [self.front_row(0), self.front_row(1)]

    # --- one strike -----------------------------------------------------------------
    def strike(
        self, rating: int, mounted: bool, pool: list[Man | Structure], special: bool = False
    ) -> None:
        """``rating`` is the striker's, times his tactics percent and the quarters."""
        index = self.rng.randrange(len(pool))
        target = pool[index]
        attack = rating
        if isinstance(target, Structure):
            defense = 400 * target.defense
        else:
            e = target.side
            st = self.structures[e]
            quarters = self.quarters[e]
            if special and self.battle.terrain_rules == "engine":
                quarters = 4
            defense = target.defense
            if st is not None and st.covers:
                # The engine: the structure is target slot 1 while it stands, and the
                # men in slots 2..covers inside it add defense x (100 - damage) / 100
                # hundredths of a point.
                attack *= 100
                defense *= 100
                if target.inside and st.standing and index + 2 <= st.covers:
                    defense += st.defense * (COLLAPSE - st.damage) // COLLAPSE
            defense *= target.defense_percent * quarters
            if mounted and target.pike:
                defense *= 2
            if target.inside and st is not None and not st.covers and st.standing:
                defense += 400 * st.defense
        if self.rng.random() * (attack + defense) < attack:
            if isinstance(target, Structure):
                points = COLLAPSE - target.damage
                if not target.covers or self.rng.random() * points < points - target.pending:
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
                self.strike(4 * m.missile * m.attack_percent, m.mounted, pool)
            else:
                rating = m.attack * self.attack_quarters[s] * m.attack_percent
                self.strike(rating, m.mounted, pool)
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
                    self.strike(4 * m.special * m.attack_percent, m.mounted, pool, special=True)
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
            if st.covers:  # the engine: a point of damage a hit, no defense lost
                st.damage = min(COLLAPSE, st.damage + st.pending)
            else:
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

    def run(self, until: int | None = None) -> tuple[int, int, str]:
        """The winner, the round and the phase that decided; with ``until``, FIGHTING (still
        fighting) when the battle goes on after that round, stopped there."""
        threshold = [
            self.start[s] * side.break_point / 100 for s, side in enumerate(self.battle.sides)
        ]

        def arrive() -> bool:
            """Allies of this round join, and their side's threshold is recomputed from
            its starting value with them; True if allies are still to come."""
            for m in self.men:
                if m.arrives and m.arrives == self.round:
                    m.present = True
                    self.start[m.side] += m.value
            for s, side in enumerate(self.battle.sides):
                threshold[s] = self.start[s] * side.break_point / 100
            return any(m.arrives > self.round for m in self.men)

        def verdict() -> int | None:
            a, d = self.lost(0, threshold), self.lost(1, threshold)
            if a or d:
                return DRAW if a and d else (DEFENDER if a else ATTACKER)
            return None

        rounds = self.battle.from_step
        if rounds == 0:
            self.survey()
            self.shoot_or_fight(DEFENDER, "missile")
            self.apply()
            winner = verdict()
            if winner is not None:
                return winner, 0, "volley"
        elif until is not None and until <= rounds:
            # A battle in progress asked for a round already fought: as it stands.
            return FIGHTING, until, "fighting"
        while True:
            rounds += 1
            self.round = rounds
            later = arrive()
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
            if strikes == 0 and not later:
                return DRAW, rounds, "stalemate"
            side = self.withdrawing()
            if side is not None:
                return ATTACKER_WITHDREW + side, rounds, "withdrawal"
            if rounds == until:
                return FIGHTING, rounds, "fighting"

    # --- stop rules -----------------------------------------------------------------
    def men_left(self, s: int) -> list[Man]:
        """Side ``s``'s fighters not lost: on the field, or allies still to come."""
        return [
            m
            for m in self.men
            if m.side == s and not m.noble and (m.present or m.arrives > self.round)
        ]

    def withdrawing(self) -> int | None:
        """The side whose stop rule holds after this round (the attacker's looked at
        first), or None."""
        left = [self.men_left(0), self.men_left(1)]
        for s, rule in enumerate(self.battle.retreats):
            men, enemy = len(left[s]), len(left[1 - s])
            at_start = sum(1 for m in self.men if m.side == s and not m.noble)
            at_most = rule.men_at_most(at_start)
            if (
                (at_most is not None and men <= at_most)
                or (rule.after is not None and self.round >= rule.after)
                or (rule.outnumbered is not None and enemy >= rule.outnumbered * men)
                or (rule.gone is not None and not any(m.type == rule.gone for m in left[s]))
            ):
                return s
        return None

    def prisoners(self, winner: int) -> None:
        """Olympia: each surviving noble of the loser (allies who never came excepted)
        is taken with chance clamp(25 W / L, 25, 75) percent, W and L the men and nobles
        still standing; under the engine's prisoner rules every one when nobody of the
        loser stands. A garrison takes none: it kills those it would take."""
        loser = 1 - winner
        standing = [len(self.present(s)) for s in (0, 1)]
        percent = 75
        if standing[loser]:
            percent = min(75, max(25, 25 * standing[winner] // standing[loser]))
        elif self.battle.prisoner_rules == "engine":
            percent = 100
        garrison = self.battle.leaders[winner][0].kind == "garrison"
        for m in self.men:
            came = m.arrives <= self.round
            if not (m.side == loser and m.noble and came and m.health > 0):
                continue
            if self.rng.randrange(100) >= percent:
                continue
            if not garrison:
                self.count(f"nobles_captured.{SIDES[loser]}")
                if m.leader:
                    self.row[f"leader_captured.{SIDES[loser]}"] = 1
                continue
            if not m.present:  # counted wounded: now dead
                self.row[f"nobles_wounded.{SIDES[loser]}"] -= 1
            self.count(f"nobles_killed.{SIDES[loser]}")
            if m.leader:
                self.row[f"leader_wounded.{SIDES[loser]}"] = 0
                self.row[f"leader_killed.{SIDES[loser]}"] = 1


def simulate(
    battle: Battle, battles: int, seed: int, until: int | None = None
) -> dict[str, np.ndarray]:
    """Outcome columns, named as the kernel's, of ``battles`` reference battles (with
    ``until``: each stopped after that round when still undecided, ``run_until``)."""
    names = list(AgeOfGodsPrepared(battle).run(0, 0, 0))
    rng = random.Random(seed)
    rows = []
    for _ in range(battles):
        fight = Fight(battle, rng)
        winner, steps, phase = fight.run(until)
        if winner in (ATTACKER, DEFENDER):
            fight.prisoners(winner)
        elif winner in (ATTACKER_WITHDREW, DEFENDER_WITHDREW) and battle.prisoner_rules == "engine":
            # The engine's only way off the field is breaking: a side that withdraws has
            # its nobles taken as a beaten side's are (docs/age_of_gods.md).
            fight.prisoners(1 - (winner - ATTACKER_WITHDREW))
        for s, st in enumerate(fight.structures):
            if st is not None:
                fight.row[f"structure_defense.{SIDES[s]}"] = st.defense
                fight.row[f"structure_damage.{SIDES[s]}"] = st.damage
        fight.row.update({"winner": winner, "steps": steps, f"decided_in.{phase}": 1})
        rows.append(fight.row)
    return {name: np.array([r.get(name, 0) for r in rows], np.int64) for name in names}
