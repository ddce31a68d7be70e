"""The full OAuth 2.1 flow of an MCP client, through the official SDK, against a live Kit.

Discovery (RFC 9728, RFC 8414), dynamic client registration, PKCE (S256), the consent
page with its account choice (a real sign-in and form post, as a person would), the token
exchange with a resource indicator, and then tool calls with the token.
"""

import asyncio
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import pytest
from django.contrib.auth.hashers import make_password
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from prospect_memory.notes.models import Note
from tests import factories
from tests.oauth_client import form_fields

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a-long-test-password-9"


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class Person:
    """Signs in and answers the consent page, like a member in a browser."""

    def __init__(self, base_url: str, email: str, account_slug: str):
        self.base_url = base_url
        self.email = email
        self.account_slug = account_slug
        self.redirect: str | None = None
        self.consent_html = ""

    def authorize(self, authorization_url: str) -> None:
        with httpx2.Client(base_url=self.base_url, follow_redirects=False, timeout=30) as web:
            login = web.get("/accounts/login/")
            signed_in = web.post(
                "/accounts/login/",
                data={**form_fields(login.text), "username": self.email, "password": PASSWORD},
            )
            assert signed_in.status_code == 302, signed_in.text[:500]
            consent = web.get(authorization_url)
            assert consent.status_code == 200, (consent.headers.get("location"), consent.text[:500])
            self.consent_html = consent.text
            fields = form_fields(consent.text)
            answer = web.post(
                authorization_url,
                data={**fields, "allow": "on", "account": self.account_slug},
            )
            assert answer.status_code == 302, answer.text[:1000]
            self.redirect = answer.headers["location"]

    async def redirect_handler(self, authorization_url: str) -> None:
        await asyncio.to_thread(self.authorize, authorization_url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.redirect).query)
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )


def connect_and_save(live_kit, person: Person, domain: str) -> dict:
    provider = OAuthClientProvider(
        server_url=f"{live_kit.url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Agent OAuth test",
            redirect_uris=["http://127.0.0.1:51234/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope="outreach_read outreach_write",
        ),
        storage=MemoryStorage(),
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )

    async def main():
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            transport = streamable_http_client(f"{live_kit.url}/mcp", http_client=http)
            async with Client(transport, mode="legacy") as client:
                result = await client.call_tool(
                    "outreach_save_prospect_research",
                    {
                        "domain": domain,
                        "body": "Found through a fully authorized connection.",
                        "source_urls": [f"https://{domain}/news"],
                        "observed_at": "2026-11-25",
                    },
                )
                assert not result.is_error, result.content[0].text
                return result.structured_content["data"]

    return asyncio.run(main())


def _member_with_password(account, email, *, admin=True):
    member = factories.member(account, email, admin=admin)
    # Hashed with the live server's hasher (the suite's default is a fast one it lacks).
    member.user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    member.user.save()
    return member


def test_oauth_flow_discovery_registration_pkce_consent_token(live_kit, account):
    _member_with_password(account, "owner@acme-sales.example")
    person = Person(live_kit.url, "owner@acme-sales.example", account.slug)
    saved = connect_and_save(live_kit, person, "acme.dev")
    assert saved["note"]["attribution"] == {
        "member": "owner@acme-sales.example",
        "oauth_client": "Agent OAuth test",
    }
    assert "Acme Sales (acme-sales)" in person.consent_html
    # The code came back with the issuer (RFC 9207) and the token names the MCP resource.
    assert parse_qs(urlsplit(person.redirect).query)["iss"] == [live_kit.url]
    from oauth2_provider.models import AccessToken

    # (DCR also keeps a registration-management token for the client; not an access token.)
    tokens = AccessToken.objects.filter(
        application__name="Agent OAuth test", scope__contains="outreach"
    )
    assert tokens.exists()
    for token in tokens:
        assert token.resource == [f"{live_kit.url}/mcp"]
        assert set(token.scope.split()) == {"outreach_read", "outreach_write"}
        assert token.kit_account.account == account


def test_member_of_two_accounts_picks_the_one_the_token_acts_for(live_kit, account, other_account):
    _member_with_password(account, "both@example.com")
    _member_with_password(other_account, "both@example.com")
    person = Person(live_kit.url, "both@example.com", other_account.slug)
    connect_and_save(live_kit, person, "globex.io")
    assert "Acme Sales (acme-sales)" in person.consent_html
    assert "Rival Co (rival-co)" in person.consent_html
    assert list(Note.objects.values_list("account__slug", flat=True)) == ["rival-co"]


def test_registration_refuses_plain_http_redirects_off_loopback(live_kit):
    response = httpx2.post(
        urljoin(live_kit.url, "/o/register/"),
        json={
            "client_name": "Sneaky",
            "redirect_uris": ["http://evil.example/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
