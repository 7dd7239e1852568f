"""The scenarios each kernel is checked on against its pure-Python reference.

Both the generator of the stored reference samples (``python -m tests.reference.generate``)
and the agreement tests build their scenarios here, so a sample is always of the scenario
the test runs. Each case is a ruleset, a name and a function building the scenario; the
reference of a ruleset is reached through :func:`reference_runner`, one signature for all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import simulator
from simulator.errors import Source
from simulator.scenario.scenario import Scenario, load_scenario
from tests import ROOT

SCENARIOS = ROOT / "scenarios"

#: Kernel battles per agreement test, by ruleset: ten or more times the stored reference
#: battles, so the kernel's side adds under a tenth to the error of the comparison, at
#: 100,000-600,000 battles/s a case (blocks' battles are the cheapest).
KERNEL_BATTLES = {
    "olympia": 500_000,
    "age_of_gods": 500_000,
    "blocks": 1_000_000,
    "skirmish": 500_000,
    "confrontation": 500_000,
}

#: (validated model, battles, seed) -> outcome columns, the same for every ruleset.
Runner = Callable[[Any, int, int], Mapping[str, Sequence[int] | np.ndarray]]


@dataclass(frozen=True)
class Case:
    """One agreement scenario: ``build()`` makes it afresh (scenarios are cheap)."""

    ruleset: str
    name: str
    build: Callable[[], Scenario]

    @property
    def key(self) -> str:
        """The file stem of the case's stored sample."""
        return f"{self.ruleset}--{self.name.replace(' ', '_').replace(',', '')}"


def reference_module_name(ruleset: str) -> str:
    return f"tests.reference.{ruleset}"


def reference_runner(ruleset: str) -> Runner:
    """The ruleset's reference as ``(model, battles, seed) -> columns``."""
    module = importlib.import_module(reference_module_name(ruleset))
    if ruleset == "skirmish":
        return lambda model, battles, seed: module.run(model, seed=seed, count=battles)
    if ruleset == "confrontation":
        return module.run  # type: ignore[no-any-return]
    return module.simulate  # type: ignore[no-any-return]


def _inline(ruleset: str, attacker: str, defender: str, **options: Any) -> Callable[[], Scenario]:
    return lambda: simulator.inline_scenario(ruleset, attacker, defender, **options)


def _file(
    ruleset: str, stem: str, changes: Mapping[str, Any] | None = None
) -> Callable[[], Scenario]:
    def build() -> Scenario:
        scenario = load_scenario(SCENARIOS / ruleset / f"{stem}.toml")
        return scenario.with_changes(changes) if changes else scenario

    return build


OLYMPIA = {
    "open field, rear archers": ("noble, 8 soldier, 4 archer@1", "noble, 6 swordsman", {}),
    "tower, catapult, shielding": (
        "noble, 10 soldier, 1 catapult; noble, 2 knight",
        "noble, 6 pikeman; noble, 2 soldier@1",
        {"structure": "tower:6:90"},
    ),
    "alternating, peasants, items, blessed": (
        "noble(attack=20, missile=10), 6 blessed_soldier, 5 peasant; noble@1, 3 crossbowman",
        "noble(health=50), 4 swordsman, 3 elite_archer@1",
        {"strike_order": "alternating"},
    ),
    "ship, wind, pirates": (
        "noble, 8 pirate",
        "noble, 2 knight, 3 sailor",
        {
            "terrain": "ship",
            "weather": "wind",
            "attacker_structure": "galley:3",
            "defender_break": 30,
        },
    ),
    "swamp, rain, last man": (
        "noble, 2 elite_guard, 3 archer@1",
        "noble, 9 soldier",
        {"terrain": "swamp", "weather": "rain", "attacker_break": 0},
    ),
}

AGE_OF_GODS = {
    "volley, rear archers, pikes": (
        "noble, 6 hvy_foot, 4 archer@1",
        "noble, 10 pikeman, 3 elite_archer@1",
        {},
    ),
    "knights, mountain, shielding": (
        "noble, 3 knight, 4 soldier",
        "noble, 6 pikeman; noble, 2 soldier@1",
        {"terrain": "mountain"},
    ),
    "tower, wind, fleeing": (
        "noble, 8 peasant, 3 skirmisher; noble@1, 3 lt_xbowman",
        "noble, 5 worker, 2 soldier, 2 hvy_xbowman@1",
        {"structure": "tower:5:90", "weather": "wind"},
    ),
    # 2 defenders in front, 10 behind: the 21 skirmishers' melee cap is 4 x 6, not 4 x 2.
    "hiding behind a thin front": (
        "noble, 2 hvy_foot, 10 archer@1",
        "noble, 20 skirmisher",
        {},
    ),
    "control limits, blessed, items": (
        "noble(attack=20), 8 blessed_soldier, 6 soldier, 3 lt_foot",
        "noble(health=40), 12 soldier, 20 peasant, 5 fanatic",
        {"control_limits": "true", "attacker_break": 30},
    ),
}

DRAGON = {"attack": 20, "defense": 60, "special": {"name": "fire", "strength": 40, "targets": 2}}


def age_of_gods_custom(
    attacker: list[tuple[str, int, int]],
    defender: list[tuple[str, int, int]],
    units: dict[str, object],
    **battle_options: object,
) -> Scenario:
    """One unit a side, men given as (type, count, row), with scenario unit types."""

    def side(men: list[tuple[str, int, int]]) -> dict[str, object]:
        return {"units": [{"men": [{"type": n, "count": c, "behind": r} for n, c, r in men]}]}

    data = {
        "ruleset": "age_of_gods",
        "units": units,
        "attacker": side(attacker),
        "defender": side(defender),
        "battle": battle_options,
    }
    return simulator.from_data(data, Source("test"))


def dragons_in_swamp() -> Scenario:
    return age_of_gods_custom(
        [("dragon", 2, 0), ("cavalier", 3, 0)],
        [("soldier", 8, 0), ("archer", 4, 1)],
        {"dragon": DRAGON},
        terrain="swamp",
    )


def age_of_gods_data(data: dict[str, object]) -> Callable[[], Scenario]:
    return lambda: simulator.from_data({"ruleset": "age_of_gods", **data}, Source("test"))


#: The released engine's reading (``[battle] rules = "engine"``) and its points one at a
#: time: terrain on defense only (not against special attacks), control limits from rank
#: and experience with beasts apart, tactics, the engine's structure (damage points, a
#: bonus to the first men it covers), a garrison, allies arriving in round 2, the 100%
#: capture, knights at sea; a monster stack led by its beast.
AGE_OF_GODS_ENGINE = {
    "engine, forest, ranks, beasts, dragon": {
        "battle": {"rules": "engine", "terrain": "forest"},
        "units": {"wolf": {"attack": 5, "defense": 5, "animal": True}, "dragon": DRAGON},
        "attacker": {
            "units": [
                {
                    "noble": {"rank": "duke", "use_beasts": 3, "attack_tactics": 20},
                    "men": {"soldier": 30, "wolf": 6, "dragon": 1},
                },
                {
                    "noble": {"ratings": {"attack": 60, "defense": 120}},
                    "men": {"archer": 4},
                    "behind": 1,
                },
            ]
        },
        "defender": {
            "units": [
                {
                    "noble": {"control_battle": 2, "defense_tactics": 30},
                    "men": {"pikeman": 40, "lt_foot": 2},
                },
            ]
        },
    },
    "engine, tower, garrison, allies in round 2": {
        "battle": {"rules": "engine", "terrain": "mountain"},
        "attacker": {
            "units": [
                {"noble": {"rank": "duke"}, "men": {"hvy_foot": 5, "soldier": 20}},
                {"men": {"elite_archer": 5}, "behind": 1},
            ]
        },
        "defender": {
            "structure": {"kind": "tower", "defense": 300, "damage": 60},
            "units": [
                {"noble": {"garrison": True}, "men": {"pikeman": 20, "soldier": 10, "archer": 3}}
            ],
            "allies": {
                "round": 2,
                "units": [{"noble": {"health": 60}, "men": {"lt_foot": 3, "peasant": 4}}],
            },
        },
    },
    "engine, sea, knights, monster stack": {
        "battle": {"rules": "engine", "terrain": "ship", "weather": ["wind"]},
        "units": {"serpent": {"attack": 60, "defense": 60, "animal": True}},
        "attacker": {"units": [{"noble": {"beast": "serpent"}, "men": {"serpent": 5}}]},
        "defender": {
            "break_point": 30,
            "units": [{"men": {"knight": 3, "pirate": 4, "hvy_xbowman": 2}}],
        },
    },
    "text terrain, engine structures and prisoners": {
        "battle": {
            "terrain": "forest",
            "structure_rules": "engine",
            "prisoner_rules": "engine",
            "control_limits": True,
        },
        "attacker": {
            "units": [{"men": {"lt_foot": 8, "archer": 2}}, {"men": {"lt_foot": 6, "archer": 2}}]
        },
        "defender": {
            "structure": {"kind": "galley", "defense": 500},
            "units": [{"men": {"soldier": 10}}, {"men": {"pikeman": 5}}],
        },
    },
    "engine, wholly behind a tower": {
        "battle": {"rules": "engine"},
        "attacker": {
            "units": [
                {"noble": {"rank": "lord"}, "men": {"soldier": 12, "lt_foot": 2}},
                {"men": {"archer": 3}, "behind": 1},
            ]
        },
        "defender": {
            "structure": {"kind": "tower", "defense": 40, "damage": 85},
            "units": [
                {"men": {"archer": 5, "soldier": 6}, "behind": 1},
                {"men": {"pikeman": 4}, "behind": 2},
            ],
        },
    },
}


BLOCKS_BUNDLED = ("field_battle", "field_reserves", "storm", "siege_attrition", "relief")
BLOCKS = {
    "listed_ties_and_retreats": (
        "B2:3, Turcopoles A1:3 harry, C2:2",
        "B2:3, A2:3, B1:2@r2",
        {"tie_break": "listed", "retreat": "when_weaker"},
    ),
    "withdraw_when_weaker_then_storm": (
        "A2:4, B3:4, B2:3, C1:2",
        "B2:2, B1:3, A1:2",
        {"castle_limit": "2", "withdraw": "when_weaker", "storm": "round1"},
    ),
    "relief_with_storm_and_sally": (
        "A2:4, A3:3, B1:3",
        "B2:3@castle, C1:2@castle, B3:4 knights@r2, B2:2@r3",
        {"siege": "true", "storm": "when_stronger", "sally": "when_stronger", "charge": "always"},
    ),
    "besieged_attacker_sallies_over_turns": (
        "B2:3@castle, B3:2@castle",
        "A1:4, B2:2",
        {"siege": "true", "sally": "when_stronger", "turns": "3", "attrition": "2"},
    ),
    # A block with both traits (no block of the game has both): it charges in round 1
    # and harries from round 2, where the readings part (harry_fire).
    "harrying_knights": (
        "B3:3 knights harry, A2:3, C1:2",
        "B2:4, A1:3, C2:2@r2",
        {"charge": "always", "harry": "always", "retreat_round": "2"},
    ),
}

#: The released engine's reading of the procedure (``[battle] rules = "engine"``): the
#: bundled battles, then a battle for each point where it parts from the text and the
#: engine's options as player policies (docs/blocks.md, "Rule text and released engine").
BLOCKS_ENGINE_BUNDLED = {f"engine-{n}": (n, {"battle.rules": "engine"}) for n in BLOCKS_BUNDLED}
BLOCKS_ENGINE = {
    "engine-lost_field": ("A3:3, B2:2", "C1:1, B2:3@r2, B1:2@r2", {"rules": "engine"}),
    "engine-relief_into_contested_field": (
        "A2:3",
        "B2:2@castle, B1:2, B3:3@r2",
        {"siege": "true", "castle_limit": "1", "rules": "engine"},
    ),
    "engine-marks_over_turns": (
        "A1:2",
        "A1:2@castle",
        {"siege": "true", "castle_limit": "1", "turns": "3", "storm": "round1", "rules": "engine"},
    ),
    "engine-field_policies": (
        "B2:3, A1:3 harry, C2:2, B5:2 knights",
        "B3:3, A2:3, B2:4, B1:2@r2",
        {
            "retreat": "when_weaker",
            "harry": "always",
            "tie_break": "weakest",
            "charge": "always",
            "rules": "engine",
        },
    ),
    "engine-castle_withdraw_and_storm": (
        "A2:4, B3:3",
        "B2:3, B1:2",
        {
            "castle_limit": "2",
            "castle_withdraw": "when_weaker",
            "storm": "when_stronger",
            "storm_withdraw": "when_weaker",
            "rules": "engine",
        },
    ),
    "engine-relief_with_storm_and_sally": (
        *BLOCKS["relief_with_storm_and_sally"][:2],
        {**BLOCKS["relief_with_storm_and_sally"][2], "rules": "engine"},
    ),
    "engine-besieged_attacker_sallies_over_turns": (
        *BLOCKS["besieged_attacker_sallies_over_turns"][:2],
        {**BLOCKS["besieged_attacker_sallies_over_turns"][2], "rules": "engine"},
    ),
    "engine-harrying_knights": (
        *BLOCKS["harrying_knights"][:2],
        {**BLOCKS["harrying_knights"][2], "rules": "engine"},
    ),
    "attacker_retreats_from_round_3": (
        "B2:3, C2:2, A1:2 harry@r2",
        "B2:3, A2:2",
        {"retreat": "from_round", "retreat_round": "3"},
    ),
    "no_retreat_road": ("C1:4, B1:2", "C1:4, A1:1@r3", {"retreat_road": "false"}),
}

CONFRONTATION_BUNDLED = ("attack", "bombard", "morale_cascade", "open_field", "strike")
CONFRONTATION = {
    "attack-flat1": ("attack", {"battle.min_damage_rule": "flat1"}),
    "attack-nearby2-cycle": ("attack", {"battle.nearby": 2, "battle.after_script": "cycle"}),
    "open-field-alternate": ("open_field", {"battle.order": "alternate"}),
}

SKIRMISH_BUNDLED = ("cavalry_charge", "archers_and_healer", "three_way_field", "example_units")
#: The released engine's reading of the rules (``[battle] rules = "engine"``).
SKIRMISH_ENGINE = {
    "engine-cavalry_charge": ("cavalry_charge", {"battle.rules": "engine"}),
    "engine-archers_and_healer": ("archers_and_healer", {"battle.rules": "engine"}),
    "engine-three_way_field": ("three_way_field", {"battle.rules": "engine"}),
    "engine-example_units": ("example_units_engine", {}),
    "engine-exact-cavalry_charge": (
        "cavalry_charge",
        {"battle.rules": "engine", "battle.expected_value": "exact"},
    ),
}


def _cases() -> list[Case]:
    cases = [Case("olympia", n, _inline("olympia", a, d, **o)) for n, (a, d, o) in OLYMPIA.items()]
    cases += [
        Case("age_of_gods", n, _inline("age_of_gods", a, d, **o))
        for n, (a, d, o) in AGE_OF_GODS.items()
    ]
    cases.append(Case("age_of_gods", "special attack, swamp", dragons_in_swamp))
    cases += [Case("age_of_gods", n, age_of_gods_data(d)) for n, d in AGE_OF_GODS_ENGINE.items()]
    cases += [Case("blocks", n, _file("blocks", n)) for n in BLOCKS_BUNDLED]
    cases += [Case("blocks", n, _inline("blocks", a, d, **o)) for n, (a, d, o) in BLOCKS.items()]
    cases += [
        Case("blocks", n, _file("blocks", stem, changes))
        for n, (stem, changes) in BLOCKS_ENGINE_BUNDLED.items()
    ]
    cases += [
        Case("blocks", n, _inline("blocks", a, d, **o)) for n, (a, d, o) in BLOCKS_ENGINE.items()
    ]
    cases += [Case("confrontation", n, _file("confrontation", n)) for n in CONFRONTATION_BUNDLED]
    cases += [
        Case("confrontation", n, _file("confrontation", stem, changes))
        for n, (stem, changes) in CONFRONTATION.items()
    ]
    cases += [Case("skirmish", n, _file("skirmish", n)) for n in SKIRMISH_BUNDLED]
    cases += [
        Case("skirmish", n, _file("skirmish", stem, changes))
        for n, (stem, changes) in SKIRMISH_ENGINE.items()
    ]
    cases.append(
        Case(
            "skirmish",
            "inline_sampled5",
            _inline(
                "skirmish", "cavalry, priest", "unicorn, 2 swordsman", expected_value="sampled5"
            ),
        )
    )
    return cases


CASES: tuple[Case, ...] = tuple(_cases())


def cases_of(ruleset: str) -> list[Case]:
    return [c for c in CASES if c.ruleset == ruleset]
