"""What each unknown of a scenario with ranges does to the odds (docs/unknowns.md): from
the ``unknown.K`` columns a run of it records (the drawn value's index with the winner,
``scenario.unknowns.unknown_code``), P(each outcome) given each value, from the run's own
battles."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import rulesets
from ..scenario.unknowns import ABSENT, Mixture, unknown_decode
from .stats import OUTCOMES, WITHDRAWALS, Histogram, Tally, wilson


def effects(mixture: Mixture, tally: Tally) -> list[dict[str, Any]]:
    """Per unknown: P(each outcome) given each of its values, from the run's battles,
    and how much the answer moves with it (the spread, by battles, of P(attacker
    wins) across its values: sqrt(sum n_v (p_v - p)^2 / n)), largest first."""
    rs = rulesets.get(mixture.ruleset)
    found = []
    for k, unknown in enumerate(mixture.unknowns):
        h = tally.columns.get(f"unknown.{k}", Histogram())
        counts = np.zeros((len(unknown.values), len(OUTCOMES)), np.int64)
        for code, n in zip(h.values, h.counts, strict=True):
            counts[unknown_decode(int(code), len(unknown.values))] += n
        total = int(counts.sum())
        p_all = counts[:, 0].sum() / total if total else math.nan
        rows = []
        shares: list[tuple[int, float]] = []
        spread = 0.0
        for v, value in enumerate(unknown.values):
            n = int(counts[v].sum())
            p, low, high = wilson(int(counts[v, 0]), n)
            rows.append(
                {
                    "value": None if value is ABSENT else value,
                    "battles": n,
                    "weight": unknown.weights[v] / sum(unknown.weights),
                    "attacker": {"p": p if n else None, "low": low, "high": high},
                    "defender": counts[v, 1] / n if n else None,
                    "draw": counts[v, 2] / n if n else None,
                    # Only where a battle withdrew: the answer of a scenario without
                    # stop rules stays as it was.
                    **{
                        o: counts[v, k] / n if n else None
                        for k, o in enumerate(WITHDRAWALS, 3)
                        if counts[:, 3:].any()
                    },
                }
            )
            shares.append((n, p))
            if n:
                spread += n * (p - p_all) ** 2
        label = mixture.label(rs, unknown.path)
        seen = [float(p) for n, p in shares if n]
        found.append(
            {
                "key": unknown.path,
                "lowest": min(seen) if seen else None,
                "highest": max(seen) if seen else None,
                "label": label,
                "written": unknown.written,
                "spread": math.sqrt(spread / total) if total else 0.0,
                "values": rows,
            }
        )
    return sorted(found, key=lambda e: -e["spread"])
