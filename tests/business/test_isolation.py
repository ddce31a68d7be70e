"""Business memory isolation: another account reaches nothing of the account's entries, and
nobody but a member (not another member, not an admin's token) reaches that member's own
context: not by key, list, search, history, evictions, counts or ranks, over REST, MCP or
the pages."""

import json
import uuid

import pytest
from django.test import Client

from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from tests import factories
from tests.helpers import token

pytestmark = pytest.mark.django_db

#: Values only: a refusal may echo the key the caller asked about, but never a value, and
#: it answers a real key exactly as a made-up one (``test_..._same_answer``).
SECRETS = ["A-SECRET-ICP", "A-SECRET-VOICE", "MEMBER-SECRET-SIGNATURE"]


@pytest.fixture
def world(account, module_admin, member, other_admin, admin_actor, member_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    entry_store(actor=admin_actor, key="evicted_one", value="A-SECRET-ICP old", confidence=1)
    entry_store(actor=admin_actor, key="icp_definition", value="A-SECRET-ICP", confidence=90)
    entry_store(actor=admin_actor, key="brand_voice", value="A-SECRET-VOICE", confidence=80)
    entry_store(
        actor=member_actor,
        key="member-secret-key",
        value="MEMBER-SECRET-SIGNATURE",
        layer="member",
    )
    capacity(ACCOUNT_CAPACITY=1000)
    another = factories.member(account, "colleague@example.com")
    return {
        "eviction": Entry.objects.get(status="evicted"),
        "outsider": other_admin,
        "colleague": another,
        "admin": module_admin,
    }


def state(layer=None):
    rows = Entry.objects.filter(account__slug="acme-sales")
    if layer:
        rows = rows.filter(layer=layer)
    return sorted(rows.values_list("key", "layer", "version", "status", "access_count"))


def rest(client, bearer, method, path, body=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {bearer}"}
    if body is not None:
        return getattr(client, method)(
            path, json.dumps(body), content_type="application/json", **headers
        )
    return getattr(client, method)(path, **headers)


def mcp(client, bearer, tool, arguments):
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return client.post(
        "/mcp",
        json.dumps(message),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {bearer}",
    )


def calls(intruder, eviction_id: str) -> dict:
    client, bearer = Client(), token(intruder)
    browser = Client()
    browser.force_login(intruder.user)
    base = "/api/v1/business-memory"
    return {
        "rest list": lambda: rest(client, bearer, "get", f"{base}/entries"),
        "rest list member": lambda: rest(client, bearer, "get", f"{base}/entries?layer=member"),
        "rest recall member key": lambda: rest(
            client, bearer, "get", f"{base}/entries/member-secret-key"
        ),
        "rest recall member layer": lambda: rest(
            client, bearer, "get", f"{base}/entries/member-secret-key?layer=member"
        ),
        "rest search": lambda: rest(
            client, bearer, "get", f"{base}/search?query=secret+signature+icp+voice"
        ),
        "rest history member": lambda: rest(
            client, bearer, "get", f"{base}/entries/member-secret-key/history?layer=member"
        ),
        "rest evictions": lambda: rest(client, bearer, "get", f"{base}/evictions"),
        "rest evictions member": lambda: rest(
            client, bearer, "get", f"{base}/evictions?layer=member"
        ),
        "rest restore eviction": lambda: rest(
            client, bearer, "post", f"{base}/evictions/{eviction_id}/restore"
        ),
        "rest delete member": lambda: rest(
            client, bearer, "delete", f"{base}/entries/member-secret-key?layer=member"
        ),
        "rest restore version member": lambda: rest(
            client,
            bearer,
            "post",
            f"{base}/entries/member-secret-key/versions/1/restore",
            {"layer": "member"},
        ),
        "mcp recall": lambda: mcp(
            client, bearer, "outreach_recall_business_memory", {"key": "member-secret-key"}
        ),
        "mcp list": lambda: mcp(client, bearer, "outreach_list_business_memory", {}),
        "mcp search": lambda: mcp(
            client, bearer, "outreach_search_business_memory", {"query": "MEMBER-SECRET"}
        ),
        "page memory": lambda: browser.get("/business-memory/"),
        "page member entry": lambda: browser.get("/business-memory/member/member-secret-key/"),
        "page member edit": lambda: browser.get("/business-memory/member/member-secret-key/edit/"),
        "page eviction": lambda: browser.get(f"/business-memory/evictions/{eviction_id}/restore/"),
        "page eviction post": lambda: browser.post(
            f"/business-memory/evictions/{eviction_id}/restore/"
        ),
    }


OUTSIDER_ONLY = {
    "rest recall account": lambda c, b: rest(
        c, b, "get", "/api/v1/business-memory/entries/icp_definition"
    ),
    "rest history account": lambda c, b: rest(
        c, b, "get", "/api/v1/business-memory/entries/icp_definition/history"
    ),
    "rest delete account": lambda c, b: rest(
        c, b, "delete", "/api/v1/business-memory/entries/icp_definition"
    ),
    "mcp recall account": lambda c, b: mcp(
        c, b, "outreach_recall_business_memory", {"key": "icp_definition"}
    ),
}


@pytest.mark.parametrize("who", ["outsider", "colleague", "admin"])
def test_nobody_else_reaches_a_members_own_context(world, who):
    intruder = world[who]
    # An outsider must not touch anything; a colleague reads the shared entries (and that
    # counts as their use), never the member's.
    watched = None if who == "outsider" else "member"
    before = state(watched)
    eviction = str(world["eviction"].id)
    secrets = SECRETS if who == "outsider" else ["MEMBER-SECRET-SIGNATURE"]
    # Within the account the account's evictions are the members' to see; only an
    # outsider gets the real eviction's id.
    real = calls(intruder, eviction if who == "outsider" else str(uuid.uuid4()))
    for name, call in real.items():
        response = call()
        body = response.content.decode()
        assert response.status_code < 500, name
        for secret in secrets:
            assert secret not in body, (who, name, secret)
    if who == "outsider":
        client, bearer = Client(), token(intruder)
        for name, call in OUTSIDER_ONLY.items():
            response = call(client, bearer)
            assert response.status_code < 500, name
            for secret in SECRETS:
                assert secret not in response.content.decode(), (name, secret)
    assert state(watched) == before  # nothing read (no access counted), changed or deleted


def test_an_outsiders_store_of_the_same_key_is_their_own(world, other_admin):
    bearer = token(other_admin)
    response = rest(
        Client(),
        bearer,
        "post",
        "/api/v1/business-memory/entries",
        {"key": "icp_definition", "value": "B's own", "expected_version": 0},
    )
    assert response.status_code == 201
    assert response.json()["data"]["previous_version"] == 0
    assert Entry.objects.get(account__slug="acme-sales", key="icp_definition").value == (
        "A-SECRET-ICP"
    )


def test_an_outsider_gets_the_same_answer_for_a_real_and_a_made_up_eviction(world, other_admin):
    bearer = token(other_admin)
    client = Client()
    real_id, fake_id = str(world["eviction"].id), str(uuid.uuid4())
    path = "/api/v1/business-memory/evictions/{}/restore"
    real = rest(client, bearer, "post", path.format(real_id))
    fake = rest(client, bearer, "post", path.format(fake_id))
    assert real.status_code == fake.status_code == 404
    assert real.content.decode().replace(real_id, "ID") == fake.content.decode().replace(
        fake_id, "ID"
    )


def test_counts_and_ranks_see_only_the_readers_own_entries(world, member):
    listing = rest(
        Client(), token(world["colleague"]), "get", "/api/v1/business-memory/entries?limit=100"
    ).json()["data"]["entries"]
    assert {e["key"] for e in listing} == {"icp_definition", "brand_voice"}
    searched = rest(
        Client(), token(world["colleague"]), "get", "/api/v1/business-memory/search?query=secret"
    ).json()["data"]
    assert {r["key"] for r in searched["results"]} <= {"icp_definition", "brand_voice"}
    assert searched["not_compared"] == 0
    own = rest(
        Client(), token(member), "get", "/api/v1/business-memory/entries?layer=member"
    ).json()["data"]["entries"]
    assert [e["key"] for e in own] == ["member-secret-key"]


@pytest.mark.parametrize("who", ["outsider", "colleague", "admin"])
def test_a_members_key_is_answered_like_a_made_up_one(world, who):
    bearer, client = token(world[who]), Client()
    base = "/api/v1/business-memory/entries"
    for path in ("{}?layer=member", "{}/history?layer=member", "{}"):
        real = rest(client, bearer, "get", f"{base}/{path.format('member-secret-key')}")
        fake = rest(client, bearer, "get", f"{base}/{path.format('made-up-key')}")
        assert real.status_code == fake.status_code, path
        assert real.content.decode().replace("member-secret-key", "K") == (
            fake.content.decode().replace("made-up-key", "K")
        ), path


def test_a_layers_capacity_counts_and_evicts_only_its_own_entries(
    admin_actor, member_actor, rival_actor, account, capacity
):
    """The store's counts and its eviction reach only the layer written: not another
    account's layer, not the account's shared layer for a member, not another member's."""
    from outreach.access import Actor

    capacity(ACCOUNT_CAPACITY=2, MEMBER_CAPACITY=2)
    colleague = Actor.for_member(factories.member(account, "colleague@example.com"))
    for n in range(2):
        entry_store(actor=rival_actor, key=f"rival:{n}", value=n, confidence=1)
        entry_store(actor=admin_actor, key=f"shared:{n}", value=n, confidence=50)
        entry_store(actor=colleague, key=f"theirs:{n}", value=n, confidence=1, layer="member")
    for n in range(2):  # a full shared layer and a colleague's full own layer beside it
        assert not entry_store(
            actor=member_actor, key=f"mine:{n}", value=n, confidence=90, layer="member"
        ).evicted
    evicted = entry_store(actor=admin_actor, key="shared:2", value=2, confidence=90).evicted
    assert [e["key"] for e in evicted] == ["shared:0"]
    live = Entry.objects.filter(status=Entry.Status.LIVE)
    assert live.filter(key__startswith="rival:").count() == 2
    assert live.filter(key__startswith="theirs:").count() == 2
    assert live.filter(key__startswith="mine:").count() == 2
