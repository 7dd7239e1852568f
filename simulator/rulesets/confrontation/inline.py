"""One-line stacks for ``battle-odds odds --ruleset confrontation``.

``2 trooper, spearman(arms=5, reach)`` is a stack of three units: items separated by
``,``, each ``[N] type`` with options in parentheses (``key=value``, or a bare
``reach`` / ``aerial`` flag). ``unit(arms=4, resolve=2, integrity=8)`` is a unit of
no type. With ``--ability``, the attacker's stack uses that ability on the
defender's stack once (one exchange; ``--set turns=N`` repeats it each turn); without
it, both stacks fight under the simple policy. The result is the data a TOML file
holds, so one validator serves both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..base import Army, InlineQuery
from .model import ABILITIES, MAX_STACK, UNIT_VALUE_KEYS, UNTYPED, normalise_name, standard_types

_ITEM = re.compile(
    r"^(?:(?P<count>[+-]?\d+)\s+)?(?P<name>[A-Za-z][\w .'-]*?)\s*"
    r"(?:\((?P<opts>[^)]*)\))?$"
)
FLAGS = ("reach", "aerial")
#: ``--set KEY=VALUE`` keys: key -> (where it goes, type).
SET_KEYS: dict[str, tuple[str, type]] = {
    "turns": ("battle", int),
    "nearby": ("battle", int),
    "min_damage_rule": ("battle", str),
    "order": ("battle", str),
    "distance": ("place", int),
    "attacker_advantages": ("place", int),
    "defender_advantages": ("place", int),
}
#: Options of the shared ``odds`` command that other rulesets use; set, they are errors here.
_OTHER_OPTIONS = (
    "terrain",
    "weather",
    "structure",
    "attacker_structure",
    "strike_order",
    "attacker_break",
    "defender_break",
)


def _split(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def resolve_type(word: str, valid: Mapping[str, Any]) -> str | None:
    """``Troopers``, ``spearmen`` -> ``trooper``, ``spearman``."""
    name = normalise_name(word)
    for candidate in (
        name,
        name[:-3] + "man" if name.endswith("men") else "",
        name[:-1] if name.endswith("s") else "",
    ):
        if candidate in valid or candidate == UNTYPED:
            return candidate
    return None


def _value(text: str) -> Any:
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _options(opts: str | None, where: str) -> dict[str, Any]:
    unit: dict[str, Any] = {}
    for pair in _split(opts or ""):
        if not pair:
            continue
        key, eq, value = (p.strip() for p in pair.partition("="))
        if not eq and key in FLAGS:
            unit[key] = True
            continue
        if not eq or key not in (*UNIT_VALUE_KEYS, "name"):
            raise BattleOddsError(
                f"{where}: option '{pair}': expected key=value with key one of "
                f"{', '.join((*UNIT_VALUE_KEYS, 'name'))}, or a bare flag "
                f"{' / '.join(FLAGS)}" + did_you_mean(key, (*UNIT_VALUE_KEYS, "name"))
            )
        unit[key] = [a.strip() for a in value.split("|")] if key == "abilities" else _value(value)
    return unit


def parse_stack(text: str, option: str) -> list[dict[str, Any]]:
    """The units of one stack (the TOML ``units`` list). ``option`` names the option."""
    types = standard_types()
    if not text.strip():
        raise BattleOddsError(f'{option}: an empty stack: expected e.g. "2 trooper, spearman"')
    units: list[dict[str, Any]] = []
    for item in _split(text):
        where = f"{option}: item '{item}'"
        match = _ITEM.match(item)
        if not match:
            raise BattleOddsError(
                f"{where}: cannot parse: expected '[N] type' with options in "
                "parentheses, e.g. '2 trooper' or 'spearman(arms=5)'"
            )
        name = resolve_type(match["name"], types)
        if name is None:
            raise BattleOddsError(
                f"{where}: unknown unit type '{match['name']}'"
                + did_you_mean(normalise_name(match["name"]), [*types, UNTYPED])
            )
        count = int(match["count"]) if match["count"] is not None else 1
        if not 1 <= count <= MAX_STACK:
            raise BattleOddsError(
                f"{where}: the count {count} is out of range: expected 1..{MAX_STACK} "
                f"(a stack holds at most {MAX_STACK} units)"
            )
        unit = _options(match["opts"], where)
        if name != UNTYPED:
            unit = {"type": name, **unit}
        units.extend(dict(unit) for _ in range(count))
    if len(units) > MAX_STACK:
        raise BattleOddsError(
            f"{option}: {len(units)} units in one stack: a stack holds at most {MAX_STACK} units"
        )
    return units


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    opts: Mapping[str, Any] = query.options
    for key, value in opts.items():
        if key in _OTHER_OPTIONS and value not in (None, False):
            raise BattleOddsError(
                f"--{key.replace('_', '-')}: not used by the confrontation "
                "ruleset (its options: --ability, --set "
                + ", ".join(f"{k}=" for k in SET_KEYS)
                + ")"
            )
        if key not in _OTHER_OPTIONS and key != "ability" and key not in SET_KEYS:
            raise BattleOddsError(
                f"--set {key}: not a confrontation option" + did_you_mean(key, SET_KEYS)
            )
    settings: dict[str, Any] = {}
    for key, (_, kind) in SET_KEYS.items():
        if opts.get(key) is None:
            continue
        try:
            settings[key] = kind(opts[key])
        except ValueError:
            raise BattleOddsError(
                f"--set {key}={opts[key]}: expected "
                + ("a whole number" if kind is int else "a name")
            ) from None
    ability = opts.get("ability")
    if ability is not None and ability not in ABILITIES:
        raise BattleOddsError(
            f"--ability: unknown ability '{ability}': expected one of "
            + ", ".join(ABILITIES)
            + did_you_mean(str(ability), ABILITIES)
        )
    battle: dict[str, Any] = {k: v for k, v in settings.items() if SET_KEYS[k][0] == "battle"}
    battle.setdefault("turns", 1 if ability else 10)
    data: dict[str, Any] = {
        "ruleset": "confrontation",
        "name": "odds",
        "battle": battle,
        "attacker": {
            "stacks": [
                {
                    "name": "a",
                    "at": [0, 0],
                    "advantages": settings.get("attacker_advantages", 0),
                    "units": parse_stack(query.attacker, "--attacker"),
                }
            ]
        },
        "defender": {
            "stacks": [
                {
                    "name": "d",
                    "at": [settings.get("distance", 1), 0],
                    "advantages": settings.get("defender_advantages", 0),
                    "units": parse_stack(query.defender, "--defender"),
                }
            ]
        },
    }
    if ability:
        data["script"] = [{"actions": [{"by": "a", "ability": ability, "target": "d"}]}]
    else:
        battle["policy"] = "simple"
    return data


def one_type_data(attacker: Army, defender: Army) -> dict[str, Any]:
    """Each army in full stacks side by side (a column of spaces ``q = 0`` for the
    attacker, ``q = 1`` for the defender, so each stack faces an enemy one space away),
    fighting under the simple policy for the default number of turns."""
    sides = {}
    for q, (side, army) in enumerate((("attacker", attacker), ("defender", defender))):
        sizes = [MAX_STACK] * (army.men // MAX_STACK) + (
            [army.men % MAX_STACK] if army.men % MAX_STACK else []
        )
        sides[side] = {
            "stacks": [
                {
                    "name": f"{side[0]}{r + 1}",
                    "at": [q, r],
                    "units": [{"type": army.type}] * size,
                }
                for r, size in enumerate(sizes)
            ]
        }
    return {"ruleset": "confrontation", "name": "odds", "battle": {"policy": "simple"}, **sides}
