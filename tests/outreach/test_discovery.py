"""Discovery as MCP clients probe it (SPEC 18): one issuer in every metadata document, at
every well-known path a client may try, and the same issuer in an authorization response."""

import os
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from tests.oauth_client import Authorization, form_fields, register

pytestmark = pytest.mark.django_db

#: Where clients look for the authorization server's metadata: the root (RFC 8414), the
#: endpoint's path inserted after the well-known part (the SDKs, when they take the MCP URL
#: for the issuer) and appended to it (older clients).
METADATA_PATHS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/mcp/.well-known/oauth-authorization-server",
]


@pytest.mark.parametrize("path", METADATA_PATHS)
def test_every_metadata_path_names_the_one_issuer(client, path):
    document = client.get(path)
    assert document.status_code == 200
    metadata = document.json()
    assert metadata["issuer"] == "http://testserver"
    assert metadata["authorization_endpoint"] == "http://testserver/o/authorize/"
    assert metadata["token_endpoint"] == "http://testserver/o/token/"
    assert metadata["registration_endpoint"] == "http://testserver/o/register/"
    assert metadata == client.get(METADATA_PATHS[0]).json()


@pytest.mark.parametrize("resource", ["mcp", "api"])
def test_each_resources_metadata_names_the_same_issuer(client, resource):
    metadata = client.get(f"/.well-known/oauth-protected-resource/{resource}").json()
    assert metadata["authorization_servers"] == [client.get(METADATA_PATHS[0]).json()["issuer"]]


@pytest.mark.parametrize("path", METADATA_PATHS)
def test_behind_a_proxy_the_issuer_is_the_public_origin(settings, path):
    """``KIT_PUBLIC_URL`` names the issuer (kit/settings.py sets django-oauth-toolkit's
    issuer from it, as here) and every resource."""
    public = "https://kit.example"
    settings.KIT_PUBLIC_URL = public
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "OIDC_ISS_ENDPOINT": public}
    client = Client()
    metadata = client.get(path).json()
    assert metadata["issuer"] == public
    assert metadata["token_endpoint"] == "https://kit.example/o/token/"
    resource = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == "https://kit.example/mcp"
    assert resource["authorization_servers"] == ["https://kit.example"]


@pytest.mark.parametrize(
    "path",
    ["", "/admin", "/..%2f..%2fadmin", "/%E2%80%AEevil", "/mcp/x", "/" + "a" * 5000],
)
def test_only_kits_two_resources_have_metadata(client, path):
    """The origin is not a resource Kit issues tokens for, and no other path is one: a
    document claiming to protect them would mislead a client."""
    assert client.get(f"/.well-known/oauth-protected-resource{path}").status_code == 404


def test_an_unknown_issuer_path_is_not_found(client):
    """Kit has one issuer: a path that names another is a 404, not a document claiming
    an issuer that does not exist."""
    assert client.get("/.well-known/oauth-authorization-server/tenant1").status_code == 404


def test_the_authorization_response_names_the_same_issuer(client, module_admin):
    """RFC 9207: ``iss`` in the redirect is the issuer of the metadata, so a client's
    mix-up check passes."""
    client_id = register(client).json()["client_id"]
    browser = Client()
    browser.force_login(module_admin.user)
    flow = Authorization(client_id)
    page = browser.get(flow.url)
    answer = browser.post(
        flow.url, {**form_fields(page.content.decode()), "allow": "on", "account": "acme-sales"}
    )
    assert answer.status_code == 302
    query = parse_qs(urlsplit(answer["Location"]).query)
    assert query["iss"] == [client.get(METADATA_PATHS[0]).json()["issuer"]]


def test_the_issuer_setting_follows_kit_public_url():
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kit import settings; print(settings.OAUTH2_PROVIDER['OIDC_ISS_ENDPOINT'])",
        ],
        env={
            **os.environ,
            "KIT_PUBLIC_URL": "https://kit.example/",
            "DJANGO_SETTINGS_MODULE": "kit.settings",
        },
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "https://kit.example"
