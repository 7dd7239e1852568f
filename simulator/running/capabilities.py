"""What a prepared scenario asks of its ruleset beyond a whole battle, checked before any
battle: the battle as it unfolds, stop rules, a battle in progress, waves
(``Prepared.unfolds``), and the notes its stop rules are worth (docs/unfolding.md)."""

from __future__ import annotations

from ..errors import BattleOddsError
from ..results.steps import men_brought, side_of
from ..rulesets.base import BY_STEP, FROM_STEP, SIDES, STOP_RULES, WAVES, Prepared
from ..rulesets.stop_rules import StopRule

#: What asks for each capability, for the refusal of a ruleset without it.
ASKED_BY = {
    BY_STEP: "--by-round / --after",
    STOP_RULES: "[attacker.retreat] / [defender.retreat]",
    FROM_STEP: "[battle] from_step / --from-step",
    WAVES: "[[attacker.waves]] / [[defender.waves]]",
}


def check_unfolds(prepared: Prepared, ruleset: str, what: str = BY_STEP) -> None:
    """One line when the scenario's ruleset does not give ``what`` of the battle as it
    unfolds (a plugin that declares no :attr:`Prepared.unfolds`, or not this one)."""
    if what not in prepared.unfolds:
        asked = f" ({ASKED_BY[what]})" if what in ASKED_BY else ""
        raise BattleOddsError(
            f"ruleset {ruleset!r} does not give {what}{asked}: its prepared scenario "
            "declares no such capability (docs/writing-a-ruleset.md, 'The battle as it "
            "unfolds')"
        )


def check_capabilities(prepared: Prepared, ruleset: str) -> None:
    """A scenario that gives a stop rule or a battle in progress to a ruleset whose
    prepared scenario does not declare it: one line naming what it lacks, before any
    battle (a kernel that ignored them would answer another question)."""
    if prepared.has_stop_rules:
        check_unfolds(prepared, ruleset, STOP_RULES)
    if prepared.from_step:
        check_unfolds(prepared, ruleset, FROM_STEP)


def men_at_start(prepared: Prepared) -> dict[str, int]:
    """Each side's men at the start of the scenario, as its ruleset counts them (the men
    its casualty columns can lose: nobles are not counted)."""
    men = dict.fromkeys(SIDES, 0)
    for key, most in men_brought(prepared.column_bounds).items():
        men[side_of(key)] += most
    return men


def holds_at_start(rule: StopRule, own: int, enemy: int, from_step: int) -> bool:
    """Whether ``rule`` holds for a side of ``own`` men against ``enemy`` before a blow
    is struck (a type it names that it does not field is refused when read)."""
    k = rule.men_at_most(own)
    return (
        (k is not None and own <= k)
        or (rule.after is not None and rule.after <= from_step)
        or (rule.outnumbered is not None and enemy >= rule.outnumbered * own)
    )


def can_hold_together(attacker: StopRule, defender: StopRule) -> bool:
    """Whether both sides' rules can hold after the same step: each has one, and they
    are not two ``outnumbered`` alone that exclude each other (attacker outnumbered r
    to 1 and defender s to 1 at once needs r x s <= 1: both 1)."""
    if attacker.never or defender.never:
        return False
    only_ratio = [
        r.outnumbered is not None and r == StopRule(outnumbered=r.outnumbered)
        for r in (attacker, defender)
    ]
    if all(only_ratio):
        assert attacker.outnumbered is not None and defender.outnumbered is not None
        return attacker.outnumbered * defender.outnumbered <= 1.0
    return True


def stop_rule_notes(prepared: Prepared, step_unit: str = "steps") -> list[str]:
    """What a scenario's stop rules are worth a word on before it runs: a rule that
    holds from the start (the side withdraws after the first step: no side withdraws
    before the battle starts), and rules of both sides that can hold after the same step
    (the attacker's is looked at first: it withdraws, the defender holds the field)."""
    notes = []
    men = men_at_start(prepared)
    rules = dict(zip(SIDES, prepared.stop_rules, strict=True))
    first = prepared.from_step + 1
    for side, enemy in (SIDES, SIDES[::-1]):
        rule = rules[side]
        if not rule.never and holds_at_start(rule, men[side], men[enemy], prepared.from_step):
            notes.append(
                f"the {side}'s stop rule ({rule.words(step_unit)}) holds from the start "
                f"({men[side]:,} men against {men[enemy]:,}): no side withdraws before the "
                f"battle starts, so it fights step {first:,} and withdraws after it if the "
                "rule still holds then"
            )
    if can_hold_together(*prepared.stop_rules):
        notes.append(
            "both sides have a stop rule, and both can hold after the same step: then the "
            "attacker's is looked at first, so the attacker withdraws and the defender "
            "holds the field"
        )
    return notes
