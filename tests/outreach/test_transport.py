"""The /mcp transport and JSON-RPC protocol, through Django's test client."""

import json
from datetime import timedelta

import jsonschema
import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken

from tests import factories
from tests.helpers import token as issue_token

pytestmark = pytest.mark.django_db

MODERN = "2026-07-28"


@pytest.fixture
def token(module_admin):
    return issue_token(module_admin, client_name="Test client")


def post(client, body, token=None, *, raw=False, **headers):
    if token:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    headers.setdefault("HTTP_ACCEPT", "application/json, text/event-stream")
    data = body if raw else json.dumps(body)
    return client.post("/mcp", data=data, content_type="application/json", **headers)


def rpc(method, params=None, id_=1):
    message = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if id_ is not None:
        message["id"] = id_
    return message


def modern(method, params=None, *, name=None, version=MODERN):
    params = {
        **(params or {}),
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    headers = {"HTTP_MCP_PROTOCOL_VERSION": version, "HTTP_MCP_METHOD": method}
    if name:
        headers["HTTP_MCP_NAME"] = name
    return rpc(method, params), headers


# --- HTTP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put"])
def test_only_post_is_allowed(client, token, method):
    response = getattr(client, method)("/mcp", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 405
    assert response["Allow"] == "POST"


@pytest.mark.parametrize("method", ["get", "post", "delete", "put", "patch"])
def test_any_method_without_a_token_learns_where_to_authorize(client, method):
    """A client may probe with GET (an SSE stream) or DELETE (a session's end) before it
    has a token: every method gets the same challenge as POST (SPEC 18)."""
    response = client.generic(method.upper(), "/mcp", "{}", content_type="application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", '
        'scope="outreach_read outreach_write"'
    )
    assert response.json()["error"]["data"]["error"]["code"] == "unauthenticated"


@pytest.mark.parametrize("method", ["get", "delete"])
def test_a_wrong_token_on_get_or_delete_is_invalid_token(client, method):
    response = getattr(client, method)("/mcp", HTTP_AUTHORIZATION="Bearer forged")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')


def test_missing_token_gets_401_with_resource_metadata(client):
    response = post(client, rpc("initialize"))
    assert response.status_code == 401
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"' in (
        challenge
    )
    assert 'scope="outreach_read outreach_write"' in challenge
    body = response.json()
    assert body["error"]["data"]["error"]["code"] == "unauthenticated"


@pytest.mark.parametrize("header", ["Bearer nope", "Basic dXNlcjpwYXNz", "Bearer ", "bearer"])
def test_bad_tokens_get_401_invalid_token(client, header):
    response = client.post(
        "/mcp", data="{}", content_type="application/json", HTTP_AUTHORIZATION=header
    )
    assert response.status_code == 401
    assert response.json()["error"]["data"]["error"]["code"] == "unauthenticated"


def test_expired_token_is_refused(client, token):
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    response = post(client, rpc("tools/list"), token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_token_for_another_resource_is_refused(client, module_admin):
    other = issue_token(
        module_admin, ["outreach_read"], client_name="Elsewhere", base_url="https://other.example"
    )
    response = post(client, rpc("tools/list"), other)
    assert response.status_code == 401


def test_token_without_resource_is_refused(client, token):
    AccessToken.objects.update(resource=[])
    assert post(client, rpc("tools/list"), token).status_code == 401


def test_token_of_a_user_who_left_the_account_is_refused(client, token, module_admin):
    module_admin.delete()  # the seat's tokens are revoked with it (SPEC 16)
    response = post(client, rpc("tools/list"), token)
    assert response.status_code == 401
    assert "invalid, expired" in response.json()["error"]["message"]


def test_foreign_origin_is_forbidden(client, token):
    response = post(client, rpc("tools/list"), token, HTTP_ORIGIN="https://evil.example")
    assert response.status_code == 403
    assert (
        post(client, rpc("tools/list"), token, HTTP_ORIGIN="http://testserver").status_code == 200
    )


def test_wrong_content_type_and_accept(client, token):
    response = client.post(
        "/mcp", data="x=1", content_type="text/plain", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 415
    assert post(client, rpc("tools/list"), token, HTTP_ACCEPT="text/html").status_code == 406


def test_oversized_body_is_refused(client, token):
    body = rpc("tools/call", {"name": "x", "arguments": {"body": "a" * 300_000}})
    response = post(client, body, token)
    assert response.status_code == 413


# --- JSON-RPC ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", -32700),
        ("[]", -32600),
        ('[{"jsonrpc": "2.0", "method": "ping", "id": 1}]', -32600),
        ('"hello"', -32600),
        ('{"method": "ping", "id": 1}', -32600),
        ('{"jsonrpc": "1.0", "method": "ping", "id": 1}', -32600),
        ('{"jsonrpc": "2.0", "method": 5, "id": 1}', -32600),
        ('{"jsonrpc": "2.0", "method": "ping", "id": true}', -32600),
        ('{"jsonrpc": "2.0", "method": "ping", "id": {"a": 1}}', -32600),
        ('{"jsonrpc": "2.0", "method": "ping", "id": 1, "params": [1]}', -32602),
        ('{"jsonrpc": "2.0", "id": 1}', -32600),
    ],
)
def test_malformed_messages_get_protocol_errors(client, token, body, code):
    response = post(client, body, token, raw=True)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code


def test_initialize_echoes_a_supported_version(client, token):
    for version in ("2025-11-25", "2025-06-18", "2025-03-26"):
        result = post(client, rpc("initialize", {"protocolVersion": version}), token).json()
        assert result["result"]["protocolVersion"] == version
        assert result["result"]["capabilities"] == {"tools": {"listChanged": False}}
    result = post(client, rpc("initialize", {"protocolVersion": "1999-01-01"}), token).json()
    assert result["result"]["protocolVersion"] == "2025-11-25"


def test_notifications_and_responses_get_202(client, token):
    response = post(client, rpc("notifications/initialized", id_=None), token)
    assert response.status_code == 202
    assert response.content == b""
    response = post(client, {"jsonrpc": "2.0", "id": 7, "result": {}}, token)
    assert response.status_code == 202


def test_unsupported_legacy_version_header_is_400(client, token):
    response = post(client, rpc("tools/list"), token, HTTP_MCP_PROTOCOL_VERSION="2024-01-01")
    assert response.status_code == 400
    assert "supported" in response.json()["error"]["data"]


def test_unknown_method(client, token):
    assert post(client, rpc("resources/list"), token).json()["error"]["code"] == -32601
    body, headers = modern("resources/list")
    response = post(client, body, token, **headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601


def test_tools_list_carries_schemas_for_every_tool(client, token):
    tools = post(client, rpc("tools/list"), token).json()["result"]["tools"]
    assert [t["name"] for t in tools] == sorted(t["name"] for t in tools)
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        # A result is {"data": ...} or, refused, {"error": ...}: the TypeScript SDK validates
        # both against the declared schema (SPEC 18).
        schema = tool["outputSchema"]
        assert schema["type"] == "object"
        assert schema["oneOf"] == [{"required": ["data"]}, {"required": ["error"]}]
        refused = {"error": {"code": "validation_error", "message": "m", "details": {}}}
        jsonschema.validate(refused, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**refused, "data": {}}, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"error": {"code": "x"}}, schema)
        assert tool["description"]


def test_result_carries_structured_content_and_the_same_json_as_text(client, token):
    body = rpc(
        "tools/call",
        {"name": "outreach_recall_prospect_context", "arguments": {"domain": "acme.dev"}},
    )
    result = post(client, body, token).json()["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["structuredContent"]["data"]["domain"] == "acme.dev"


# --- the modern era --------------------------------------------------------------------------


def test_server_discover(client, token):
    body, headers = modern("server/discover")
    result = post(client, body, token, **headers).json()["result"]
    assert MODERN in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert {"ttlMs", "cacheScope", "capabilities"} <= set(result)


def test_modern_tools_call_has_result_type(client, token):
    body, headers = modern(
        "tools/call",
        {"name": "outreach_get_writing_guide", "arguments": {"locale": "en"}},
        name="outreach_get_writing_guide",
    )
    result = post(client, body, token, **headers).json()["result"]
    assert result["resultType"] == "complete"
    assert result["structuredContent"]["data"]["locale"] == "en"


def test_modern_unsupported_version_names_the_supported_ones(client, token):
    body, headers = modern("tools/list", version="2099-01-01")
    response = post(client, body, token, **headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert MODERN in error["data"]["supported"]
    assert error["data"]["requested"] == "2099-01-01"


@pytest.mark.parametrize(
    "tamper",
    [
        {"HTTP_MCP_METHOD": "tools/list"},
        {"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"},
        {"HTTP_MCP_NAME": "outreach_recall_prospect_context"},
    ],
)
def test_modern_header_mismatch_is_400(client, token, tamper):
    body, headers = modern(
        "tools/call",
        {"name": "outreach_get_writing_guide", "arguments": {"locale": "en"}},
        name="outreach_get_writing_guide",
    )
    headers.update(tamper)
    response = post(client, body, token, **headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


def test_modern_request_without_envelope_is_invalid_params(client, token):
    response = post(
        client,
        rpc("tools/list"),
        token,
        HTTP_MCP_PROTOCOL_VERSION=MODERN,
        HTTP_MCP_METHOD="tools/list",
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


# --- scopes ------------------------------------------------------------------------------------


def test_missing_scope_gets_a_403_insufficient_scope_challenge(client, module_admin):
    read_only = issue_token(module_admin, ["outreach_read"], client_name="Reader")
    body = rpc(
        "tools/call",
        {
            "name": "outreach_save_prospect_research",
            "arguments": {
                "domain": "acme.dev",
                "body": "x",
                "source_urls": ["https://a.dev"],
                "observed_at": "2026-11-01",
            },
        },
    )
    response = post(client, body, read_only)
    assert response.status_code == 403
    challenge = response["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="outreach_read outreach_write"' in challenge
    assert "resource_metadata=" in challenge
    assert response.json()["error"]["data"]["error"]["code"] == "insufficient_scope"


def test_a_token_acts_only_for_its_account(client, token, other_account):
    factories.member(other_account, "admin@example.com", admin=True)  # same user, second seat
    body = rpc(
        "tools/call",
        {
            "name": "outreach_save_prospect_research",
            "arguments": {
                "domain": "acme.dev",
                "body": "mine",
                "source_urls": ["https://a.dev"],
                "observed_at": "2026-11-01",
            },
        },
    )
    post(client, body, token)
    from prospect_memory.notes.models import Note

    assert list(Note.objects.values_list("account__slug", flat=True)) == ["acme-sales"]
