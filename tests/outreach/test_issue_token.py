"""issue_token: a bearer token alone on stdout, bound to the member's account."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from oauth2_provider.models import AccessToken

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command("issue_token", *args, stdout=out)
    return out.getvalue()


def test_prints_the_token_alone(client, module_admin):
    output = run(
        "acme-sales",
        "admin@example.com",
        "--client",
        "Claude Code",
        "--base-url",
        "http://testserver",
    )
    token = output.strip()
    assert output == token + "\n"
    assert " " not in token
    stored = AccessToken.objects.get()
    assert stored.token == ""  # only a checksum is kept at rest
    assert set(stored.scope.split()) == {"outreach_read", "outreach_write"}
    assert stored.kit_account.account.slug == "acme-sales"
    assert stored.application.name == "Claude Code"
    response = client.post(
        "/mcp",
        data='{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200


def test_scopes_and_expiry(module_admin):
    run("acme-sales", "admin@example.com", "--scope", "outreach_read", "--expires-days", "7")
    stored = AccessToken.objects.get()
    assert stored.scope == "outreach_read"
    assert 6 <= (stored.expires - stored.created).days <= 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "admin@example.com"], "no account"),
        (["acme-sales", "stranger@example.com"], "not a member"),
        (["acme-sales", "admin@example.com", "--expires-days", "0"], "between 1 and 365"),
        (["acme-sales", "admin@example.com", "--client", " "], "--client"),
        (["acme-sales", "admin@example.com", "--base-url", "ftp://x"], "http"),
        (["acme-sales", "admin@example.com", "--base-url", "http://k.example/mcp"], "origin"),
        (["acme-sales", "admin@example.com", "--base-url", "http://k.example/?a=1"], "origin"),
        (["acme-sales", "admin@example.com", "--scope", "admin"], "invalid choice"),
    ],
)
def test_bad_arguments(module_admin, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not AccessToken.objects.exists()


def test_seed_demo_prints_a_ready_claude_mcp_add_line():
    out = StringIO()
    call_command("seed_demo", "--allow-insecure-demo", stdout=out)
    line = next(row for row in out.getvalue().splitlines() if "claude mcp add" in row)
    assert line.strip().startswith(
        "claude mcp add --transport http kit http://127.0.0.1:8000/mcp "
        '--header "Authorization: Bearer '
    )


def test_the_token_is_for_where_kit_address_says_the_server_is(settings, client, module_admin):
    """With ``KIT_ADDRESS`` set (as ``scripts/run`` serves there) and no ``KIT_PUBLIC_URL``,
    the token is for that origin's resources, the command says so, and the server at that
    address takes it."""
    settings.KIT_PUBLIC_URL = ""
    settings.KIT_ADDRESS = "localhost:8123"
    out, err = StringIO(), StringIO()
    call_command("issue_token", "acme-sales", "admin@example.com", stdout=out, stderr=err)
    stored = AccessToken.objects.get()
    assert sorted(stored.resource) == ["http://localhost:8123/api/", "http://localhost:8123/mcp"]
    assert "for http://localhost:8123/api and http://localhost:8123/mcp" in err.getvalue()
    ping = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    bearer = f"Bearer {out.getvalue().strip()}"
    answer = client.post(
        "/mcp",
        data=ping,
        content_type="application/json",
        HTTP_AUTHORIZATION=bearer,
        HTTP_HOST="localhost:8123",
    )
    assert answer.status_code == 200
    elsewhere = client.post(
        "/mcp", data=ping, content_type="application/json", HTTP_AUTHORIZATION=bearer
    )
    assert elsewhere.status_code == 401  # the token is not for http://testserver
