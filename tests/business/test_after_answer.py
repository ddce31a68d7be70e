"""Without a broker, a business store answers before its vector: the request's own worker
embeds the entry once the answer is written (``outreach.after_answer``)."""

import io
import json
import os

import httpx2
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

from outreach import after_answer
from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from tests.fakes.gemini import API_KEY, FakeGemini
from tests.helpers import token as issue_token
from tests.helpers import wait_for
from tests.live import LiveServer


@pytest.fixture
def gemini(gemini, settings):
    """The fake Gemini API with a time budget and timeout no loaded machine misses: these
    tests are about when a vector is made, not how fast (a 1 s budget made a store outside
    a request leave its entry pending while the suite ran beside other work)."""
    memory = settings.PROSPECT_MEMORY
    settings.PROSPECT_MEMORY = {
        **memory,
        "EMBEDDING_OPTIONS": {**memory["EMBEDDING_OPTIONS"], "timeout": 30.0},
        "EMBED_TIME_BUDGET_SECONDS": 30.0,
    }
    return gemini


def status(key: str) -> str:
    return Entry.objects.get(key=key).embedding_status


def wsgi_store(token: str, key: str, value):
    """A REST store through Kit's WSGI application, as a server calls it: the response,
    not yet closed (the server closes it once it has written it)."""
    body = json.dumps({"key": key, "value": value}).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/v1/business-memory/entries",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
    }
    statuses = []
    response = WSGIHandler()(environ, lambda status, headers: statuses.append(status))
    content = b"".join(response)
    assert statuses[0].startswith("201"), content
    return response, json.loads(content)


@pytest.mark.django_db(transaction=True)  # the embedding is scheduled at the commit
def test_a_store_is_embedded_once_its_answer_is_written(module_admin, gemini):
    token = issue_token(module_admin)
    response, answer = wsgi_store(token, "voice:tone", "warm and direct")
    assert answer["data"]["created"] is True
    # The answer is written; the provider has not been asked, and nothing more collects.
    assert status("voice:tone") == "pending"
    assert not gemini.requests
    assert not after_answer.available()
    response.close()  # as the server does once it has written the answer
    assert status("voice:tone") == "ready"
    assert len(gemini.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_a_response_never_closed_leaves_nothing_collecting(module_admin, gemini):
    token = issue_token(module_admin)
    wsgi_store(token, "voice:tone", "warm and direct")  # never closed
    assert not after_answer.available()
    # Outside a request a store waits for its vector, as before; the lost work is the
    # backfill's.
    from outreach.access import Actor

    entry_store(actor=Actor.for_member(module_admin), key="voice:pace", value="brisk")
    assert status("voice:pace") == "ready"
    assert status("voice:tone") == "pending"


@pytest.mark.django_db
def test_outside_a_request_a_store_still_waits_for_its_vector(admin_actor, gemini):
    assert not after_answer.available()
    entry_store(actor=admin_actor, key="voice:tone", value="warm and direct")
    assert status("voice:tone") == "ready"


@pytest.mark.django_db
def test_work_left_for_after_the_answer_runs_each_job_even_if_one_fails(caplog):
    done = []
    after_answer.collect()
    after_answer.defer(lambda: done.append(1))
    after_answer.defer(lambda: 1 / 0)
    after_answer.defer(lambda: done.append(3))
    after_answer.answered()
    assert done == []
    after_answer.run_collected()
    assert done == [1, 3]
    assert "work left for after an answer failed" in caplog.text
    assert not after_answer.available()
    after_answer.defer(lambda: done.append(4))  # no request: at once
    assert done == [1, 3, 4]


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_over_http_the_answer_comes_before_the_vector(module_admin):
    """A real server, no broker, a provider that takes half a second: when the caller has
    its answer the entry is still pending; the same worker embeds it moments later."""
    from kit.db import database_url

    gemini = FakeGemini().start()
    gemini.delay = 0.5  # well inside the 2 s budget, with a first call's imports
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kit.settings",
        "DATABASE_URL": database_url(connection.settings_dict),
        "CELERY_BROKER_URL": "",
        "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.GeminiProvider",
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini.url,
        "LOG_LEVEL": "WARNING",
    }
    server = LiveServer(env["DATABASE_URL"], extra_env=env)
    try:
        token = issue_token(module_admin, base_url=server.url)
        answer = httpx2.post(
            f"{server.url}/api/v1/business-memory/entries",
            json={"key": "voice:tone", "value": "warm and direct"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code == 201, answer.text
        assert status("voice:tone") == "pending"
        wait_for(lambda: status("voice:tone") == "ready", 30, "the worker's vector")
        assert Entry.objects.get(key="voice:tone").embedding_model.startswith("gemini")
    finally:
        server.stop()
        gemini.stop()


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_work_opened_does_not_outlive_its_request():
    """Django judges a request's connections when it finishes, before this work runs; the
    work's own are judged after it, the same way (here: past ``CONN_MAX_AGE``)."""
    import time

    def work():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        connection.close_at = time.monotonic() - 1  # as with CONN_MAX_AGE = 0

    after_answer.collect()
    after_answer.defer(work)
    after_answer.answered()
    after_answer.run_collected()
    assert connection.connection is None
