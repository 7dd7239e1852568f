"""One-type battles built by the thousand (a price search's cells), most of them filled in
from another battle of the same two types instead of validated and prepared whole.

A cell's battle differs from the others of its two types only in its counts of men.
Validating and preparing one took a quarter of a millisecond, all of it holding the
interpreter's lock, so a search's 8,000 cells on two threads waited on each other's
building. A ruleset that fills counts into a prepared battle (:meth:`Ruleset.fill_in`:
Olympia's) makes a cell from the first cell of its two types validated and prepared whole
(their template) in a fraction of that, the same model and arrays as validating and
preparing it would give (tests/test_one_type_cells.py).

As for a scenario with ranges (simulator/scenario/unknowns.py's ``Mixture``), a value is
filled in only where it was validated whole before: a count at its data path in a cell
validated whole (of any two types), so a count the ruleset refuses is refused as before,
with its own error. A side too large (:meth:`Ruleset.side_sizes`), a change the ruleset
does not fill in, and every cell of a ruleset without ``fill_in`` are validated whole.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import printable
from ...rulesets import Army, Prepared, Ruleset
from ...running.scenarios import Built
from ...scenario.scenario import Scenario
from ...scenario.unknowns import Mixture
from ...scenario.waves import Waves
from .one_type import one_type_data, one_type_validated

#: Leaves where two data differ: data path -> (the first's value, the second's).
Changes = dict[str, tuple[Any, Any]]


@dataclass(frozen=True)
class _Template:
    """A cell validated whole and its prepared arrays, the others of its two types are
    filled in from (never run: its tables stay the template's)."""

    scenario: Scenario
    prepared: Prepared


class OneTypeCells:
    """:func:`~.one_type.one_type_scenario`'s battles of ruleset ``rs`` under
    ``settings``, each with its prepared arrays when filled in; made on any thread."""

    def __init__(self, rs: Ruleset, settings: Mapping[str, Any]) -> None:
        self.rs = rs
        self.settings = settings
        # A ruleset without fill_in keeps no templates: each cell is validated whole.
        self._fills = type(rs).fill_in is not Ruleset.fill_in
        self._templates: dict[tuple[str, str], _Template] = {}
        #: Whether the ruleset fills in the value at a data path (Ruleset.fills_in).
        self._fillable: dict[str, bool] = {}
        #: (data path, value) validated whole: where a cell validated whole differs
        #: from its template (its counts), its value and the template's.
        self._checked: set[tuple[str, Any]] = set()
        self._lock = threading.Lock()

    def cell(self, attacker: Army, defender: Army) -> Built:
        """``attacker`` against ``defender``: filled in with its prepared arrays, or the
        scenario validated whole (then prepared where it runs), raising its error."""
        data, source = one_type_data(self.rs, (attacker, defender), self.settings, None)
        pair = (attacker.type, defender.type)
        with self._lock:
            template = self._templates.get(pair)
        changes = None if template is None else changed(template.scenario.data, data, "name")
        if template is not None and changes is not None:
            made = self._filled(template, changes)
            if made is not None:
                model, prepared = made
                # The template's description, battles and seed: the data differ only in
                # the counts filled in, and the name (printable, as from_data makes it).
                # Made directly: dataclasses.replace took a tenth of a cell's making.
                like = template.scenario
                scenario = Scenario(
                    like.ruleset,
                    printable(data["name"]),
                    data,
                    model,
                    source,
                    like.description,
                    like.battles,
                    like.seed,
                )
                return scenario, prepared
        scenario = one_type_validated(data, source)
        if not self._fills or isinstance(scenario.model, Mixture | Waves):
            return scenario
        if template is None:
            kept = _Template(scenario, self.rs.prepare(scenario.model))
            with self._lock:
                self._templates.setdefault(pair, kept)
        elif changes is not None:
            with self._lock:
                for path, (was, now) in changes.items():
                    self._checked.update(((path, was), (path, now)))
        return scenario

    def _filled(self, template: _Template, changes: Changes) -> tuple[Any, Prepared] | None:
        """The template with ``changes`` filled in (model and prepared arrays), or None
        where a value was not validated whole before or the ruleset cannot fill it in."""
        values = {path: now for path, (_, now) in changes.items()}
        with self._lock:
            if not all(item in self._checked for item in values.items()):
                return None
        for path in values:
            fills = self._fillable.get(path)
            if fills is None:
                fills = self._fillable[path] = self.rs.fills_in(path)
            if not fills:
                return None
        made = self.rs.fill_in(template.prepared, values)
        if made is None or any(force.too_large for force in self.rs.side_sizes(made[0])):
            return None
        return made


#: The values :func:`changed` compares (exactly: of one type and equal); any other one
#: (a date) differs in form unless it is the same object.
PLAIN = (str, int, float, bool, type(None))


def changed(old: Mapping[str, Any], new: Mapping[str, Any], but: str) -> Changes | None:
    """Where scenario data ``new`` differs from ``old`` (top-level key ``but`` aside): each
    value (not a table or list) that differs, by data path (``attacker.units[0].men.
    knight``); None where they differ in form (a key or element more or less, keys in
    another order, a table for a value). A value of another type differs (1 and 1.0)."""
    found: Changes = {}
    if len(old) != len(new):
        return None
    for (key, a), (other, b) in zip(old.items(), new.items(), strict=True):
        if key != other:
            return None
        if key != but and not _same_form(a, b, key, found):
            return None
    return found


def _same_form(a: Any, b: Any, path: str, found: Changes) -> bool:
    """:func:`changed` of ``a`` and ``b`` at ``path``, into ``found``: whether they have
    the same form. A table's or list's values are compared in its own loop, their paths
    written only where they differ (a cell's data hold a dozen; a call and a path each
    were a third of making a cell)."""
    kind = type(a)
    if kind is dict:
        if type(b) is not dict or len(a) != len(b):
            return False
        for (key, x), (other, y) in zip(a.items(), b.items(), strict=True):
            if key != other:
                return False
            if type(x) in PLAIN and type(y) is type(x) and x == y:
                continue
            if not _same_form(x, y, f"{path}.{key}", found):
                return False
        return True
    if kind is list:
        if type(b) is not list or len(a) != len(b):
            return False
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if type(x) in PLAIN and type(y) is type(x) and x == y:
                continue
            if not _same_form(x, y, f"{path}[{i}]", found):
                return False
        return True
    if kind in PLAIN and type(b) in PLAIN:
        if kind is not type(b) or a != b:
            found[path] = (a, b)
        return True
    return a is b
