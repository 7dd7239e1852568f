"""``battle-odds serve``: the calculator page and its server (docs/serve.md).

A front end beside :mod:`simulator.cli`, calling the same functions: the one-line armies
and settings become a scenario as ``odds`` builds it (:mod:`.question`), battles run in
:func:`simulator.running.stream.stream_battles`, and the page gets the result's numbers
in the reports' words (:mod:`.answer`). :mod:`.app` is the Starlette application,
:mod:`.server` starts it on uvicorn; the page (``page/``) is plain HTML, CSS and
JavaScript, with no build step and nothing fetched from elsewhere.
"""
