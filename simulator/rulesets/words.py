"""Outcome columns and sweep paths in a player's words, for plot labels and titles.

A column is ``measure[.side][.subject...]`` (``leader_captured.defender``,
``casualties.attacker.knight``, ``eliminated.defender.Templars``). A ruleset names its
measures in a table of templates (``Ruleset.column_words``) with ``{side}``, ``{sides}``
(the side's army: "the attacking army"), ``{subject}`` and ``{subjects}`` (plural) filled
in; a measure without a template is said generically ("steps lost (attacker)"), so a
plugin's columns read sensibly without a table of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

SIDES = ("attacker", "defender")
ARMY = {"attacker": "the attacking army", "defender": "the defending army"}


def won(outcome: str) -> str:
    """``attacker wins``, ``defender wins``, ``draw``, ``attacker withdrew`` or
    ``defender withdrew``: an outcome as a label says it."""
    if outcome == "draw":
        return "draw"
    if outcome.endswith("_withdrew"):
        return outcome.replace("_", " ")
    return f"{outcome} wins"


#: Measures every ruleset may report, in the words of all of them.
COMMON: dict[str, str] = {
    "casualties": "{subjects} lost by {army}",
    "turn_limit": "battle reached the turn limit",
}


#: The nobles' and structures' measures of the rulesets descended from Olympia's rules.
NOBLES_AND_STRUCTURES: dict[str, str] = {
    "leader_captured": "{side}'s leader captured",
    "leader_killed": "{side}'s leader killed",
    "leader_wounded": "{side}'s leader wounded",
    "nobles_captured": "nobles of {army} captured",
    "nobles_killed": "nobles of {army} killed",
    "nobles_wounded": "nobles of {army} wounded",
    "structure_collapsed": "{side}'s structure collapsed",
    "structure_damage": "damage to the {side}'s structure",
    "structure_defense": "defense left in the {side}'s structure",
    "engines_lost": "siege engines lost by {army}",
}


#: Names of troops that are their own plural ("20 hvy foot", "10 cavalry").
UNCOUNTED = ("foot", "horse", "cavalry", "infantry", "artillery", "militia")


def plural(noun: str) -> str:
    """English plural of a unit type's name (knight -> knights, pikeman -> pikemen)."""
    words = noun.replace("_", " ")
    if words.endswith(UNCOUNTED):
        return words
    if words.endswith("man"):
        return words[:-3] + "men"
    if words.endswith(("s", "x", "ch", "sh")):
        return words + "es"
    if words.endswith("y") and words[-2:-1] not in "aeiou":
        return words[:-1] + "ies"
    return words + "s"


def _words(name: str) -> str:
    """A name's words; a dotted subject is its last part, the rest in brackets (a
    confrontation stack's unit "wall.captain" is "captain (wall)")."""
    *where, last = name.replace("_x2", "").replace("_", " ").split(".")
    return f"{last} ({', '.join(where)})" if where else last


def describe_column(column: str, table: Mapping[str, str] | None = None) -> str:
    """``column`` in words: the table's template for its measure, else a generic phrase."""
    measure, *rest = column.split(".")
    side = next((p for p in rest if p in SIDES), "")
    subject = ".".join(p for p in rest if p != side)
    template = {**COMMON, **(table or {})}.get(measure)
    if template is not None:
        return template.format(
            side=side,
            army=ARMY.get(side, "the " + side if side else "either side"),
            subject=_words(subject),
            subjects=plural(subject.rsplit(".", 1)[-1]) if subject else "",
        )
    where = ", ".join(p for p in (side, _words(subject)) if p)
    return f"{_words(measure)} ({where})" if where else _words(measure)


def describe_path(path: str, unit_types: Sequence[str] = (), types_key: str = "units") -> str:
    """A sweep's ``--vary`` path in words: ``attacker.knight`` -> "knights in the attacking
    army", ``units.knight.attack`` -> "knight's attack", ``battle.terrain`` -> "terrain"."""
    men = re.fullmatch(r"(attacker|defender)\.units\[(\d+)\]\.men\.(\w+)", path)
    if men:
        side, unit, kind = men.groups()
        return f"{plural(kind)} in {ARMY[side]} (unit {int(unit) + 1})"
    parts = path.split(".")
    if len(parts) == 2 and parts[0] in SIDES:
        if parts[1] in unit_types:
            return f"{plural(parts[1])} in {ARMY[parts[0]]}"
        return f"{ARMY[parts[0]].removeprefix('the ')}'s {_words(parts[1])}"
    if len(parts) == 3 and parts[0] == types_key:
        return f"{_words(parts[1])}'s {_words(parts[2])}"
    if len(parts) == 2 and parts[0] in ("battle", "policy"):
        return _words(parts[1])
    return path


def describe_knob(kind: str, side: str | None, subject: str, field: str) -> str:
    """A number ``sensitivity`` turns, in words: "knights in the attacking army",
    "pikeman's attack", "defending army's Mamluks: steps"."""
    army = ARMY.get(side or "", "")
    if kind == "count" and field == "count" and army:
        return f"{plural(subject)} in {army}"
    if army:
        return f"{army.removeprefix('the ')}'s {_words(subject)}: {_words(field)}"
    return f"{_words(subject)}'s {_words(field)}"
