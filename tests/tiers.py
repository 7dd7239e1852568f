"""What the first tier (README's ``pytest``) compiles, and what it leaves to the slow tier.

On a fresh clone the session first compiles the kernels (tests/conftest.py runs
``battle-odds warm``), and compiling is most of the tier's time there. The kernel paths
below are each used by a few first-tier tests only (3 to 25), and each costs about 10 to 55
seconds to compile: their tests are in the slow tier (``.ci/run`` runs it after
README's command), the session's warm leaves them out, and a session that runs slow
tests compiles them first (docs/testing.md, "The two tiers").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

#: ``battle-odds warm``'s kernel paths (simulator/cli/warm.py's job names) that only
#: slow-tier tests run: olympia's skip kernel for armies large enough for deaths in
#: batches (kernels/olympia/batch.py, 37 to 45 s), blocks' battle as it unfolds, and
#: confrontation's and skirmish's stacked kernels of scenarios with ranges.
#: Each maps to a function compiled for that path alone: the name of its cache index
#: (``kernels/FOLDER/__pycache__/MODULE.FUNCTION-LINE.pyXY.nbi``) says whether the tree's
#: Numba cache holds it.
SLOW_TIER_PATHS: dict[str, str] = {
    "olympia skip, large armies": "olympia/skip._batch_block",
    # Blocks' stop rules, --after, --by-round and battles in progress (55 s): the battle as
    # it unfolds stays in the first tier on olympia's chain and skip kernels, age_of_gods,
    # confrontation and skirmish.
    "blocks, the battle as it unfolds": "blocks._battles",
    "confrontation with ranges": "confrontation_stacked.confrontation_stacked",
    "skirmish with ranges": "skirmish_stacked.skirmish_stacked",
}

#: The rulesets whose stacked kernel (a scenario with ranges) only the slow tier runs.
SLOW_TIER_RANGES = frozenset({"confrontation", "skirmish"})


def slow_for(values: Iterable[Any], slow: Iterable[Any]) -> list[Any]:
    """``values`` as parameters, those in ``slow`` marked slow (e.g. a parameter whose
    kernel path only the slow tier compiles, :data:`SLOW_TIER_PATHS`)."""
    slow = set(slow)
    return [pytest.param(v, marks=pytest.mark.slow) if v in slow else v for v in values]
