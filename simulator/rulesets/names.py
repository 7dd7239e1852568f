"""Unit-type names as people write them: ``Elite Guard``, ``knights``, ``pikemen`` for
``elite_guard``, ``knight``, ``pikeman``. Shared by the rulesets' one-line armies and the
designer studies, so the generic layer needs no ruleset's own module."""

from __future__ import annotations

from collections.abc import Iterable


def normalise_name(name: str) -> str:
    """``Elite Guard`` -> ``elite_guard``; plural forms map to the singular elsewhere."""
    return "_".join(name.strip().lower().replace("-", " ").replace(".", " ").split())


def resolve_name(word: str, valid: Iterable[str]) -> str | None:
    """Accept ``Elite Guard``, ``knights``, ``pikemen`` for ``elite_guard``, ``knight``,
    ``pikeman``."""
    valid = set(valid)
    name = normalise_name(word)
    for candidate in (
        name,
        name[:-3] + "man" if name.endswith("men") else "",
        name[:-1] if name.endswith("s") else "",
    ):
        if candidate in valid:
            return candidate
    return None
