"""``battle-odds warm``: every kernel compiled once, so that no later first run waits.

A kernel is compiled the first time a run needs it (tens of seconds, olympia's skip kernel
about 50), then loaded from Numba's cache. ``warm`` runs a few battles of every kernel
path in worker processes, as many at once as it is given cores, longest first, never two
paths of one kernel module at once (they share compiled functions: the second, started
after the first, loads them and compiles only its own), so two processes on two cores take
about half the time of one. Each job is an ordinary ``battle-odds`` command; a kernel
already cached is only loaded (a second or two).
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import rulesets
from ..errors import ParameterError, did_you_mean
from ..running.compiling import KERNEL_MODULES
from ..running.interrupt import EXIT_INTERRUPTED, stop_on_interrupt
from .app import app
from .options import err, user_errors


@dataclass(frozen=True)
class Job:
    """One kernel path: its name in words, its ruleset, the ``battle-odds`` arguments
    that run it (``{starter}``: the ruleset's starter scenario file) and the kernel
    module it compiles (for the estimate of :data:`KERNEL_MODULES`)."""

    name: str
    ruleset: str
    args: tuple[str, ...]
    module: str

    def estimate(self) -> float:
        return KERNEL_MODULES.get(self.module, ("", 10.0))[1]

    @property
    def family(self) -> str:
        """The kernel module whose compiled functions this job shares: its own, or for a
        stacked kernel the plain one whose battle it calls (olympia's: the skip kernel's;
        its shared tables' walk: the chain kernel's).
        Two jobs of a family never compile side by side: each would compile the shared
        functions itself (the skip kernel's battle, about 40 s, twice), where the second,
        started after the first, loads them from the cache and compiles only its own."""
        if self.module == "kernels.olympia.stacked":
            return "kernels.olympia.skip"
        if self.module == "kernels.olympia.shared_chain":
            return "kernels.olympia.chain"
        return self.module.removesuffix("_stacked")


FEW = ("-n", "400", "--json")


def _olympia(name: str, module: str, attacker: str, defender: str, *more: str) -> Job:
    """An olympia path run by ``odds`` on two one-line armies."""
    armies = ("--attacker", attacker, "--defender", defender)
    return Job(name, "olympia", ("odds", "--ruleset", "olympia", *armies, *more), module)


#: Olympia's paths, each named by its kernel: the chain kernel (open-field armies; the
#: starter scenario's tower makes it a skip battle) and its walk of a table the
#: combinations of a scenario with ranges share (kernels/olympia/shared_chain.py), the
#: skip kernel for smaller and for large armies (a kernel each, kernels/olympia/skip.py),
#: the chain and skip kernels' battle
#: as it unfolds (a stop rule, ``--after``, ``--by-round``: a version of each kernel of its
#: own, which README's retreat example compiled for a minute when warm left it out), the
#: per-strike kernel (``kernel = "strike"``) and the exact solver.
OLYMPIA = (
    _olympia("olympia chain", "kernels.olympia.chain", "noble, 20 knight", "noble, 30 pikeman",
             *FEW),
    _olympia("olympia chain with ranges", "kernels.olympia.shared_chain", "noble, 20 knight",
             "noble, 25..30 pikeman", *FEW),
    _olympia("olympia chain, the battle as it unfolds", "kernels.olympia.chain",
             "noble, 20 knight", "noble, 30 pikeman", "--after", "1", *FEW),
    _olympia("olympia skip", "kernels.olympia.skip", "noble, 30 soldier", "noble, 30 pikeman",
             "--strike-order", "alternating", *FEW),
    _olympia("olympia skip, the battle as it unfolds", "kernels.olympia.skip",
             "noble, 30 soldier", "noble, 30 pikeman", "--strike-order", "alternating",
             "--after", "1", *FEW),
    _olympia("olympia skip, large armies", "kernels.olympia.skip", "noble, 300 soldier",
             "noble, 300 pikeman", "--set", "kernel=skip", "-n", "20", "--json"),
    _olympia("olympia strike", "kernels.olympia.strike", "noble, 10 soldier", "noble, 8 pikeman",
             "--set", "kernel=strike", *FEW),
    _olympia("olympia exact solver", "kernels.olympia.exact", "noble, 3 soldier",
             "noble, 3 pikeman", "--exact", "--json"),
)  # fmt: skip


#: Blocks' battle as it unfolds (a stop rule, ``--by-round``, ``--after``, a battle in
#: progress) runs a battle function of its own (kernels/blocks.py's ``_battles`` beside
#: ``_plain_battles``).
BLOCKS = (
    Job("blocks, the battle as it unfolds", "blocks", ("run", "{starter}", "--after", "1", *FEW),
        "kernels.blocks"),
)  # fmt: skip


def _ranged(ruleset: str, key: str, value: str, module: str = "") -> Job:
    """A ruleset's starter with one of its keys a range: the stacked kernel
    (kernels/<ruleset>_stacked.py, or ``module``) that runs every drawn combination in
    one call."""
    args = ("run", "{starter}", "--set", f"{key}={value}", *FEW)
    return Job(f"{ruleset} with ranges", ruleset, args, module or f"kernels.{ruleset}_stacked")


#: The rulesets whose scenarios with ranges run on a stacked kernel of their own, each
#: with a key of its starter scenario written as a range.
RANGES = {
    "age_of_gods": _ranged("age_of_gods", "attacker.break_point", "40..50"),
    "blocks": _ranged("blocks", "attacker.blocks[0].steps", "1..3"),
    "confrontation": _ranged("confrontation", "attacker.stacks[0].advantages", "0..2"),
    # The starter's tower makes each combination a skip battle, which the stacked runs.
    "olympia": _ranged("olympia", "attacker.break_point", "40..50", "kernels.olympia.stacked"),
    "skirmish": _ranged("skirmish", "stacks[0].units[0]", '{ type = "cavalry", count = "1..3" }'),
}


def jobs(names: list[str]) -> list[Job]:
    """Every installed ruleset's starter scenario (its main kernel), olympia's
    paths, blocks' battle as it unfolds and the stacked kernels of scenarios with
    ranges; the longest first, so that the last to end is a short one."""
    found: list[Job] = []
    for name in names:
        if name == "olympia":
            found.extend((*OLYMPIA, RANGES[name]))
            continue
        module = f"kernels.{name}"
        found.append(
            Job(KERNEL_MODULES.get(module, (name,))[0], name, ("run", "{starter}", *FEW), module)
        )
        if name == "blocks":
            found.extend(BLOCKS)
        if name in RANGES:
            found.append(RANGES[name])
    return sorted(found, key=lambda job: -job.estimate())


def chosen(todo: list[Job], paths: list[str]) -> list[Job]:
    """The jobs of ``todo`` named in ``paths`` (every one where none is named); a name
    of no job is bad input."""
    names = [job.name for job in todo]
    for path in paths:
        if path not in names:
            raise ParameterError(
                "path",
                repr(path),
                f"no such kernel path{did_you_mean(path, names, list_valid=False)}",
            )
    return [job for job in todo if not paths or job.name in paths]


@dataclass
class Running:
    job: Job
    process: subprocess.Popen[str]
    started: float


def _start(job: Job, starter: Path) -> Running:
    args = [a.replace("{starter}", str(starter)) for a in job.args]
    process = subprocess.Popen(
        [sys.executable, "-m", "simulator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Its own session: Ctrl-C is this process's to answer (the workers are ended).
        start_new_session=True,
        # Its jobs already keep every core busy: none compiles a battle aside as well
        # (kernels/_aside.py).
        env={**os.environ, "BATTLE_ODDS_COMPILE_ASIDE": "0"},
    )
    return Running(job, process, time.perf_counter())


def _compiled(stdout: str) -> float:
    """Seconds the job's command spent compiling, from its JSON answer."""
    try:
        answer: Any = jsonlib.loads(stdout)
    except ValueError:
        return 0.0
    return float(answer.get("compile_seconds", 0.0)) if isinstance(answer, dict) else 0.0


@app.command()
@user_errors
def warm(
    jobs_at_once: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            max=64,
            help="Kernels compiled at once, each in a process of its own (default: the "
            "machine's cores).",
        ),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option(
            "--path",
            help="Only this kernel path, named as warm says it as it is ready (for "
            'example "olympia chain"); repeat it for more (default: every one).',
        ),
    ] = None,
) -> None:
    """Compile every kernel once (after install), so that no later first run waits."""
    names = list(rulesets.available())
    todo = chosen(jobs(names), path or [])
    at_once = jobs_at_once or max(1, min(len(todo), os.cpu_count() or 1))
    ahead = sum(job.estimate() for job in todo) / at_once
    say(
        f"battle-odds warm: {len(todo)} kernel paths of {len(names)} rulesets, {at_once} at "
        f"a time; up to about {ahead:.0f} s where none is cached yet (Ctrl-C stops; what "
        "is compiled stays compiled)"
    )
    running: list[Running] = []
    done = failed = 0
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="battle-odds-warm-") as folder:
        starters = {}
        for name in names:
            starters[name] = Path(folder) / f"{name}.toml"
            starters[name].write_text(rulesets.get(name).starter(), encoding="utf-8")
        waiting = list(todo)
        # Ctrl-C is answered here (no compile runs in this process): the workers ended.
        with stop_on_interrupt(ending=True) as stop:
            while waiting or running:
                if stop.requested:
                    for each in running:
                        _end(each.process)
                    say(
                        f"interrupted: {done - failed} of {len(todo)} kernel paths ready; "
                        "the others compile on their first run (or run battle-odds warm again)"
                    )
                    raise typer.Exit(EXIT_INTERRUPTED)
                while len(running) < at_once:
                    busy = {each.job.family for each in running}
                    job = next((j for j in waiting if j.family not in busy), None)
                    if job is None:
                        break
                    waiting.remove(job)
                    running.append(_start(job, starters[job.ruleset]))
                time.sleep(0.05)
                for each in [r for r in running if r.process.poll() is not None]:
                    running.remove(each)
                    done += 1
                    failed += not _report(each, done, len(todo))
    if failed:
        raise typer.Exit(1)
    say(f"battle-odds warm: every kernel ready, {time.perf_counter() - began:.0f} s")


def _report(each: Running, done: int, total: int) -> bool:
    """Say how a finished worker's kernel path went; False when it failed."""
    stdout, stderr = each.process.communicate()
    if each.process.returncode != 0:
        last = (stderr.strip().splitlines() or ["no message"])[-1]
        say(f"  {each.job.name}: failed ({last})")
        return False
    how = readiness(_compiled(stdout), time.perf_counter() - each.started)
    say(f"  {each.job.name}: {how} ({done} of {total})")
    return True


#: A worker that took longer than this compiled something, whatever its answer says
#: (a path's JSON counts the compiles of its battles, not of the solvers or recorders
#: around them); loading a cached path takes a second or two.
LOADED_WITHIN = 5.0


def readiness(compiled: float, seconds: float) -> str:
    """How a kernel path became ready: ``compiled`` seconds its answer says it spent
    compiling, ``seconds`` the worker's whole time."""
    if compiled >= 0.5:
        return f"compiled in {compiled:.0f} s"
    if seconds >= LOADED_WITHIN:
        return f"ready in {seconds:.0f} s"
    return f"already compiled, loaded in {seconds:.1f} s"


def _end(process: subprocess.Popen[str]) -> None:
    """End a worker and its threads now (a compile cannot be stopped between steps);
    Numba writes a cache file whole or not at all."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def say(text: str) -> None:
    err.print(text, highlight=False, markup=False, soft_wrap=True)
