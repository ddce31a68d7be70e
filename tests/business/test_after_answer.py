"""Without a broker, a business store answers before its vector: the request's own worker
embeds the entry once the answer is written (``outreach.after_answer``)."""

import json
import os

import httpx2
import pytest
from django.db import connection
from django.test import Client

from outreach import after_answer
from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from tests.fakes.gemini import API_KEY, FakeGemini
from tests.helpers import token as issue_token
from tests.helpers import wait_for
from tests.live import LiveServer


def status(key: str) -> str:
    return Entry.objects.get(key=key).embedding_status


def store_over(client: Client, token: str, key: str, value) -> dict:
    response = client.post(
        "/api/v1/business-memory/entries",
        json.dumps({"key": key, "value": value}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.mark.django_db(transaction=True)  # the embedding is scheduled at the commit
def test_a_store_asks_the_provider_once_its_answer_is_written(module_admin, gemini):
    token = issue_token(module_admin)
    requests_before = len(gemini.requests)
    answer = store_over(Client(), token, "voice:tone", "warm and direct")
    assert answer["data"]["created"] is True
    # The test client closes the response as a server does once it has written it: the
    # worker's embedding ran then, one request to the provider.
    assert status("voice:tone") == "ready"
    assert len(gemini.requests) == requests_before + 1


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
    """A real server, no broker, a provider that takes a second: when the caller has its
    answer the entry is still pending; the same worker embeds it moments later."""
    from kit.db import database_url

    gemini = FakeGemini().start()
    gemini.delay = 1.0  # inside the 2 s budget
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
