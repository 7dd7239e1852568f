"""The registry of rulesets: the built-ins and the plugins installed beside them.

A ruleset is registered under the entry point group ``battle_odds.rulesets``: the entry
point's name is the ruleset's name and it points at a :class:`Ruleset` instance
(``risk = "risk_ruleset:RULESET"``) or at a module holding one as ``RULESET``. The five
built-ins are registered that way in battle-odds' own ``pyproject.toml``; the folders of
this package are scanned as well, so a source checkout whose installed metadata is older
than its code still finds them.

Listing names imports nothing. A ruleset is imported when it is first asked for; a
broken plugin (it fails to import, its ``RULESET`` is not a ``Ruleset``, it misses a
method, its name clashes with another plugin's) is reported in one line naming the plugin
and its entry point when it is asked for, and as a warning in listings; the other
rulesets keep working.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from ..errors import BattleOddsError, did_you_mean
from .base import MAX_MEN_PER_SIDE, MAX_UNITS_PER_SIDE, Army, Force, InlineQuery, Prepared, Ruleset
from .exact import ExactResult, ExactState
from .outcomes import Outcomes, Recorded

__all__ = [
    "GROUP",
    "MAX_MEN_PER_SIDE",
    "MAX_UNITS_PER_SIDE",
    "Army",
    "ExactResult",
    "ExactState",
    "Force",
    "InlineQuery",
    "Outcomes",
    "Prepared",
    "Recorded",
    "Registration",
    "Ruleset",
    "available",
    "builtin_names",
    "get",
    "known",
    "names",
    "problem",
    "problems",
]

#: The entry point group plugins register their rulesets under.
GROUP = "battle_odds.rulesets"
_BUILTIN = __name__ + "."


@dataclass(frozen=True)
class Registration:
    """One way a ruleset name was registered: an entry point, or a built-in folder."""

    name: str
    #: Where it points, ``module:attribute`` or ``module``.
    value: str
    #: Who registered it: ``battle-odds 0.1.0``, ``battle-odds-risk 0.1.0``, ``built-in folder``.
    origin: str
    load: Callable[[], Any]

    @property
    def builtin(self) -> bool:
        return self.value.startswith(_BUILTIN)

    def describe(self) -> str:
        if self.origin == "built-in folder":
            return f"built-in ruleset {self.value}"
        return f"plugin {self.origin} (entry point '{self.name} = {self.value}' in {GROUP})"


def entry_point_registrations() -> list[Registration]:
    """Rulesets registered by installed distributions (tests replace this function)."""
    found = []
    for ep in importlib.metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        origin = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        found.append(Registration(ep.name, ep.value, origin, ep.load))
    return found


def folder_registrations() -> list[Registration]:
    """The built-in rulesets, one subpackage of this package each."""
    return [_folder_registration(m.name) for m in pkgutil.iter_modules(__path__) if m.ispkg]


def _folder_registration(name: str) -> Registration:
    return Registration(name, f"{_BUILTIN}{name}:RULESET", "built-in folder", _importer(name))


def _importer(name: str) -> Callable[[], ModuleType]:
    return lambda: importlib.import_module(_BUILTIN + name)


@dataclass(frozen=True)
class _Registry:
    chosen: dict[str, Registration]
    #: Name -> why it cannot be used (asked for, it raises this).
    broken: dict[str, str]
    #: Registrations ignored because a built-in of the same name wins.
    shadowed: tuple[str, ...]


@cache
def _registry() -> _Registry:
    by_name: dict[str, dict[str, Registration]] = {}
    # Entry points first: a built-in found both ways keeps its distribution as origin.
    for reg in [*entry_point_registrations(), *folder_registrations()]:
        by_name.setdefault(reg.name, {}).setdefault(_target(reg.value), reg)
    chosen: dict[str, Registration] = {}
    broken: dict[str, str] = {}
    shadowed: list[str] = []
    for name, targets in by_name.items():
        regs = list(targets.values())
        builtin = [r for r in regs if r.builtin]
        if len(regs) == 1:
            chosen[name] = regs[0]
        elif builtin:
            chosen[name] = builtin[0]
            shadowed += [
                f"ruleset '{name}': {r.describe()} is ignored: the name is a built-in "
                "ruleset's; rename the entry point"
                for r in regs
                if not r.builtin
            ]
        else:
            broken[name] = (
                f"ruleset '{name}' is registered by more than one plugin: "
                + " and ".join(r.describe() for r in regs)
                + "; uninstall one or rename its entry point"
            )
    return _Registry(chosen, broken, tuple(shadowed))


def _target(value: str) -> str:
    """``module:RULESET`` and ``module`` name the same ruleset."""
    module, _, attribute = value.partition(":")
    return module.strip() if attribute.strip() in ("", "RULESET") else value.replace(" ", "")


@cache
def names() -> tuple[str, ...]:
    """Every registered ruleset name, broken plugins included (importing none of them)."""
    registry = _registry()
    return tuple(sorted({*registry.chosen, *registry.broken}))


def builtin_names() -> tuple[str, ...]:
    """The rulesets battle-odds ships (each with its docs page and bundled scenarios)."""
    return tuple(n for n, reg in sorted(_registry().chosen.items()) if reg.builtin)


def known(name: str) -> bool:
    """Whether a ruleset called ``name`` is registered, broken or not (a built-in's name
    is known without reading the plugins' metadata)."""
    return name in _folder_names() or name in names()


def get(name: str, where: str = "ruleset") -> Ruleset:
    """The ruleset called ``name``; :class:`BattleOddsError` naming the plugin if it is
    broken, or the nearest name if there is none."""
    if not known(name):
        raise BattleOddsError(f"{where}: unknown ruleset '{name}'" + did_you_mean(name, names()))
    loaded = _load(name)
    if isinstance(loaded, str):
        raise BattleOddsError(f"{where}: {loaded}")
    return loaded


def problem(name: str) -> str | None:
    """Why the registered ruleset ``name`` cannot be used, in one line, or None if it loads."""
    loaded = _load(name)
    return loaded if isinstance(loaded, str) else None


def available() -> tuple[str, ...]:
    """The names of the rulesets that load (importing each)."""
    return tuple(n for n in names() if not isinstance(_load(n), str))


def problems() -> tuple[str, ...]:
    """One line per broken or shadowed plugin (importing every ruleset), for listings."""
    broken = tuple(loaded for n in names() if isinstance(loaded := _load(n), str))
    return broken + _registry().shadowed


def refresh() -> None:
    """Forget what was discovered and loaded (after installing a plugin in-process)."""
    _registry.cache_clear()
    names.cache_clear()
    _folder_names.cache_clear()
    _load.cache_clear()


@cache
def _folder_names() -> frozenset[str]:
    return frozenset(reg.name for reg in folder_registrations())


@cache
def _load(name: str) -> Ruleset | str:
    """The ruleset, or the one-line reason it cannot be used."""
    if name in _folder_names():
        # A built-in wins over any plugin of its name (_registry), so loading one needs
        # no plugin's metadata: reading every installed distribution's took 0.01 s of
        # each query.
        return _loaded(_folder_registration(name))
    registry = _registry()
    if name in registry.broken:
        return registry.broken[name]
    return _loaded(registry.chosen[name])


def _loaded(reg: Registration) -> Ruleset | str:
    try:
        loaded = reg.load()
    except Exception as exc:  # any failure of foreign code is the plugin's, reported
        return f"{reg.describe()} failed to import: {_one_line(exc)}"
    return _check(reg, loaded)


def _check(reg: Registration, loaded: Any) -> Ruleset | str:
    if isinstance(loaded, ModuleType):
        if not hasattr(loaded, "RULESET"):
            return f"{reg.describe()}: module {loaded.__name__} has no RULESET"
        loaded = loaded.RULESET
    if inspect.isclass(loaded) and issubclass(loaded, Ruleset):
        missing = sorted(getattr(loaded, "__abstractmethods__", ()))
        if missing:
            return f"{reg.describe()}: {loaded.__name__} does not implement {', '.join(missing)}"
        loaded = loaded()
    if not isinstance(loaded, Ruleset):
        return (
            f"{reg.describe()}: RULESET is {type(loaded).__name__}, not a Ruleset "
            "(subclass simulator.rulesets.Ruleset)"
        )
    missing = [
        method
        for method in ("validate", "prepare", "inline", "units")
        if not callable(getattr(loaded, method, None))
    ]
    if missing:
        return f"{reg.describe()}: {type(loaded).__name__} does not implement {', '.join(missing)}"
    if loaded.name != reg.name:
        return (
            f"{reg.describe()}: its RULESET is named '{loaded.name}', not '{reg.name}'; "
            "the entry point's name and Ruleset.name must be the same"
        )
    return loaded


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
