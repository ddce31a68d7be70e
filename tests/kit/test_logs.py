"""Logs (SPEC 19): one JSON object a line naming its request's id, which the answer carries
in ``X-Request-ID``; and no token, secret or stored text in any line a live server wrote
while agents saved, stored, searched and were refused."""

from __future__ import annotations

import io
import json
import logging
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.conf import settings as django_settings

from kit.logs import JsonFormatter
from tests import factories
from tests.helpers import token as issue_token
from tests.live import LiveServer


@pytest.mark.parametrize(
    ("sent", "carried"),
    [
        (None, False),
        ("edge-7f3a.42:1", True),
        ("has spaces", False),
        ("line\nbreak", False),
        ("x" * 129, False),
    ],
)
def test_every_answer_carries_a_request_id(client, settings, sent, carried):
    settings.KIT_PROXY_COUNT = 1  # a proxy in front: its id is carried
    extra = {"HTTP_X_REQUEST_ID": sent} if sent else {}
    answered = client.get("/healthz", **extra)["X-Request-ID"]
    if carried:
        assert answered == sent
    else:
        assert re.fullmatch(r"[0-9a-f]{32}", answered)


def test_without_a_proxy_a_clients_own_id_is_not_carried(client):
    answered = client.get("/healthz", HTTP_X_REQUEST_ID="someone-elses-id")["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", answered)


@pytest.mark.django_db
def test_a_refused_answer_is_logged_with_its_path_and_id_not_its_query(client):
    """Django logs a refused answer with its request: written as method and path, as the
    query string may hold a search's words or a token sent in the wrong place."""
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        answer = client.get("/api/v1/knowledge/search", {"query": "Pangolin-4412 warehouse"})
    finally:
        logger.removeHandler(handler)
    assert answer.status_code == 401
    line = json.loads(written.getvalue().splitlines()[-1])
    assert line["request"] == "GET /api/v1/knowledge/search"
    assert line["request_id"] == answer["X-Request-ID"]
    assert "Pangolin" not in written.getvalue()


@pytest.mark.django_db
def test_a_line_logged_while_answering_names_the_request(client, settings):
    from kit import readiness

    readiness.forget()
    settings.KIT_PROXY_COUNT = 1
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # /readyz logs what is not ready
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("kit.readiness")
    logger.addHandler(handler)
    try:
        client.get("/readyz", HTTP_X_REQUEST_ID="probe-1")
    finally:
        logger.removeHandler(handler)
        readiness.forget()
    line = json.loads(written.getvalue().splitlines()[-1])
    assert (line["level"], line["logger"], line["request_id"]) == (
        "WARNING",
        "kit.readiness",
        "probe-1",
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", line["time"])


SECRETS_IN_TEXT = {
    "note": "Zanzibar-7781 freight expansion confirmed by the CFO.",
    "value": "Quokka-9931 onboarding playbook",
    "query": "Pangolin-4412 warehouse",
    "refused": "Okapi-5518 " * 2000,  # a body over the limit: refused, never logged
}


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_live_servers_log_holds_no_token_secret_or_text():
    from django.db import connection

    from kit.db import database_url

    server = LiveServer(
        database_url(connection.settings_dict),
        extra_env={"LOG_FORMAT": "json", "KIT_PROXY_COUNT": "1"},  # its X-Request-ID is kept
    )
    account = factories.account("logged")
    member = factories.member(account, "agent@logged.example", admin=True)
    token = issue_token(member, client_name="Logged agent", base_url=server.url)

    def call(method: str, path: str, body: dict | None = None, **query: str) -> int:
        url = f"{server.url}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        request = urllib.request.Request(  # noqa: S310
            url,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "X-Request-ID": "logged-run-1",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                return answer.status
        except urllib.error.HTTPError as refused:
            return refused.code

    try:
        note = {
            "domain": "acme.dev",
            "title": "Freight",
            "body": SECRETS_IN_TEXT["note"],
            "source_urls": ["https://acme.dev/news"],
            "observed_at": "2026-11-20",
        }
        assert call("POST", "/api/v1/notes", note) == 201
        entry = {"key": "playbook", "value": SECRETS_IN_TEXT["value"], "confidence": 90}
        assert call("POST", "/api/v1/business-memory/entries", entry) in (200, 201)
        assert call("GET", "/api/v1/knowledge/search", query=SECRETS_IN_TEXT["query"]) == 200
        # Refused (no such limit): Django logs the refusal with its request.
        refused = call("GET", "/api/v1/knowledge/search", query=SECRETS_IN_TEXT["query"], limit="x")
        assert refused == 400
        assert call("POST", "/api/v1/notes", {**note, "body": SECRETS_IN_TEXT["refused"]}) == 413
        assert call("GET", "/api/v1/recall", domain="acme.dev") == 200
    finally:
        server.stop()
    log = server.log.read_text()
    lines = [line for line in log.splitlines() if line.strip()]
    assert any("logged-run-1" in line for line in lines), log[-2000:]
    for line in lines:
        json.loads(line)  # every line is one JSON object
    secrets = [
        token,
        django_settings.SECRET_KEY,
        *django_settings.PROSPECT_MEMORY.get("ENCRYPTION_KEYS", []),
        *(text.strip() for text in SECRETS_IN_TEXT.values()),
        "Pangolin",
        "Okapi",
    ]
    for secret in secrets:
        assert secret not in log, f"the log holds {secret[:12]}…"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_celery_workers_lines_are_json_too():
    """A real worker process (Redis as the broker, as in CI): Celery adds no handler of its
    own (kit/celery.py), so its lines are Django's JSON lines on standard error."""
    import os
    import signal
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    import redis
    from django.db import connection

    from kit.db import database_url
    from tests.live import ROOT

    try:
        redis.Redis(socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("no Redis on 127.0.0.1:6379 (CI starts one)")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kit.settings",
        "DATABASE_URL": database_url(connection.settings_dict),
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/12",
        "LOG_LEVEL": "INFO",  # the worker's level is Django's (-l has no effect)
    }
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "kit", "--quiet", "worker", "--pool", "solo",
         "-n", "logs@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "ready." not in Path(log.name).read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    lines = Path(log.name).read_text().splitlines(keepends=True)
    Path(log.name).unlink()
    ready = [line for line in lines if "ready." in line]
    assert ready, "".join(lines)[-3000:]
    assert json.loads(ready[0])["logger"] == "celery.apps.worker"
    logged = [line for line in lines if line.lstrip().startswith("{")]
    assert len(logged) >= 2
    assert all(json.loads(line)["level"] for line in logged)
    assert not [line for line in lines if re.match(r"\[\d{4}-\d\d-\d\d .*: (INFO|WARNING)/", line)]
