"""Security hardening: write rate limits per client, headers, and what never reaches the logs."""

import json
import logging
import threading

import pytest
from django.db import connection

from outreach.access import Actor
from outreach.ratelimit import RateLimited, write_allowed
from tests.helpers import token

pytestmark = pytest.mark.django_db

SAVE = {
    "domain": "acme.dev",
    "body": "Acme rate limit test note.",
    "source_urls": ["https://acme.dev/"],
    "observed_at": "2026-11-20",
}


def test_rest_writes_are_rate_limited_per_client_with_retry_after(client, module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 2
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {token(module_admin)}"}
    for i in range(2):
        ok = client.post(
            "/api/v1/notes", {**SAVE, "body": f"n{i}"}, content_type="application/json", **bearer
        )
        assert ok.status_code == 201
    limited = client.post("/api/v1/notes", SAVE, content_type="application/json", **bearer)
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited["Retry-After"]) <= 60
    # Reads are not limited; another client of the same account has its own budget.
    assert client.get("/api/v1/recall?domain=acme.dev", **bearer).status_code == 200
    other = {"HTTP_AUTHORIZATION": f"Bearer {token(module_admin, client_name='Other agent')}"}
    assert (
        client.post(
            "/api/v1/notes", {**SAVE, "body": "x"}, content_type="application/json", **other
        ).status_code
        == 201
    )


def test_mcp_writes_are_rate_limited_as_tool_errors(client, module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 1
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {token(module_admin)}"}

    def call(body):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "outreach_save_prospect_research",
                "arguments": {**SAVE, "body": body},
            },
        }
        return client.post(
            "/mcp", json.dumps(message), content_type="application/json", **bearer
        ).json()

    assert call("first")["result"]["isError"] is False
    second = call("second")["result"]
    assert second["isError"] is True
    error = second["structuredContent"]["error"]
    assert error["code"] == "rate_limited"
    assert 1 <= error["details"]["retry_after_seconds"] <= 60


@pytest.mark.django_db(transaction=True)
def test_rate_limit_holds_under_concurrency(module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 5
    actor = Actor.for_member(module_admin)
    barrier = threading.Barrier(12)
    outcomes = []

    def attempt():
        try:
            barrier.wait()
            write_allowed(actor)
            outcomes.append("ok")
        except RateLimited:
            outcomes.append("limited")
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes.count("ok") == 5
    assert outcomes.count("limited") == 7


def test_security_headers(client):
    response = client.get("/accounts/login/", secure=True)
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")


@pytest.mark.slow  # starts Django in a subprocess
def test_production_settings_secure_cookies_and_redirects(tmp_path):
    import os
    import subprocess
    import sys

    from prospect_memory.core.crypto import generate_key

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "DEBUG"}
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "kit.settings",
            "SECRET_KEY": "p" * 64,
            "PROSPECT_MEMORY_ENCRYPTION_KEYS": generate_key(),
            "KIT_DATA_DIR": str(tmp_path),
        }
    )
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.SESSION_COOKIE_HTTPONLY, s.X_FRAME_OPTIONS, s.SECURE_HSTS_SECONDS)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split() == ["False", "True", "True", "True", "True", "DENY", "31536000"], (
        result.stderr
    )


def test_tokens_and_note_content_never_reach_the_logs(client, module_admin, caplog):
    caplog.set_level(logging.DEBUG)
    secret = token(module_admin)
    body = "Confidential: Acme plans layoffs in Q1."
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    client.post("/api/v1/notes", {**SAVE, "body": body}, content_type="application/json", **bearer)
    client.get("/api/v1/recall?domain=acme.dev", **bearer)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "outreach_recall_prospect_context", "arguments": {"domain": "acme.dev"}},
    }
    client.post("/mcp", json.dumps(message), content_type="application/json", **bearer)
    client.post("/mcp", "{broken", content_type="application/json", **bearer)
    client.get("/api/v1/recall?domain=acme.dev", HTTP_AUTHORIZATION="Bearer wrong-token-value")
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert secret not in logged
    assert "wrong-token-value" not in logged
    assert "layoffs" not in logged
