"""The registry of rulesets.

Each ruleset is a subpackage exposing ``RULESET``; they are found by name, so adding
one is adding its folder.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ..errors import BattleOddsError, did_you_mean
from .base import Army, InlineQuery, Prepared, Ruleset

__all__ = ["Army", "InlineQuery", "Prepared", "Ruleset", "get", "names"]


@cache
def names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg))


@cache
def _load(name: str) -> Ruleset:
    module = importlib.import_module(f"{__name__}.{name}")
    ruleset: Ruleset = module.RULESET
    return ruleset


def get(name: str, where: str = "ruleset") -> Ruleset:
    if name not in names():
        raise BattleOddsError(f"{where}: unknown ruleset '{name}'" + did_you_mean(name, names()))
    return _load(name)
