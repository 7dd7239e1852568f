"""One-line armies for ``battle-odds odds`` (olympia).

``noble, 20 soldier, 10 archer@1; noble(health=60, attack=15), 5 knight``: units are
separated by ``;`` and items by ``,``; each unit begins with ``noble`` (options in
parentheses), ``N type`` adds N men, ``@K`` (or ``@rear``) puts them in rear row K.
``N catapult`` brings siege engines. The result is the same data a TOML file holds,
so one validator checks every value of both (counts, rows, noble options).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..base import InlineQuery
from ..names import normalise_name, resolve_name
from .model import standard_engines, standard_fighters

_ITEM = re.compile(
    r"^(?:(?P<count>[+-]?\d+(?:\s*\.\.\s*[+-]?\d+)?)\s+)?(?P<name>[A-Za-z][\w .'-]*?)\s*"
    r"(?:\((?P<opts>[^)]*)\))?\s*(?:@\s*(?P<row>\w+))?$"
)
NOBLE_OPTIONS = ("health", "attack", "defense", "missile")


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _row(word: str | None, where: str) -> int:
    if word is None or word == "front":
        return 0
    if word == "rear":
        return 1
    if word.isdigit():
        return int(word)  # the validator checks the range, as for a file
    raise BattleOddsError(f"{where}: row '@{word}' is not a row: expected @0..@9, @front or @rear")


def parse_army(
    text: str,
    option: str,
    fighters: Mapping[str, Any] | None = None,
    engines: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Parse one side. ``option`` names the command-line option for error messages.

    ``fighters`` and ``engines`` are the unit names to accept (default: Olympia's), so
    other rulesets with the same army syntax parse their own tables."""
    fighters = standard_fighters() if fighters is None else fighters
    engines = standard_engines() if engines is None else engines
    if not text.strip():
        raise BattleOddsError(f'{option}: an empty army: expected e.g. "noble, 20 soldier"')
    units: list[dict[str, Any]] = []
    siege: dict[str, int | str] = {}
    for u, unit_text in enumerate(_split(text, ";"), 1):
        items = [i for i in _split(unit_text, ",") if i]
        where = f"{option}: unit {u} '{unit_text}'"
        if not items:
            raise BattleOddsError(f'{where}: an empty unit: expected "noble, N type, ..."')
        unit: dict[str, Any] = {"men": []}
        for i, item in enumerate(items):
            at = f"{option}: unit {u}, item '{item}'"
            match = _ITEM.match(item)
            if not match:
                raise BattleOddsError(
                    f"{at}: cannot parse: expected 'noble', 'noble(health=60)' "
                    "or 'N type' with an optional '@K' row"
                )
            name, count, opts, row = match["name"], match["count"], match["opts"], match["row"]
            if normalise_name(name) == "noble":
                if i != 0 or count is not None:
                    raise BattleOddsError(f"{at}: a unit has one noble, written first")
                unit["behind"] = _row(row, at)
                unit["noble"] = _noble_options(opts, at)
                continue
            if i == 0:
                raise BattleOddsError(
                    f"{where}: each unit begins with 'noble' (write \"noble, {unit_text}\")"
                )
            if count is None:
                raise BattleOddsError(f"{at}: expected a count before '{name}', e.g. '10 {name}'")
            if opts is not None:
                raise BattleOddsError(f"{at}: only a noble takes options in parentheses")
            engine = resolve_name(name, engines)
            if engine is not None:
                had = siege.get(engine, 0)
                siege[engine] = count if ".." in count or isinstance(had, str) else had + int(count)
                continue
            fighter = resolve_name(name, fighters)
            if fighter is None:
                raise BattleOddsError(
                    f"{at}: unknown unit type '{name}'"
                    + did_you_mean(normalise_name(name), [*fighters, *engines])
                )
            unit["men"].append(
                {
                    "type": fighter,
                    # "20..30 pikeman": a range of counts (an unknown of the scenario).
                    "count": count.replace(" ", "") if ".." in count else int(count),
                    "behind": _row(row, at) if row else unit.get("behind", 0),
                }
            )
        units.append(unit)
    side: dict[str, Any] = {"units": units}
    if siege:
        side["siege_engines"] = siege
    return side


def _noble_options(opts: str | None, where: str) -> dict[str, Any]:
    noble: dict[str, Any] = {}
    if not opts:
        return noble
    for pair in _split(opts, ","):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or key not in NOBLE_OPTIONS:
            raise BattleOddsError(
                f"{where}: noble option '{pair}': expected key=value with key one of "
                f"{', '.join(NOBLE_OPTIONS)}" + did_you_mean(key, NOBLE_OPTIONS)
            )
        try:
            noble[key] = int(value)
        except ValueError:
            raise BattleOddsError(
                f"{where}: noble option '{pair}': expected a whole number"
            ) from None
    return noble


def parse_structure(text: str, option: str) -> dict[str, Any]:
    """``tower:40`` or ``castle:25:30`` (kind, defense, damage)."""
    parts = [p.strip() for p in text.split(":")]
    if len(parts) not in (2, 3) or not all(p.lstrip("-").isdigit() for p in parts[1:]):
        raise BattleOddsError(f"{option}: '{text}': expected KIND:DEFENSE[:DAMAGE], e.g. tower:40")
    structure: dict[str, Any] = {"kind": normalise_name(parts[0]), "defense": int(parts[1])}
    if len(parts) == 3:
        structure["damage"] = int(parts[2])
    return structure


#: Conditions ``odds`` may pass for olympia (anything else belongs to another ruleset).
OPTIONS = (
    "terrain",
    "weather",
    "strike_order",
    "attacker_break",
    "defender_break",
    "structure",
    "attacker_structure",
    "defender_structure",
    "kernel",
)


@lru_cache(maxsize=4096)
def _army_json(text: str, option: str) -> str:
    return json.dumps(parse_army(text, option))


def parse_army_again(text: str, option: str) -> dict[str, Any]:
    """:func:`parse_army` of Olympia's units, a text parsed before read from a memo (a
    fresh copy each time): a price search builds thousands of battles from a few
    hundred armies ("noble, 12 knight"), and parsing them again was a fifth of the
    building. An army that fails raises every time (errors are not kept)."""
    return json.loads(_army_json(text, option))


def scenario_data(
    query: InlineQuery, parse: Callable[[str, str], dict[str, Any]] = parse_army
) -> dict[str, Any]:
    """The data a scenario file of ``query`` would hold; ``parse`` reads one army
    (:func:`parse_army`, or :func:`parse_army_again`)."""
    opts: Mapping[str, Any] = query.options
    for key in opts:
        if key not in OPTIONS:
            option = "--" + key.replace("_", "-")
            raise BattleOddsError(
                f"{option}: not an olympia option (olympia takes "
                f"{', '.join('--' + o.replace('_', '-') for o in OPTIONS)})"
                + did_you_mean(key, OPTIONS, list_valid=False)
            )
    data: dict[str, Any] = {
        "ruleset": "olympia",
        "name": "odds",
        "attacker": parse(query.attacker, "--attacker"),
        "defender": parse(query.defender, "--defender"),
    }
    battle: dict[str, Any] = {}
    if opts.get("terrain"):
        battle["terrain"] = opts["terrain"]
    if opts.get("weather"):
        battle["weather"] = [w.strip() for w in str(opts["weather"]).split(",") if w.strip()]
    if opts.get("strike_order"):
        battle["strike_order"] = opts["strike_order"]
    if opts.get("kernel"):
        battle["kernel"] = opts["kernel"]
    if battle:
        data["battle"] = battle
    for side in ("attacker", "defender"):
        if opts.get(f"{side}_break") is not None:
            data[side]["break_point"] = opts[f"{side}_break"]
        if opts.get(f"{side}_structure"):
            data[side]["structure"] = parse_structure(
                opts[f"{side}_structure"], f"--{side}-structure"
            )
    if opts.get("structure"):
        data["defender"]["structure"] = parse_structure(opts["structure"], "--structure")
    return data
