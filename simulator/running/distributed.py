"""Chunks of battles on a Dask cluster.

A chunk is (scenario data, seed, first battle, count); a worker rebuilds the scenario,
runs the kernel and sends back the chunk's mergeable :class:`~simulator.results.stats.Tally`,
never its rows. Battle i of seed s is the same battle on any worker, so a chunk re-run
after a worker is lost gives the same statistics, and the merged result equals a
local run with the same seed, bit for bit (the merge adds integer histograms, so its
order does not matter).

``--scheduler tcp://host:8786`` connects to a running cluster; ``--scheduler local:N``
starts a cluster of N worker processes on this machine (loopback only).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from ..errors import BattleOddsError, Source
from ..results.stats import Tally

#: Times a chunk is retried after the worker running it is lost.
RETRIES = 5
_LOCAL = re.compile(r"^local:(\d+)$")


@lru_cache(maxsize=8)
def _prepared(ruleset: str, canonical: str) -> Any:
    """A worker prepares each scenario once, however many of its chunks it runs."""
    import json

    from .. import rulesets
    from ..scenario.scenario import from_data

    scenario = from_data(json.loads(canonical), Source("distributed"))
    return rulesets.get(ruleset).prepare(scenario.model)


def chunk_tally(
    ruleset: str, canonical: str, seed: int, first: int, count: int, threads: int | None
) -> Tally:
    """Runs on a worker: the statistics of battles ``first .. first+count-1``."""
    from .runner import thread_count

    prepared = _prepared(ruleset, canonical)
    with thread_count(threads):
        return Tally.of(prepared.run(seed, first, count))


@contextmanager
def connect(scheduler: str) -> Iterator[Any]:
    """A Dask client for ``tcp://host:port`` or a new local cluster for ``local:N``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # the [distributed] extra is optional for single-machine users
        raise BattleOddsError(
            f'--scheduler {scheduler}: Dask is not installed: pip install -e ".[distributed]"'
        ) from None
    local = _LOCAL.match(scheduler)
    if local:
        workers = int(local.group(1))
        if not 1 <= workers <= 64:
            raise BattleOddsError(f"--scheduler {scheduler}: expected local:N with N in 1..64")
        # Loopback only; the scheduler's HTTP endpoint takes any free port rather than
        # 8787, which another cluster on the machine may hold.
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    if not re.match(r"^(tcp|tls|inproc|ucx)://", scheduler):
        raise BattleOddsError(f"--scheduler {scheduler}: expected tcp://HOST:PORT or local:N")
    try:
        client = Client(scheduler, timeout="10s")
    except OSError as exc:
        raise BattleOddsError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
    try:
        yield client
    finally:
        client.close()


@contextmanager
def executor_for(scheduler: str | None) -> Iterator[DaskChunks | None]:
    """The chunk executor for ``--scheduler`` (None: run in this process)."""
    if scheduler is None:
        yield None
        return
    with connect(scheduler) as client:
        yield DaskChunks(client)


class DaskChunks:
    """Runs chunks as Dask futures and yields (first, count, tally) as they finish."""

    def __init__(self, client: Any, threads: int | None = 1) -> None:
        self.client = client
        self.threads = threads

    def __call__(
        self, ruleset: str, canonical: str, seed: int, chunks: list[tuple[int, int]]
    ) -> Iterator[tuple[int, int, Tally]]:
        from distributed import as_completed

        from ..scenario.scenario import content_hash

        scenario_hash = content_hash(canonical)
        # Keys name the run too: the chunks of two runs of one scenario and seed (a warm-up
        # and the run, a notebook cell run twice) are alike, and cancelling the first run's
        # futures at its end would cancel the second's under the same key.
        run = uuid.uuid4().hex[:8]
        futures = {}
        for first, count in chunks:
            future = self.client.submit(
                chunk_tally,
                ruleset,
                canonical,
                seed,
                first,
                count,
                self.threads,
                key=f"battle-odds-{scenario_hash}-{seed}-{first}-{count}-{run}",
                retries=RETRIES,
                pure=False,
            )
            futures[future] = (first, count)
        try:
            for future in as_completed(futures):
                first, count = futures[future]
                yield first, count, future.result()
        finally:
            for future in futures:
                future.cancel()
