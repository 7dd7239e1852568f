"""The page's web application: the page itself, the rulesets it offers, and questions
answered while their battles run, as Server-Sent Events.

One process holds the kernels warm (:func:`warm`), so a question costs its battles and
no start-up. Every question runs in a thread of its own and stops when its page asks
(the stop button), when its page goes away (a closed tab or a new question), at the
server's time limit, or when the server stops; its kernel calls take turns with other
questions' through one lock, call by call, so several tabs get their own answers at
once. A bad question is answered with the one-line error the command line prints, and
the server goes on serving.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .. import rulesets
from ..errors import BattleOddsError, ParameterError
from ..rulesets.keys import DEFAULT_BATTLES, DEFAULT_SEED
from ..running.compiling import compile_clock, compile_notice
from ..running.distributed import Cluster
from ..running.plan import DEFAULT_MAX_BATTLES, RunPlan
from ..running.stream import stream_battles
from ..running.unfolding import run_steps
from ..studies.exact import exact
from ..version import __version__
from .answer import exact_payload, payload, steps_payload
from .guard import Guard
from .question import DEFAULT_RULESET, MAX_SCENARIO_BYTES, Question, group_words, settings
from .warming import EXACT_STATES, EXAMPLES, SYNTAX, Readiness

#: Most questions running at once; one more is refused with a one-line error.
MAX_RUNS = 8
#: Default limit on one question's time (seconds): it then stops with the answer so far.
MAX_SECONDS = 300.0
#: Settings the form leaves out: how the battles are computed, not what they are (an
#: address may still set them).
NOT_ON_THE_FORM = ("battle.kernel",)
#: An unread answer this many results behind means its page is gone: the run stops.
UNREAD_LIMIT = 50
#: The battle as it unfolds (the step slider) is worked out over at most this many of
#: an answer's battles, its first ones: each step costs up to a run of them.
STEP_BATTLES = 20_000
PAGE = ("index.html", "page.js", "page.css")
#: How a browser says another site opened the page (``Sec-Fetch-Site``; an address typed,
#: pasted or opened from another program says ``none``).
ELSEWHERE = ("cross-site", "same-site")
MEDIA = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@dataclass
class Calculator:
    """The server's state: the kernel lock, the questions running, the limits."""

    max_seconds: float = MAX_SECONDS
    max_runs: int = MAX_RUNS
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    runs: dict[str, threading.Event] = field(default_factory=dict)
    working: int = 0
    guard: threading.Lock = field(default_factory=threading.Lock)
    #: Requests refused as not the page's own (:class:`.guard.Guard`).
    refused: int = 0
    #: The Dask client of ``serve --scheduler`` (None: questions run in this process).
    cluster: Any = None
    #: Each warmed ruleset's kernels, loading in the background (:mod:`.warming`).
    readiness: dict[str, Readiness] = field(default_factory=dict)
    #: Questions being read (parsed and checked in a worker thread): they count against
    #: ``max_runs`` with the questions running. Touched on the event loop only.
    reading: int = 0

    def busy(self) -> str | None:
        """Why no other question may start now (None: one may)."""
        if self.stopping.is_set():
            return "the server is stopping"
        taken = len(self.runs) + self.reading
        if taken >= self.max_runs:
            return f"the server is answering {taken} questions already: stop one, or wait"
        return None

    async def read(self, params: dict[str, str], then: Callable[[Question], Any]) -> Any:
        """``then(question)`` of the question ``params`` ask, read in a worker thread (a
        long pasted scenario would otherwise stop every page while it is read), counted
        as a question running meanwhile (:class:`BattleOddsError`: busy, or a bad question)."""
        why = self.busy()
        if why is not None:
            raise BattleOddsError(why)
        self.reading += 1
        try:
            return await run_in_threadpool(lambda: then(Question.of(params)))
        finally:
            self.reading -= 1

    def count_refused(self) -> None:
        self.refused += 1

    def stop_all(self) -> None:
        """The server is stopping: every question ends after its kernel call."""
        self.stopping.set()
        for stop in list(self.runs.values()):
            stop.set()


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, allow_nan=False)}\n\n"


#: The command line's options, as the page's fields are named (a refusal begins with
#: the option at fault: ``--attacker: unit 1, ...`` is ``Attacker: unit 1, ...`` here).
FIELDS = {
    "--attacker": "Attacker",
    "--defender": "Defender",
    "--ruleset": "Ruleset",
    "--battles": "Battles",
    "--precision": "Precision",
    "--seed": "Seed",
    "--attacker-retreat": "Attacker withdraws",
    "--defender-retreat": "Defender withdraws",
    "--from-step": "Steps fought already",
    "--side": "Retreat: side",
    "--win-value": "Retreat: win value",
    "--method": "Retreat: method",
}


def _said(error: BattleOddsError) -> str:
    """A refusal in the page's words: a library's parameter (``precision``) named as the
    command line's option (``--precision``), which :func:`_one_line` names by its field."""
    if isinstance(error, ParameterError):
        return error.words(lambda name: "--" + name.replace("_", "-"))
    return str(error)


def _one_line(message: str) -> str:
    line = " ".join(message.split())
    option, space, rest = line.partition(" ")
    name = option.rstrip(":")
    if name in FIELDS:
        return FIELDS[name] + option[len(name) :] + space + rest
    return line


def _internal(exc: BaseException) -> str:
    """A bug's one line for the page; its traceback goes to the server's terminal."""
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return _one_line(f"internal error: {type(exc).__name__}: {exc} (details on the server)")


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": _one_line(message)}, status_code=status)


def _params(request: Request) -> dict[str, str]:
    return {key: request.query_params[key] for key in request.query_params}


#: Names of this machine that a page served on the loopback address is asked under.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


class LoopbackOnly:
    """Refuses a request asked under another name than this machine's: a page elsewhere
    that gets a browser to ask 127.0.0.1 under its own name (DNS rebinding) gets no
    answer from a server meant for this machine only."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host if host.endswith("]") else host.rsplit(":", 1)[0]
            if name.strip("[]") not in LOOPBACK_NAMES:
                refused = Response(
                    f"battle-odds serve answers this machine only, not '{host}'",
                    status_code=403,
                    media_type="text/plain",
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(
    calculator: Calculator, token: str, cookie: str = "battle-odds", loopback_only: bool = False
) -> Any:
    """The ASGI application of ``battle-odds serve``: its page, and work only for requests
    its page makes in a browser that showed ``token`` (kept in the cookie ``cookie``,
    :class:`.guard.Guard`); ``loopback_only``: it answers requests addressed to this
    machine's own names only."""

    async def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in PAGE:
            return Response("not found", status_code=404, media_type="text/plain")
        text = resources.files(__package__).joinpath("page", name).read_text(encoding="utf-8")
        if name == "index.html" and request.headers.get("sec-fetch-site") in ELSEWHERE:
            # Opened by another site (a link, a form, a new window): the page shows the
            # question its address asks and waits for Run, so no other site starts work.
            text = text.replace("<body ", '<body data-arrived="elsewhere" ', 1)
        return Response(text, media_type=MEDIA["." + name.rsplit(".", 1)[1]])

    async def offered(request: Request) -> Response:
        found = []
        for name in rulesets.available():
            ruleset = rulesets.get(name)
            units = ruleset.units()
            attacker, defender = EXAMPLES.get(name, ("", ""))
            found.append(
                {
                    "name": name,
                    "title": ruleset.title or name,
                    "units": [str(t) for t in units["type"]],
                    "settings": [
                        s.to_dict() for s in settings(name) if s.path not in NOT_ON_THE_FORM
                    ],
                    "example": {"attacker": attacker, "defender": defender},
                    "syntax": SYNTAX.get(name, ""),
                    "exact": ruleset.solvable,
                    "step_unit": ruleset.step_unit,
                    "groups": group_words(ruleset),
                }
            )
        return JSONResponse(
            {
                "version": __version__,
                "rulesets": found,
                "defaults": {
                    "ruleset": DEFAULT_RULESET,
                    "battles": DEFAULT_BATTLES,
                    "seed": DEFAULT_SEED,
                    "max_battles": DEFAULT_MAX_BATTLES,
                },
                "max_seconds": calculator.max_seconds,
                "limits": {"scenario_bytes": MAX_SCENARIO_BYTES},
            }
        )

    async def check(request: Request) -> Response:
        """The question's scenario hash, address, TOML and command, or its error."""
        try:
            described = await calculator.read(
                _params(request), lambda q: _described(q, q.plan().battles)
            )
            return JSONResponse(described)
        except BattleOddsError as exc:
            return _error(_said(exc))
        except Exception as exc:  # a bug: one line here, the traceback on the terminal
            return _error(_internal(exc), 500)

    async def solve(request: Request) -> Response:
        """The exact answer beside the Monte Carlo one, or why there is none."""
        try:
            scenario = await calculator.read(_params(request), lambda q: q.scenario)
        except BattleOddsError as exc:
            return _error(_said(exc))
        except Exception as exc:
            return _error(_internal(exc), 500)
        if not rulesets.get(scenario.ruleset).solvable:
            return JSONResponse({"unavailable": f"no exact solver for {scenario.ruleset}"})

        def solved() -> dict[str, Any]:
            with calculator.lock:
                return exact_payload(exact(scenario, max_states=EXACT_STATES))

        try:
            return JSONResponse(await run_in_threadpool(solved))
        except BattleOddsError as exc:
            return JSONResponse({"unavailable": _one_line(_said(exc))})
        except Exception as exc:
            return _error(_internal(exc), 500)

    async def retreat(request: Request) -> Response:
        """The retreat panel: the best retreat rule of one side (:mod:`.retreat`)."""
        from .retreat import retreat_answer

        try:
            return JSONResponse(await retreat_answer(calculator, _params(request)))
        except BattleOddsError as exc:
            return _error(_said(exc))
        except Exception as exc:
            return _error(_internal(exc), 500)

    async def stop(request: Request) -> Response:
        run = calculator.runs.get(request.query_params.get("run", ""))
        if run is not None:
            run.set()
        return JSONResponse({"stopped": run is not None})

    async def ready(request: Request) -> Response:
        """Each ruleset's kernels: ready, or how far from it (the page says which)."""
        found = []
        for name in rulesets.available():
            state = calculator.readiness.get(name)
            if state is None:
                found.append({"name": name, "state": "later", "words": f"{name}: loads "
                              "at its first question"})  # fmt: skip
            else:
                found.append(state.to_dict())
        return JSONResponse({"rulesets": found})

    async def status(request: Request) -> Response:
        return JSONResponse(
            {
                "running": calculator.working,
                "questions": len(calculator.runs),
                "refused": calculator.refused,
            }
        )

    async def answer(request: Request) -> Response:
        def read(question: Question) -> tuple[Question, RunPlan, dict[str, Any]]:
            plan = question.plan()
            planned = plan.battles if plan.precision is None else None
            return question, plan, _described(question, planned)

        try:
            question, plan, described = await calculator.read(_params(request), read)
        except BattleOddsError as exc:
            return _stream_once("error", {"error": _one_line(_said(exc))})
        except Exception as exc:
            return _stream_once("error", {"error": _internal(exc)})
        # Nothing awaited since the question was counted as read: the run takes its place.
        run_id = uuid.uuid4().hex[:12]
        halt = threading.Event()
        calculator.runs[run_id] = halt
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        deadline = time.monotonic() + calculator.max_seconds
        planned = plan.battles if plan.precision is None else None

        def put(kind: str, data: dict[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, data))
            except RuntimeError:
                halt.set()  # the event loop is closed: the server has stopped

        def should_stop() -> bool:
            if queue.qsize() > UNREAD_LIMIT:
                halt.set()  # nobody reads the answer any more
            return halt.is_set() or calculator.stopping.is_set() or time.monotonic() > deadline

        def wait_for_kernels() -> bool:
            """Wait while the question's ruleset is loading, saying so once a second
            (False: the question was stopped meanwhile)."""
            nonlocal deadline
            state = calculator.readiness.get(question.scenario.ruleset)
            if state is None or state.ready.is_set():
                return True
            while not state.ready.wait(timeout=1.0):
                put("waiting", {"words": state.words()})
                if halt.is_set() or calculator.stopping.is_set():
                    return False
            deadline = time.monotonic() + calculator.max_seconds  # the limit is the battles'
            return True

        def compiling(function: Any) -> None:
            if threading.current_thread() is worker:
                notice = compile_notice(function, question.scenario.ruleset)
                notice = notice.removeprefix("battle-odds: ")
                put("waiting", {"words": notice})

        def work() -> None:
            with calculator.guard:
                calculator.working += 1
            clock = compile_clock()
            clock.on_start.append(compiling)
            try:
                if not wait_for_kernels():
                    put("error", {"error": "stopped while the ruleset's kernels loaded"})
                    return
                for last, final in stream_battles(
                    question.scenario,
                    plan,
                    stop=should_stop,
                    lock=calculator.lock,
                    executor=None if calculator.cluster is None else Cluster(calculator.cluster),
                ):
                    if not final:
                        put("progress", payload(last, running=True, planned=planned))
                answer = payload(last, running=False, planned=planned)
                if last.partial and last.n:
                    # The answer of the battles fought: its link, command and file ask
                    # exactly those (battle i of a seed is the same however the run ends).
                    fought = replace(question, battles=last.n, precision=None)
                    answer["described"] = _described(fought, last.n)
                if last.partial and time.monotonic() > deadline:
                    answer["notes"].append(
                        f"stopped at the server's limit of {calculator.max_seconds:g} s "
                        "a question (battle-odds serve --max-seconds)"
                    )
                if not last.partial and last.n:
                    put("progress", answer)  # the answer, while its steps are worked out
                    answer["unfolding"] = unfold(last)
                put("done", answer)
            except BattleOddsError as exc:
                put("error", {"error": _one_line(_said(exc))})
            except Exception as exc:
                put("error", {"error": _internal(exc)})
            finally:
                clock.on_start.remove(compiling)
                with calculator.guard:
                    calculator.working -= 1

        def unfold(last: Any) -> dict[str, Any]:
            """The state after each step over the answer's first battles (at most
            :data:`STEP_BATTLES`), within the question's time and its Stop."""
            unit = rulesets.get(question.scenario.ruleset).step_unit
            words = f"the battle as it unfolds: the state after each of the {unit}"
            put("waiting", {"words": words})
            try:
                steps = run_steps(
                    question.scenario,
                    None,
                    last.seed,
                    last.first,
                    min(last.n, STEP_BATTLES),
                    stop=should_stop,
                    lock=calculator.lock,
                )
            except BattleOddsError as exc:  # a ruleset that cannot say it
                return {"unavailable": _one_line(_said(exc))}
            shown = steps_payload(steps, last.n)
            if steps.partial and time.monotonic() > deadline:
                shown["notes"].append(
                    f"stopped at the server's limit of {calculator.max_seconds:g} s a question"
                )
            return shown

        worker = threading.Thread(target=work, name=f"question {run_id}", daemon=True)

        async def events() -> AsyncIterator[str]:
            try:
                worker.start()
                yield _event("start", {"run": run_id, **described})
                while True:
                    kind, data = await queue.get()
                    yield _event(kind, data)
                    if kind in ("done", "error"):
                        break
            finally:
                halt.set()
                calculator.runs.pop(run_id, None)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    routes = [
        Route("/", page),
        Route("/api/rulesets", offered),
        Route("/api/question", check),
        Route("/api/run", answer),
        Route("/api/exact", solve),
        Route("/api/retreat", retreat),
        Route("/api/stop", stop, methods=["POST"]),
        Route("/api/status", status),
        Route("/api/ready", ready),
        Route("/{name}", page),
    ]
    app = Guard(Starlette(routes=routes), token, cookie, calculator.count_refused)
    return LoopbackOnly(app) if loopback_only else app


def _described(question: Question, planned: int | None) -> dict[str, Any]:
    """What the page shows of a question before its numbers: its scenario and how to ask
    it elsewhere."""
    scenario = question.scenario
    plan = question.plan()
    return {
        "ruleset": scenario.ruleset,
        "scenario": scenario.name,
        "scenario_hash": scenario.hash,
        "seed": plan.seed,
        "planned": planned,
        "precision": plan.precision,
        "version": __version__,
        "address": question.address(),
        "toml": question.to_toml(),
        "command": question.command(),
        "exact": rulesets.get(scenario.ruleset).solvable,
    }


def _stream_once(kind: str, data: dict[str, Any]) -> Response:
    async def one() -> AsyncIterator[str]:
        yield _event(kind, data)

    return StreamingResponse(one(), media_type="text/event-stream")
