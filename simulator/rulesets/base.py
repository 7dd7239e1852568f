"""What every ruleset provides.

A ruleset turns validated scenario data into plain arrays and runs its kernel on a
range of battle indices. Everything after that (statistics, tables, JSON, plots,
sweeps, regression) is shared and sees only named integer outcome columns:

* ``winner``: 0 attacker, 1 defender, 2 draw;
* ``steps``: the ruleset's unit of time at which the battle was decided;
* ``casualties.<side>.<type>``: men lost per unit type and side;
* anything else: ruleset extras (``nobles_killed.defender``, ``castle_fallen``, ...).
  A 0/1 extra is reported as a probability.

Every battle's work is bounded: a ruleset whose battles could go on for ever ends one
still undecided after its turn limit as a draw, and reports it in the 0/1 extra
``turn_limit`` (the summary says how many battles hit the limit).
"""

from __future__ import annotations

import copy
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BattleOddsError, Source
from ..input.fields import Table
from . import designer, words
from .designer import Knob
from .exact import ExactResult, ExactState
from .stop_rules import NEVER, StopRule

#: ``[battle]`` keys that ``odds`` takes as options of their own (others: ``--set``).
ODDS_OPTIONS = ("terrain", "weather", "strike_order")
#: The 0/1 outcome column of a battle ended as a draw by its ruleset's turn limit.
TURN_LIMIT = "turn_limit"
SIDES = ("attacker", "defender")
#: Columns a kernel's row may hold beyond the named ones (derived, internal).
SPARE_COLUMNS = 8
#: ``winner`` of a battle :meth:`Prepared.run_until` stopped while still undecided.
FIGHTING = 5  # kernels.stops.FIGHTING (not imported: kernels load Numba)
#: What of the battle as it unfolds a prepared scenario can give (``Prepared.unfolds``):
#: the state after a step (:meth:`Prepared.run_until`).
BY_STEP = "the state after a step"
#: ... a side's stop rule (``[attacker.retreat]``; :attr:`Prepared.stop_rules`, handed
#: to the kernel as kernels/stops.py's rows).
STOP_RULES = "stop rules"
#: ... a battle already in progress (``[battle] from_step``; :attr:`Prepared.from_step`).
FROM_STEP = "a battle in progress"
#: ... waves (``[[attacker.waves]]``): a side's next army fights what the battle left.
WAVES = "waves"


#: The most units one side may field (olympia's and Age of Gods' nobles with their men,
#: blocks, confrontation's units, skirmish's participants). The bundled scenarios field
#: at most 9 a side and a real game's battle a few dozen; the bound is there because a
#: battle's work and memory grow with its units (skirmish's with their square: 24,000
#: participants took 4.7 GB and 15 s a battle; 2,000 take 32 MB and about 0.1 s).
MAX_UNITS_PER_SIDE = 1_000
#: The most men one side may field (the men of olympia's and Age of Gods' units with
#: their nobles, blocks' steps; one a unit or participant elsewhere). The bundled
#: scenarios field at most 160 a side, a real game's largest armies a few thousand; an
#: olympia battle of a million men a side takes about a second, the longest a kernel
#: call should take (Ctrl-C waits for it).
MAX_MEN_PER_SIDE = 1_000_000


@dataclass(frozen=True)
class Force:
    """What one side of a scenario fields, to bound before any work: its ``units`` and
    ``men`` (:data:`MAX_UNITS_PER_SIDE`, :data:`MAX_MEN_PER_SIDE`), named by the scenario
    ``key`` that holds them (``attacker.units``; ``stacks`` where sides are made of
    stacks by owner)."""

    side: str
    key: str
    units: int
    men: int

    @property
    def too_large(self) -> bool:
        """Whether it fields more units or men than a battle may hold."""
        return self.units > MAX_UNITS_PER_SIDE or self.men > MAX_MEN_PER_SIDE


if TYPE_CHECKING:
    # The package imports pandas inside the functions that build a frame: at import it
    # was a fifth of a command's start-up (0.2 s of 1 s), and `odds` builds no frame.
    import pandas as pd

    from ..scenario.scenario import Scenario


@dataclass(frozen=True)
class InlineQuery:
    """An army pair and conditions given on the command line (``battle-odds odds``)."""

    attacker: str
    defender: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Army:
    """``men`` men of one unit type (``battle-odds matrix``)."""

    type: str
    men: int


#: Each outcome column's least and most value (None: no bound), as ``Prepared`` declares.
ColumnBounds = dict[str, tuple[int | None, int | None]]


def add_to_most(bounds: ColumnBounds, name: str, more: int) -> None:
    """Raise column ``name``'s most value by ``more`` (from 0 to 0 when new): casualties
    of a type bounded by the men, steps or units of it brought, counted one by one."""
    least, most = bounds.get(name, (0, 0))
    bounds[name] = (least, (most or 0) + more)


class Prepared(ABC):
    """A scenario compiled to arrays, ready to run any range of battles."""

    #: Name of the kernel used, reported in the summary.
    kernel: str = ""
    #: Notes for the user (rules dropped, options ignored), reported in the summary.
    notes: tuple[str, ...] = ()
    #: Outcome columns that are yes/no (0/1), reported as probabilities.
    flags: frozenset[str] = frozenset()
    #: The least and most value each outcome column can take in this scenario (None:
    #: no bound), declared by the ruleset: ``casualties.attacker.knight`` 0 to the
    #: knights the attacker brings, a unit's health left 0 to its health. A checkpoint
    #: whose tally leaves them is refused (numbers no battle of the scenario can give,
    #: whatever the checksum says). ``winner`` (0..2), ``steps`` (0..``step_limit``),
    #: flags (0..1) and casualties (at least 0) are bounded without saying so here.
    column_bounds: Mapping[str, tuple[int | None, int | None]] = MappingProxyType({})
    #: The most ``steps`` a battle of this scenario can last (its turn limit), or None
    #: where the ruleset sets none.
    step_limit: int | None = None

    #: The outcome columns by name, each with its place in the kernel's row (columns
    #: derived from others, such as blocks' ``turn``, may add a few).
    columns: Mapping[str, int] = MappingProxyType({})
    #: What of the battle as it unfolds this scenario can give (:data:`BY_STEP`); a
    #: ruleset declares each one it implements (docs/writing-a-ruleset.md).
    unfolds: frozenset[str] = frozenset()
    #: Each side's stop rule (attacker, defender), as the scenario gives them; a ruleset
    #: that declares :data:`STOP_RULES` hands them to its kernel.
    stop_rules: tuple[StopRule, StopRule] = (NEVER, NEVER)
    #: The step the battle has reached already (0: it starts now); steps, and a stop
    #: rule's ``after``, count from the battle's start (:data:`FROM_STEP`).
    from_step: int = 0
    #: What one call of :meth:`run` should take at least, in seconds (None: the runner's
    #: ``CALL_SECONDS``): a scenario whose call makes a kernel call per group of battles
    #: (a mixture of unknowns) asks for longer calls, so its calls' fixed cost is a
    #: smaller share (Ctrl-C is still answered within about a second).
    call_seconds: float | None = None
    #: Why this scenario does not give a capability of :attr:`unfolds` (what its rows
    #: lack), by capability, for the one-line refusal (running/unfolding.check_unfolds).
    lacks: Mapping[str, str] = MappingProxyType({})

    def survivors(
        self, rows: Mapping[str, np.ndarray], side: str, data: Mapping[str, Any]
    ) -> tuple[np.ndarray, list[dict[str, Any] | None]]:
        """Side ``side`` as each battle of ``rows`` (battles of this scenario) left it,
        for the next wave to fight (docs/unfolding.md, "Waves"): for each battle an index
        into the list returned, of side tables written as the scenario writes ``side``
        (``data``: its table in this scenario), battles that left it alike sharing one;
        None where nothing of it is left to fight. Declared by :data:`WAVES`."""
        raise NotImplementedError(WAVES)

    def for_waves(self, later: bool = False) -> Prepared:
        """This scenario as the wave chain runs it: one whose :meth:`run` also gives
        what :meth:`survivors` reads and a plain run does not report (olympia's groups'
        state at the end, where each of blocks' blocks ended). The first wave's
        (``later`` False) fights the battles a plain run does; a later wave's fight
        against what an earlier one left runs a few battles of each army left, so a
        ruleset may give it a kernel with no set-up (its own choice, never one that
        depends on how many battles a call runs). This default is itself: a ruleset
        whose columns hold a side's state needs no more."""
        return self

    @property
    def has_stop_rules(self) -> bool:
        """Whether either side has a stop rule: the answer then reports withdrawals."""
        return any(not rule.never for rule in self.stop_rules)

    def run_until(self, seed: int, first: int, count: int, step: int) -> dict[str, np.ndarray]:
        """Battles ``first .. first+count-1`` of run ``seed``, each stopped after step
        ``step`` if still undecided then: ``winner`` :data:`FIGHTING` and every column
        as it stands after that step; a battle decided by then is its whole row. Battle
        i draws the numbers it draws in :meth:`run` (on the kernel that can stop it), so
        a step past the battle's end changes nothing. Declared by :data:`BY_STEP` in
        :attr:`unfolds`."""
        raise NotImplementedError(BY_STEP)

    def run_through(
        self, seed: int, first: int, count: int, steps: Sequence[int]
    ) -> Mapping[str, np.ndarray]:
        """The state of battles ``first .. first+count-1`` of run ``seed`` after each of
        ``steps`` (ascending, each 1 or more): every column an array of shape
        ``(len(steps), count)``, row k what :meth:`run_until` gives for ``steps[k]``. This
        default calls :meth:`run_until` once per step (each call fights the battles again
        from the start); a ruleset whose kernel records every step in one pass overrides
        it (the answer is the same, battle by battle) and returns its record as
        :class:`~simulator.rulesets.outcomes.Recorded`, which the counts read in place."""
        rows = [self.run_until(seed, first, count, int(step)) for step in steps]
        if not rows:
            return {}
        return {name: np.stack([r[name] for r in rows]) for name in rows[0]}

    def record_columns(
        self, seed: int, first: int, count: int, steps: Sequence[int], names: Sequence[str]
    ) -> np.ndarray:
        """The columns ``names`` of :meth:`run_through`'s rows, shape ``(len(steps),
        count, len(names))`` (int64): what the retreat rule's battles read, one array.
        A ruleset whose kernel records a wide row per step may override it to gather
        the few columns asked in one pass over its recording."""
        rows = self.run_through(seed, first, count, steps)
        out = np.empty((len(steps), count, len(names)), np.int64)
        for i, name in enumerate(names):
            out[:, :, i] = rows[name]
        return out

    def state_columns(self, steps: Sequence[int]) -> dict[str, np.ndarray] | None:
        """The states :meth:`count_through` counts the battles by after each of
        ``steps``: each state's ``winner`` and every ``casualties.`` column (what the
        state after a step is counted from), one value a state. None (this default):
        the kernel does not count, :meth:`run_through`'s rows are counted. A kernel whose
        battles stand at one of a table's positions counts them there more cheaply
        than it writes their rows."""
        return None

    def count_through(
        self, seed: int, first: int, count: int, steps: Sequence[int], counts: np.ndarray
    ) -> None:
        """Add :meth:`run_through`'s battles, by their state after each of ``steps``, to
        ``counts[x, k]`` (``x`` a state of :meth:`state_columns`, ``k`` a step): where that is not
        None, the same counts as the rows, battle by battle."""
        raise NotImplementedError(BY_STEP)

    @abstractmethod
    def run(self, seed: int, first: int, count: int) -> Mapping[str, np.ndarray]:
        """Outcome columns of battles ``first .. first+count-1`` of run ``seed``: the
        kernel's rows as :class:`~simulator.rulesets.outcomes.Outcomes` (each name's
        place in a row), which the statistics count in one pass without a copy; any other
        mapping of name to column is counted a column at a time."""

    def memory_bytes(self, battles: int) -> int:
        """The most bytes one kernel call of ``battles`` battles needs: its rows of
        outcomes (int64), the tally's working copies of them (two more: the counts of
        each column's values), and :meth:`table_bytes`."""
        width = len(self.columns) + len(self.flags) + SPARE_COLUMNS
        return 3 * 8 * width * battles + self.table_bytes()

    def table_bytes(self) -> int:
        """The bytes of the tables a kernel call builds for this battle besides its
        rows (skirmish's expected damage of each participant against each other)."""
        return 0

    def kernel_choices(self, battles: int | None = None) -> tuple[str, ...]:
        """The kernels that can run this battle, the one it runs (``kernel``) first, then
        the others a group may share, faster first, the reference kernel last. With
        ``battles``, the ones worth their set-up for that many battles of it first (a
        group of many scenarios, a few thousand battles each: a kernel that builds a large
        table per scenario may cost more than the battles). Rulesets with a single kernel
        have just it."""
        return (self.kernel,)

    def choices_before_building(
        self, battles: int | None = None
    ) -> tuple[tuple[str, ...], frozenset[str]]:
        """:meth:`kernel_choices` as far as it is known with no table built (olympia's
        chain table, whose first build compiles a kernel): every kernel it may hold, in
        its order, and which of those it holds only if a table yet to build says so
        (:func:`common_kernel` then settles a group without building what it would not
        use; regress plans its order of scenarios by the first). This default: the
        choices, every one known."""
        return self.kernel_choices(battles), frozenset()

    def use_kernel(self, name: str) -> None:
        """Run the kernel ``name`` from now on (one of :meth:`kernel_choices`)."""
        if name not in self.kernel_choices():
            raise BattleOddsError(
                f"kernel {name!r}: this battle runs on {', '.join(self.kernel_choices())}"
            )
        self.kernel = name


def common_kernel(group: Sequence[Prepared], battles: int | None = None) -> str | None:
    """The one kernel for a group of prepared scenarios that must draw battle i alike
    (common random numbers, the randomness contract): battle i of a seed is the same
    battle only within one kernel. It is the first choice of the first scenario that
    every other can run (a ruleset's reference kernel can run every battle); None when
    the group is empty or shares no kernel (scenarios of different rulesets, whose
    kernels draw differently anyway). ``battles``: about how many battles each will run
    (:meth:`Prepared.kernel_choices`). The kernel is chosen only: :func:`use_common_kernel`
    sets it."""
    if not group:
        return None
    known = known_common_kernel(group, battles)
    if known is not None:
        return known
    choices = [p.kernel_choices(battles) for p in group]
    for name in choices[0]:
        if all(name in c for c in choices[1:]):
            return name
    return None


def known_common_kernel(group: Sequence[Prepared], battles: int | None = None) -> str | None:
    """:func:`common_kernel` where it follows from :meth:`Prepared.choices_before_building`,
    with no table built; None where a table must say. Every kernel the first scenario
    may run, in its order, is passed over when another cannot run it; the first one
    left is the group's when every scenario surely runs it (a worth whose first probe
    settled its scenario on olympia's skip kernel builds no chain table for it)."""
    known = [p.choices_before_building(battles) for p in group]
    for name in known[0][0] if known else ():
        if any(name not in may for may, _ in known[1:]):
            continue
        return name if all(name not in unsure for _, unsure in known) else None
    return None


def use_common_kernel(
    group: Sequence[Prepared], battles: int | None = None, name: str | None = None
) -> str | None:
    """Put every scenario of ``group`` on :func:`common_kernel` (``name`` where the
    caller found it already), and return it."""
    name = common_kernel(group, battles) if name is None else name
    if name is not None:
        for prepared in group:
            prepared.use_kernel(name)  # not "if it differs": a kernel is settled on use
    return name


class Ruleset(ABC):
    """A rule system: ``validate``, ``prepare``, ``inline`` and ``units`` are required,
    the other methods are optional hooks with defaults (docs/writing-a-ruleset.md)."""

    name: str = ""
    title: str = ""
    #: What ``steps`` counts for this ruleset (strikes, rounds, turns): a name that reads
    #: in "3 rounds", "rounds until decided".
    step_unit: str = "steps"
    #: What a step is, when its name alone does not say (blocks: which phase is which);
    #: titles show it after the name (``step_words``).
    step_gloss: str = ""
    #: The ruleset's own scenario keys (its ``keys.SCENARIO``): what ``validate`` reads,
    #: the docs' key table and the JSON Schema come from it.
    scenario_keys: Table = Table("", "")
    #: The outcome columns in a player's words, by measure (the column's first part):
    #: templates with {side}, {army}, {subject} and {subjects} (rulesets.words). A measure
    #: left out is said generically, "steps lost (attacker)".
    column_words: Mapping[str, str] = MappingProxyType({})

    def step_words(self) -> str:
        """The step unit with its gloss, for a title: "phases: rounds 1-3, 4 = attrition"."""
        return f"{self.step_unit}: {self.step_gloss}" if self.step_gloss else self.step_unit

    @abstractmethod
    def validate(self, data: Mapping[str, Any], source: Source) -> Any:
        """Check scenario data (everything but the common keys); return a typed model."""

    @abstractmethod
    def prepare(self, model: Any) -> Prepared:
        """Compile a validated model to arrays."""

    def side_sizes(self, model: Any) -> tuple[Force, ...]:
        """What each side of a validated model fields (units and men), bounded before
        any work by :data:`MAX_UNITS_PER_SIDE` and :data:`MAX_MEN_PER_SIDE`. The default,
        nothing, leaves a ruleset's sides unbounded (the memory a run needs is still
        estimated and bounded)."""
        return ()

    def fills_in(self, path: str) -> bool:
        """Whether a value at data ``path`` (an unknown of a scenario with ranges:
        ``defender.break_point``) changes only what :meth:`fill_in` fills into a prepared
        combination. The default: none (each combination validated and prepared whole)."""
        return False

    def fill_in(self, prepared: Prepared, values: Mapping[str, Any]) -> tuple[Any, Prepared] | None:
        """The model and prepared scenario of a combination of a scenario with ranges:
        ``prepared``'s (a combination validated and prepared whole; the kernel a run set
        on it aside) with
        the ``values`` at paths :meth:`fills_in` accepts, exactly what validating and
        preparing the combination would give, made without either (docs/unknowns.md,
        "Speed"); None where it cannot say so (the combination is then validated and
        prepared whole, and a bad one says why). Each value was validated where it is
        written (the mixture's checked combinations: the ends of a range, every value of
        a list); what the values make together is for this to check, but for each side's
        size (:meth:`side_sizes`), which the mixture checks. The default: None."""
        return None

    @abstractmethod
    def inline(self, query: InlineQuery) -> dict[str, Any]:
        """Scenario data (as a TOML file would hold it) for a one-line query."""

    @abstractmethod
    def units(self) -> pd.DataFrame:
        """The ruleset's unit types, one row each, for ``battle-odds units``."""

    def inline_option(self, data: Mapping[str, Any], key: str) -> str | None:
        """The ``odds`` option that put dotted ``key`` into ``data`` (built by
        :meth:`inline`), for errors found by the validator. The default reads the key's
        first parts: ``attacker.break_point`` came from ``--attacker-break``, the rest of
        ``attacker...`` from ``--attacker``, ``battle.terrain`` from ``--terrain`` and
        other ``battle.x`` / ``policy.x`` from ``--set x=...``."""
        parts = [p for p in re.split(r"[.\[\]]", key) if p]
        if len(parts) < 2:
            return None
        head, name = parts[0], parts[1]
        if head in ("attacker", "defender"):
            if name == "break_point":
                return f"--{head}-break"
            if name == "structure":
                return "--structure" if head == "defender" else "--attacker-structure"
            return f"--{head}"
        if head == "battle" and name in ODDS_OPTIONS:
            return "--" + name.replace("_", "-")
        if head in ("battle", "policy"):
            return f"--set {name}"
        return None

    def starter(self) -> str:
        """The commented starter scenario ``battle-odds new`` writes: by default the
        ``starter.toml`` beside the module that defines the ruleset's class."""
        module = sys.modules[type(self).__module__]
        path = Path(module.__file__ or "").parent / "starter.toml"
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            raise BattleOddsError(
                f"--ruleset {self.name}: the ruleset ships no starter scenario "
                f"(starter.toml beside {module.__name__}, or Ruleset.starter)"
            ) from None

    def describe_column(self, column: str) -> str:
        """An outcome column in words, for plots: "defender's leader captured"."""
        return words.describe_column(column, self.column_words)

    def describe_path(self, path: str, data: Mapping[str, Any] | None = None) -> str:
        """A sweep's ``--vary`` path in words: "knights in the attacking army"."""
        return words.describe_path(path, self.unit_types(data or {}), self.types_key)

    def sweep_path(self, data: Mapping[str, Any], path: str) -> str:
        """The scenario data path (for ``Scenario.with_changes``) a sweep's ``--vary PATH``
        names in scenario ``data``.

        The default takes ``path`` as a data path already (``battle.terrain``,
        ``attacker.units[0].men.knight``, ``units.knight.attack``). A ruleset overrides
        this to accept shorter forms such as ``attacker.knight``; it raises
        ``BattleOddsError`` for a path that names nothing.
        """
        return path

    # The designer's questions (``worth``, ``sensitivity``): see ``rulesets.designer``.

    #: Rating fields of a unit type that ``sensitivity`` turns, each with its resolution.
    rating_fields: tuple[tuple[str, float], ...] = ()
    #: Ratings that stay at least 1 (hit points): the rest may go down to 0.
    positive_ratings: tuple[str, ...] = ()
    #: The scenario table that changes a unit type or defines a new one.
    types_key: str = "units"

    def unit_types(self, data: Mapping[str, Any]) -> list[str]:
        """Names of the unit types a scenario with ``data`` may field."""
        frame = self.units()
        if "kind" in frame:
            frame = frame[frame["kind"] == "fighter"]
        own = [t for t in data.get(self.types_key) or {} if t not in set(frame["type"])]
        return [*frame["type"], *own]

    def type_ratings(self, data: Mapping[str, Any], kind: str) -> dict[str, float]:
        """The ``rating_fields`` of unit type ``kind``: the ruleset's, under the scenario's."""
        frame = self.units()
        rows = frame[frame["type"] == kind].to_dict("records")
        merged = {**(rows[0] if rows else {}), **((data.get(self.types_key) or {}).get(kind) or {})}
        return {f: float(merged[f]) for f, _ in self.rating_fields if f in merged}

    def forces(self, model: Any) -> list[tuple[str, str, int]]:
        """(side, unit type, how many) for every type a side fields. The default reads
        models whose sides hold ``units`` of typed ``men`` (olympia's shape)."""
        if not all(hasattr(getattr(model, side, None), "units") for side in SIDES):
            raise BattleOddsError(
                f"--ruleset {self.name}: its models have no attacker.units / defender.units "
                "and the ruleset does not say what each side fields (Ruleset.forces)"
            )
        return designer.men_forces(model)

    def add_men(self, scenario: Any, side: str, kind: str, count: int) -> dict[str, Any]:
        """Scenario data with ``count`` men of ``kind`` added to ``side`` where the ruleset
        puts reinforcements (taken away for a negative count). The default adds them to
        the side's first unit holding the type, else its first unit."""
        if not isinstance((scenario.data.get(side) or {}).get("units"), list):
            raise BattleOddsError(
                f"--ruleset {self.name}: its scenarios have no [[{side}.units]] and the "
                "ruleset does not say where added men go (Ruleset.add_men)"
            )
        return designer.change_men(scenario.data, side, kind, count)

    def room(self, scenario: Any, side: str) -> int | None:
        """How many men ``add_men`` can still add to ``side`` (None: no limit)."""
        return None

    def knobs(self, scenario: Any) -> list[Knob]:
        """Every count of a type on each side, then every rating of the types present."""
        forces = self.forces(scenario.model)
        knobs = [Knob(designer.COUNT, side, kind, "count", n) for side, kind, n in forces]
        for kind in dict.fromkeys(kind for _, kind, _ in forces):
            for name, value in self.type_ratings(scenario.data, kind).items():
                if value == 0:
                    continue  # a rating the type does not use (no missile): nothing to turn
                knobs.append(
                    Knob(
                        designer.RATING,
                        None,
                        kind,
                        name,
                        value,
                        resolution=dict(self.rating_fields)[name],
                        lowest=1.0 if name in self.positive_ratings else 0.0,
                    )
                )
        return knobs

    def with_knob(self, scenario: Any, knob: Knob, value: float) -> dict[str, Any]:
        """Scenario data with ``knob`` set to ``value``."""
        if knob.kind == designer.COUNT:
            assert knob.side is not None
            return self.add_men(scenario, knob.side, knob.subject, round(value - knob.value))
        data = copy.deepcopy(dict(scenario.data))
        types = data.setdefault(self.types_key, {})
        number = int(value) if float(value).is_integer() else value
        types.setdefault(knob.subject, {})[knob.field] = number
        return data

    def not_for_worth(self) -> str | None:
        """Why ``worth`` does not apply to this ruleset (None: it does)."""
        return None

    def unit_costs(self) -> dict[str, float]:
        """What one man of each unit type costs (the unit table's ``cost``), for
        ``battle-odds matrix``; every type that can be fielded as an army of its own."""
        raise BattleOddsError(
            f"--ruleset {self.name}: its unit table has no unit types with costs, "
            "so there is no matrix of types to fight"
        )

    def cannot_fight_alone(self) -> dict[str, str]:
        """Unit types that an army of that type alone cannot fight with, and why."""
        return {}

    def one_type_battle(self, attacker: Army, defender: Army) -> dict[str, Any]:
        """Scenario data: ``attacker.men`` men of one type against ``defender.men`` of
        another, each side with the least the ruleset needs to field them (a leader, a
        place on the map), in the ruleset's default conditions."""
        raise BattleOddsError(f"--ruleset {self.name}: cannot field an army of one unit type")

    def exact(self, scenario: Scenario, max_states: int | None = None) -> ExactResult:
        """Optional: exact probabilities and expectations of a small ``scenario``
        (``battle-odds exact``, ``odds --exact``, :func:`simulator.exact`).

        ``max_states`` (None: the ruleset's own limit) bounds the work; a scenario above
        it raises ``BattleOddsError`` naming its size. The default has no solver."""
        raise BattleOddsError(
            f"{scenario.source.label}: no exact solver for the '{self.name}' ruleset; "
            "use `battle-odds run`"
        )

    def exact_after(self, scenario: Scenario, step: int) -> ExactState:
        """Optional: the exact state of a small ``scenario`` after ``step`` steps
        (``battle-odds exact --after``). The default has no solver."""
        raise BattleOddsError(
            f"{scenario.source.label}: no exact state after a step for the '{self.name}' "
            "ruleset; use `battle-odds run --after`"
        )

    @property
    def solvable(self) -> bool:
        """Whether the ruleset overrides :meth:`exact`."""
        return type(self).exact is not Ruleset.exact
