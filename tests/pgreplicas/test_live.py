"""A real Kit server (gunicorn, two workers) with a real streaming replica, through HTTP:
recalls served by the replica and counted in ``/metrics``; an agent reading its own saves
while the replica's replay is paused; and a replica that lags, then stops, under a stream
of reads that all succeed."""

import json
import time
import urllib.error
import urllib.request

import pytest

from kit.db import database_url
from tests import factories
from tests.helpers import token as issue_token
from tests.kit.test_metrics import value
from tests.live import LiveServer
from tests.pgreplicas.conftest import ALIAS, Paused, caught_up

SECRET = "metrics-token-for-the-replica-tests"
TODAY = time.strftime("%Y-%m-%d")


def _serve(standby, max_lag):
    from django.db import connection

    if not (standby.pgdata / "postmaster.pid").exists():
        standby.start()
    return LiveServer(
        database_url(connection.settings_dict),
        workers=2,
        extra_env={
            "DATABASE_REPLICA_URLS": database_url(standby.settings()),
            "DATABASE_REPLICA_MAX_LAG_SECONDS": str(max_lag),
            "DATABASE_REPLICA_RETRY_SECONDS": "0.5",
            "KIT_METRICS_TOKEN": SECRET,
        },
    )


@pytest.fixture(params=[30], ids=["patient"])
def kit(request, standby, transactional_db):
    """Kit on two workers reading from the standby; a lag of ``param`` seconds is skipped
    (30: only read-your-writes decides; 1: a paused replay soon counts as lagging)."""
    server = _serve(standby, request.param)
    yield server
    server.stop()
    with standby.connect() as admin:
        admin.execute("SELECT pg_wal_replay_resume()")


class Agent:
    def __init__(self, server, member):
        self.url = server.url
        self.token = issue_token(member, client_name="Replica agent", base_url=server.url)

    def _call(self, method, path, body=None):
        request = urllib.request.Request(  # noqa: S310
            f"{self.url}{path}",
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            return json.loads(answer.read())["data"]

    def save(self, body):
        return self._call(
            "POST",
            "/api/v1/notes",
            {
                "domain": "acme.dev",
                "body": body,
                "source_urls": ["https://acme.dev/news"],
                "observed_at": TODAY,
            },
        )

    def recall(self):
        return [n["body"] for n in self._call("GET", "/api/v1/recall?domain=acme.dev")["notes"]]


def scraped(server) -> str:
    request = urllib.request.Request(  # noqa: S310
        f"{server.url}/metrics", headers={"Authorization": f"Bearer {SECRET}"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
        return answer.read().decode()


def test_an_agent_reads_its_own_writes_from_a_paused_replica_over_http(kit, standby):
    account = factories.account("replicated")
    writer = Agent(kit, factories.member(account, "writer@replicated.example", admin=True))
    reader = Agent(kit, factories.member(account, "reader@replicated.example", admin=True))
    writer.save("Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(standby)
    for _ in range(4):  # either worker: each reads from the replica
        assert reader.recall() == ["Acme raised a Series B of 40M led by Example Ventures."]
    with Paused(standby):
        writer.save("Acme opened an office in Berlin in 2026.")
        for _ in range(4):  # whichever worker answers, the writer sees the write
            assert "Acme opened an office in Berlin in 2026." in writer.recall()
        stale = reader.recall()
    assert stale == ["Acme raised a Series B of 40M led by Example Ventures."]
    text = scraped(kit)
    assert value(text, "kit_database_reads_total", database=ALIAS) >= 5
    assert value(text, "kit_database_reads_total", database="default") >= 4
    assert value(text, "kit_replica_skips_total", database=ALIAS, reason="behind") >= 4
    assert "kit_replica_lag_seconds" in text


@pytest.mark.parametrize("kit", [1], indirect=True, ids=["impatient"])
def test_a_lagging_then_stopped_replica_fails_no_request(kit, standby):
    account = factories.account("replicated")
    writer = Agent(kit, factories.member(account, "writer@replicated.example", admin=True))
    reader = Agent(kit, factories.member(account, "reader@replicated.example", admin=True))
    writer.save("Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(standby)
    answers, failures = [], []

    def reads(seconds):
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            try:
                answers.append(len(reader.recall()))
            except (urllib.error.URLError, OSError) as error:  # pragma: no cover - counted
                failures.append(error)

    reads(0.5)
    with Paused(standby):
        writer.save("Acme opened an office in Berlin in 2026.")
        reads(2.0)  # past DATABASE_REPLICA_MAX_LAG_SECONDS: the primary answers
        assert answers[-1] == 2
    standby.stop()
    try:
        writer.save("Acme hired a VP of Sales in 2026.")
        reads(2.0)
    finally:
        standby.start()
    assert failures == []
    assert answers[-1] == 3
    text = scraped(kit)
    assert value(text, "kit_replica_skips_total", database=ALIAS, reason="lagging") >= 1
    assert value(text, "kit_replica_skips_total", database=ALIAS, reason="down") >= 1
