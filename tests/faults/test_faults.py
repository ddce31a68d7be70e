"""Faults while Kit serves: the database connection dropped, a worker killed mid-task, the
broker restarted. Nothing acknowledged is lost, errors are clear, Kit recovers by itself.
(Provider outages, slowness, 429 and garbage are in tests/notes and tests/core.)
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from django.db import connection

from prospect_memory.notes.models import Note
from tests.fakes.gemini import API_KEY, FakeGemini
from tests.helpers import token as issue_token
from tests.helpers import wait_for
from tests.live import ROOT, LiveServer, free_port

pytestmark = pytest.mark.django_db(transaction=True)


def token_for(member, base_url):
    return issue_token(member, client_name="Fault agent", base_url=base_url)


def save_over_http(base, token, marker):
    return httpx2.post(
        f"{base}/api/v1/notes",
        json={
            "domain": "acme.dev",
            "body": f"Fault finding {marker}.",
            "source_urls": [f"https://acme.dev/{marker}"],
            "observed_at": "2026-11-20",
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def dropping_connections_during(traffic, stop: threading.Event) -> None:
    """``traffic`` on a thread of its own while every other connection to the test database
    is dropped eight times, 0.25 s apart; then ``stop`` is set and the thread waited for."""
    thread = threading.Thread(target=traffic)
    thread.start()
    with connection.cursor() as cursor:
        for _ in range(8):
            time.sleep(0.25)
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = current_database()"
            )
    stop.set()
    thread.join(60)


def test_database_connections_dropped_mid_traffic(live_kit, module_admin):
    token = token_for(module_admin, live_kit.url)
    answers, stop = [], threading.Event()

    def traffic():
        with httpx2.Client(timeout=30) as http:
            i = 0
            while not stop.is_set():
                i += 1
                if i % 2:
                    response = http.get(
                        f"{live_kit.url}/api/v1/recall?domain=acme.dev",
                        headers={"Authorization": f"Bearer {token}"},
                    )
                else:
                    response = save_over_http(live_kit.url, token, f"t{i}")
                answers.append((response.status_code, response.text, i))

    dropping_connections_during(traffic, stop)
    assert answers
    from collections import Counter

    print("answers while connections were dropped:", Counter(s for s, _, _ in answers))
    statuses = {status for status, _, _ in answers}
    assert statuses <= {200, 201, 409, 429, 503}, statuses
    for status, text, _ in answers:
        if status == 503:
            assert json.loads(text)["error"]["code"] == "service_unavailable"
        if status == 409:  # a fast machine fills the domain's 50 notes: the rule, not a fault
            assert json.loads(text)["error"]["code"] == "domain_note_limit_reached"
        if status == 429:  # and then passes the client's writes a minute: the rule too
            assert json.loads(text)["error"]["code"] == "rate_limited"
    acknowledged = {f"t{i}" for status, _, i in answers if status == 201}
    stored = {n.body.split()[2].rstrip(".") for n in Note.objects.all()}
    assert acknowledged <= stored  # every acknowledged save is there
    # And it recovers by itself.
    for _ in range(5):
        ok = httpx2.get(
            f"{live_kit.url}/api/v1/recall?domain=acme.dev",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert ok.status_code == 200


def test_database_connections_dropped_mid_tool_calls(live_kit, module_admin):
    """Over MCP as over REST: a tool call that loses the database answers 503
    service_unavailable (retry), never a JSON-RPC internal error."""
    token = token_for(module_admin, live_kit.url)
    answers, stop = [], threading.Event()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "outreach_recall_prospect_context", "arguments": {"domain": "acme.dev"}},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }

    def traffic():
        with httpx2.Client(timeout=30) as http:
            while not stop.is_set():
                response = http.post(f"{live_kit.url}/mcp", json=call, headers=headers)
                answers.append((response.status_code, response.text))

    dropping_connections_during(traffic, stop)
    assert answers
    for status, text in answers:
        if status == 503:
            assert json.loads(text)["error"]["code"] == "service_unavailable"
        else:
            assert status == 200, (status, text[:300])
            assert "result" in json.loads(text), text[:300]


def _redis_server():
    return shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).exists()), None
    )


class Redis:
    def __init__(self):
        self.port = free_port()
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [
                _redis_server(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._up, 10, "redis")

    def _up(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self):
        self.process.kill()
        self.process.wait(10)

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}/0"


def _worker(env):
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "kit",
            "worker",
            "-P",
            "solo",
            "-c",
            "1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _send(env, task):
    subprocess.run(
        [sys.executable, "-m", "celery", "-A", "kit", "call", task],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def stack(module_admin):
    """Redis of its own, a fake Gemini, a live Kit and a worker, all wired together."""
    if not _redis_server():
        pytest.skip("redis-server is not installed")
    from kit.db import database_url

    redis, gemini = Redis(), FakeGemini().start()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kit.settings",
        "DATABASE_URL": database_url(connection.settings_dict),
        "CELERY_BROKER_URL": redis.url,
        "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.GeminiProvider",
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini.url,
        # A business store embeds before it answers: the faults here are the broker's,
        # the workers' and the provider's, with one task of each kind in the queue.
        "BUSINESS_MEMORY_EMBED_AFTER_ANSWER": "false",
        "LOG_LEVEL": "WARNING",
    }
    server = LiveServer(env["DATABASE_URL"], extra_env=env)
    parts = {"redis": redis, "gemini": gemini, "server": server, "env": env, "workers": []}
    yield parts
    for worker in parts["workers"]:
        worker.kill()
    server.stop()
    gemini.stop()
    redis.stop()


def pending(ids):
    return set(Note.objects.filter(id__in=ids).values_list("embedding_status", flat=True))


def test_worker_killed_mid_task_loses_nothing(stack, module_admin):
    server, gemini, env = stack["server"], stack["gemini"], stack["env"]
    token = token_for(module_admin, server.url)
    gemini.mode = "503"
    ids = [
        save_over_http(server.url, token, f"w{i}").json()["data"]["note"]["id"] for i in range(3)
    ]
    assert pending(ids) == {"pending"}
    gemini.mode, gemini.delay = "ok", 30.0  # the worker will hang inside the provider call
    calls_before = len(gemini.requests)
    worker = _worker(env)
    stack["workers"].append(worker)
    wait_for(lambda: len(gemini.requests) > calls_before, 60, "the worker to start a task")
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)
    assert pending(ids) == {"pending"}  # nothing lost, nothing half-written
    gemini.delay = 0.0
    stack["workers"].append(_worker(env))
    _send(env, "prospect_memory.tasks.backfill_embeddings")
    wait_for(lambda: pending(ids) == {"ready"}, 90, "the backfill after the crash")


def test_broker_restart_does_not_break_saves_and_embeddings_catch_up(stack, module_admin):
    server, gemini, env, redis = stack["server"], stack["gemini"], stack["env"], stack["redis"]
    token = token_for(module_admin, server.url)
    stack["workers"].append(_worker(env))
    gemini.mode = "503"
    redis.stop()
    # The broker is gone: saves still succeed (the embedding waits for the backfill).
    response = save_over_http(server.url, token, "r1")
    assert response.status_code == 201
    note_id = response.json()["data"]["note"]["id"]
    assert pending([note_id]) == {"pending"}
    redis.start()
    gemini.mode = "ok"
    second = save_over_http(server.url, token, "r2").json()["data"]["note"]["id"]
    _send(env, "prospect_memory.tasks.backfill_embeddings")
    wait_for(lambda: pending([note_id, second]) == {"ready"}, 90, "embeddings after the restart")


def test_worker_killed_mid_promotion_the_write_stands_and_the_backfill_promotes(
    stack, module_admin
):
    """SPEC 13: promotion is fire-and-forget. The worker is killed while it promotes (held
    on the entry's row lock); the write already stood, and the backfill promotes it."""
    import psycopg

    from prospect_memory.business.models import Entry, Promotion
    from prospect_memory.business.services.promotion import promotion_lag

    server, env = stack["server"], stack["env"]
    token = token_for(module_admin, server.url)
    response = httpx2.post(  # no worker yet: the promotion waits in the broker
        f"{server.url}/api/v1/business-memory/entries",
        json={"key": "pattern:ae_hiring", "value": {"signal": "hiring AEs"}, "confidence": 85},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.content
    entry = Entry.objects.get(key="pattern:ae_hiring")
    # Embedded with the write (the stack's stores wait for their vector): the one task
    # waiting in the broker is the promotion.
    assert entry.embedding_status == "ready"
    where = connection.settings_dict
    with psycopg.connect(
        host=where["HOST"],
        port=where["PORT"] or 5432,
        user=where["USER"],
        password=where["PASSWORD"] or None,
        dbname=where["NAME"],
    ) as holder:
        holder.execute(
            f"SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s FOR UPDATE",  # noqa: S608
            [entry.pk],
        )
        worker = _worker(env)
        stack["workers"].append(worker)

        def promotion_waits():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'SELECT %%business_memory_entry%%'"
                )
                return cursor.fetchone()[0] > 0

        wait_for(promotion_waits, 60, "the worker to take the promotion")
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        holder.rollback()
    assert not Promotion.objects.filter(entry=entry).exists()
    assert promotion_lag(account=entry.account).waiting == 1
    stack["workers"].append(_worker(env))
    # The killed worker had taken the task (acks_late, unacknowledged): Redis hands it out
    # again only after the broker's visibility_timeout (an hour), so nothing but the
    # backfill can promote the entry now.
    time.sleep(3)
    assert not Promotion.objects.filter(entry=entry).exists()
    _send(env, "prospect_memory.business.tasks.backfill_promotions")
    wait_for(lambda: Promotion.objects.filter(entry=entry).exists(), 90, "the backfill")
    assert promotion_lag(account=entry.account).waiting == 0
