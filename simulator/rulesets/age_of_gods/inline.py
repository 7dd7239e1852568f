"""One-line armies for ``battle-odds odds --ruleset age_of_gods``.

The army syntax is Olympia's (``noble, 20 hvy_foot, 10 archer@1; noble, 5 knight``,
see ``olympia.inline``) read against this ruleset's unit table, with this ruleset's
leaders and noble options:

* ``noble(rank=duke, control_battle=5, use_beasts=3, attack_tactics=10,
  defense_tactics=10, ratings=100/60/0)`` next to Olympia's ``health``, ``attack``,
  ``defense``, ``missile`` (bonuses); ``ratings`` are the noble's own attack / defense
  [/ missile];
* ``garrison, 20 soldier`` opens a unit led by a garrison;
* ``beast(wolf), 7 wolf`` a monster stack led by one of its beasts.

Options (from ``--terrain``, ``--weather``, ``--structure``, ``--attacker-break`` /
``--defender-break`` and ``--set KEY=VALUE``): ``terrain``, ``weather``,
``control_limits`` (true / false), ``structure`` / ``defender_structure`` /
``attacker_structure`` (KIND:DEFENSE[:DAMAGE]), ``rules`` and each point's
``*_rules`` (text / engine), ``attacker_allies`` / ``defender_allies`` (an army that
joins in round ``allies_round``, default 2).
"""

from __future__ import annotations

from typing import Any

from ...errors import BattleOddsError, did_you_mean
from ..base import InlineQuery
from ..names import normalise_name, resolve_name
from ..olympia.inline import _ITEM, _split, parse_army, parse_structure
from .keys import POINTS, RULES
from .model import RULESET_NAME, foreign_units, standard_fighters

OPTIONS = (
    "terrain",
    "weather",
    "control_limits",
    "structure",
    "attacker_structure",
    "defender_structure",
    "attacker_break",
    "defender_break",
    "rules",
    *POINTS,
    "attacker_allies",
    "defender_allies",
    "allies_round",
)
#: Noble options of this ruleset (Olympia's reader takes the others).
WHOLE_NUMBER_OPTIONS = (
    "control_battle",
    "use_beasts",
    "attack_tactics",
    "defense_tactics",
)
NOBLE_OPTIONS = ("rank", "ratings", *WHOLE_NUMBER_OPTIONS)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _flag(value: Any, option: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise BattleOddsError(f"{option}: '{value}' is not true or false")


def _whole(value: str, where: str, expected: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise BattleOddsError(
            f"{where}: '{value}' is not a whole number: expected {expected}"
        ) from None


def _noble_extras(opts: str, where: str) -> tuple[str, dict[str, Any]]:
    """Olympia's noble options (as text) and this ruleset's (as scenario data)."""
    kept: list[str] = []
    extras: dict[str, Any] = {}
    for pair in _split(opts, ","):
        key, _, value = (p.strip() for p in pair.partition("="))
        if key not in NOBLE_OPTIONS:
            kept.append(pair)
            continue
        at = f"{where}: noble option '{pair}'"
        if key == "rank":
            extras["rank"] = normalise_name(value)
        elif key == "ratings":
            parts = value.split("/")
            if len(parts) not in (2, 3):
                raise BattleOddsError(
                    f"{at}: expected ratings=ATTACK/DEFENSE[/MISSILE], e.g. ratings=100/60"
                )
            names = ("attack", "defense", "missile")
            extras["ratings"] = {
                n: _whole(p, at, "ratings=ATTACK/DEFENSE[/MISSILE]")
                for n, p in zip(names, parts, strict=False)
            }
        else:
            extras[key] = _whole(value, at, f"{key}=N (weeks of experience)")
    return ", ".join(kept), extras


def _leaders(text: str, option: str, fighters: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The army in Olympia's syntax (each leader written ``noble``) and each unit's
    extra noble keys: ``garrison``, ``beast(TYPE)``, this ruleset's noble options."""
    units, extras = [], []
    for u, unit_text in enumerate(_split(text, ";"), 1):
        items = _split(unit_text, ",")
        found: dict[str, Any] = {}
        match = _ITEM.match(items[0]) if items and items[0] else None
        if match and match["count"] is None:
            word = normalise_name(match["name"])
            row = f"@{match['row']}" if match["row"] else ""
            where = f"{option}: unit {u}, item '{items[0]}'"
            if word == "garrison":
                if match["opts"] is not None:
                    raise BattleOddsError(f"{where}: a garrison takes no options")
                found["garrison"] = True
                items[0] = f"noble{row}"
            elif word == "beast":
                name = (match["opts"] or "").strip()
                beast = resolve_name(name, fighters) if name else None
                if beast is None:
                    raise BattleOddsError(
                        f"{where}: expected beast(TYPE), TYPE a fighter type, e.g. "
                        "beast(wolf)"
                        + (did_you_mean(normalise_name(name), fighters) if name else "")
                    )
                found["beast"] = beast
                items[0] = f"noble{row}"
            elif word == "noble" and match["opts"]:
                kept, found = _noble_extras(match["opts"], where)
                items[0] = f"noble({kept}){row}" if kept else f"noble{row}"
        units.append(", ".join(items))
        extras.append(found)
    return "; ".join(units), extras


def _army(
    text: str, option: str, fighters: dict[str, Any], names: dict[str, Any]
) -> dict[str, Any]:
    plain, extras = _leaders(text, option, fighters)
    army = parse_army(plain, option, names, {})
    for unit, found in zip(army["units"], extras, strict=True):
        if found:
            unit["noble"] = {**unit.get("noble", {}), **found}
    return army


def scenario_data(query: InlineQuery) -> dict[str, Any]:
    options = dict(query.options)
    for key in options:
        if key not in OPTIONS:
            raise BattleOddsError(
                f"{key}: not an option of {RULESET_NAME}: expected one of "
                f"{', '.join(OPTIONS)}" + did_you_mean(key, OPTIONS)
            )
    # Other rulesets' unit names parse, so that the validator can name their ruleset.
    fighters = standard_fighters()
    names = {**dict.fromkeys(foreign_units()), **fighters}
    data: dict[str, Any] = {"ruleset": RULESET_NAME, "name": "odds"}
    for side in ("attacker", "defender"):
        data[side] = _army(getattr(query, side), f"--{side}", fighters, names)
        if options.get(f"{side}_break") is not None:
            data[side]["break_point"] = options[f"{side}_break"]
        text = options.get(f"{side}_structure") or (side == "defender" and options.get("structure"))
        if text:
            data[side]["structure"] = parse_structure(str(text), f"--{side}-structure")
        allies = options.get(f"{side}_allies")
        if allies:
            option = f"--set {side}_allies"
            block: dict[str, Any] = {"units": _army(str(allies), option, fighters, names)["units"]}
            if options.get("allies_round") is not None:
                block["round"] = _whole(
                    str(options["allies_round"]), "--set allies_round", "a round, 1 or more"
                )
            data[side]["allies"] = block
    if options.get("allies_round") is not None and not any(
        options.get(f"{side}_allies") for side in ("attacker", "defender")
    ):
        raise BattleOddsError(
            '--set allies_round: no allies to arrive: add --set defender_allies="noble, ..."'
        )
    battle: dict[str, Any] = {}
    if options.get("terrain"):
        battle["terrain"] = options["terrain"]
    if options.get("weather"):
        battle["weather"] = [w.strip() for w in str(options["weather"]).split(",") if w.strip()]
    if options.get("control_limits") is not None:
        battle["control_limits"] = _flag(options["control_limits"], "--set control_limits")
    for key in ("rules", *POINTS):
        if options.get(key) is not None:
            value = str(options[key]).strip()
            if value not in RULES:
                raise BattleOddsError(
                    f"--set {key}={value}: expected one of {', '.join(RULES)}"
                    + did_you_mean(value, RULES)
                )
            battle[key] = value
    if battle:
        data["battle"] = battle
    return data
