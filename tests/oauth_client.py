"""An OAuth client and a person answering the consent page, over Django's test client.

Drives the real endpoints (registration, authorization, consent form, token) the way an
MCP client and a member's browser do, so attacks on them can be replayed in tests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

from django.test import Client

REDIRECT = "http://127.0.0.1:51234/callback"
RESOURCE = "http://testserver/mcp"


def register(client: Client, name: str = "Test agent", redirect: str = REDIRECT, **address):
    """POST /o/register/ (RFC 7591); returns the response."""
    return client.post(
        "/o/register/",
        json.dumps(
            {
                "client_name": name,
                "redirect_uris": [redirect],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }
        ),
        content_type="application/json",
        **address,
    )


def form_fields(html: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = unescape(value.group(1)) if value else ""
    return fields


@dataclass
class Authorization:
    """One authorization-code flow with PKCE for a registered client."""

    client_id: str
    redirect: str = REDIRECT
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))

    @property
    def url(self) -> str:
        challenge = (
            base64.urlsafe_b64encode(hashlib.sha256(self.verifier.encode()).digest())
            .rstrip(b"=")
            .decode()
        )
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "outreach_read outreach_write",
            "resource": RESOURCE,
            "state": "s1",
        }
        return "/o/authorize/?" + urlencode(query)

    def consent(self, browser: Client, account_slug: str) -> str:
        """The member allows the connection for ``account_slug``; returns the code."""
        page = browser.get(self.url)
        assert page.status_code == 200, page.content[:500]
        answer = browser.post(
            self.url,
            {**form_fields(page.content.decode()), "allow": "on", "account": account_slug},
        )
        assert answer.status_code == 302, answer.content[:500]
        return parse_qs(urlsplit(answer["Location"]).query)["code"][0]

    def exchange(self, client: Client, code: str):
        return client.post(
            "/o/token/",
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.redirect,
                "client_id": self.client_id,
                "code_verifier": self.verifier,
                "resource": RESOURCE,
            },
        )


def refresh(client: Client, client_id: str, refresh_token: str):
    return client.post(
        "/o/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
            "resource": RESOURCE,
        },
    )


def tools_list(client: Client, access_token: str) -> int:
    """The status of an MCP tools/list call made with ``access_token``."""
    return client.post(
        "/mcp",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {access_token}",
    ).status_code
