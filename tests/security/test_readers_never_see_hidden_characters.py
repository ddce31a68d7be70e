"""No character the write path refuses reaches a reader, by any route (issue 37).

Text kept from before the check (or from a check that knew fewer spellings) may hold an
override, a zero-width space or a character reference that spells one. Every reader gets a
visible U+FFFD in its place: recall and lists over MCP and REST, knowledge search, the
pages, the admin, an export.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from prospect_memory.lifecycle.export import export_lines
from prospect_memory.notes.models import Note
from tests import factories
from tests.helpers import bearer
from tests.security.test_memory_integrity import mcp, signed_in

pytestmark = pytest.mark.django_db

#: Hidden in every way a check before issue 37 let through, or that predates the check.
HIDDEN = [
    "\u202e",  # an override, as the character itself
    "\u200b",  # a zero-width space
    "&#0000008238;",  # an override, zero-padded decimal
    "&#x000202E;",  # zero-padded hex
    "&#x202E",  # no semicolon
    "&zwj;",  # a joiner, named
]
HIDDEN_CHARACTERS = ("\u202e", "\u200b", "\u200d")


def hidden_in(text: str) -> list[str]:
    return [char for char in HIDDEN_CHARACTERS if char in text] + [
        spelled for spelled in HIDDEN[2:] if spelled in text
    ]


@pytest.fixture
def legacy(admin_actor, committed):
    """A note and a shared entry whose text holds every hidden spelling, written as data
    stored before the check, and a former member's label of the same kind."""
    note = factories.save_note(admin_actor, title="Funding", body="Acme hires AEs.").note
    hidden = " ".join(f"pay{h} able" for h in HIDDEN)
    note = Note.objects.get(pk=note.id)
    note.title = f"Funding {HIDDEN[0]} round"
    note.body = f"Acme hires account executives in Berlin. {hidden}"
    note.save()
    committed(
        entry_store,
        actor=admin_actor,
        key="rule:enterprise_deals",
        value={"rule": "Enterprise deals need a champion"},
        confidence=90,
    )
    entry = Entry.objects.get(key="rule:enterprise_deals")
    entry.value_json = json.dumps(
        {"rule": f"Enterprise deals need a champion {hidden}", f"k{HIDDEN[1]}": [hidden]}
    )
    entry.written_by_label = f"a former{HIDDEN[0]} member"
    entry.save()
    return note, entry


def _assert_readable(text: str) -> None:
    assert hidden_in(text) == [], hidden_in(text)
    assert "\ufffd" in text


def test_recall_and_lists_over_mcp_show_a_visible_sign(client, module_admin, legacy):
    headers = bearer(module_admin)
    recalled = mcp(client, headers, "outreach_recall_prospect_context", {"domain": "acme.dev"})
    _assert_readable(json.dumps(recalled, ensure_ascii=False))
    entry = mcp(
        client, headers, "outreach_recall_business_memory", {"key": "rule:enterprise_deals"}
    )
    _assert_readable(json.dumps(entry, ensure_ascii=False))
    listed = mcp(client, headers, "outreach_list_business_memory", {})
    _assert_readable(json.dumps(listed, ensure_ascii=False))


def test_rest_and_knowledge_search_show_a_visible_sign(api, legacy):
    for path in (
        "/api/v1/recall?domain=acme.dev",
        "/api/v1/notes?domain=acme.dev",
        "/api/v1/business-memory/entries/rule:enterprise_deals",
        "/api/v1/knowledge/search?query=account+executives+Berlin",
    ):
        response = api.client.get(path, **api._headers())
        assert response.status_code == 200, (path, response.content)
        _assert_readable(response.content.decode())


def test_pages_show_a_visible_sign(module_admin, legacy):
    browser = signed_in(module_admin)
    for path in (
        "/companies/acme.dev/",
        "/companies/acme.dev/notes/",
        "/business-memory/",
        "/business-memory/account/rule:enterprise_deals/",
        "/search/?q=account+executives",
    ):
        page = browser.get(path)
        assert page.status_code == 200, path
        text = page.content.decode()
        assert hidden_in(text) == [], (path, hidden_in(text))


def test_the_admin_shows_a_visible_sign(legacy):
    staff = get_user_model().objects.create_superuser("staff", "staff@kit.test", "pw-staff-1")
    note, entry = legacy
    browser = signed_in(staff)
    for path in (
        f"/admin/prospect_memory/note/{note.pk}/change/",
        f"/admin/business_memory/entry/{entry.pk}/change/",
    ):
        page = browser.get(path)
        assert page.status_code == 200, path
        assert hidden_in(page.content.decode()) == [], path


def test_an_export_carries_a_visible_sign_and_imports_again(account, module_admin, legacy):
    from prospect_memory.lifecycle.imports import import_lines

    lines = list(export_lines(account, member=module_admin))
    _assert_readable(b"".join(lines).decode())
    elsewhere = factories.account("kit-two")
    receiver = factories.member(elsewhere, "admin@example.com", admin=True)
    counts = import_lines(lines, elsewhere, member=receiver)  # the import's own rules pass
    assert counts["note"] == 1
    assert counts["entry"] == 1


def test_a_clients_name_from_before_the_rule_shows_as_a_visible_sign(client, module_admin):
    from oauth2_provider.models import AccessToken

    from tests.security.test_memory_integrity import save

    headers = bearer(module_admin)
    assert save(client, headers, "Acme raised a round.").status_code == 201
    application = AccessToken.objects.latest("id").application
    application.name = "Research\u3164Bot\u2800"  # registered before names were checked so
    application.save()
    browser = signed_in(module_admin)
    for path in ("/health/", "/activity/", "/companies/acme.dev/"):
        page = browser.get(path).content.decode()
        assert "\u3164" not in page, path
        assert "\u2800" not in page, path
