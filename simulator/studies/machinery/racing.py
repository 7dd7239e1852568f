"""Racing many armies on common random numbers, with a guarantee on the one chosen.

Every army in a race fights the same battles: battle i of every army is run on stream i
of one seed, in looks of doubling size. After each look the race drops the armies that
are surely worse than another one, and stops once the leader (the most wins) is surely
no worse than any survivor by more than the tolerance. This is successive elimination
for an epsilon-best choice (Even-Dar, Mannor and Mansour, "Action elimination and
stopping conditions for the multi-armed bandit and reinforcement learning problems",
JMLR 7, 2006; the racing of Maron and Moore, 1994), with paired comparisons in place of
one interval per army, so that common random numbers narrow every comparison.

Ctrl-C. ``wins_of`` raises :class:`~simulator.running.interrupt.Interrupted` to leave a
look; the race keeps the looks done, and the choosers return the choice of the last of
them as they would at the battle cap (not ``sure``). The bounds hold at every look at
once (the union bound counts them all), so the guarantee of ``within`` holds of a race
stopped after any look. A race stopped before its first look raises ``Interrupted``.

The guarantee. Let b be a best army (greatest P). Each look bounds every difference
p_y - p_x from below by ``paired_lower`` at level ``a``: at most a chance ``a`` that the
bound is above the truth. If no bound of the form ``p_y - p_b`` (y any other army, any
look) is above the truth, which fails with probability at most (K - 1) * looks * a, then
(1) b is never dropped (dropping b needs a bound on p_y - p_b above 0 >= p_y - p_b), and
(2) at the end p_b - p_k <= -lower(p_k - p_b) for the chosen k. With
a = (1 - confidence) / ((K - 1) * looks): with probability at least ``confidence``, no
army is better than the chosen one by more than ``within``, the largest of those upper
bounds over the survivors (at most the tolerance when the race stopped by itself). Only
the K - 1 comparisons with b enter the union bound, not all K^2 pairs.

``paired_lower`` is exact, not a normal approximation (the union bound asks for tail
chances of 10^-6 and less, where normal intervals for rare discordant battles are not
to be trusted). With n battles, ``only_y`` won by y and not x, ``only_x`` the reverse and
m = only_y + only_x discordant: p_y - p_x = pi (2 q - 1) where pi is the chance of a
discordant battle and q the chance y is its winner. Given m, only_y is binomial(m, q), so
a Clopper-Pearson lower bound q_lo at level a/2 holds given every m; pi's two-sided
Clopper-Pearson interval (a/4 each side) holds too; on both, p_y - p_x >= pi_lo (2 q_lo
- 1) when q_lo >= 1/2, else >= pi_hi (2 q_lo - 1). The bound is above 0 exactly when the
exact one-sided sign test (McNemar's) rejects at a/2, so dropping is as quick as that test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...running.imports_ahead import import_ahead
from ...running.interrupt import Interrupted

#: ``wins_of(armies, first battle, count)``: a ``count x len(armies)`` bool array, True
#: where the army's side won that battle.
WinsOf = Callable[[list[int], int, int], np.ndarray]
#: Armies compared with every survivor at each look (the leaders): the drop rule needs
#: one army surely better, and the leaders are the likeliest to be.
LEADERS = 16


def looks(first: int, most: int) -> list[int]:
    """Battles fought after each look: ``first``, doubling, up to ``most``."""
    schedule = [first]
    while schedule[-1] < most:
        schedule.append(min(2 * schedule[-1], most))
    return schedule


def clopper_pearson_lower(k: np.ndarray, n: np.ndarray, a: float) -> np.ndarray:
    """Exact one-sided lower bound at level ``a`` for k successes in n trials (0: none)."""
    # Imported here: scipy.special is a tenth of a second of every command's start-up.
    from scipy.special import betaincinv

    k, n = np.asarray(k, float), np.asarray(n, float)
    safe = np.where(k > 0, k, 1.0), np.where(k > 0, n - k + 1, 1.0)
    return np.where(k > 0, betaincinv(*safe, a), 0.0)


def clopper_pearson_upper(k: np.ndarray, n: np.ndarray, a: float) -> np.ndarray:
    """Exact one-sided upper bound at level ``a`` for k successes in n trials."""
    from scipy.special import betaincinv

    k, n = np.asarray(k, float), np.asarray(n, float)
    safe = np.where(k < n, k + 1, 1.0), np.where(k < n, n - k, 1.0)
    return np.where(k < n, betaincinv(*safe, 1 - a), 1.0)


def paired_lower(n: int, only_y: np.ndarray, only_x: np.ndarray, a: float) -> np.ndarray:
    """A lower bound on p_y - p_x from n paired battles, wrong with chance at most ``a``
    (see the module docstring)."""
    only_y, only_x = np.asarray(only_y, float), np.asarray(only_x, float)
    m = only_y + only_x
    q_lo = clopper_pearson_lower(only_y, m, a / 2)
    pi_lo = clopper_pearson_lower(m, np.full_like(m, n), a / 4)
    pi_hi = clopper_pearson_upper(m, np.full_like(m, n), a / 4)
    return np.where(q_lo >= 0.5, pi_lo, pi_hi) * (2 * q_lo - 1)


@dataclass
class Race:
    """Armies (numbered by the caller) fighting the same battles in looks."""

    armies: list[int]
    wins_of: WinsOf
    schedule: list[int]
    #: Index of the race's first battle (a fresh race starts past an earlier one's).
    first_battle: int = 0
    #: ``on_look(looks done, looks at most)`` after each look.
    on_look: Callable[[int, int], None] | None = None
    alive: list[int] = field(init=False)
    n: int = field(init=False, default=0)
    wins: dict[int, int] = field(init=False, default_factory=dict)
    #: Battles each army fought (set when it leaves the race or the race ends).
    battles: dict[int, int] = field(init=False, default_factory=dict)
    _blocks: list[tuple[np.ndarray, int, dict[int, int]]] = field(init=False, default_factory=list)
    #: A look was left at Ctrl-C: the race ends with the looks done before it.
    interrupted: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.alive = list(dict.fromkeys(self.armies))
        self.wins = dict.fromkeys(self.alive, 0)
        # The bounds' quantiles, for the first look's end, imported while it fights.
        import_ahead("scipy.special")

    @property
    def done(self) -> bool:
        return self.n >= self.schedule[-1]

    def look(self) -> None:
        """Fight the next look's battles with every army still in the race."""
        count = self.schedule[len(self._blocks)] - self.n
        try:
            won = self.wins_of(self.alive, self.first_battle + self.n, count)
        except Interrupted:
            self.interrupted = True
            raise
        for column, army in enumerate(self.alive):
            self.wins[army] += int(won[:, column].sum())
        where = {army: column for column, army in enumerate(self.alive)}
        self._blocks.append((np.packbits(won, axis=0), count, where))
        self.n += count
        for army in self.alive:
            self.battles[army] = self.n
        if self.on_look is not None:
            self.on_look(len(self._blocks), len(self.schedule))

    def drop(self, armies: Sequence[int]) -> None:
        gone = set(armies)
        self.alive = [a for a in self.alive if a not in gone]

    def ranked(self, armies: Sequence[int] | None = None) -> list[int]:
        """``armies`` (default: the survivors) most wins first, ties in the callers' order."""
        return sorted(self.alive if armies is None else armies, key=lambda a: -self.wins[a])

    def both(self, ys: Sequence[int], xs: Sequence[int]) -> np.ndarray:
        """Battles won by both y and x, for every y (rows) and x (columns)."""
        total = np.zeros((len(ys), len(xs)))
        for packed, count, where in self._blocks:
            wanted = sorted({where[a] for a in (*ys, *xs)})
            position = {column: i for i, column in enumerate(wanted)}
            # Counts are exact in float32 below 2**24 battles a look.
            exact = np.float32 if count < 2**24 else np.float64
            won: np.ndarray = np.unpackbits(packed[:, wanted], axis=0, count=count).astype(exact)
            rows = won[:, [position[where[y]] for y in ys]]
            columns = won[:, [position[where[x]] for x in xs]]
            total += np.matmul(rows.T, columns)
        return total

    def lower(self, ys: Sequence[int], xs: Sequence[int], a: float) -> np.ndarray:
        """Lower bounds on p_y - p_x (rows y, columns x) at level ``a`` each."""
        both = self.both(ys, xs)
        wins_y = np.array([self.wins[y] for y in ys], float)[:, None]
        wins_x = np.array([self.wins[x] for x in xs], float)[None, :]
        return paired_lower(self.n, wins_y - both, wins_x - both, a)


@dataclass
class Choice:
    """What a race chose and how sure it is."""

    chosen: int
    #: Survivors other than the chosen one: not told apart from it.
    tied: list[int]
    #: With the race's confidence no army is better than the chosen one by more than this.
    within: float
    #: The race stopped by its rule (``within`` <= tolerance), not at the battle cap.
    sure: bool


def choose_best(race: Race, confidence: float, tolerance: float) -> Choice:
    """Race to the army with the greatest P(win), within ``tolerance`` at ``confidence``
    (the module docstring's procedure)."""
    a = (1 - confidence) / (max(len(race.alive) - 1, 1) * len(race.schedule))
    choice: Choice | None = None
    while True:
        if not _looked(race, choice):
            assert choice is not None
            return choice
        drop_surely_worse(race, race.alive, a)
        leader, others = race.ranked()[0], race.ranked()[1:]
        within = upper_gap(race, leader, others, a)
        choice = Choice(leader, others, within, within <= tolerance)
        if choice.sure or race.done:
            return choice


def _looked(race: Race, choice: object | None) -> bool:
    """Fight the race's next look: False when Ctrl-C left it (the last look's ``choice``
    is the answer), ``Interrupted`` when there is none."""
    try:
        race.look()
    except Interrupted:
        if choice is None:
            raise
        return False
    return True


def drop_surely_worse(
    race: Race, group: Sequence[int], a: float, among: Sequence[int] | None = None
) -> None:
    """Drop the armies of ``group`` surely worse than one of its leaders (the armies of
    ``among``, default ``group``, with the most wins)."""
    if len(group) < 2:
        return
    leaders = race.ranked(group if among is None else among)[:LEADERS]
    if not leaders:
        return
    beaten: np.ndarray = np.asarray((race.lower(leaders, list(group), a) > 0).any(axis=0))
    race.drop([x for i, x in enumerate(group) if beaten[i]])


def upper_gap(race: Race, leader: int, others: Sequence[int], a: float) -> float:
    """The largest upper bound on p_x - p_leader over ``others`` (0 when none)."""
    if not others:
        return 0.0
    return float(max(0.0, -race.lower([leader], list(others), a).min()))


@dataclass
class TargetChoice:
    """What the target race chose: the army (None: none surely reaches), and how sure."""

    chosen: int | None
    tied: list[int]
    within: float
    sure: bool
    #: Armies cheaper than the chosen one still undecided at the battle cap.
    undecided: list[int]
    status: dict[int, str]


def choose_cheapest(
    race: Race, costs: Mapping[int, float], target: float, confidence: float, tolerance: float
) -> TargetChoice:
    """Race to the cheapest army that surely reaches ``target``.

    Half of 1 - confidence bounds every army's P (an exact Clopper-Pearson interval at
    each look, Bonferroni over armies and looks): an army reaches when its lower bound is
    at least the target, falls short when its upper bound is below target + tolerance.
    The other half bounds the paired differences within each cost, as in
    :func:`choose_best` (the comparisons with each cost's best army are at most
    one per army). On both: the chosen army's P >= target, no cheaper army's P >= target
    + tolerance, and no army of its cost beats it by more than ``within``."""
    a = (1 - confidence) / 2 / (len(race.alive) * len(race.schedule))
    reaching: set[int] = set()
    status: dict[int, str] = {}
    choice: TargetChoice | None = None
    while True:
        if not _looked(race, choice):
            assert choice is not None
            return choice
        wins = np.array([race.wins[x] for x in race.alive], float)
        n = np.full_like(wins, race.n)
        low = clopper_pearson_lower(wins, n, a / 2)
        high = clopper_pearson_upper(wins, n, a / 2)
        short = []
        for army, lo, hi in zip(race.alive, low, high, strict=True):
            if lo >= target:
                reaching.add(army)
            elif hi < target + tolerance:
                short.append(army)
                status[army] = "below target"
        race.drop(short)
        cost = min((costs[x] for x in reaching), default=math.inf)
        dearer = [x for x in race.alive if costs[x] > cost]
        race.drop(dearer)
        status.update(dict.fromkeys(dearer, "dearer"))
        group = [x for x in race.alive if costs[x] == cost]
        # Only an army that reaches the target drops another: one always stays to choose.
        drop_surely_worse(race, group, a, [x for x in group if x in reaching])
        status.update({x: "worse" for x in group if x not in race.alive})
        group = [x for x in group if x in race.alive]
        cheaper = [x for x in race.alive if costs[x] < cost]
        ranked = [x for x in race.ranked(group) if x in reaching]
        chosen = ranked[0] if ranked else None
        tied = [x for x in group if x != chosen]
        within = 0.0 if chosen is None else upper_gap(race, chosen, tied, a)
        settled = not cheaper and (chosen is None or within <= tolerance)
        marked = {**status, **dict.fromkeys(cheaper, "undecided"), **dict.fromkeys(tied, "tied")}
        if chosen is not None:
            marked[chosen] = "chosen"
        choice = TargetChoice(chosen, tied, within, settled, cheaper, marked)
        if settled or race.done:
            return choice
