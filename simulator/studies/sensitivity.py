"""Which number matters? ``battle-odds sensitivity`` and :func:`sensitivity`.

Every knob of a scenario (a side's count of a unit type, a rating of a type present, or
the ruleset's equivalents: see :meth:`Ruleset.knobs`) is moved one step down and one step
up, and each changed scenario is compared with the scenario as it stands on common random
numbers, so each change in the win probability comes with a paired interval. The knobs
are sorted by the larger of their two effects: the first rows are the numbers to turn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import rulesets
from ..errors import BattleOddsError, ParameterError, Source
from ..results.stats import Z95
from ..rulesets.designer import COUNT, Knob, rating_step
from ..running.bounds import check_total
from ..running.interrupt import stop_requested
from ..running.plan import Progress, StudyPlan
from ..running.progress import plain_lines_by_default
from ..running.scenarios import ScenarioBattles
from ..scenario.scenario import Scenario, from_data, unknowns_of
from .compare import compare
from .machinery.planned import takes_plan
from .machinery.progress import battles_of
from .machinery.sides import check_side

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster

DEFAULT_BATTLES = 20_000


@dataclass
class Sensitivity:
    scenario: Scenario
    side: str
    seed: int
    battles: int
    #: P(side wins) of the scenario as it stands.
    base: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: True when Ctrl-C stopped it: the changes not run are not in ``rows``.
    partial: bool = False

    @property
    def frame(self) -> pd.DataFrame:
        """One row per knob and direction, the knobs sorted by their larger effect: the
        value moved from and to, P(side wins) after, the paired change with its 95%
        interval, the battles and seed; ``note`` says why a direction was not run."""
        import pandas as pd

        frame = pd.DataFrame(self.rows)
        if frame.empty:
            return frame
        effect = frame.groupby("knob", sort=False)["diff"].transform(lambda d: d.abs().max())
        order = frame.assign(_effect=effect.fillna(-1.0), _dir=frame.direction == "up")
        order = order.sort_values(["_effect", "knob", "_dir"], ascending=[False, True, True])
        return order.drop(columns=["_effect", "_dir"]).reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and math.isnan(value) else value

        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "side": self.side,
            "p": clean(self.base),
            "seed": self.seed,
            "battles": self.battles,
            "partial": self.partial,
            "changes": [
                {k: clean(v) for k, v in row.items()} for row in self.frame.to_dict("records")
            ],
        }


def step_of(knob: Knob, count_step: int, rating_fraction: float) -> float:
    if knob.kind == COUNT:
        return float(count_step)
    return rating_step(knob.value, rating_fraction, knob.resolution)


@takes_plan
@plain_lines_by_default("sensitivity")
def sensitivity(
    scenario: Scenario,
    battles: int | None = None,
    seed: int | None = None,
    *,
    plan: StudyPlan | None = None,
    side: str = "attacker",
    count_step: int = 1,
    rating_step: float = 0.1,
    threads: int | None = None,
    progress: Progress | None = None,
    max_total: int | None = None,
    executor: Cluster | None = None,
) -> Sensitivity:
    """Each knob one step down and up (``count_step`` men, ``rating_step`` of a rating,
    rounded to the field's resolution and at least one step of it), each against the
    scenario on common random numbers over ``battles`` (default 20,000)."""
    check_side(side)
    varying = unknowns_of(scenario)
    if varying:
        said = ", ".join(f"{u.path} = {u.written!r}" for u in varying)
        raise BattleOddsError(
            f"{scenario.source.label}: sensitivity turns numbers one step and this scenario "
            f"has ranges ({said}); `battle-odds run` says what each of them does, or fix "
            "them to values first"
        )
    if count_step < 1:
        raise ParameterError("count_step", count_step, "expected at least 1")
    if not 0 < rating_step <= 1:
        raise ParameterError(
            "rating_step", rating_step, "expected a fraction of the rating, e.g. 0.1 for 10%"
        )
    battles = DEFAULT_BATTLES if battles is None else battles
    if battles < 1:
        raise ParameterError("battles", battles, "expected at least 1")
    seed = scenario.seed if seed is None else seed
    ruleset = rulesets.get(scenario.ruleset)
    knobs = ruleset.knobs(scenario)
    if not knobs:
        raise BattleOddsError(f"{scenario.source.label}: no counts or ratings to turn")
    total = 2 * len(knobs)
    check_total(
        f"sensitivity: {total} changes x 2 scenarios x {{battles=}}{battles:,}",
        total * 2 * battles,
        max_total,
    )
    result = Sensitivity(scenario, side, seed, battles, math.nan)
    # One engine for every change: the scenario as it stands is prepared once, not once
    # per change compared with it.
    engine = ScenarioBattles(
        StudyPlan.of(seed=seed, battles=battles, threads=threads, executor=executor)
    )
    try:
        for knob in knobs:
            if stop_requested():
                result.partial = True
                break
            step = step_of(knob, count_step, rating_step)
            for direction, sign in (("down", -1), ("up", 1)):
                to = min(max(knob.value + sign * step, knob.lowest), knob.highest)
                row: dict[str, Any] = {
                    "knob": knob.label,
                    "kind": knob.kind,
                    "side": knob.side,
                    "subject": knob.subject,
                    "field": knob.field,
                    "direction": direction,
                    "from": knob.value,
                    "to": to,
                    "p": math.nan,
                    "diff": math.nan,
                    "low": math.nan,
                    "high": math.nan,
                    "battles": 0,
                    "seed": seed,
                    "note": "",
                }
                if to == knob.value:
                    row["note"] = f"{knob.field} is at its {'least' if sign < 0 else 'most'}"
                else:
                    try:
                        changed = from_data(
                            ruleset.with_knob(scenario, knob, to),
                            Source(f"{knob.label} = {to:g}"),
                        )
                    except BattleOddsError as exc:
                        row["note"] = f"not possible: {exc}"
                    else:
                        comparison = compare(
                            scenario,
                            changed,
                            battles,
                            seed,
                            threads=threads,
                            executor=executor,
                            engine=engine,
                            progress=battles_of(
                                progress, len(result.rows) * battles, total * battles
                            ),
                        )
                        if changed.hash != scenario.hash:  # compared: its tables go
                            engine.forget(("compare", changed.hash))
                        result.partial = result.partial or comparison.partial
                        if comparison.n == 0:  # Ctrl-C before its first battle
                            row["note"] = "not run (interrupted)"
                        else:
                            d = comparison.win(side, Z95)
                            result.base = d.a
                            row.update(p=d.b, diff=d.difference, low=d.low, high=d.high)
                            row["battles"] = comparison.n
                result.rows.append(row)
                if progress is not None:
                    progress(len(result.rows) * battles, total * battles)
    finally:
        engine.close()
    return result
