"""A slow, obviously-correct Olympia battle, one Python object per man.

Follows docs/olympia.md step by step, with Python's own random numbers, so that
agreement with the Numba kernel (in distribution) checks the kernel's bookkeeping
(group tables, incremental weights, shielding) against a plain reading of the rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from simulator.rulesets.olympia.model import SIDES, Battle
from simulator.rulesets.olympia.prepare import OlympiaPrepared
from simulator.rulesets.stop_rules import StopRule

#: ``winner`` of a battle stopped while still undecided (kernels/stops.py's code), and of
#: one the attacker (defender) withdrew from: ATTACKER_WITHDREW + side.
FIGHTING = 5
ATTACKER_WITHDREW = 3


COLLAPSE = 100


@dataclass
class Man:
    side: int
    unit: int
    row: int
    kind: str  # "man", "noble" or "engine"
    type: str
    attack: int  # strike rating in the front row: max(attack, missile)
    missile: int  # strike rating from a rear row
    defense: int
    value: int
    survive: float = 0.0
    noncombatant: bool = False
    leader: bool = False
    inside: bool = False  # among the first N men of the side: protected by its structure
    health: int = 100
    standing: bool = True


@dataclass
class Structure:
    defense: int
    damage: int
    standing: bool = True


def build(battle: Battle) -> tuple[list[Man], list[Structure | None], list[int]]:
    men: list[Man] = []
    structures: list[Structure | None] = []
    start = []
    for s, side in enumerate(battle.sides):
        capacity = battle.capacity[side.structure.kind] if side.structure else 0
        placed = 0
        for u, unit in enumerate(side.units):
            missile = battle.noble.missile + unit.noble.missile_bonus
            if "wind" in battle.weather:
                missile //= 2
            attack = battle.noble.attack + unit.noble.attack_bonus
            defense = battle.noble.defense + unit.noble.defense_bonus
            men.append(
                Man(
                    s,
                    u,
                    unit.behind,
                    "noble",
                    "noble",
                    max(attack, missile),
                    missile,
                    defense,
                    max(attack, missile) + defense,
                    leader=u == 0,
                    inside=placed < capacity,
                    health=unit.noble.health,
                )
            )
            placed += 1
            for group in unit.men:
                ftype = battle.fighters[group.type]
                r = ftype.ratings(battle.terrain, battle.weather)
                for _ in range(group.count):
                    men.append(
                        Man(
                            s,
                            u,
                            group.behind,
                            "man",
                            group.type,
                            r.strike,
                            r.missile,
                            r.defense,
                            r.value,
                            ftype.survive,
                            ftype.noncombatant,
                            inside=placed < capacity,
                        )
                    )
                    placed += 1
        for name, count in side.engines:
            r = battle.engines[name].ratings
            for _ in range(count):
                men.append(Man(s, 0, 0, "engine", name, r.strike, r.missile, r.defense, 0))
        start.append(sum(m.value for m in men if m.side == s and m.kind != "engine"))
        structures.append(
            Structure(side.structure.defense, side.structure.damage) if side.structure else None
        )
    return men, structures, start


class View:
    """Who may be hit and who fights from the front, as the spec defines it, at one moment."""

    def __init__(self, men: list[Man]) -> None:
        fighting = [m for m in men if m.standing and m.kind != "engine"]
        own_men_left = {(m.side, m.unit) for m in fighting if m.kind == "man"}
        others_left = {m.side for m in fighting if not _in_leader_unit(m)}
        # A noble is shielded by his own men; the stack leader by everyone else on his side.
        self.valid = [
            m
            for m in fighting
            if m.kind == "man"
            or ((m.side, m.unit) not in own_men_left and not (m.leader and m.side in others_left))
        ]
        self.front = [min((m.row for m in self.valid if m.side == s), default=0) for s in (0, 1)]


def _in_leader_unit(man: Man) -> bool:
    return man.unit == 0


def standing_structure(structures: list[Structure | None], s: int) -> bool:
    st = structures[s]
    return st is not None and st.standing


def rating(man: Man, view: View, structures: list[Structure | None], order: str) -> int:
    """What this man strikes with now (0: he does not strike)."""
    if not man.standing:
        return 0
    if order == "alternating" and man.side == 0 and man.noncombatant:
        return 0
    if man.kind == "engine":
        return man.attack if standing_structure(structures, 1 - man.side) else 0
    return man.attack if man.row <= view.front[man.side] else man.missile


def targets(
    e: int, men: list[Man], view: View, structures: list[Structure | None]
) -> list[Man | None]:
    """The enemy's valid targets; None stands for side e's structure."""
    out: list[Man | None] = [m for m in view.valid if m.side == e and m.row == view.front[e]]
    out += [
        m
        for m in men
        if m.standing
        and m.side == e
        and m.kind == "engine"
        and standing_structure(structures, 1 - e)
    ]
    if standing_structure(structures, e):
        out.append(None)
    return out


def one_battle(
    battle: Battle, rng: random.Random, columns: dict[str, int], until: int | None = None
) -> dict[str, int]:
    """One battle's row; with ``until``, the state after strike ``until`` when the
    battle lasts longer (``winner`` FIGHTING, still fighting): a copy of the row taken then."""
    men, structures, start = build(battle)
    snapshot: dict[str, int] | None = None
    row = dict.fromkeys(columns, 0)
    for s, name in enumerate(SIDES):
        st = structures[s]
        if st is not None:
            row[f"structure_defense.{name}"] = st.defense
            row[f"structure_damage.{name}"] = st.damage
    order = battle.strike_order
    value = list(start)
    budget = [0, 0]
    turn = 0
    steps = battle.from_step  # strikes fought before (a battle in progress)
    winner = 2
    while True:
        view = View(men)
        strikers = [(m, rating(m, view, structures, order)) for m in men]
        strikers = [(m, r) for m, r in strikers if r > 0]
        if order == "random":
            if not strikers:
                break
            man, attack = rng.choice(strikers)
        else:
            per_side = [[(m, r) for m, r in strikers if m.side == s] for s in (0, 1)]
            budget = [min(budget[s], len(per_side[s])) for s in (0, 1)]
            if budget == [0, 0]:
                if not strikers:
                    break
                budget = [len(per_side[0]), len(per_side[1])]
                turn = 0
            s = turn if budget[turn] > 0 else 1 - turn
            budget[s] -= 1
            turn = 1 - s
            man, attack = rng.choice(per_side[s])
        e = 1 - man.side
        steps += 1
        target = None if man.kind == "engine" else rng.choice(targets(e, men, view, structures))
        st = structures[e]
        if target is None:
            assert st is not None
            defense = st.defense
        else:
            defense = target.defense + (
                st.defense if target.inside and st is not None and st.standing else 0
            )
        if rng.random() < attack / (attack + defense):
            hit(man, target, st, e, row, value, rng)
        broken = [
            not any(m.standing and m.side == s and m.kind != "engine" for m in men)
            or value[s] * 100 <= start[s] * battle.sides[s].break_point
            for s in (0, 1)
        ]
        if any(broken):
            winner = 2 if all(broken) else (1 if broken[0] else 0)
            break
        quitter = withdrawing(battle, men, steps)
        if quitter is not None:
            winner = ATTACKER_WITHDREW + quitter
            break
        if steps == until:
            snapshot = {**row, "winner": FIGHTING, "steps": steps}
    if snapshot is not None and steps > snapshot["steps"]:
        return snapshot
    row["winner"] = winner
    row["steps"] = steps
    if winner in (0, 1):  # a side that withdrew is not defeated: no prisoners
        prisoners(men, winner, row, rng)
    return row


def holds(rule: StopRule, men: list[Man], s: int, steps: int) -> bool:
    """Whether side ``s``'s stop ``rule`` holds after strike ``steps``: its men (fighters,
    not nobles or engines) left at most so many, ``steps`` at least ``after``, the enemy's
    men at least ``outnumbered`` times its own, or no man of type ``gone`` left."""
    fighters = [m for m in men if m.kind == "man"]
    brought = sum(1 for m in fighters if m.side == s)
    own = sum(1 for m in fighters if m.side == s and m.standing)
    enemy = sum(1 for m in fighters if m.side != s and m.standing)
    at_most = rule.men_at_most(brought)
    if at_most is not None and own <= at_most:
        return True
    if rule.after is not None and steps >= rule.after:
        return True
    if rule.outnumbered is not None and enemy >= rule.outnumbered * own:
        return True
    gone = rule.gone
    return gone is not None and not any(
        m.side == s and m.type == gone and m.standing for m in fighters
    )


def withdrawing(battle: Battle, men: list[Man], steps: int) -> int | None:
    """The side that withdraws after strike ``steps`` of a battle still undecided, the
    attacker's rule looked at first; None when neither does."""
    for s, rule in enumerate(battle.retreat):
        if not rule.never and holds(rule, men, s, steps):
            return s
    return None


def hit(
    striker: Man,
    target: Man | None,
    st: Structure | None,
    e: int,
    row: dict[str, int],
    value: list[int],
    rng: random.Random,
) -> None:
    name = SIDES[e]
    if target is None:
        assert st is not None
        points = rng.randint(5, 10) if striker.kind == "engine" else 1
        for _ in range(points):
            if st.defense > 0:
                st.defense -= 1
            else:
                st.damage += 1
        if st.damage >= COLLAPSE:
            st.damage = COLLAPSE
            st.standing = False
            row[f"structure_collapsed.{name}"] = 1
        row[f"structure_defense.{name}"] = st.defense
        row[f"structure_damage.{name}"] = st.damage
        return
    if target.kind == "engine":
        target.standing = False
        row[f"engines_lost.{name}"] += 1
        return
    if target.kind == "man":
        if rng.random() < target.survive:
            return
        target.standing = False
        row[f"casualties.{name}.{target.type}"] += 1
    else:
        target.standing = False
        target.health -= rng.randint(1, 100)
        what = "killed" if target.health <= 0 else "wounded"
        row[f"nobles_{what}.{name}"] += 1
        if target.leader:
            row[f"leader_{what}.{name}"] = 1
    value[e] -= target.value


def prisoners(men: list[Man], winner: int, row: dict[str, int], rng: random.Random) -> None:
    loser = 1 - winner
    w = sum(1 for m in men if m.standing and m.side == winner and m.kind != "engine")
    lost = sum(1 for m in men if m.standing and m.side == loser and m.kind != "engine")
    percent = 75 if lost == 0 else min(75, max(25, 25 * w // lost))
    for m in men:
        if m.side == loser and m.kind == "noble" and m.health > 0 and rng.randrange(100) < percent:
            row[f"nobles_captured.{SIDES[loser]}"] += 1
            if m.leader:
                row[f"leader_captured.{SIDES[loser]}"] = 1


def simulate(
    battle: Battle, battles: int, seed: int, until: int | None = None
) -> dict[str, np.ndarray]:
    """``battles`` reference battles: the same columns as the kernel's ``run`` (with
    ``until``: its ``run_until``)."""
    columns = OlympiaPrepared(battle).columns
    rng = random.Random(seed)
    rows = [one_battle(battle, rng, columns, until) for _ in range(battles)]
    return {name: np.array([r[name] for r in rows], np.int64) for name in columns}
