"""Fuzzing the MCP endpoint: whatever arrives, the answer is a protocol-correct 4xx or a
tool result, never a 500 and never a half-written row.

``KIT_LONG_TESTS=1`` runs many more examples.
"""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prospect_memory.notes.models import Note
from tests.helpers import bearer as headers

pytestmark = pytest.mark.django_db

EXAMPLES = 400 if os.environ.get("KIT_LONG_TESTS") else 60
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TOOLS = [
    "outreach_recall_prospect_context",
    "outreach_save_prospect_research",
    "outreach_compact_prospect_context",
    "outreach_get_writing_guide",
]

text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300) | st.sampled_from(
    ["", "\x00", "‮evil", "🙂" * 100, "a" * 20_000, "null", "<script>"]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text, children, max_size=5),
    max_leaves=25,
)


@pytest.fixture
def bearer(module_admin):
    return headers(module_admin, client_name="Fuzzer")


def post(client, bearer, raw, **headers):
    return client.post("/mcp", data=raw, content_type="application/json", **bearer, **headers)


def check(response):
    assert response.status_code < 500, response.content[:300]
    if response.status_code not in (202, 405):
        json.loads(response.content)


@FUZZ
@given(body=json_values)
def test_any_json_value(client, bearer, body):
    check(post(client, bearer, json.dumps(body)))


@FUZZ
@given(
    method=st.sampled_from(["initialize", "tools/list", "tools/call", "ping", "server/discover"])
    | text,
    id_=st.none() | st.integers() | text | st.booleans() | st.floats(allow_nan=False),
    params=json_values,
    version=st.none() | st.sampled_from(["2025-11-25", "2026-07-28", "2025-03-26"]) | text,
)
def test_json_rpc_shapes(client, bearer, method, id_, params, version):
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    headers = {}
    if version is not None and version.isascii() and version.isprintable():
        headers["HTTP_MCP_PROTOCOL_VERSION"] = version
        headers["HTTP_MCP_METHOD"] = method if method.isascii() and method.isprintable() else "x"
    check(post(client, bearer, json.dumps(message), **headers))


@FUZZ
@given(tool=st.sampled_from(TOOLS) | text, arguments=json_values)
def test_tool_arguments(client, bearer, tool, arguments):
    before = Note.objects.count()
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    response = post(client, bearer, json.dumps(message))
    check(response)
    result = response.json().get("result")
    if result and not result.get("isError"):
        assert tool != "outreach_save_prospect_research" or Note.objects.count() == before + 1
    elif tool == "outreach_save_prospect_research":
        assert Note.objects.count() == before  # a refused save writes nothing


@FUZZ
@given(raw=st.binary(max_size=2000))
def test_arbitrary_bytes(client, bearer, raw):
    check(post(client, bearer, raw))


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "outreach_recall_prospect_context", "arguments": {"domain": '
        + "[" * 50_000
        + "]" * 50_000
        + "}}}",
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\\ud800"}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "outreach_save_prospect_research", "arguments": {"domain": "acme.dev", "body": "\\udfff", "source_urls": ["https://a.dev"], "observed_at": "2026-11-01"}}}',
        '{"jsonrpc": "2.0", "id": "\\ud83d", "method": "ping"}',
    ],
    ids=["deep array", "deep arguments", "surrogate tool name", "surrogate body", "surrogate id"],
)
def test_regressions_deep_nesting_and_lone_surrogates(client, bearer, raw):
    response = post(client, bearer, raw)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    assert not Note.objects.exists()


def test_regression_deep_nesting_on_the_rest_api(client, bearer):
    response = client.post(
        "/api/v1/notes", data="[" * 100_000, content_type="application/json", **bearer
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    surrogate = client.post(
        "/api/v1/notes", data='{"body": "\\ud800"}', content_type="application/json", **bearer
    )
    assert surrogate.status_code == 400
