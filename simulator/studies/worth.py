"""What is a unit worth? ``battle-odds worth`` and :func:`worth`.

The worth of X (``1 knight``) in Y (``soldier``) for a side is the smallest whole n such
that the side wins at least as often with n men of Y added as with X added. Each probed n
is a paired comparison (common random numbers) of the X variant against the n variant,
run with doubling battles until its interval is sure of the sign of the difference
(the sequential machinery of ``sweep --target``). Two bisections over 0..max find the
largest n surely below X and the smallest n surely reaching it: when they are
neighbours the worth is exact, otherwise it lies in the range between them (the two are
within noise there at the battle cap).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import rulesets
from ..errors import BattleOddsError, ParameterError, literal
from ..results.stats import wilson
from ..rulesets.designer import resolve_type
from ..running.bounds import check_total
from ..running.interrupt import Interrupted
from ..running.plan import Progress, StudyPlan
from ..running.progress import plain_lines_by_default, quiet
from ..running.scenarios import ScenarioBattles
from ..scenario.scenario import Scenario
from .compare import Comparison, compare
from .machinery.armies import reinforced
from .machinery.planned import takes_plan
from .machinery.renamed import renamed_keywords
from .machinery.sequential import (
    bisection_probes,
    check_looks,
    look_z,
    run_until_sure,
    smallest_reaching,
)
from .machinery.sides import SIDES, check_side

if TYPE_CHECKING:
    import pandas as pd

    from ..running.distributed import Cluster

REACHES, BELOW, NOISE = "reaches", "below", "within noise"
_ADD = re.compile(r"^\s*(\d+)\s+([A-Za-z][\w .'-]*?)\s*$")


def men(n: int, kind: str) -> str:
    """``7 soldiers``, ``2 pikemen``, ``1 knight``, ``3 armies``."""
    if n == 1 or kind.endswith("s"):
        return f"{n} {kind}"
    if kind.endswith("y") and kind[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{n} {kind[:-1]}ies"
    return f"{n} {kind[:-3]}men" if kind.endswith("man") else f"{n} {kind}s"


def parse_add(text: str) -> tuple[int, str]:
    """``"1 knight"`` -> ``(1, "knight")``."""
    match = _ADD.match(text)
    if not match or int(match[1]) < 1:
        raise ParameterError(
            "add", f"'{text}'", "expected a count of at least 1 and a unit type, e.g. '1 knight'"
        )
    return int(match[1]), match[2]


@dataclass
class WorthProbe:
    """One probed n: the X variant (``comparison.a``) against n men of Y (``.b``)."""

    n: int
    comparison: Comparison
    verdict: str


@dataclass
class Worth:
    scenario: Scenario
    side: str
    add: tuple[int, str]
    in_: str
    seed: int
    confidence: float
    #: The z of each look (Bonferroni over every look of every probe).
    z: float
    max_n: int
    #: The worth lies in ``low..high``; ``low == high``: resolved. ``low`` None: even
    #: ``max_n`` men of Y stay surely below X. ``high`` None: not sure up to ``max_n``.
    low: int | None = None
    high: int | None = None
    probes: list[WorthProbe] = field(default_factory=list)
    #: True when Ctrl-C stopped the search: no answer, only the probes so far.
    partial: bool = False

    @property
    def n(self) -> int | None:
        """The worth when it is resolved, else None (see ``low`` and ``high``)."""
        return self.low if self.low is not None and self.low == self.high else None

    @property
    def battles(self) -> int:
        """Battles fought in all, both variants of every probe counted."""
        return sum(2 * p.comparison.n for p in self.probes)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per probed n (ascending): P(side wins) with n men of Y and its interval
        at the search's z, P with X, the paired difference and its interval, the verdict,
        the battles and the seed."""
        import pandas as pd

        rows = []
        for probe in sorted(self.probes, key=lambda p: p.n):
            c = probe.comparison
            p, low, high = wilson(int(c.b.tally.wins[SIDES.index(self.side)]), c.n, self.z)
            d = c.win(self.side, self.z)
            rows.append(
                {
                    "n": probe.n,
                    "p": p,
                    "low": low,
                    "high": high,
                    "p_with_x": d.a,
                    "diff": d.difference,
                    "diff_low": d.low,
                    "diff_high": d.high,
                    "verdict": probe.verdict,
                    "battles": c.n,
                    "seed": self.seed,
                }
            )
        return pd.DataFrame(rows)

    def reference(self) -> tuple[float, float, float]:
        """P(side wins) with X added and its interval, from the probe with most battles."""
        if not self.probes:
            return math.nan, math.nan, math.nan
        best = max(self.probes, key=lambda p: p.comparison.n).comparison
        return wilson(int(best.a.tally.wins[SIDES.index(self.side)]), best.n, self.z)

    def sentence(self) -> str:
        """The answer in words, with the probabilities that decide it."""
        count, kind = self.add
        x = men(count, kind)
        if self.partial:
            return (
                f"interrupted after {len(self.probes)} probes: the worth of {x} is not "
                "known yet (the probes so far are above)"
            )
        rows = {int(r["n"]): r for r in self.frame.to_dict("records")}
        with_x = f"P {self.reference()[0]:.3f} with {'the ' + kind if count == 1 else x}"

        def at(n: int) -> str:
            return f"{rows[n]['p']:.3f} with {men(n, self.in_)}"

        if self.low is None:
            return (
                f"{x} is worth more than {men(self.max_n, self.in_)} here: even "
                f"{self.max_n} stay below ({with_x}, {at(self.max_n)}); raise --max"
            )
        if self.n is not None:
            shown = [with_x] + [at(n) for n in (self.n - 1, self.n) if n in rows]
            return f"{x} is worth {men(self.n, self.in_)} here ({', '.join(shown)})"
        top = self.max_n if self.high is None else self.high
        noisy = ", ".join([with_x, *(at(n) for n in sorted(rows) if self.low <= n <= top)])
        battles = max(r["battles"] for r in rows.values())
        if self.high is None:
            return (
                f"{x} is worth at least {men(self.low, self.in_)} here, not sure up to --max "
                f"{self.max_n}: within noise from {self.low} on at {battles:,} battles ({noisy})"
            )
        return (
            f"{x} is worth {self.low} to {men(top, self.in_)} here: within noise over that "
            f"range at {battles:,} battles ({noisy}); more --max-battles may narrow it"
        )

    def to_dict(self) -> dict[str, Any]:
        p, low, high = self.reference()
        return {
            "scenario": self.scenario.name,
            "scenario_hash": self.scenario.hash,
            "ruleset": self.scenario.ruleset,
            "side": self.side,
            "add": {"count": self.add[0], "type": self.add[1]},
            "in": self.in_,
            "n": self.n,
            "partial": self.partial,
            "range": None if self.low is None else [self.low, self.high],
            "resolved": self.n is not None,
            "with_x": None if math.isnan(p) else {"p": p, "low": low, "high": high},
            "confidence": self.confidence,
            "z": self.z,
            "seed": self.seed,
            "max": self.max_n,
            "battles": self.battles,
            "answer": self.sentence(),
            "probes": self.frame.to_dict("records"),
        }


@renamed_keywords(first_battles="battles")
@takes_plan
@plain_lines_by_default("worth", lambda asked: f"numbers of {asked['in_']} tried", at_most=True)
def worth(
    scenario: Scenario,
    *,
    plan: StudyPlan | None = None,
    side: str = "attacker",
    add: str | tuple[int, str],
    in_: str,
    seed: int | None = None,
    battles: int = 4_000,
    max_battles: int = 256_000,
    confidence: float = 0.95,
    max_n: int = 100,
    threads: int | None = None,
    progress: Progress | None = None,
    max_total: int | None = None,
    executor: Cluster | None = None,
) -> Worth:
    """How many men of type ``in_`` added to ``side`` win at least as often as ``add``
    (``"1 knight"`` or ``(1, "knight")``); see the module docstring for the search."""
    ruleset = rulesets.get(scenario.ruleset)
    why_not = ruleset.not_for_worth()
    if why_not is not None:
        raise BattleOddsError(why_not)
    check_side(side)
    count, word = parse_add(add) if isinstance(add, str) else add
    types = ruleset.unit_types(scenario.data)
    kind = _type_named(word, types, "add")
    other = _type_named(in_, types, "in_")
    if not 0 < confidence < 1:
        raise ParameterError("confidence", confidence, "expected a probability, e.g. 0.95")
    if max_n < 1:
        raise ParameterError("max_n", max_n, "expected at least 1")
    check_looks(battles, max_battles)
    room = ruleset.room(scenario, side)
    if room is not None:
        if count > room:
            raise ParameterError(
                "add", f"{count} {kind}", f"the {side} has room for {room} more men"
            )
        max_n = min(max_n, room)
    seed = scenario.seed if seed is None else seed
    with_x = reinforced(scenario, side, kind, count, f"+{count} {kind}")
    values = range(max_n + 1)  # a range, not a list: --max may be huge
    # Build the largest variant first: a value the ruleset refuses fails at once.
    try:
        reinforced(scenario, side, other, max_n, f"+{max_n} {other}")
    except BattleOddsError as exc:
        raise ParameterError("max_n", max_n, literal(str(exc)) + " (a smaller {max_n}?)") from None
    probes_at_most = 2 * bisection_probes(len(values))
    check_total(
        f"worth: {probes_at_most} probes x 2 scenarios x {{max_battles=}}{max_battles:,}",
        probes_at_most * 2 * max_battles,
        max_total,
    )
    z = look_z(confidence, probes_at_most, battles, max_battles)
    result = Worth(scenario, side, (count, kind), other, seed, confidence, z, max_n)
    verdicts: dict[int, str] = {}
    # One engine for the search: the scenario with ``add`` is prepared once for every
    # probe, and each probe's scenario once for all its looks.
    engine = ScenarioBattles(
        StudyPlan.of(seed=seed, battles=battles, threads=threads, executor=executor)
    )

    def verdict(n: int) -> str:
        if n in verdicts:
            return verdicts[n]
        with_n = reinforced(scenario, side, other, n, f"+{n} {other}")

        def run(done: int, count: int) -> Comparison:
            if progress is not None:
                progress(
                    len(result.probes),
                    probes_at_most,
                    f"now {n} {other}: battles up to {done + count:,} of at most {max_battles:,}",
                )
            return compare(
                with_x,
                with_n,
                count,
                seed,
                threads=threads,
                first=done,
                executor=executor,
                progress=quiet,  # the worth reports its probes
                engine=engine,
            )

        def decided(c: Comparison) -> bool:
            d = c.win(side, z)
            return with_n.hash == with_x.hash or d.low >= 0 or d.high < 0

        comparison, sure = run_until_sure(
            run, Comparison.merge, lambda c: c.n, decided, battles, max_battles
        )
        d = comparison.win(side, z)
        if with_n.hash == with_x.hash or d.low >= 0:
            verdicts[n] = REACHES
        else:
            verdicts[n] = BELOW if sure else NOISE
        if with_n.hash != with_x.hash:  # its looks are done: its tables go
            engine.forget(("compare", with_n.hash))
        result.probes.append(WorthProbe(n, comparison, verdicts[n]))
        if progress is not None:
            progress(len(result.probes), probes_at_most)
        return verdicts[n]

    try:
        result.low = smallest_reaching(values, _is(verdict, REACHES, NOISE))
        if result.low is not None:
            result.high = smallest_reaching(values[result.low :], _is(verdict, REACHES))
    except Interrupted:
        result.partial = True
        result.low = result.high = None
    finally:
        engine.close()
    return result


def _is(verdict: Callable[[int], str], *wanted: str) -> Callable[[int], bool]:
    return lambda n: verdict(n) in wanted


def _type_named(word: str, types: list[str], parameter: str) -> str:
    """The unit type ``word`` names, or an error naming ``parameter``."""
    try:
        return resolve_type(word, types, parameter)
    except BattleOddsError as exc:
        raise ParameterError.naming(parameter, exc) from None
