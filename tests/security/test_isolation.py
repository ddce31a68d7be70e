"""Isolation: a second account, with its own valid credentials, reaches nothing of the first.

One table of every REST route, MCP tool, page and admin view, called with account B's
token or session and account A's ids. For each: nothing of A comes back, nothing of A is
counted, compared or changed, and an A id is answered exactly like an id that does not
exist (so existence is never confirmed).
"""

import json
import uuid

import pytest
from django.test import Client

from outreach.access import Actor
from outreach.services import suppression_add
from prospect_memory.notes.models import AuditEvent, Compaction, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests import factories
from tests.factories import save_note
from tests.helpers import token as issue_token

pytestmark = pytest.mark.django_db

SECRETS = [
    "A-SECRET-TITLE",
    "A-SECRET-BODY",
    "a-secret-source",
    "ceo@acme.dev",
    "A Secret Campaign",
    "vip@acme.dev",
]


@pytest.fixture
def world(account, module_admin, other_account, other_admin):
    a = Actor.for_member(module_admin)
    campaign = factories.campaign(account, "A Secret Campaign")
    prospect = factories.prospect(campaign, "ceo@acme.dev")
    factories.sent(prospect, 3)
    factories.reply(prospect, "negative")
    suppression_add(account=account, kind="address", value="vip@acme.dev")
    notes = [
        save_note(
            a,
            title=f"A-SECRET-TITLE {i}",
            body=f"A-SECRET-BODY {i} about Acme.",
            source_urls=[f"https://acme.dev/a-secret-source/{i}"],
        ).note
        for i in range(4)
    ]
    compaction = dossier_compact(
        actor=a,
        domain="acme.dev",
        expected_note_count=4,
        body="A-SECRET-BODY merged",
        title="A-SECRET-TITLE merged",
        note_ids=[str(notes[0].id), str(notes[1].id)],
    )
    token_b = issue_token(other_admin, client_name="B agent")
    browser_b = Client()
    browser_b.force_login(other_admin.user)
    return {
        "prospect": prospect,
        "note": notes[2],
        "compaction": compaction.compaction_id,
        "token": token_b,
        "browser": browser_b,
    }


def snapshot():
    return (
        sorted(Note.objects.filter(account__slug="acme-sales").values_list("id", "status")),
        list(Compaction.objects.filter(account__slug="acme-sales").values_list("restored_at")),
    )


def mcp(client, token, tool, arguments):
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
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def rest(client, token, method, path, body=None):
    kwargs = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if body is not None:
        return getattr(client, method)(
            path, json.dumps(body), content_type="application/json", **kwargs
        )
    return getattr(client, method)(path, **kwargs)


def calls(w, note_id, compaction_id, prospect_id):
    """Every way in, for the ids given (A's real ones, or ids that do not exist)."""
    client, token, browser = Client(), w["token"], w["browser"]
    save = {
        "domain": "acme.dev",
        "body": "A-SECRET-BODY 2 about Acme.",
        "title": "B's own note",
        "source_urls": ["https://acme.dev/a-secret-source/2"],
        "observed_at": "2026-11-20",
    }
    compact = {
        "domain": "acme.dev",
        "expected_note_count": 3,
        "body": "merge",
        "note_ids": [note_id, note_id],
    }
    return {
        "rest recall": lambda: rest(client, token, "get", "/api/v1/recall?domain=ceo@acme.dev"),
        "rest list": lambda: rest(client, token, "get", "/api/v1/notes"),
        "rest list domain": lambda: rest(client, token, "get", "/api/v1/notes?domain=acme.dev"),
        "rest delete": lambda: rest(client, token, "delete", f"/api/v1/notes/{note_id}"),
        "rest compact": lambda: rest(client, token, "post", "/api/v1/compactions", compact),
        "rest restore": lambda: rest(
            client, token, "post", f"/api/v1/compactions/{compaction_id}/restore"
        ),
        "rest guide": lambda: rest(client, token, "get", "/api/v1/writing-guides/en"),
        "mcp recall": lambda: mcp(
            client, token, "outreach_recall_prospect_context", {"domain": "vip@acme.dev"}
        ),
        "mcp compact": lambda: mcp(client, token, "outreach_compact_prospect_context", compact),
        "mcp guide": lambda: mcp(client, token, "outreach_get_writing_guide", {"locale": "de"}),
        "page home": lambda: browser.get("/"),
        "page prospect": lambda: browser.get(f"/prospects/{prospect_id}/"),
        "page company": lambda: browser.get("/companies/acme.dev/"),
        "page list": lambda: browser.get("/companies/acme.dev/notes/"),
        "page delete confirm": lambda: browser.get(f"/notes/{note_id}/delete/"),
        "page delete": lambda: browser.post(f"/notes/{note_id}/delete/"),
        "page health": lambda: browser.get("/health/"),
        "page lookup": lambda: browser.get("/companies/?domain=acme.dev"),
        "admin note": lambda: browser.get(f"/admin/prospect_memory/note/{note_id}/change/"),
        "admin compaction": lambda: browser.get(
            f"/admin/prospect_memory/compaction/{compaction_id}/change/"
        ),
        "admin notes": lambda: browser.get("/admin/prospect_memory/note/"),
        # Last: B saves on the same domain, which must compare against nothing of A.
        "rest save": lambda: rest(client, token, "post", "/api/v1/notes", save),
        "mcp save": lambda: mcp(
            client, token, "outreach_save_prospect_research", {**save, "body": save["body"] + "!"}
        ),
    }


def answer(response):
    return response.status_code, response.content.decode(errors="replace")


def test_second_account_reaches_nothing_of_the_first(world):
    before = snapshot()
    real = calls(world, str(world["note"].id), str(world["compaction"]), world["prospect"].pk)
    fake_note, fake_compaction = str(uuid.uuid4()), str(uuid.uuid4())
    fake = calls(world, fake_note, fake_compaction, 987654)

    for name, call in real.items():
        status, body = answer(call())
        assert status < 500, name
        if name.endswith("save"):
            # B's note echoes B's own text (the same words as A's, on purpose): what must
            # not appear is any note of A's in the overlap.
            parsed = json.loads(body)
            data = (
                parsed["data"]
                if "data" in parsed
                else parsed["result"]["structuredContent"]["data"]
            )
            a_ids = {
                str(i)
                for i in Note.objects.filter(account__slug="acme-sales").values_list(
                    "id", flat=True
                )
            }
            overlap = data["overlap"]
            mentioned = {d["id"] for d in overlap["near_duplicates"] + overlap["overlaps"]}
            mentioned |= {d["note_id"] for d in overlap["shared_sources"]}
            assert not mentioned & a_ids, name
            continue
        for secret in SECRETS:
            assert secret not in body, (name, secret)
        assert str(world["note"].id) not in body or status in (404, 400), name
        if name in {
            "rest delete",
            "rest restore",
            "page prospect",
            "page delete confirm",
            "page delete",
            "admin note",
            "admin compaction",
        }:
            fake_status, fake_body = answer(fake[name]())
            assert status == fake_status, name
            normalised = body.replace(str(world["note"].id), "ID").replace(
                str(world["compaction"]), "ID"
            )
            normalised_fake = fake_body.replace(fake_note, "ID").replace(fake_compaction, "ID")
            if status != 302:  # redirects to sign-in carry the path
                assert normalised == normalised_fake, name

    recall = json.loads(answer(real["rest recall"]())[1])["data"]
    assert recall["note_count"] <= 2  # only B's own saves from this test, never A's 3
    assert recall["relationship"] == {
        "campaigns": [],
        "messages_sent": 0,
        "last_reply": None,
        "suppressed": False,
        "suppression_matches": [],
    }
    assert recall["should_stop"] is False
    assert snapshot() == before
    assert not AuditEvent.objects.filter(account__slug="acme-sales", action="delete").exists()


def test_b_saves_compare_against_nothing_of_a(world):
    calls_ = calls(world, str(world["note"].id), str(world["compaction"]), world["prospect"].pk)
    saved = json.loads(answer(calls_["rest save"]())[1])["data"]
    assert saved["note_count"] == 1
    assert saved["overlap"]["near_duplicates"] == []
    assert saved["overlap"]["shared_sources"] == []
    assert saved["overlap"]["compared"] == 0
    mcp_saved = json.loads(answer(calls_["mcp save"]())[1])["result"]["structuredContent"]["data"]
    assert mcp_saved["note_count"] == 2
    ids = {d["id"] for d in mcp_saved["overlap"]["near_duplicates"]}
    assert ids == {saved["note"]["id"]}  # B's own first note, nothing of A
