"""How well the model predicted real battles (``battle-odds calibrate``).

A calibration file lists battles that were fought (play-tests, a game's battle reports):
each one's scenario, who won, and what is known of its losses and length. Each scenario
is run; the real outcome is placed in the model's distribution, and the file is scored
as a whole: the Brier score and log loss of the winners (against two baselines that use
no model), the share of real losses inside the model's 5-95% band, a probability
integral transform (PIT) histogram and a reliability diagram (docs/calibration.md).

Scores are pure functions of the per-battle predictions (:func:`score`), so that they
can be checked against figures computed by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import rulesets
from ..errors import BattleOddsError, Source, did_you_mean
from ..input.reader import Node
from ..input.toml import read_toml
from ..results.result import Result
from ..results.stats import OUTCOMES, Histogram
from ..running.interrupt import stop_requested
from ..running.plan import Progress
from ..running.runner import simulate
from ..scenario.scenario import Scenario, from_data, load_scenario, unknowns_of
from .machinery.armies import side_costs
from .machinery.progress import battles_of

Runner = Callable[..., Result]

#: The model's band a real loss is placed in: its 5% and 95% quantiles (inclusive).
BAND = (0.05, 0.95)
#: Bins of the PIT histogram and of the reliability diagram, on [0, 1].
BINS = 10
#: Battles run for each real battle unless ``--battles`` says otherwise.
DEFAULT_BATTLES = 4_000
DEFAULT_SEED = 1
#: The keys of a calibration file and of one of its battles.
FILE_KEYS = ("description", "battles")
BATTLE_KEYS = ("name", "scenario", "winner", "lost", "steps")


class _Within(Source):
    """The source of a scenario written inline in a calibration file: its errors name
    the key from the file's top (``battles[2].scenario.attacker.units``) and its line."""

    prefix: str = ""

    def error(self, key: str, message: str, value: object = None) -> BattleOddsError:
        return Source.error(self, f"{self.prefix}.{key}", message, value)


def _within(source: Source, prefix: str) -> Source:
    inner = _Within(source.label, source.text, source.path)
    object.__setattr__(inner, "prefix", prefix)
    return inner


@dataclass(frozen=True)
class RealBattle:
    """One battle of a calibration file, its scenario validated."""

    name: str
    scenario: Scenario
    winner: str
    #: Recorded losses by outcome column (``casualties.attacker.soldier``).
    lost: Mapping[str, int]
    steps: int | None


class ImpossibleRecord(BattleOddsError):
    """A real battle's record that no battle of its armies can give (more men lost than
    the side fields): a mistake in the file, so the whole file is refused (exit 2), not
    the battle skipped."""


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


@dataclass(frozen=True)
class CalibrationFile:
    path: Path
    description: str
    battles: tuple[RealBattle, ...]
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True)
class Placed:
    """A real figure placed in the model's distribution of it."""

    what: str
    real: int
    low: float  # the model's 5% quantile
    median: float
    high: float  # its 95% quantile
    pit: float  # P(X < real) + P(X = real) / 2

    @property
    def place(self) -> str:
        if self.real < self.low:
            return "below"
        return "above" if self.real > self.high else "inside"


@dataclass(frozen=True)
class Prediction:
    """What the model said of one real battle, and the real outcome."""

    name: str
    winner: str
    p: Mapping[str, float]  # P(outcome), the outcomes the run reports (Result.outcomes)
    battles: int  # battles run
    losses: tuple[Placed, ...] = ()
    steps: Placed | None = None
    #: The side the "larger army wins" baseline picks: attacker, defender or even.
    larger: str = "even"
    #: What "larger" was judged by: cost (every type has one) or men.
    sized_by: str = "men"
    ruleset: str = ""

    @property
    def p_attacker(self) -> float:
        return float(self.p["attacker"])

    @property
    def p_real(self) -> float:
        """The model's probability of the outcome that happened, at least half a battle
        of those run (a probability of 0 from n battles says only "under 1/n")."""
        return max(float(self.p.get(self.winner, 0.0)), 0.5 / self.battles)

    @property
    def brier(self) -> float:
        return (self.p_attacker - float(self.winner == "attacker")) ** 2

    @property
    def log_loss(self) -> float:
        return -math.log(self.p_real)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "winner": self.winner,
            "p": {o: round(float(v), 6) for o, v in self.p.items()},
            "battles": self.battles,
            "brier": round(self.brier, 6),
            "log_loss": round(self.log_loss, 6),
            "larger": self.larger,
            "sized_by": self.sized_by,
            "lost": [_placed_dict(x) for x in self.losses],
            "steps": None if self.steps is None else _placed_dict(self.steps),
        }


def _placed_dict(x: Placed) -> dict[str, Any]:
    return {
        "what": x.what,
        "real": x.real,
        "q05": x.low,
        "q50": x.median,
        "q95": x.high,
        "pit": round(x.pit, 6),
        "place": x.place,
    }


@dataclass(frozen=True)
class Baseline:
    name: str
    brier: float
    log_loss: float


@dataclass
class Calibration:
    """The scores of a calibration file (:func:`score`) and its per-battle rows, the
    worst-predicted first."""

    rows: list[Prediction]
    skipped: list[Skipped]
    brier: float
    log_loss: float
    baselines: list[Baseline]
    coverage: float  # share of recorded losses inside the band (inclusive)
    below: float
    above: float
    losses: int  # recorded losses placed
    pit_counts: list[int]  # BINS bins of [0, 1]
    #: Per bin of P(attacker wins): battles, mean prediction, share the attacker won.
    reliability: list[tuple[int, float, float]]
    seed: int = DEFAULT_SEED
    partial: bool = False
    path: str = ""
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "battles_scored": len(self.rows),
            "brier": _round(self.brier),
            "log_loss": _round(self.log_loss),
            "baselines": {
                b.name: {"brier": _round(b.brier), "log_loss": _round(b.log_loss)}
                for b in self.baselines
            },
            "coverage": _round(self.coverage),
            "below": _round(self.below),
            "above": _round(self.above),
            "losses_placed": self.losses,
            "band": list(BAND),
            "pit_histogram": self.pit_counts,
            "reliability": [
                {"battles": n, "predicted": _round(p), "observed": _round(o)}
                for n, p, o in self.reliability
            ],
            "rows": [r.to_dict() for r in self.rows],
            "skipped": [{"name": s.name, "reason": s.reason} for s in self.skipped],
            "seed": self.seed,
            "partial": self.partial,
        }


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


# --- reading a calibration file ----------------------------------------------------------


def read_calibration(path: str | Path) -> CalibrationFile:
    """The battles of a calibration file, each validated on its own: a battle that fails
    (its scenario, its winner, a loss of a type its armies do not field) is skipped with
    its one-line reason; a file that is not one at all, or records more men lost than a
    side fields (:class:`ImpossibleRecord`), raises."""
    path = Path(path)
    data, source = read_toml(path, "calibration file")
    top = Node(data, "", source)
    top.only(FILE_KEYS)
    description = top.text("description", "")
    if not top.has("battles"):
        raise top.fail(
            "is required: expected [[battles]] entries (see docs/calibration.md)", "battles"
        )
    listed = top.child("battles")
    if not isinstance(listed.data, list) or not listed.data:
        raise listed.fail("expected at least one [[battles]] entry")
    battles: list[RealBattle] = []
    skipped: list[Skipped] = []
    for i, node in enumerate(listed.elements()):
        name = f"battle {i + 1}"
        if isinstance(node.data, Mapping) and isinstance(node.data.get("name"), str):
            name = node.data["name"]
        try:
            battles.append(_real_battle(node, name, path.parent))
        except ImpossibleRecord:
            raise
        except BattleOddsError as exc:
            skipped.append(Skipped(name, str(exc)))
    return CalibrationFile(path, description, tuple(battles), tuple(skipped))


def _real_battle(node: Node, name: str, folder: Path) -> RealBattle:
    node.only(BATTLE_KEYS)
    if not node.has("scenario"):
        raise node.fail("is required: a scenario file (relative to this file) or table", "scenario")
    given = node.table()["scenario"]
    if isinstance(given, str):
        scenario = load_scenario(folder / given)
    elif isinstance(given, Mapping):
        scenario = from_data(given, _within(node.source, node.key("scenario")))
    else:
        raise node.fail(
            f"expected a scenario file name or a table, got {type(given).__name__}", "scenario"
        )
    winner = node.choice("winner", OUTCOMES)
    bounds = _most_fielded(scenario)
    lost: dict[str, int] = {}
    if node.has("lost"):
        losses = node.child("lost")
        known = {c.removeprefix("casualties."): c for c in bounds}
        for key, _ in losses.items():
            if key not in known:
                raise losses.fail(
                    f"'{key}' is no loss of this scenario's armies" + did_you_mean(key, known),
                    key,
                    key,
                )
            column = known[key]
            most = bounds[column]
            count = losses.integer(key, lo=0)
            if most is not None and count > most:
                problem = losses.fail(
                    f"{count} lost, more than the {most} the scenario fields", key, count
                )
                raise ImpossibleRecord(str(problem))
            lost[column] = count
    steps = node.integer("steps", lo=0) if node.has("steps") else None
    return RealBattle(name, scenario, winner, lost, steps)


# --- the model's predictions --------------------------------------------------------------


def _prepared_forms(scenario: Scenario) -> list[Any]:
    """The scenario prepared; for one with unknowns, each combination of inputs it was
    checked at (every value of each list, the ends of each range)."""
    if unknowns_of(scenario):
        mixture = scenario.model
        return [mixture.prepared_of(c) for c in mixture.checked]
    return [rulesets.get(scenario.ruleset).prepare(scenario.model)]


def _most_fielded(scenario: Scenario) -> dict[str, int | None]:
    """Each casualty column and the most men it can count (the most any checked
    combination of a scenario with unknowns fields)."""
    most: dict[str, int | None] = {}
    for prepared in _prepared_forms(scenario):
        for column in prepared.columns:
            if column.startswith("casualties."):
                high = prepared.column_bounds.get(column, (0, None))[1]
                known = most.get(column, 0)
                most[column] = None if high is None or known is None else max(known, high)
    return most


def army_sizes(scenario: Scenario) -> tuple[tuple[float, float], str]:
    """Each side's size for the "larger army wins" baseline: its cost when every type it
    fields has one, else its men (the most each casualty column can reach; for a scenario
    with unknowns, the mean over the combinations it was checked at)."""
    rs = rulesets.get(scenario.ruleset)
    forms = _prepared_forms(scenario)
    fielded: dict[str, dict[str, float]] = {"attacker": {}, "defender": {}}
    for prepared in forms:
        for column, (_, most) in prepared.column_bounds.items():
            parts = column.split(".", 2)
            if parts[0] == "casualties" and len(parts) == 3 and parts[1] in fielded and most:
                side = fielded[parts[1]]
                side[parts[2]] = side.get(parts[2], 0.0) + int(most) / len(forms)
    try:
        costs = side_costs(rs, scenario.data, None)
    except BattleOddsError:
        costs = {}
    by_cost = all(t in costs for side in fielded.values() for t in side)
    sizes = tuple(
        float(sum(n * (costs[t] if by_cost else 1) for t, n in fielded[s].items()))
        for s in ("attacker", "defender")
    )
    return (sizes[0], sizes[1]), "cost" if by_cost else "men"


def place(histogram: Histogram, what: str, real: int) -> Placed:
    n = histogram.n
    below = int(histogram.counts[histogram.values < real].sum())
    at = int(histogram.counts[histogram.values == real].sum())
    return Placed(
        what,
        real,
        histogram.quantile(BAND[0]),
        histogram.quantile(0.5),
        histogram.quantile(BAND[1]),
        (below + at / 2) / n,
    )


def predict(battle: RealBattle, result: Result) -> Prediction:
    tally = result.tally
    p = {o: tally.win(o)[0] for o in result.outcomes}
    losses = tuple(
        place(tally.columns.get(column, Histogram.of(np.zeros(tally.battles))), column, real)
        for column, real in battle.lost.items()
    )
    steps = None if battle.steps is None else place(tally.steps, "steps", battle.steps)
    (a, d), sized_by = army_sizes(battle.scenario)
    larger = "attacker" if a > d else "defender" if d > a else "even"
    return Prediction(
        battle.name,
        battle.winner,
        p,
        tally.battles,
        losses,
        steps,
        larger,
        sized_by,
        battle.scenario.ruleset,
    )


def calibrate(
    path: str | Path,
    battles: int = DEFAULT_BATTLES,
    seed: int = DEFAULT_SEED,
    *,
    run: Runner = simulate,
    progress: Progress | None = None,
) -> Calibration:
    """Run every battle of a calibration file and score the model's predictions. Ctrl-C
    (with an interruptible ``run``) scores the battles run so far, marked partial."""
    read = read_calibration(path)
    predictions: list[Prediction] = []
    partial = False
    total = battles * len(read.battles)
    for done, battle in enumerate(read.battles):
        if stop_requested():
            partial = True
            break
        reporting = (
            {} if progress is None else {"progress": battles_of(progress, done * battles, total)}
        )
        result = run(battle.scenario, battles, seed, keep_battles=False, **reporting)
        if result.n:  # an interrupted battle is scored on the battles it ran
            predictions.append(predict(battle, result))
        if result.partial:
            partial = True
            break
    if not predictions and not partial:
        reasons = "; ".join(f"{s.name}: {s.reason}" for s in read.skipped)
        raise BattleOddsError(f"{path}: no battle could be scored ({reasons})")
    answer = score(predictions, list(read.skipped))
    answer.seed, answer.partial = seed, partial
    answer.path, answer.description = str(path), read.description
    return answer


# --- the scores ---------------------------------------------------------------------------


def score(predictions: Sequence[Prediction], skipped: Sequence[Skipped] = ()) -> Calibration:
    """The scores of per-battle predictions; the rows sorted worst first (by the log loss
    of the real winner, then by real losses outside the band)."""
    m = len(predictions)
    if m == 0:
        nan = math.nan
        return Calibration([], list(skipped), nan, nan, [], nan, nan, nan, 0, [0] * BINS, [])
    brier = sum(p.brier for p in predictions) / m
    log_loss = sum(p.log_loss for p in predictions) / m
    placed = [x for p in predictions for x in p.losses]
    places = [x.place for x in placed]
    share = (lambda where: places.count(where) / len(places)) if places else (lambda _: math.nan)
    pits = np.array([x.pit for x in placed], float)
    pit_counts = np.histogram(pits, bins=BINS, range=(0.0, 1.0))[0].astype(int).tolist()
    rows = sorted(
        predictions,
        key=lambda p: (-p.log_loss, -sum(x.place != "inside" for x in p.losses), p.name),
    )
    return Calibration(
        rows=rows,
        skipped=list(skipped),
        brier=brier,
        log_loss=log_loss,
        baselines=[base_rate(predictions), larger_army(predictions)],
        coverage=share("inside"),
        below=share("below"),
        above=share("above"),
        losses=len(placed),
        pit_counts=pit_counts,
        reliability=reliability(predictions),
    )


def _scores(
    name: str, predictions: Sequence[Prediction], rates: list[dict[str, float]]
) -> Baseline:
    m = len(predictions)
    brier = sum(
        (r["attacker"] - float(p.winner == "attacker")) ** 2
        for p, r in zip(predictions, rates, strict=True)
    )
    loss = sum(-math.log(r[p.winner]) for p, r in zip(predictions, rates, strict=True))
    return Baseline(name, brier / m, loss / m)


def base_rate(predictions: Sequence[Prediction]) -> Baseline:
    """Every battle given the file's own shares of attacker wins, defender wins, draws."""
    m = len(predictions)
    rate = {o: sum(p.winner == o for p in predictions) / m for o in OUTCOMES}
    return _scores("base rate", predictions, [rate] * m)


def larger_army(predictions: Sequence[Prediction]) -> Baseline:
    """The larger side (by cost, or men) wins as often as the larger side won in the
    file, the smaller as often as it did, draws likewise; battles of even sides get the
    base rate."""
    m = len(predictions)
    uneven = [p for p in predictions if p.larger != "even"]
    base = {o: sum(p.winner == o for p in predictions) / m for o in OUTCOMES}
    won = draw = lost = 0.0
    if uneven:
        won = sum(p.winner == p.larger for p in uneven) / len(uneven)
        draw = sum(p.winner == "draw" for p in uneven) / len(uneven)
        lost = 1.0 - won - draw
    rates = []
    for p in predictions:
        if p.larger == "even":
            rates.append(base)
        else:
            other = "defender" if p.larger == "attacker" else "attacker"
            rates.append({p.larger: won, other: lost, "draw": draw})
    return _scores("larger army wins", predictions, rates)


def reliability(predictions: Sequence[Prediction]) -> list[tuple[int, float, float]]:
    """Per tenth of P(attacker wins) (the last one closed): battles, the mean prediction
    and the share the attacker won (nan for an empty bin)."""
    bins: list[list[Prediction]] = [[] for _ in range(BINS)]
    for p in predictions:
        bins[min(int(p.p_attacker * BINS), BINS - 1)].append(p)
    return [
        (
            len(b),
            sum(p.p_attacker for p in b) / len(b) if b else math.nan,
            sum(p.winner == "attacker" for p in b) / len(b) if b else math.nan,
        )
        for b in bins
    ]


def schema() -> dict[str, Any]:
    """The JSON Schema of a calibration file (docs/calibration.md)."""
    count = {"type": "integer", "minimum": 0}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "battle-odds calibration file",
        "type": "object",
        "additionalProperties": False,
        "required": ["battles"],
        "properties": {
            "description": {"type": "string"},
            "battles": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["scenario", "winner"],
                    "properties": {
                        "name": {"type": "string", "description": "what the battle is called"},
                        "scenario": {
                            "description": "a scenario file (relative to this file) or a "
                            "scenario table written here",
                            "oneOf": [{"type": "string"}, {"type": "object"}],
                        },
                        "winner": {"enum": list(OUTCOMES), "description": "who won"},
                        "lost": {
                            "type": "object",
                            "description": "recorded losses: side.type = men lost "
                            '("attacker.soldier" = 12)',
                            "additionalProperties": count,
                        },
                        "steps": {
                            **count,
                            "description": "how long it lasted, in the "
                            "ruleset's steps (strikes, rounds, turns)",
                        },
                    },
                },
            },
        },
    }
