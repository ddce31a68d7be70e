"""The search page: a person asks what the account knows, through the agents' operation;
hits grouped by company with staleness and stop flags, business memory beside them; only
the signed-in member's account, and no query per hit."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from outreach.services import suppression_add
from prospect_memory.business.services.store import entry_store
from tests.factories import save_note

pytestmark = pytest.mark.django_db

HIRING = "Acme is hiring five account executives for its enterprise team in Berlin."


@pytest.fixture
def known(admin_actor, member_actor, rival_actor, committed):
    save_note(admin_actor, domain="acme.dev", title="Hiring AEs", body=HIRING)
    save_note(
        admin_actor, domain="globex.io", title="Hiring", body="Globex hires account executives."
    )
    committed(
        entry_store,
        actor=admin_actor,
        key="rule:enterprise_deals",
        value={"rule": "Enterprise deals need a champion and a security review first"},
        category="insight",
        confidence=90,
    )
    committed(
        entry_store,
        actor=member_actor,
        key="my_hiring_notes",
        value="Call account executives on Tuesdays",
        layer="member",
        confidence=100,
    )
    save_note(rival_actor, domain="rival-secret.com", title="Hiring", body=HIRING)


def page(member, **params):
    browser = Client()
    browser.force_login(member.user)
    response = browser.get("/search/", params)
    assert response.status_code == 200
    return response.content.decode()


def test_hits_are_grouped_by_company_with_business_memory_beside(known, module_admin, account):
    suppression_add(account=account, kind="domain", value="globex.io", reason="asked us")
    html = page(module_admin, q="hiring account executives enterprise")
    assert 'data-domain="acme.dev"' in html
    assert 'data-domain="globex.io"' in html
    assert "Do not contact" in html  # globex.io is suppressed
    assert 'data-key="rule:enterprise_deals"' in html
    assert "insight" in html
    assert "/companies/acme.dev/notes/#note-" in html
    assert "rival-secret.com" not in html  # another account's note
    assert "my_hiring_notes" not in html  # a member's own context is never searched here


def test_filters_by_kind_and_company(known, module_admin):
    only_notes = page(module_admin, q="enterprise", kind="notes")
    assert "rule:enterprise_deals" not in only_notes
    only_business = page(module_admin, q="enterprise", kind="business")
    assert 'data-domain="acme.dev"' not in only_business
    assert 'data-key="rule:enterprise_deals"' in only_business
    one_company = page(module_admin, q="hiring", kind="notes", company="someone@globex.io")
    assert 'data-domain="globex.io"' in one_company
    assert 'data-domain="acme.dev"' not in one_company


def test_empty_and_refused_searches_say_what_to_do(known, member):
    assert 'id="search-help"' in page(member)
    assert 'id="search-empty"' in page(
        member, q="hiring", kind="notes", company="nothing-known.dev"
    )
    refused = page(member, q="hiring", company="localhost")
    assert 'id="search-error"' in refused
    assert "search again" in refused
    too_long = page(member, q="x" * 1001)
    assert 'id="search-error"' in too_long
    assert "Question: " in too_long  # the page's words, not the operation's
    assert "outreach_search_knowledge" not in too_long


def test_a_person_searching_writes_nothing(known, module_admin):
    from prospect_memory.business.models import Entry
    from prospect_memory.core.models import UsageEvent

    entry = Entry.objects.get(key="rule:enterprise_deals")
    events = UsageEvent.objects.count()
    for _ in range(3):
        assert 'data-key="rule:enterprise_deals"' in page(module_admin, q="enterprise deals")
    entry.refresh_from_db()
    assert entry.access_count == 0
    assert UsageEvent.objects.count() == events


def test_a_search_costs_the_same_queries_whatever_it_finds(admin_actor, module_admin):
    browser = Client()
    browser.force_login(module_admin.user)
    browser.get("/search/", {"q": "warm up"})

    def queries(q: str) -> int:
        """Round trips to the database: statements sent together count once."""
        with CaptureQueriesContext(connection) as captured:
            assert browser.get("/search/", {"q": q}).status_code == 200
        return len({query.get("round_trip", id(query)) for query in captured.captured_queries})

    save_note(admin_actor, domain="one.dev", body="One.dev is hiring sales engineers.")
    few = queries("hiring sales engineers")
    for i in range(12):
        save_note(admin_actor, domain=f"co{i}.dev", body=f"Co{i} is hiring sales engineers.")
    many = queries("hiring sales engineers")
    assert many == few, (few, many)
