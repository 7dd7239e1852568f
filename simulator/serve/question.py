"""A question the page asks, as its address carries it, and the scenario it means.

The page's address holds the whole question: ``ruleset``, ``attacker`` and ``defender``
in the one-line syntax ``battle-odds odds`` takes (or ``toml``, a whole scenario file),
the ruleset's settings under their scenario keys (``battle.terrain=swamp``,
``attacker.break_point=40``), ``seed``, ``battles`` and ``precision``. Opening the same
address with the same version asks the same question and gets the same numbers.

The scenario is built as ``odds`` builds it (the ruleset's ``inline`` reads the armies,
the file's validator checks the data and names the option at fault), the settings are
read from the same declarations as a scenario file's keys (:mod:`simulator.input.fields`),
and the question is also written as the ``odds`` command and the TOML file that give
the same numbers.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import tomli_w

from .. import rulesets
from ..errors import BattleOddsError, Source, did_you_mean
from ..input.fields import Field, Table
from ..input.toml import parse_toml
from ..rulesets import InlineQuery
from ..rulesets.keys import DEFAULT_BATTLES, DEFAULT_SEED
from ..rulesets.stop_rules import RETREAT
from ..rulesets.words import ARMY
from ..running.plan import MAX_SEED, RunPlan, check_run
from ..scenario.scenario import Given, Scenario, from_data, from_query, set_path, with_given
from ..scenario.stop_text import parse_retreat

#: The address's own keys; any other is a setting's scenario key (``battle.terrain``).
KEYS = ("ruleset", "attacker", "defender", "toml", "seed", "battles", "precision")
#: How a pasted scenario is named in its errors (with the line: ``pasted scenario:3: ...``).
PASTED = "pasted scenario"
SIDES = ("attacker", "defender")
#: The ruleset of a question that names none, as for ``battle-odds odds``.
DEFAULT_RULESET = "olympia"
#: Longest pasted scenario the page takes (bytes of UTF-8): the bundled scenarios are
#: 1-3 KB; a longer file is run with ``battle-odds run``. The server's request-head limit
#: is sized from it (:data:`simulator.serve.server.MAX_HEAD`).
MAX_SCENARIO_BYTES = 64 * 1024
#: Most unit types a pasted scenario may define (its ``units`` or ``unit_types`` table).
MAX_UNIT_TYPES = 200
#: Longest army, setting or number the address may hold (characters).
MAX_FIELD = 4096


#: The form's groups of settings: the ruleset's own, a side's stop rule
#: (``attacker.retreat.at_most``), and the step a battle in progress has reached.
GROUPS = ("settings", "attacker.retreat", "defender.retreat", "progress")
#: ``[battle] from_step``: the steps fought already (docs/unfolding.md).
FROM_STEP = "battle.from_step"


@dataclass(frozen=True)
class Setting:
    """One setting of the page's form: a declared scenario key (``battle.terrain``)."""

    path: str
    field: Field
    words: str

    @property
    def group(self) -> str:
        """Which of :data:`GROUPS` the form shows it in."""
        if self.path == FROM_STEP:
            return "progress"
        side, _, rest = self.path.partition(".")
        if side in SIDES and rest.startswith(f"{RETREAT.name}."):
            return f"{side}.{RETREAT.name}"
        return "settings"

    def to_dict(self) -> dict[str, Any]:
        f = self.field
        default = list(f.default) if isinstance(f.default, tuple) else f.default
        return {
            "path": self.path,
            "group": self.group,
            "words": self.words,
            "kind": f.kind,
            "doc": f.doc,
            "choices": list(f.choices),
            "lo": f.lo,
            "hi": f.hi,
            "step": f.step,
            "default": default,
        }


def _fields(table: Table, prefix: str, depth: int) -> Iterator[tuple[str, Field]]:
    """The plain values of ``table`` (and of its plain sub-tables, ``depth`` deep)."""
    for entry in table.fields:
        path = f"{prefix}.{entry.name}" if prefix else entry.name
        if isinstance(entry, Field):
            yield path, entry
        elif isinstance(entry, Table) and entry.other is None and depth > 0:
            yield from _fields(entry, path, depth - 1)


def settings(name: str) -> list[Setting]:
    """The settings of ruleset ``name``'s form, from its scenario key declarations: the
    values of its plain top-level tables (``[battle]``, ``[policy]``) and of each side
    (break points, a structure, a stop rule); armies, unit tables and scripts are not
    settings."""
    ruleset = rulesets.get(name, "ruleset")
    found: list[Setting] = []
    for entry in ruleset.scenario_keys.fields:
        if not isinstance(entry, Table) or entry.other is not None:
            continue
        depth = 1 if entry.name in SIDES else 0
        for path, f in _fields(entry, entry.name, depth):
            found.append(Setting(path, f, _words(ruleset, path)))
    return found


#: A stop rule's keys and ``from_step`` as the form says them (``{unit}``: the
#: ruleset's steps, "strikes").
RULE_WORDS = {
    "at_most": "at most this many men left (or a % of its men)",
    "gone": "no man of this type left",
    "after": "after this many {unit}",
    "outnumbered": "outnumbered this many to 1",
    FROM_STEP: "{unit} fought already",
}


def group_words(ruleset: Any) -> dict[str, str]:
    """The form's groups' titles (:data:`GROUPS`)."""
    return {
        "settings": "Settings (blank: the ruleset's default)",
        **{
            f"{side}.{RETREAT.name}": f"{ARMY[side].removeprefix('the ').capitalize()} "
            "withdraws with its survivors when any of these holds (blank: never)"
            for side in SIDES
        },
        "progress": f"A battle in progress: the {ruleset.step_unit} fought already "
        "(the armies as they stand now)",
    }


def _words(ruleset: Any, path: str) -> str:
    """A setting in words, as sweeps say their paths ("attacking army's break point"); a
    side's table's key as "attacking army's structure: kind"; a stop rule's key as the
    rule says it ("after this many strikes")."""
    side, _, rest = path.partition(".")
    table, _, key = rest.partition(".")
    if path == FROM_STEP or (side in SIDES and table == RETREAT.name and key in RULE_WORDS):
        return RULE_WORDS[path if path == FROM_STEP else key].format(unit=ruleset.step_unit)
    if side in SIDES and key:
        army = ARMY[side].removeprefix("the ")
        return f"{army}'s {table.replace('_', ' ')}: {key.replace('_', ' ')}"
    return str(ruleset.describe_path(path))


def _value(setting: Setting, text: str) -> Any:
    """A setting's text from the form as the value a scenario file would hold."""
    f, where = setting.field, setting.path
    text = text.strip()
    try:
        if f.kind == "int":
            return int(text)
        if f.kind == "number":
            return float(text)
    except ValueError:
        raise BattleOddsError(
            f"{where}: '{text}': expected a {'whole ' if f.kind == 'int' else ''}number"
        ) from None
    if f.kind == "bool":
        if text.lower() not in ("true", "false"):
            raise BattleOddsError(f"{where}: '{text}': expected true or false")
        return text.lower() == "true"
    if f.kind == "names":
        return [n.strip() for n in text.split(",") if n.strip()]
    if f.kind == "point":
        parts = [p.strip() for p in text.strip("[]()").split(",")]
        if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
            raise BattleOddsError(f"{where}: '{text}': expected two whole numbers, e.g. 3, 4")
        return [int(p) for p in parts]
    return text


def _number(params: Mapping[str, str], key: str, kind: type) -> Any:
    text = params.get(key, "").strip().replace(",", "").replace("_", "")
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise BattleOddsError(f"{key}: '{params[key]}': expected {what}") from None


@dataclass(frozen=True)
class Question:
    """What the page asks: armies on one line with settings, or a pasted scenario."""

    ruleset: str = DEFAULT_RULESET
    attacker: str = ""
    defender: str = ""
    #: ``(scenario key, text as typed)`` of each setting given (blank ones are left out).
    settings: tuple[tuple[str, str], ...] = ()
    toml: str = ""
    seed: int | None = None
    battles: int | None = None
    precision: float | None = None
    scenario: Scenario = field(init=False, repr=False, compare=False)
    #: The ``odds`` options that ask this question (None: a file, or settings ``odds``
    #: cannot say), as words of its command line.
    odds_words: tuple[str, ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        scenario, words = self._build()
        object.__setattr__(self, "scenario", scenario)
        object.__setattr__(self, "odds_words", words)

    @classmethod
    def of(cls, params: Mapping[str, str]) -> Question:
        """The question an address's parameters ask (bad ones: :class:`BattleOddsError`)."""
        for key, text in params.items():
            if key != "toml" and len(text) > MAX_FIELD:
                raise BattleOddsError(
                    f"{key}: {len(text):,} characters: the page takes up to {MAX_FIELD:,}"
                )
        toml = params.get("toml", "")
        ruleset = params.get("ruleset", "").strip() or DEFAULT_RULESET
        given: list[tuple[str, str]] = []
        if not toml.strip():
            declared = {s.path: s for s in settings(ruleset)}
            for key, text in params.items():
                if key in KEYS or not text.strip():
                    continue
                if key not in declared:
                    raise BattleOddsError(
                        f"{key}: not a setting of the {ruleset} ruleset"
                        + did_you_mean(key, declared)
                    )
                given.append((key, text.strip()))
        else:
            unknown = [k for k in params if k not in KEYS and params[k].strip()]
            if unknown:
                raise BattleOddsError(
                    f"{unknown[0]}: settings go inside a pasted scenario, not beside it"
                )
        seed = _number(params, "seed", int)
        if seed is not None and not 0 <= seed <= MAX_SEED:
            raise BattleOddsError(f"seed: {seed}: expected 0..2**63-1")
        return cls(
            ruleset=ruleset,
            attacker=params.get("attacker", ""),
            defender=params.get("defender", ""),
            settings=tuple(given),
            toml=toml,
            seed=seed,
            battles=_number(params, "battles", int),
            precision=_number(params, "precision", float),
        )

    # -- the scenario ------------------------------------------------------------------

    def _build(self) -> tuple[Scenario, tuple[str, ...] | None]:
        """The question's scenario, built by ``odds``' own path where its options can say
        every setting (then its hash is the one ``odds`` prints), else from the same data
        with the settings set at their keys; and the ``odds`` options that ask it."""
        if self.toml.strip():
            size = len(self.toml.encode("utf-8", "replace"))
            if size > MAX_SCENARIO_BYTES:
                raise BattleOddsError(
                    f"{PASTED}: {size:,} bytes: the page takes scenarios of up to "
                    f"{MAX_SCENARIO_BYTES // 1024} KB (run a longer one with battle-odds run FILE)"
                )
            data, source = parse_toml(self.toml.lstrip("\ufeff"), PASTED)
            for key in ("units", "unit_types"):
                defined = data.get(key)
                if isinstance(defined, dict) and len(defined) > MAX_UNIT_TYPES:
                    raise BattleOddsError(
                        f"{PASTED}: [{key}]: {len(defined):,} unit types: the page takes up "
                        f"to {MAX_UNIT_TYPES} (run a larger one with battle-odds run FILE)"
                    )
            return from_data(data, source), None
        if not self.attacker.strip() or not self.defender.strip():
            missing = "--attacker" if not self.attacker.strip() else "--defender"
            raise BattleOddsError(f"{missing}: an empty army: write both armies")
        ruleset = rulesets.get(self.ruleset, "--ruleset")
        declared = {s.path: s for s in settings(self.ruleset)}
        plain = [(p, t) for p, t in self.settings if declared[p].group == "settings"]
        given, given_words = self._given(declared)
        data = ruleset.inline(InlineQuery(self.attacker, self.defender, {}))
        said = self._odds_options(ruleset, data, plain)
        if said is not None:
            options, words = said
            try:
                query = InlineQuery(self.attacker, self.defender, options)
                return from_query(self.ruleset, query, given), words + given_words
            except BattleOddsError:
                pass  # an option this ruleset's one-line form does not take: by its key
        for path, text in plain:
            set_path(data, path, _value(declared[path], text))
        source = Source("odds", option_of=lambda key: ruleset.inline_option(data, key))
        return with_given(from_data(data, source), given), None

    def _given(self, declared: Mapping[str, Setting]) -> tuple[Given, tuple[str, ...]]:
        """The stop rules and the step reached, as ``odds`` reads its options
        ``--attacker-retreat "at most 5, after 3"`` and ``--from-step 3``: the values
        they set at the scenario's keys, each with its option (for errors); and those
        options as command-line words."""
        given: dict[str, tuple[Any, str]] = {}
        words: list[str] = []
        for side in SIDES:
            clauses = [
                f"{declared[path].field.name.replace('_', ' ')} {text}"
                for path, text in self.settings
                if declared[path].group == f"{side}.{RETREAT.name}"
            ]
            if clauses:
                option, text = f"--{side}-retreat", ", ".join(clauses)
                given[f"{side}.{RETREAT.name}"] = (parse_retreat(text, option), option)
                words += [option, text]
        for path, text in self.settings:
            if path == FROM_STEP:
                step = _value(declared[path], text)
                if step < 0:
                    raise BattleOddsError(f"--from-step {step}: expected a step 0 or more")
                given[path] = (step, "--from-step")
                words += ["--from-step", str(step)]
        return given, tuple(words)

    def _odds_options(
        self, ruleset: Any, data: Mapping[str, Any], plain: list[tuple[str, str]]
    ) -> tuple[dict[str, Any], tuple[str, ...]] | None:
        """The ruleset's ``plain`` settings as ``odds`` options (as typer hands them
        over) and command-line words; None when one of them has no option."""
        declared = {s.path: s for s in settings(self.ruleset)}
        options: dict[str, Any] = {}
        words: list[str] = []
        structures: dict[str, dict[str, str]] = {}
        for path, text in plain:
            side, _, rest = path.partition(".")
            if side in SIDES and rest.startswith("structure."):
                structures.setdefault(side, {})[rest.removeprefix("structure.")] = text
                continue
            option = ruleset.inline_option(data, path)
            if option is None:
                return None
            if option.startswith("--set "):
                key = option.removeprefix("--set ")
                options[key] = text
                words += ["--set", f"{key}={text}"]
            else:
                # Whole numbers read, the rest text, as typer hands them to ``odds``.
                kind = declared[path].field.kind
                value = _value(declared[path], text) if kind == "int" else text
                options[option[2:].replace("-", "_")] = value
                words += [option, text]
        for side, parts in structures.items():
            if "kind" not in parts or "defense" not in parts:
                return None
            text = ":".join(parts[k] for k in ("kind", "defense", "damage") if k in parts)
            option = "--structure" if side == "defender" else "--attacker-structure"
            options[option[2:].replace("-", "_")] = text
            words += [option, text]
        return options, tuple(words)

    def plan(self) -> RunPlan:
        """How the question's battles run: its seed and battles (the scenario's when not
        given), or as many as its precision takes (capped as ``--precision`` is)."""
        if self.precision is not None and self.battles is not None:
            raise BattleOddsError("battles and precision: give one")
        if self.precision is None and self.battles is not None:
            check_run(self.battles, self.seed if self.seed is not None else 0)
        return RunPlan.of(self.scenario, self.battles, self.seed, precision=self.precision)

    # -- the same question elsewhere ---------------------------------------------------

    def address(self) -> str:
        """The query string of the page's address that asks this question."""
        params: dict[str, Any] = {}
        if self.toml.strip():
            params["toml"] = self.toml
        else:
            params.update(ruleset=self.ruleset, attacker=self.attacker, defender=self.defender)
            params.update(dict(self.settings))
        for key in ("seed", "battles", "precision"):
            value = getattr(self, key)
            if value is not None:
                params[key] = value
        return urlencode(params)

    def to_toml(self) -> str:
        """The question as a scenario file: ``battle-odds run`` on it gives the same numbers."""
        data = copy.deepcopy(dict(self.scenario.data))
        plan = self.plan()
        if plan.precision is None:
            data["battles"] = plan.battles
        data["seed"] = plan.seed
        # The common keys first, as a file writes them.
        first: dict[str, Any] = {
            k: data.pop(k) for k in ("ruleset", "name", "battles", "seed") if k in data
        }
        return tomli_w.dumps({**first, **data})

    def command(self) -> str | None:
        """``battle-odds odds ...`` asking this question (None: a pasted scenario, or
        settings the one-line command cannot say; then the TOML file is the way)."""
        if self.odds_words is None:
            return None
        words: list[str] = ["battle-odds", "odds"]
        if self.ruleset != DEFAULT_RULESET:
            words += ["--ruleset", self.ruleset]
        words += ["--attacker", self.attacker, "--defender", self.defender, *self.odds_words]
        plan = self.plan()
        if plan.precision is not None:
            words += ["--precision", repr(plan.precision)]
        elif plan.battles != DEFAULT_BATTLES:
            words += ["-n", str(plan.battles)]
        if plan.seed != DEFAULT_SEED:
            words += ["-s", str(plan.seed)]
        return shlex.join(words)
