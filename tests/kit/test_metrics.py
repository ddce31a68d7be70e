"""``GET /metrics`` (SPEC 19): refused without ``KIT_METRICS_TOKEN``, per-tool, per-route and
per-page figures by outcome once a call is answered, the embedding queue and flagged rows
read from the database, nothing of any account in a label; and, through a real gunicorn
with two workers, every worker's counts added up by one scrape."""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kit import metrics
from tests import factories
from tests.factories import save_note
from tests.helpers import token as issue_token
from tests.live import LiveServer

SECRET = "metrics-" + "s" * 32
READY = {"ready": True, "checks": ["broker", "database", "migrations", "model"]}


@pytest.fixture
def metrics_on(settings):
    settings.KIT_METRICS_TOKEN = SECRET
    metrics.forget()  # the database's figures of an earlier test are not this one's
    yield
    metrics.forget()


def scrape(client) -> str:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {SECRET}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return response.content.decode()


def value(text: str, metric: str, /, **labels: str) -> float:
    """The sample ``metric`` with ``labels`` (0 when there is none yet)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == metric and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_without_the_setting_there_are_no_metrics(client, settings):
    settings.KIT_METRICS_TOKEN = ""
    response = client.get("/metrics")
    assert response.status_code == 404
    assert b"KIT_METRICS_TOKEN" in response.content


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {SECRET}", f"Bearer {SECRET}x"])
def test_a_scrape_without_the_token_is_refused(client, metrics_on, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"kit_" not in response.content


@pytest.mark.django_db
def test_a_tool_call_a_rest_call_and_a_page_are_counted_by_name_and_outcome(
    client, metrics_on, module_admin, admin_actor
):
    save_note(admin_actor, domain="acme.dev", body="Acme hires six AEs in Berlin.")
    token = issue_token(module_admin, client_name="Metered agent")
    before = scrape(client)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "outreach_recall_prospect_context", "arguments": {"domain": "acme.dev"}},
    }
    answered = client.post(
        "/mcp",
        json.dumps(call),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json",
    )
    assert answered.json()["result"]["isError"] is False
    refused = {**call, "params": {"name": call["params"]["name"], "arguments": {"domain": "x"}}}
    client.post(
        "/mcp",
        json.dumps(refused),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json",
    )
    rest = client.get(
        "/api/v1/recall", {"domain": "acme.dev"}, HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert rest.status_code == 200
    client.get("/api/v1/recall", HTTP_AUTHORIZATION=f"Bearer {token}")  # no domain: refused
    client.get("/healthz")
    after = scrape(client)

    def grew(metric: str, /, **labels: str) -> float:
        return value(after, metric, **labels) - value(before, metric, **labels)

    tool = "outreach_recall_prospect_context"
    assert grew("kit_requests_total", surface="mcp", name=tool, outcome="ok") == 1
    assert grew("kit_requests_total", surface="mcp", name=tool, outcome="refused") == 1
    assert grew("kit_requests_total", surface="rest", name="recall", outcome="ok") == 1
    assert grew("kit_requests_total", surface="rest", name="recall", outcome="refused") == 1
    assert grew("kit_requests_total", surface="page", name="healthz", outcome="ok") == 1
    assert grew("kit_request_seconds_count", surface="mcp", name=tool) == 2
    # Read from the database at the scrape: the note waits for its embedding or has one.
    assert value(after, "kit_embedding_rows", model="prospect_memory.note") >= 1
    assert "kit_integrity_flagged_rows" in after
    assert value(after, "kit_metrics_database_up") == 1
    # No label names an account, a member, a domain or a token.
    labels = " ".join(re.findall(r"\{[^}]*\}", after))
    for secret in ("acme-sales", "acme.dev", "admin@example.com", token):
        assert secret not in labels


@pytest.mark.django_db
def test_the_databases_figures_are_read_once_for_a_while(client, metrics_on, admin_actor, settings):
    """Counting every account's rows is a scan: a scrape reuses the last one's figures for
    ``KIT_METRICS_DATABASE_REUSE_SECONDS``, from Django's cache (shared when it is Redis),
    and says how old they are; ages and whether the database answers are this scrape's."""
    from prospect_memory.notes.models import Note

    save_note(admin_actor, domain="acme.dev", body="Acme hires six AEs in Berlin.")
    Note.objects.update(embedding_status="pending")  # the queue, waiting since the save
    first = scrape(client)
    rows = value(first, "kit_embedding_rows", model="prospect_memory.note")
    save_note(admin_actor, domain="globex.io", body="Globex opened an office in Lisbon.")
    time.sleep(0.05)
    again = scrape(client)
    assert value(again, "kit_embedding_rows", model="prospect_memory.note") == rows  # reused
    assert value(again, "kit_metrics_database_figures_age_seconds") > 0
    waited = "kit_embedding_pending_oldest_seconds"
    assert value(again, waited, model="prospect_memory.note") > value(
        first, waited, model="prospect_memory.note"
    )
    assert value(again, "kit_metrics_database_up") == 1
    settings.KIT_METRICS_DATABASE_REUSE_SECONDS = 0
    fresh = scrape(client)
    assert value(fresh, "kit_embedding_rows", model="prospect_memory.note") == rows + 1
    assert value(fresh, "kit_metrics_database_figures_age_seconds") < 1


@pytest.mark.django_db
@pytest.mark.parametrize("answers", ["refuses", "never answers"])
def test_a_cache_that_does_not_answer_costs_the_scrape_nothing(
    client, metrics_on, settings, answers
):
    """A Redis that refuses costs a scrape nothing; one that takes the connection and never
    answers costs it the socket timeout the settings give it (0.25 s), not a hang."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    if answers == "refuses":
        listener.close()
    try:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": f"redis://127.0.0.1:{port}/0",
                "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
            }
        }
        answered = []
        scraping = threading.Thread(target=lambda: answered.append(scrape(client)))
        scraping.start()
        scraping.join(timeout=20)
        assert not scraping.is_alive(), "the scrape waited on the cache"
        [text] = answered
        assert value(text, "kit_metrics_database_up") == 1
        assert "kit_embedding_rows" in text
    finally:
        listener.close()


@pytest.mark.django_db
def test_an_unknown_tool_or_method_is_named_as_such_not_by_what_was_sent(
    client, metrics_on, module_admin
):
    token = issue_token(module_admin, client_name="Metered agent")
    for method, params in [
        ("tools/call", {"name": "acme.dev-secret-tool", "arguments": {}}),
        ("acme.dev/made-up", {}),
    ]:
        client.post(
            "/mcp",
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
            HTTP_ACCEPT="application/json",
        )
    # A method that is not text is refused as a request (400), never a server error.
    shapeless = client.post(
        "/mcp",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": ["tools/call"]}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json",
    )
    assert shapeless.status_code == 400
    text = scrape(client)
    assert "acme.dev" not in text
    assert value(text, "kit_requests_total", surface="mcp", name="tools/call") >= 1
    assert value(text, "kit_requests_total", surface="mcp", name="other") >= 1


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_two_workers_counts_are_added_up_by_one_scrape(tmp_path):
    """gunicorn with two workers, each counting in its own file (prometheus-client's
    multiprocess mode): a scrape, whichever worker answers it, adds them all up."""
    from django.db import connection

    from kit.db import database_url

    folder = tmp_path / "metrics"
    folder.mkdir()
    server = LiveServer(
        database_url(connection.settings_dict),
        workers=2,
        extra_env={"KIT_METRICS_TOKEN": SECRET, "PROMETHEUS_MULTIPROC_DIR": str(folder)},
    )
    account = factories.account("metered")
    agent = issue_token(
        factories.member(account, "agent@metered.example", admin=True),
        client_name="Metered agent",
        base_url=server.url,
    )
    try:
        # One worker held by a request that has not finished arriving (a sync worker reads
        # it to the end), so the other answers the 40 that follow; then it arrives whole.
        # Each worker has counted, whichever the kernel gave the first connection to.
        held = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        held.sendall(b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.5)  # accepted by one worker, which now waits for the rest
        calls = 40
        for _ in range(calls):
            with urllib.request.urlopen(f"{server.url}/favicon.ico", timeout=10) as answer:  # noqa: S310
                assert answer.status == 200
        held.sendall(b"Connection: close\r\n\r\n")
        assert held.recv(64).startswith(b"HTTP/1.1 200")
        held.close()
        calls += 1
        for probe in ("healthz", "readyz"):
            with urllib.request.urlopen(f"{server.url}/{probe}", timeout=30) as answer:  # noqa: S310
                assert answer.status == 200
                assert json.loads(answer.read()) in ({"status": "ok"}, READY)
        tool = "outreach_recall_prospect_context"
        call = urllib.request.Request(  # noqa: S310
            f"{server.url}/mcp",
            data=json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": {"domain": "acme.dev"}},
                }
            ).encode(),
            headers={
                "Authorization": f"Bearer {agent}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        with urllib.request.urlopen(call, timeout=30) as answer:  # noqa: S310
            assert json.loads(answer.read())["result"]["isError"] is False
        request = urllib.request.Request(  # noqa: S310
            f"{server.url}/metrics", headers={"Authorization": f"Bearer {SECRET}"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            text = answer.read().decode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{server.url}/metrics", timeout=10)  # noqa: S310
        assert refused.value.code == 401
    finally:
        server.stop()
    counted = value(text, "kit_requests_total", surface="page", name="favicon", outcome="ok")
    assert counted == calls
    assert value(text, "kit_requests_total", surface="mcp", name=tool, outcome="ok") == 1
    assert value(text, "kit_request_seconds_count", surface="mcp", name=tool) == 1
    workers = {path.name.split("_")[-1] for path in folder.glob("counter_*.db")}
    assert len(workers) == 2, sorted(path.name for path in folder.iterdir())
    # What each worker counted, read from its own file: the scrape added the two.
    from prometheus_client.multiprocess import MultiProcessCollector

    each = []
    for path in folder.glob("counter_*.db"):
        for family in MultiProcessCollector.merge([str(path)], accumulate=True):
            each += [
                sample.value
                for sample in family.samples
                if sample.name == "kit_requests_total"
                and sample.labels == {"surface": "page", "name": "favicon", "outcome": "ok"}
            ]
    assert sorted(each) == [1, 40]


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_losing_the_metrics_folder_costs_no_answer(tmp_path):
    """Counting never costs an answer: with the workers' metrics folder removed while the
    server runs, every request is still answered, and a worker that replaces one (after
    ``--max-requests``) still boots."""
    import shutil

    from django.db import connection

    from kit.db import database_url

    folder = tmp_path / "metrics"
    folder.mkdir()
    server = LiveServer(
        database_url(connection.settings_dict),
        workers=1,
        extra_env={"PROMETHEUS_MULTIPROC_DIR": str(folder)},
        gunicorn_args=("--max-requests", "5", "--access-logfile", "-"),
    )
    try:
        shutil.rmtree(folder)
        statuses = []
        for _ in range(20):
            with urllib.request.urlopen(f"{server.url}/favicon.ico", timeout=30) as answer:  # noqa: S310
                statuses.append(answer.status)
        assert statuses == [200] * 20
        assert server.process.poll() is None, server.log.read_text()[-3000:]
    finally:
        server.stop()


@pytest.mark.live
def test_a_scrape_while_the_database_is_down_still_gives_the_counts():
    """The counts matter most when the database is down: the scrape answers with them, and
    says the database did not answer (``kit_metrics_database_up 0``), not a 500."""
    server = LiveServer(
        "postgres://postgres@127.0.0.1:1/kit",  # nothing listens there
        workers=1,
        extra_env={"KIT_METRICS_TOKEN": SECRET},
    )
    try:
        with urllib.request.urlopen(f"{server.url}/favicon.ico", timeout=30) as answer:  # noqa: S310
            assert answer.status == 200
        request = urllib.request.Request(  # noqa: S310
            f"{server.url}/metrics", headers={"Authorization": f"Bearer {SECRET}"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            assert answer.status == 200
            text = answer.read().decode()
    finally:
        server.stop()
    assert value(text, "kit_metrics_database_up") == 0
    assert value(text, "kit_requests_total", surface="page", name="favicon", outcome="ok") == 1
    assert "kit_embedding_pending_rows" not in text


@pytest.mark.django_db
def test_the_time_a_worker_spends_after_answering_is_counted(client, metrics_on):
    """Work a request leaves for after its answer (an embedding) is not in the request's
    latency: it has a histogram of its own."""
    from outreach import after_answer

    before = scrape(client)
    after_answer.collect()
    after_answer.defer(lambda: time.sleep(0.01))
    after_answer.answered()
    after_answer.run_collected()
    after = scrape(client)
    grew = value(after, "kit_after_answer_seconds_count") - value(
        before, "kit_after_answer_seconds_count"
    )
    assert grew == 1
    spent = value(after, "kit_after_answer_seconds_sum") - value(
        before, "kit_after_answer_seconds_sum"
    )
    assert spent >= 0.01
