"""``GET /healthz`` and ``GET /readyz`` (SPEC 19): liveness asks nothing of anything else;
readiness says, without signing in and with nothing of any account, what is not ready."""

from __future__ import annotations

import pytest

from kit import readiness

READY = {"ready": True, "checks": ["broker", "database", "migrations", "model"]}


@pytest.fixture(autouse=True)
def fresh_checks():
    """Each test checks anew (a process reuses its last round for a few seconds)."""
    readiness.forget()
    yield
    readiness.forget()


def test_liveness_asks_nothing_of_the_database(client, db, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.django_db
def test_a_ready_process_says_so(client):
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (200, READY)
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_a_broker_that_does_not_answer_is_named(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["ready"] is False
    assert set(body["not_ready"]) == {"broker"}
    assert "does not answer" in body["not_ready"]["broker"]


@pytest.mark.django_db
def test_a_model_that_cannot_load_is_named(client, settings):
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        "EMBEDDING_OPTIONS": {"model": "no-such-model"},
    }
    response = client.get("/readyz")
    assert response.status_code == 503
    problems = response.json()["not_ready"]
    assert set(problems) == {"model"}
    assert problems["model"].startswith("the embedding model is not loaded (")
    assert "/" not in problems["model"]  # the files it names are for the log, not the probe


@pytest.mark.django_db
def test_a_process_checks_at_most_once_in_a_while(client, settings, django_assert_num_queries):
    """Probes, and anyone who asks without signing in, cost a process at most one round of
    checks every KIT_READINESS_REUSE_SECONDS: a broker that does not answer takes time to say so."""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    first = client.get("/readyz")
    with django_assert_num_queries(0):
        again = [client.get("/readyz") for _ in range(5)]
    assert {response.status_code for response in (first, *again)} == {503}
    assert all(response.json() == first.json() for response in again)


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_no_answer_names_an_account(client, path, db):
    from tests import factories

    factories.account("secret-account")
    assert b"secret-account" not in client.get(path).content
