"""The kernels loaded (or, on a fresh install, compiled) while the server already listens.

``serve`` listens at once and loads each ruleset's kernels in a thread of its own, the
default ruleset first. Each ruleset has a :class:`Readiness`: waiting its turn, loading,
compiling (which kernel, and about how long: the estimates of
:data:`simulator.running.compiling.KERNEL_MODULES`), ready, or failed. The page shows
which are not ready yet; a question for a ruleset not ready waits for it, saying so,
and a question for a ready one is answered at once.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import rulesets
from ..errors import BattleOddsError, Source
from ..input.toml import parse_toml
from ..rulesets import InlineQuery
from ..rulesets.stacked import StackedRuns, warm_shared, warm_stacked
from ..running.compiling import compile_clock, kernel_words
from ..running.plan import RunPlan
from ..running.stream import stream_battles
from ..running.unfolding import run_steps
from ..scenario.scenario import from_data, from_query
from ..studies.exact import exact
from .answer import payload
from .question import DEFAULT_RULESET, Question

#: Largest battle solved exactly beside the Monte Carlo answer (states of its chain).
EXACT_STATES = 200_000
#: Armies the page starts with: a battle worth asking in each ruleset, neither side's
#: win foregone (10,000 battles at this version: olympia 44% / 56%, age_of_gods 37% /
#: 49% / 15% draws, blocks 43% / 57%, confrontation 83% / 17%, skirmish 25% / 75%;
#: tests/test_serve.py keeps every side's chance between 5% and 95%). A ruleset not
#: listed starts blank, its unit names completed as they are typed.
EXAMPLES = {
    "olympia": ("noble, 20 soldier, 10 archer@1", "noble, 30 pikeman"),
    "age_of_gods": ("noble, 10 hvy_foot, 10 archer@1", "noble, 60 pikeman"),
    "blocks": ("B2:4, A3:3, C1:2@r2", "B3:3, A2:2, C2:2"),
    "confrontation": ("2 trooper, militia", "veteran, spearman, trooper"),
    "skirmish": ("cavalry, 4 swordsman", "giant, priest"),
}
_ROWS = (
    "Men of one unit, comma-separated, led by a noble: 20 soldier is 20 men of a type; "
    "@1 puts them in row 1, behind the front (they shoot, and are hit once the front row "
    "is gone); a semicolon starts another unit (noble, 20 soldier; noble, 5 knight)."
)
#: The one-line army syntax of each ruleset, said beside the armies on the page.
SYNTAX = {
    "olympia": _ROWS,
    "age_of_gods": _ROWS,
    "blocks": (
        "Blocks, comma-separated: B2:4 is a block rated B2 with 4 steps (B2:3/4: 3 of at "
        "most 4); knights and harry add a trait; @castle puts it in the castle, @r2 or @r3 "
        "brings it as a reserve in round 2 or 3; a name may come first (Richard B3:4)."
    ),
    "confrontation": (
        "Units, comma-separated: 2 trooper is two units of a type; spearman(arms=5) a "
        "type with a field changed; unit(arms=4, resolve=2, integrity=8) a unit of no type."
    ),
    "skirmish": (
        "Stacks separated by semicolons, units in a stack by commas: cavalry, 2 swordsman; "
        "3 archer "
        "(the first stack is the one that attacks, or holds the attacked tile)."
    ),
}


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@dataclass
class Readiness:
    """How far one ruleset's kernels are from answering a question."""

    name: str
    state: str = "waiting"  # waiting, loading, compiling, ready, failed
    #: The kernel being compiled, in words, and its estimate (seconds; None: unknown).
    kernel: str = ""
    seconds: float | None = None
    since: float = field(default_factory=time.monotonic)
    error: str = ""
    ready: threading.Event = field(default_factory=threading.Event)

    def words(self) -> str:
        """``olympia: compiling the olympia chain kernel (first start after install
        only), 4 s of about 19 s`` (a busy machine takes longer than the estimate: then
        ``25 s so far, about 19 s on an idle machine``)."""
        if self.state == "compiling":
            spent = time.monotonic() - self.since
            if self.seconds is None:
                about = f", {spent:.0f} s so far"
            elif spent <= self.seconds:
                about = f", {spent:.0f} s of about {self.seconds:.0f} s"
            else:
                about = f", {spent:.0f} s so far, about {self.seconds:.0f} s on an idle machine"
            return (
                f"{self.name}: compiling the {self.kernel} kernel "
                f"(first start after install only){about}"
            )
        if self.state == "loading":
            return f"{self.name}: loading its kernels"
        if self.state == "waiting":
            return f"{self.name}: waiting for the rulesets before it to load"
        if self.state == "failed":
            return f"{self.name}: could not load ({self.error})"
        return f"{self.name}: ready"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "words": self.words()}


def order(names: Iterable[str]) -> tuple[str, ...]:
    """The rulesets in the order they load: the page's default first."""
    names = tuple(names)
    return tuple(sorted(names, key=lambda n: n != DEFAULT_RULESET))


def warm_in_background(
    readiness: dict[str, Readiness], say: Callable[[str], None] = _say
) -> threading.Thread:
    """A thread loading the kernels of ``readiness``' rulesets, in its order."""
    thread = threading.Thread(
        target=warm, args=(tuple(readiness), say, readiness), name="warm", daemon=True
    )
    thread.start()
    return thread


def warm(
    names: tuple[str, ...],
    say: Callable[[str], None] = _say,
    readiness: dict[str, Readiness] | None = None,
) -> None:
    """Load (or compile, the first time) every kernel the page may call: each ruleset's
    starter battle and the page's example question, then the exact solver, saying so as
    it goes (and marking each ruleset ready in ``readiness``); then every other kernel a
    ruleset offers (olympia's ``battle.kernel`` choices)."""
    readiness = readiness if readiness is not None else {n: Readiness(n) for n in names}
    me = threading.current_thread()
    clock = compile_clock()
    now: list[Readiness] = []

    def compiling(function: Any) -> None:
        if threading.current_thread() is not me or not now:
            return  # a question's compile, not this thread's
        state = now[0]
        kernel, seconds = kernel_words(function, state.name)
        if state.state != "compiling" or state.kernel != kernel:
            state.state, state.kernel, state.seconds = "compiling", kernel, seconds
            state.since = time.monotonic()
            about = f", about {seconds:.0f} s" if seconds is not None else ""
            say(
                f"battle-odds serve: compiling the {kernel} kernel for {state.name}, first "
                f"start after install only{about} (later starts load it from Numba's cache)"
            )

    clock.on_start.append(compiling)
    try:
        for name in names:
            state = readiness[name]
            now[:] = [state]
            state.state, state.since = "loading", time.monotonic()
            began = time.perf_counter()
            say(f"battle-odds serve: loading the {name} kernels ...")
            try:
                _first(name)
            except Exception as exc:  # a ruleset that cannot load: said, not fatal
                state.state, state.error = "failed", " ".join(str(exc).split())
                say(f"battle-odds serve: {name} could not load: {state.error}")
            else:
                state.state = "ready"
                say(f"battle-odds serve: {name} ready ({time.perf_counter() - began:.1f} s)")
            finally:
                state.ready.set()
        now.clear()
        for name in names:
            with contextlib.suppress(Exception):  # its questions compile it themselves
                _other_kernels(name)
    finally:
        clock.on_start.remove(compiling)


def _starter_battle(name: str) -> Any:
    """Ruleset ``name``'s starter scenario prepared, its kernel run on a few battles."""
    ruleset = rulesets.get(name, "--warm")
    data, _ = parse_toml(ruleset.starter(), f"{name} starter")
    starter = ruleset.prepare(from_data(data, Source(f"{name} starter")).model)
    starter.run(1, 0, 64)
    return starter


def _first(name: str) -> None:
    """What a ruleset's first question calls: the page's example question through every
    function a question calls (what they import on first use is imported now), and the
    exact solver where the ruleset has one; a ruleset with no example, its starter battle.
    A starter with a kernel of its own loads with the other kernels, once every ruleset is
    ready (olympia's starter, a tower, runs on the skip kernel: about 41 s of compiling
    on a fresh install, which the page's example, on the chain kernel, does not wait for)."""
    ruleset = rulesets.get(name, "--warm")
    if name not in EXAMPLES:
        _starter_battle(name)
    else:
        attacker, defender = EXAMPLES[name]
        question = Question.of({"ruleset": name, "attacker": attacker, "defender": defender})
        question.to_toml()
        question.command()
        plan = RunPlan.of(question.scenario, 2_000, question.plan().seed)
        for result, final in stream_battles(question.scenario, plan):
            payload(result, running=not final, planned=plan.battles)
        # Then the battle as it unfolds, as the page works it out before its answer is
        # done: its recording kernels and step counting compiled now, not while a
        # question (and another ruleset's compiling) waits on them.
        with contextlib.suppress(BattleOddsError):  # a ruleset that cannot say it
            run_steps(question.scenario, None, plan.seed, 0, 200)
    if ruleset.solvable and name in EXAMPLES:
        small = from_query(name, InlineQuery(*_smallest(name)))
        with contextlib.suppress(BattleOddsError):  # too big for the solver: nothing to load
            exact(small, max_states=EXACT_STATES)


def _other_kernels(name: str) -> None:
    """The starter battle's kernel, the kernels a ruleset's ``battle.kernel`` setting
    chooses besides its own, and the ones its questions with ranges run on
    (rulesets/stacked.py: the stacked kernel, and the walk of what combinations share)."""
    ruleset = rulesets.get(name, "--warm")
    data, _ = parse_toml(ruleset.starter(), f"{name} starter")
    starter = _starter_battle(name)
    if isinstance(starter, StackedRuns):
        warm_stacked(starter)
        # What combinations share (olympia's chain tables, which its starter's tower
        # has none of: its page example's open field has).
        if not warm_shared(starter) and name in EXAMPLES:
            example = ruleset.prepare(from_query(name, InlineQuery(*EXAMPLES[name])).model)
            if isinstance(example, StackedRuns):
                warm_shared(example)
    for choice in _kernel_choices(ruleset):
        variant = {**data, "battle": {**data.get("battle", {}), "kernel": choice}}
        try:
            scenario = from_data(variant, Source(f"{name} starter"))
        except BattleOddsError:
            continue  # a kernel that cannot run the starter battle (olympia's chain)
        ruleset.prepare(scenario.model).run(1, 0, 64)


def _kernel_choices(ruleset: Any) -> tuple[str, ...]:
    """The named kernels a ruleset's ``battle.kernel`` key offers (none: one kernel)."""
    try:
        battle = ruleset.scenario_keys["battle"]
        choices = battle["kernel"].choices
    except (KeyError, AttributeError):
        return ()
    return tuple(c for c in choices if c != "auto")


def _smallest(name: str) -> tuple[str, str]:
    """A battle small enough for any exact solver, in ruleset ``name``'s syntax."""
    if name in ("olympia", "age_of_gods"):
        return "noble, 2 soldier", "noble, 2 soldier"
    return EXAMPLES[name]
