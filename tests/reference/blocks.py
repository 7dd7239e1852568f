"""Slow, plain-Python blocks battles that follow docs/blocks.md line by line.

Everything is an object with a name; randomness is ``random.Random(seed)``. It returns
the same outcome columns as the kernel, so the two can be compared in distribution.
``trace`` (optional) receives ``(turn, round, kind, attacker_blocks, defender_blocks)``
for every battle round fought, the names of the blocks taking part on each side.

Stop rules (``battle.retreats``) are read here from the rules as written, not from the
kernel's encoded rows: after each phase that leaves the battle undecided, the attacker's
rule first, a side whose rule holds withdraws as the after-battle retreat goes. A battle
in progress (``battle.from_step``) goes on from the phase after it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from simulator.rulesets.blocks.model import SIDES, Battle

#: ``winner`` of a battle stopped while still undecided, and of a side that withdrew
#: (kernels/stops.py's codes: 3 the attacker, 4 the defender).
FIGHTING = 5
WITHDREW = (3, 4)


ATTACKER, DEFENDER = 0, 1
Trace = Callable[[int, int, str, list[str], list[str]], None]


@dataclass
class Piece:
    side: int
    name: str
    steps: int
    initiative: str
    firepower: int
    knights: bool
    harry: bool
    where: str  # reserve, field, castle, storming, sallying, eliminated, retreated
    arrives: int
    order: int
    marked: bool = False
    lost: int = 0

    @property
    def in_field(self) -> bool:
        return self.where in ("field", "sallying")

    @property
    def in_area(self) -> bool:
        return self.where in ("reserve", "field", "castle", "storming", "sallying")


class Fight:
    def __init__(self, battle: Battle, rng: random.Random, trace: Trace | None = None) -> None:
        self.battle = battle
        self.policy = battle.policies
        self.rng = rng
        self.trace = trace
        #: The phase whose state is kept (``reached``), and that state's casualties.
        self.until: int | None = None
        self.snapshot: dict[str, int] | None = None
        self.pieces: list[Piece] = []
        for s, side in enumerate(battle.sides):
            for b in side:
                self.pieces.append(
                    Piece(
                        s,
                        b.name,
                        b.steps,
                        b.initiative,
                        b.firepower,
                        b.knights,
                        b.harry,
                        b.at,
                        b.arrives,
                        len(self.pieces),
                    )
                )
        self.flags = dict.fromkeys(
            (
                "attacker_won_field",
                "attacker_retreated",
                "defender_retreated",
                "castle_stormed",
                "castle_fell_to_attrition",
                "siege_continues",
                "defender_won",
                "roles_swapped",
                "storm_fought",
                "sally_made",
            ),
            0,
        )
        # The side in the attacker's role right now (a battle in progress may give it
        # to the defender).
        self.attacker = SIDES.index(battle.attacker_role)
        if self.attacker != ATTACKER:
            self.flags["roles_swapped"] = 1
        self.castle_owner: int | None = None  # who may withdraw into the castle mid-battle
        #: Each side's steps at the start: a stop rule's "30%" is a share of them.
        self.men_at_start = [sum(b.steps for b in side) for side in battle.sides]

    # --- looking at the board -------------------------------------------------------------
    def of(self, side: int, *places: str) -> list[Piece]:
        return [p for p in self.pieces if p.side == side and p.where in places]

    def total(self, side: int, *places: str) -> int:
        return sum(p.steps for p in self.of(side, *places))

    def still_here(self, side: int) -> bool:
        return any(p.in_area for p in self.pieces if p.side == side)

    def field_contested(self) -> bool:
        return all(self.of(s, "field", "sallying") for s in (ATTACKER, DEFENDER))

    def die(self) -> int:
        return self.rng.randint(1, 6)

    # --- hits ------------------------------------------------------------------------------
    def lose_step(self, piece: Piece) -> None:
        piece.steps -= 1
        piece.lost += 1
        if piece.steps == 0:
            piece.where = "eliminated"

    def strongest(self, candidates: list[Piece]) -> Piece:
        most = max(p.steps for p in candidates)
        tied = [p for p in candidates if p.steps == most]
        if len(tied) == 1 or self.policy.tie_break == "listed":
            return tied[0]
        if self.policy.tie_break == "weakest":
            # min() keeps the first listed among equally weak blocks.
            return min(tied, key=lambda p: p.firepower)
        return tied[self.rng.randrange(len(tied))]

    def hit(self, targets: list[Piece], in_castle: bool) -> None:
        alive = [p for p in targets if p.steps > 0 and p.in_area]
        if not alive:
            return  # a hit beyond the enemy's remaining steps is lost
        if in_castle:
            marked = [p for p in alive if p.marked]
            if marked:
                marked[0].marked = False
                self.lose_step(marked[0])
                return
            self.strongest(alive).marked = True
            return
        self.lose_step(self.strongest(alive))

    def fire(
        self, piece: Piece, enemy_places: tuple[str, ...], in_castle: bool, charging: bool
    ) -> None:
        firepower = piece.firepower + (1 if charging else 0)
        rolls = [self.die() for _ in range(piece.steps)]
        for roll in rolls:
            if roll <= firepower:
                self.hit(self.of(1 - piece.side, *enemy_places), in_castle)
        if charging:
            only_misses = self.battle.switches.charge_sixes == "missed_six"
            for roll in rolls:
                if roll == 6 and piece.steps > 0 and not (only_misses and roll <= firepower):
                    self.lose_step(piece)

    def firing_order(self) -> list[tuple[str, int]]:
        """Defender A, attacker A, defender B, attacker B, defender C, attacker C."""
        return [(letter, side) for letter in "ABC" for side in (1 - self.attacker, self.attacker)]

    # --- battle rounds ---------------------------------------------------------------------
    def field_battle(self, turn: int, combat_round: int) -> None:
        if self.trace:
            self.trace(
                turn,
                combat_round,
                "field",
                *[[p.name for p in self.of(s, "field", "sallying")] for s in (0, 1)],
            )
        policy = self.policy
        for letter, side in self.firing_order():
            for piece in [p for p in self.pieces if p.side == side and p.initiative == letter]:
                if not piece.in_field:
                    continue  # eliminated, gone or withdrawn before its turn
                enemy = 1 - side
                if not self.of(enemy, "field", "sallying"):
                    return
                weaker = self.total(side, "field", "sallying") < self.total(
                    enemy, "field", "sallying"
                )
                may_retreat = (
                    self.battle.retreat_road
                    and piece.where == "field"
                    and combat_round >= policy.retreat_round
                )
                retreats = may_retreat and (
                    (policy.retreat == "when_weaker" and weaker)
                    or (policy.retreat == "from_round" and side == self.attacker)
                )
                hit_and_run = may_retreat and piece.harry and (retreats or policy.harry == "always")
                if retreats and not hit_and_run:
                    self.retreat(piece)
                    continue
                castle_room = len(self.of(side, "castle", "sallying")) < self.battle.castle_limit
                if (
                    not hit_and_run
                    and policy.castle_withdraw == "when_weaker"
                    and weaker
                    and (
                        piece.where == "sallying"
                        or (side != self.attacker and side == self.castle_owner and castle_room)
                    )
                ):
                    piece.where = "castle"
                    continue
                # A harry read as the engine's (harry_fire = "plain") is never a charge.
                plain_harry = hit_and_run and self.battle.switches.harry_fire == "plain"
                charging = policy.charge == "always" and piece.knights and not plain_harry
                self.fire(piece, ("field", "sallying"), False, charging)
                if hit_and_run and piece.where == "field":
                    self.retreat(piece)

    def retreat(self, piece: Piece) -> None:
        piece.where = "retreated"
        self.flags[f"{SIDES[piece.side]}_retreated"] = 1

    def storm_battle(self, turn: int, combat_round: int, besieged: int) -> None:
        if self.trace:
            names = [
                [p.name for p in self.of(s, "storming" if s != besieged else "castle")]
                for s in (0, 1)
            ]
            self.trace(turn, combat_round, "storm", *names)
        for letter, side in self.firing_order():
            for piece in [p for p in self.pieces if p.side == side and p.initiative == letter]:
                if side == besieged and piece.where == "castle":
                    if not self.of(1 - side, "storming"):
                        return
                    self.fire(piece, ("storming",), False, False)
                elif side != besieged and piece.where == "storming":
                    if not self.of(besieged, "castle"):
                        return
                    if self.policy.storm_withdraw == "when_weaker" and self.total(
                        side, "storming"
                    ) < self.total(besieged, "castle"):
                        piece.where = "field"  # withdraws from the storm instead of firing
                        continue
                    self.fire(piece, ("castle",), True, False)

    # --- player choices --------------------------------------------------------------------
    def storm(self, besieged: int, combat_round: int) -> bool:
        besieging = 1 - besieged
        ongoing = bool(self.of(besieging, "storming"))
        if not ongoing and (
            self.policy.storm == "never" or (self.policy.storm == "round1" and combat_round != 1)
        ):
            return False
        room = self.battle.castle_limit - len(self.of(besieging, "storming"))
        # Strongest first; sorted() keeps the listed order among equals.
        joining = sorted(self.of(besieging, "field"), key=lambda p: -p.steps)[: max(room, 0)]
        stormers = self.total(besieging, "storming") + sum(p.steps for p in joining)
        declared = ongoing or (
            stormers > 0
            and (self.policy.storm == "round1" or stormers >= self.total(besieged, "castle"))
        )
        if declared:
            for p in joining:
                p.where = "storming"
        return declared

    def wants_sally(self, besieged: int) -> bool:
        if self.policy.sally != "when_stronger" or not self.of(besieged, "castle"):
            return False
        ours = self.total(besieged, "castle", "field", "sallying")
        theirs = self.total(1 - besieged, "field", "sallying")
        return theirs > 0 and ours > theirs

    def sally(self, besieged: int) -> None:
        for p in self.of(besieged, "castle"):
            p.where = "sallying"
        self.flags["sally_made"] = 1

    # --- stop rules ----------------------------------------------------------------------
    def men(self, side: int) -> int:
        """A stop rule's men: the side's steps in the area or on the road to it."""
        return sum(p.steps for p in self.pieces if p.side == side and p.in_area)

    def rule_holds(self, side: int, phase: int) -> bool:
        rule = self.battle.retreats[side]
        men, enemy = self.men(side), self.men(1 - side)
        at_most = rule.men_at_most(self.men_at_start[side])
        if at_most is not None and men <= at_most:
            return True
        if rule.after is not None and phase >= rule.after:
            return True
        if rule.outnumbered is not None and enemy >= rule.outnumbered * men:
            return True
        return rule.gone is not None and not any(
            p.in_area for p in self.pieces if p.side == side and p.name == rule.gone
        )

    def withdraw(self, side: int, phase: int) -> dict[str, int]:
        """``side`` leaves after ``phase``: sallies and storms end as after round 3; its
        field blocks go into its castle (the defender's role, while there is room) or
        retreat (no road: eliminated), its reserves turn back, its castle blocks stay."""
        for p in self.pieces:
            if p.where == "sallying":
                p.where = "castle"
            elif p.where == "storming":
                p.where = "field"
        into_castle = side != self.attacker and side == self.castle_owner
        for p in self.of(side, "reserve"):
            p.where = "retreated"
        for p in self.of(side, "field"):
            if into_castle and len(self.of(side, "castle")) < self.battle.castle_limit:
                p.where = "castle"
            elif self.battle.retreat_road:
                self.retreat(p)
            else:
                while p.steps > 0:
                    self.lose_step(p)
                self.flags[f"{SIDES[side]}_retreated"] = 1
        row = self.outcome(phase, False)
        row["winner"] = WITHDREW[side]
        row["defender_won"] = 0
        return row

    def phases_over(self, first: int, last: int, checked: bool = True) -> dict[str, int] | None:
        """Phases ``first .. last`` are over, the battle undecided: the row of a side's
        withdrawal (None if neither withdraws); ``checked`` False for the battle's last
        phase, which ends it."""
        for phase in range(first, last + 1):
            for side in (ATTACKER, DEFENDER):
                if checked and self.rule_holds(side, phase):
                    return self.withdraw(side, phase)
            self.reached(phase)
        return None

    # --- the procedure ---------------------------------------------------------------------
    def clear_marks(self) -> None:
        for p in self.pieces:
            p.marked = False

    def in_field(self, side: int) -> bool:
        """Outside the castle and off the road, stormers included (the engine's count)."""
        return bool(self.of(side, "field", "sallying", "storming"))

    def run(self) -> dict[str, int]:
        battle = self.battle
        rules = battle.switches
        engine_relief = rules.relief == "field_contested"
        marks_cleared = rules.castle_marks == "cleared"
        new_battle = not battle.siege
        start = battle.from_step
        # Combat deployment (a battle in progress has deployed).
        withdraw = self.policy.withdraw
        if (
            new_battle
            and start == 0
            and (
                withdraw == "fill"
                or (
                    withdraw == "when_weaker"
                    and self.total(DEFENDER, "field") < self.total(ATTACKER, "field")
                )
            )
        ):
            for p in self.of(DEFENDER, "field"):
                if len(self.of(DEFENDER, "castle")) < battle.castle_limit:
                    p.where = "castle"
        holders = {p.side for p in self.pieces if p.where == "castle"}
        besieged = holders.pop() if holders else None
        self.castle_owner = besieged
        if besieged is None and battle.castle_limit > 0:
            self.castle_owner = DEFENDER

        if start > 0:
            self.reached(start)  # asked for a phase fought already: the battle as given
        first_turn, first_phase = start // 4 + 1, start % 4 + 1
        for turn in range(first_turn, battle.turns + 1):
            base = 4 * (turn - 1)
            resumed = turn == first_turn and first_phase > 1
            # Resumed at attrition: this turn's rounds and retreat are over.
            early_attrition = resumed and first_phase == 4
            if turn > 1 and not resumed:
                for p in self.pieces:
                    if p.where == "reserve":  # kept off the field by an early attrition
                        p.where = "field"
                if marks_cleared:
                    self.clear_marks()
            for combat_round in range(first_phase if resumed else 1, 4):
                if (
                    combat_round == 1
                    and rules.quiet_siege == "no_besieged_reserves"
                    and besieged is not None
                    and self.of(besieged, "castle")
                    and not self.in_field(1 - besieged)
                ):
                    ended = self.phases_over(base + 1, base + 1)
                    if ended:
                        return ended
                    continue  # the engine skips round 1 when the besiegers are all on the road
                was_contested = self.in_field(ATTACKER) and self.in_field(DEFENDER)
                arriving = [
                    p for p in self.pieces if p.where == "reserve" and p.arrives == combat_round
                ]
                for p in arriving:
                    p.where = "field"
                if engine_relief:
                    relief = (
                        besieged is not None
                        and bool(self.of(besieged, "castle"))
                        and bool(arriving)
                        and not was_contested
                        and self.in_field(ATTACKER)
                        and self.in_field(DEFENDER)
                    )
                else:
                    relief = besieged is not None and any(p.side == besieged for p in arriving)
                if relief and besieged is not None:
                    for p in self.pieces:
                        if p.where == "storming":
                            p.where = "field"
                    if marks_cleared:
                        self.clear_marks()
                    self.attacker = besieged
                may_sally = besieged is not None and not (
                    new_battle and turn == 1 and combat_round == 1
                )
                castle_held = besieged is not None and bool(self.of(besieged, "castle"))
                field_fought = False
                if self.field_contested():
                    if may_sally and besieged is not None and self.wants_sally(besieged):
                        self.sally(besieged)
                    self.field_battle(turn, combat_round)
                    field_fought = True
                elif castle_held and besieged is not None and self.storm(besieged, combat_round):
                    self.attacker = 1 - besieged
                    self.flags["storm_fought"] = 1
                    self.storm_battle(turn, combat_round, besieged)
                    if not self.of(besieged, "castle"):
                        self.flags["castle_stormed"] = 1
                        if engine_relief and self.still_here(besieged):
                            for p in self.of(1 - besieged, "storming"):
                                p.where = "field"
                            self.attacker = besieged
                            self.castle_owner = 1 - besieged
                    if marks_cleared and not self.of(1 - besieged, "storming"):
                        self.clear_marks()
                elif (
                    castle_held
                    and besieged is not None
                    and (may_sally or rules.first_sally == "uncontested_field")
                    and self.wants_sally(besieged)
                ):
                    self.attacker = besieged
                    self.sally(besieged)
                    self.field_battle(turn, combat_round)
                    field_fought = True
                elif not any(p.where == "reserve" for p in self.pieces) or (
                    rules.quiet_siege == "no_besieged_reserves"
                    and besieged is not None
                    and not self.of(besieged, "reserve")
                ):
                    early_attrition = True
                defending = 1 - self.attacker
                if (
                    field_fought
                    and rules.lost_field == "swap_roles"
                    and self.of(self.attacker, "field", "sallying")
                    and not self.of(defending, "field", "sallying")
                    and self.of(defending, "reserve")
                ):
                    # The defender's field force is gone while its reserves are coming.
                    if not self.of(defending, "castle"):
                        self.castle_owner = self.attacker
                    self.attacker = defending
                castle_side = {p.side for p in self.pieces if p.where == "castle"}
                if castle_side:
                    besieged = castle_side.pop()  # withdrawn into the castle mid-battle
                if self.attacker != ATTACKER:
                    self.flags["roles_swapped"] = 1
                if not (self.still_here(ATTACKER) and self.still_here(DEFENDER)):
                    return self.outcome(base + combat_round, False)
                if early_attrition:
                    # The rounds left are skipped: nothing changes in them.
                    ended = self.phases_over(base + combat_round, base + 3)
                    if ended:
                        return ended
                    break
                if combat_round < 3:  # round 3's phase ends after the retreat
                    ended = self.phases_over(base + combat_round, base + combat_round)
                    if ended:
                        return ended
            if not early_attrition:
                for p in self.pieces:
                    if p.where == "sallying":
                        p.where = "castle"
                    elif p.where == "storming":
                        p.where = "field"
                if marks_cleared:
                    self.clear_marks()
                if self.field_contested():
                    for p in self.of(self.attacker, "field"):
                        if battle.retreat_road:
                            p.where = "retreated"
                        else:  # no road to retreat by: eliminated
                            while p.steps > 0:
                                self.lose_step(p)
                    self.flags[f"{SIDES[self.attacker]}_retreated"] = 1
                if not (self.still_here(ATTACKER) and self.still_here(DEFENDER)):
                    return self.outcome(base + 3, False)
                ended = self.phases_over(base + 3, base + 3)
                if ended:
                    return ended
            # Siege attrition.
            if besieged is not None:
                for p in self.of(besieged, "castle"):
                    if self.die() <= battle.attrition:
                        self.lose_step(p)
                if not self.of(besieged, "castle"):
                    self.flags["castle_fell_to_attrition"] = 1
            if not (self.still_here(ATTACKER) and self.still_here(DEFENDER)):
                return self.outcome(base + 4, False)
            # The last turn's attrition ends the battle: no side withdraws then.
            ended = self.phases_over(base + 4, base + 4, checked=turn < battle.turns)
            if ended:
                return ended
        return self.outcome(4 * battle.turns, True)

    def reached(self, phase: int) -> None:
        """Phase ``phase`` is over: the casualties then, if ``until`` is this phase or
        one skipped before it (the state after phase ``until``)."""
        if self.until is not None and self.snapshot is None and self.until <= phase:
            self.snapshot = {f"casualties.{SIDES[p.side]}.{p.name}": p.lost for p in self.pieces}

    def outcome(self, steps: int, siege_goes_on: bool) -> dict[str, int]:
        here = [self.still_here(s) for s in (ATTACKER, DEFENDER)]
        winner = 2 if here[0] == here[1] else (ATTACKER if here[0] else DEFENDER)
        self.flags["defender_won"] = int(winner == DEFENDER)
        self.flags["siege_continues"] = int(siege_goes_on)
        self.flags["attacker_won_field"] = int(
            bool(self.of(ATTACKER, "field", "sallying"))
            and not self.of(DEFENDER, "field", "sallying")
        )
        row = {"winner": winner, "steps": steps, **self.flags}
        for s, side in enumerate(SIDES):
            row[f"steps_lost.{side}"] = sum(p.lost for p in self.pieces if p.side == s)
            row[f"blocks_eliminated.{side}"] = sum(
                p.where == "eliminated" for p in self.pieces if p.side == s
            )
        for p in self.pieces:
            row[f"casualties.{SIDES[p.side]}.{p.name}"] = p.lost
        for p in self.pieces:
            row[f"eliminated.{SIDES[p.side]}.{p.name}"] = int(p.where == "eliminated")
        return row


def battle_outcome(
    battle: Battle, rng: random.Random, trace: Trace | None = None, until: int | None = None
) -> dict[str, int]:
    """One battle's row; with ``until``, the state after phase ``until`` when the
    battle lasts longer (``winner`` FIGHTING, still fighting; its casualties then)."""
    fight = Fight(battle, rng, trace)
    fight.until = until
    row = fight.run()
    if fight.snapshot is not None and until is not None and row["steps"] > until:
        row = {**row, **fight.snapshot, "winner": FIGHTING, "steps": until}
    return row


def simulate(
    battle: Battle, battles: int, seed: int, until: int | None = None
) -> dict[str, list[int]]:
    """Outcome columns of ``battles`` battles drawn from one ``random.Random(seed)``
    (with ``until``: each one's state after that phase, ``run_until``)."""
    rng = random.Random(seed)
    rows = [battle_outcome(battle, rng, until=until) for _ in range(battles)]
    return {name: [r[name] for r in rows] for name in rows[0]}
