"""``battle-odds serve``: the calculator page, served from this machine (docs/serve.md).

The server (:mod:`simulator.serve`) needs the optional ``serve`` extra (Starlette and
uvicorn); it is imported when the command runs, so the other commands start without it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import rulesets
from ..errors import BattleOddsError
from .app import app
from .options import user_errors

#: The port unless told otherwise: no common development server's default.
DEFAULT_PORT = 8765


@app.command()
@user_errors
def serve(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on; another than 127.0.0.1 opens it to others."),
    ] = "127.0.0.1",
    open_page: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
    warm: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated rulesets whose kernels load at start (default: all; "
            "the others load at their first question)."
        ),
    ] = None,
    max_seconds: Annotated[
        float,
        typer.Option(
            help="Longest a question may run, in seconds (at least 0.1); then it stops "
            "with the answer so far."
        ),
    ] = 300.0,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Run the questions' battles on a Dask cluster: tcp://HOST:PORT (a team's "
            "shared page: with --host, the address printed carries the secret to share), "
            "or local:N for N local workers."
        ),
    ] = None,
) -> None:
    """A calculator page: armies in, odds while the battles run, a link that reproduces them."""
    try:
        from ..serve.server import serve as run_server
    except ImportError as exc:
        raise BattleOddsError(
            f"battle-odds serve needs the 'serve' extra ({exc.name} is not installed): "
            'pip install -e ".[serve]"'
        ) from None
    from ..serve.server import check_max_seconds

    check_max_seconds(max_seconds)
    names = None
    if warm is not None:
        names = tuple(n.strip() for n in warm.split(",") if n.strip())
        for name in names:
            rulesets.get(name, "--warm")
    run_server(host, port, open_page, names, max_seconds, scheduler)
