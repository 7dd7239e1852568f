"""Scenarios: TOML files (or inline queries) validated into typed, hashable objects."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError, Source, did_you_mean, printable
from ..input.reader import Node
from ..input.toml import read_toml
from ..rulesets import keys
from .unknowns import Mixture, Unknown, find_unknowns
from .waves import Waves, split_waves

#: Keys every scenario may have, whatever its ruleset.
COMMON_KEYS = tuple(f.name for f in keys.COMMON)
DEFAULT_BATTLES = keys.DEFAULT_BATTLES
DEFAULT_SEED = keys.DEFAULT_SEED


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: its data (as in the file), its ruleset and typed model."""

    ruleset: str
    name: str
    data: Mapping[str, Any]
    model: Any = field(compare=False, repr=False)
    source: Source = field(compare=False, repr=False)
    description: str = ""
    battles: int = DEFAULT_BATTLES
    seed: int = DEFAULT_SEED

    @property
    def canonical(self) -> str:
        """The scenario's content as JSON: the same for the same file whatever its
        formatting or comments. Key order is kept: it is meaningful (stack order of
        units and men decides shielding and who fits inside a structure)."""
        return json.dumps(self.data, separators=(",", ":"), default=str)

    @property
    def hash(self) -> str:
        """A hash of the scenario's content (not its formatting or comments)."""
        return content_hash(self.canonical)

    @property
    def path(self) -> Path | None:
        return self.source.path

    def with_changes(self, changes: Mapping[str, Any]) -> Scenario:
        """A copy with values set at dotted paths (``attacker.units[0].men.knight``)."""
        data = copy.deepcopy(dict(self.data))
        for path, value in changes.items():
            set_path(data, path, value)
        label = f"{self.source.label} with {', '.join(f'{k}={v}' for k, v in changes.items())}"
        return from_data(data, Source(label, "", None))


def content_hash(canonical: str) -> str:
    """The scenario hash of canonical scenario JSON (see ``Scenario.canonical``)."""
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


#: Called with each scenario file read and validated: the command line says there that a
#: first run compiles (simulator/cli/options.py's ``runs_battles``), before a study builds
#: its variations.
LOADED: list[Callable[[Scenario], None]] = []


def load_scenario(path: str | Path, *, announce: bool = True) -> Scenario:
    """Read, parse and validate a scenario file (``announce``: tell :data:`LOADED`; a
    command that says its own compile notice, regress's, does not)."""
    data, source = read_toml(Path(path), "scenario file")
    scenario = from_data(data, source)
    for hook in list(LOADED) if announce else []:
        hook(scenario)
    return scenario


#: The most values (keys and items, counted through its tables and arrays) one side of
#: a scenario may hold. A battle's work and memory grow with its units: 20,000 one-man
#: units in a file of 0.8 MB once took 24 GB before the system ended the run.
MAX_SIDE_VALUES = 2_000


def values_in(data: Any) -> int:
    """The keys and items of ``data``, through its tables and arrays (1 for a value)."""
    count, left = 0, [data]
    while left:
        item = left.pop()
        count += 1
        # Dicts, lists and plain values first: the check for any other Mapping is an
        # abstract class's, ten times slower, and a price search counts the values of
        # thousands of sides.
        if isinstance(item, dict):
            left.extend(item.values())
        elif isinstance(item, list):
            left.extend(item)
        elif isinstance(item, str | int | float):
            continue
        elif isinstance(item, Mapping):
            left.extend(item.values())
    return count


def from_data(data: Mapping[str, Any], source: Source, *, drawn: bool = False) -> Scenario:
    """Validate scenario data from any origin (file, inline query, sweep point).
    ``drawn``: the data of one combination of a scenario's unknowns, each a value already
    (:class:`Mixture`), not searched for ranges again (a fifth of its validation)."""
    top = Node(data, "", source)
    table = top.table()
    if "ruleset" not in table:
        raise source.error("ruleset", "is required: expected one of " + ", ".join(rulesets.names()))
    name = top.text("ruleset")
    if not rulesets.known(name):
        raise top.fail(
            f"unknown ruleset '{name}'" + did_you_mean(name, rulesets.names()), "ruleset", name
        )
    broken = rulesets.problem(name)
    if broken:
        raise top.fail(broken, "ruleset", name)
    ruleset = rulesets.get(name)
    # A combination's side holds no more than the written one, which holds every value
    # its unknowns may take: counted once, for the scenario as written.
    for side in () if drawn else ("attacker", "defender"):
        held = values_in(table.get(side))
        if held > MAX_SIDE_VALUES:
            raise top.fail(
                f"{held:,} values (units, men, ratings): more than the {MAX_SIDE_VALUES:,} "
                "a side may hold (the bundled scenarios hold at most 65)",
                side,
            )
    plain, unknowns = (dict(table), []) if drawn else find_unknowns(table, source)
    without_waves, waving, waves = split_waves(table, source)
    model: Any
    if waving is not None:
        if unknowns:
            raise source.error(
                f"{waving}.waves",
                "waves and ranges (unknowns) in one scenario: give the armies exactly, "
                f"or leave out [[{waving}.waves]]",
            )
        model = Waves(name, without_waves, waving, waves, source, from_data)
    elif unknowns:
        model = Mixture(name, plain, unknowns, source, partial(from_data, drawn=True))
    else:
        specific = {k: v for k, v in plain.items() if k not in COMMON_KEYS}
        model = ruleset.validate(specific, source)
        check_sizes(top, ruleset.side_sizes(model))
    default_name = source.path.stem if source.path else "inline"
    return Scenario(
        ruleset=name,
        # Printed in titles, tables and figures: escaped, never obeyed by a terminal.
        name=printable(top.text("name", default_name)),
        description=top.read(keys.DESCRIPTION),
        battles=top.read(keys.BATTLES),
        seed=top.read(keys.SEED),
        data=dict(data),
        model=model,
        source=source,
    )


def prepare(scenario: Scenario) -> rulesets.Prepared:
    """The scenario compiled to arrays: its ruleset's, or, for a scenario with unknowns,
    one that draws each battle's inputs (:mod:`.unknowns`)."""
    if isinstance(scenario.model, Mixture | Waves):
        return scenario.model.prepare()
    return rulesets.get(scenario.ruleset).prepare(scenario.model)


def unknowns_of(scenario: Scenario) -> tuple[Unknown, ...]:
    """What varies in the scenario (empty for fixed inputs)."""
    return scenario.model.unknowns if isinstance(scenario.model, Mixture) else ()


def check_sizes(top: Node, forces: tuple[rulesets.Force, ...]) -> None:
    """Refuse a side with more units or men than a battle may hold (rulesets.base), at
    the key that holds them, before any work."""
    for force in forces:
        for count, what, most in (
            (force.units, "units", rulesets.MAX_UNITS_PER_SIDE),
            (force.men, "men", rulesets.MAX_MEN_PER_SIDE),
        ):
            if count > most:
                raise top.fail(
                    f"the {force.side} fields {count:,} {what}, more than the {most:,} "
                    f"a side may field (the bundled scenarios field at most "
                    f"{BUNDLED_MOST[what]} a side)",
                    force.key,
                )


#: The most units and men a bundled scenario fields on one side, for the error above
#: (tests/test_faults.py checks them).
BUNDLED_MOST = {"units": 9, "men": 160}


#: A value a command-line option gives a scenario at a dotted data path: the value, and
#: the option that gave it (``{"battle.from_step": (3, "--from-step")}``).
Given = Mapping[str, tuple[Any, str]]


def _set_given(data: dict[str, Any], given: Given) -> Callable[[str], str | None]:
    """Set each value ``given`` in ``data``; return what names the option of a key."""
    for path, (value, option) in given.items():
        try:
            set_path(data, path, value)
        except BattleOddsError as exc:
            raise BattleOddsError(f"{option}: {exc}") from None

    def option_of(key: str) -> str | None:
        for path, (_, option) in given.items():
            if (
                key == path
                or key.startswith((path + ".", path + "["))
                or path.startswith(key + ".")
            ):
                return option
        return None

    return option_of


def from_query(ruleset: str, query: rulesets.InlineQuery, given: Given | None = None) -> Scenario:
    """A scenario from one-line armies (``battle-odds odds``): the ruleset builds the data
    a file would hold and the file's validator checks it, naming the option at fault;
    ``given``: values other options set at data paths (a stop rule, ``--from-step``)."""
    rs = rulesets.get(ruleset, "--ruleset")
    data = rs.inline(query)
    named = _set_given(data, given or {})
    return from_data(
        data, Source("odds", option_of=lambda key: named(key) or rs.inline_option(data, key))
    )


def with_given(scenario: Scenario, given: Given) -> Scenario:
    """``scenario`` with values command-line options give at data paths (``run FILE
    --from-step 3``): an error in one names its option, in any other key the file's
    line."""
    if not given:
        return scenario
    data = copy.deepcopy(dict(scenario.data))
    named = _set_given(data, given)
    before = scenario.source.option_of

    def option_of(key: str) -> str | None:
        return named(key) or (before(key) if before is not None else None)

    return from_data(data, replace(scenario.source, option_of=option_of))


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at a dotted path with list indices, creating tables as needed."""
    parts: list[str | int] = [
        int(index) if index else key for key, index in _PATH_PART.findall(path)
    ]
    if not parts:
        raise BattleOddsError(f"'{path}': empty path")
    node: Any = data
    for here, part in enumerate(parts[:-1]):
        nxt = parts[here + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise BattleOddsError(f"'{path}': no element [{part}]")
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise BattleOddsError(f"'{path}': '{part}' is not inside a table")
            node = node.setdefault(part, [] if isinstance(nxt, int) else {})
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise BattleOddsError(f"'{path}': no element [{last}]")
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise BattleOddsError(f"'{path}': '{last}' is not inside a table")
