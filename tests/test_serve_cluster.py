"""``battle-odds serve --scheduler``: a page whose questions' battles run on a Dask
cluster (a team's: here a scheduler and two worker processes this test starts on
127.0.0.1, reached at its ``tcp://`` address), with the same numbers as ``battle-odds
odds`` on the same seed; a stopped question stops its chunks."""

from __future__ import annotations

import shlex
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette")
pytest.importorskip("distributed")

from .serving import odds_json, refused, serving


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        ) as local,
        Client(local) as client,
    ):
        yield local.scheduler_address, client


ARMIES = {"attacker": "noble, 12 soldier, 4 archer@1", "defender": "noble, 14 pikeman"}


@pytest.fixture(scope="module")
def server(cluster):
    yield from serving("--scheduler", cluster[0])


def _chunks_run(client) -> int:
    """Battle chunks the cluster's scheduler has seen (its tasks named battle-odds-...)."""

    def count(dask_scheduler) -> int:
        prefix = dask_scheduler.task_prefixes.get("battle-odds")
        return 0 if prefix is None else sum(prefix.state_counts.values())

    return client.run_on_scheduler(count)


# Slow tier (docs/testing.md): 5.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_question_runs_on_the_cluster_with_odds_numbers(server, cluster):
    before = _chunks_run(cluster[1])
    events = list(server.events(urlencode({**ARMIES, "seed": "5", "battles": "300000"})))
    start, done = events[0][1], events[-1][1]
    assert events[-1][0] == "done", events[-1]
    cli = odds_json(*shlex.split(start["command"])[2:])
    assert done["battles"] == cli["battles"] == 300_000
    assert {w["outcome"]: w["p"] for w in done["win"]} == {o: v["p"] for o, v in cli["win"].items()}
    assert _chunks_run(cluster[1]) > before  # its battles ran on the cluster


# Slow tier: a page served with a Dask cluster, end to end (6.4 s quiet on a fresh
# clone, the server's warming loading every olympia kernel as it starts); the page's stop
# (tests/test_serve.py) and the cluster's runs (tests/test_scale.py) keep first-tier checks.
@pytest.mark.slow
def test_a_stopped_question_on_the_cluster_ends_partial(server):
    events = server.events(urlencode({**ARMIES, "battles": str(10**10)}))
    kind, start = next(events)
    assert kind == "start"
    assert next(events)[0] == "progress"
    assert server.post(f"/api/stop?run={start['run']}") == {"stopped": True}
    done = [data for kind, data in events if kind == "done"][-1]
    assert done["partial"] and 0 < done["battles"] < 10**10
    assert server.running() == 0


# Slow tier (docs/testing.md): 3.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_scheduler_that_is_not_one_is_a_one_line_error():
    line = refused("--scheduler", "nowhere")
    assert line.startswith("error: --scheduler nowhere: expected tcp://HOST:PORT")
