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
