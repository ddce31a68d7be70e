"""Knowledge search (SPEC 13) on real PostgreSQL: one answer over promoted business memory
and every company's notes, with stop flags and provenance, inside one account only."""

import json

import pytest

from outreach.errors import ValidationFailed
from outreach.services import suppression_add
from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from prospect_memory.core.models import UsageEvent
from prospect_memory.knowledge.payloads import search_data
from prospect_memory.knowledge.selectors import knowledge_search
from tests.factories import save_note

pytestmark = pytest.mark.django_db

HIRING = "Acme is hiring five account executives for its enterprise team in Berlin."


@pytest.fixture
def known(admin_actor, member_actor, rival_actor, committed):
    save_note(admin_actor, domain="acme.dev", title="Hiring AEs", body=HIRING)
    save_note(
        admin_actor,
        domain="globex.io",
        title="Funding",
        body="Globex raised a Series B of 40M led by Example Ventures.",
    )
    committed(
        entry_store,
        actor=admin_actor,
        key="rule:enterprise_deals",
        value={"rule": "Enterprise deals need a champion and a security review first"},
        category="insight",
        confidence=90,
        source={"pipeline_id": "weekly_outreach", "step_id": "analyse_replies"},
    )
    committed(
        entry_store,
        actor=admin_actor,
        key="guess:enterprise_pricing",
        value={"rule": "Enterprise deals close faster with annual pricing"},
        confidence=69,
    )
    committed(
        entry_store,
        actor=member_actor,
        key="my_enterprise_notes",
        value={"rule": "Enterprise deals: I call the champion first"},
        layer="member",
        confidence=100,
    )
    # The same words in another account.
    save_note(rival_actor, domain="acme.dev", title="Hiring AEs", body=HIRING)
    committed(
        entry_store,
        actor=rival_actor,
        key="rule:enterprise_deals",
        value={"rule": "Enterprise deals need a champion and a security review first"},
        confidence=95,
    )


def hits(result) -> list[tuple[str, str]]:
    return [(h.kind, h.note.domain if h.note else h.entry.key) for h in result.hits]


def test_one_answer_holds_notes_of_any_company_and_promoted_entries(known, admin_actor):
    result = knowledge_search(actor=admin_actor, query="hiring account executives enterprise")
    assert hits(result)[0] == ("prospect_notes", "acme.dev")
    assert ("business_memory", "rule:enterprise_deals") in hits(result)
    assert ("prospect_notes", "globex.io") in hits(result)
    assert result.not_compared == 0
    data = search_data(result)
    [entry] = [h for h in data["hits"] if h["kind"] == "business_memory"]
    assert entry["key"] == "rule:enterprise_deals"
    assert entry["derived_from"]["pipeline_id"] == "weekly_outreach"
    assert entry["about"] is None
    [note] = [h for h in data["hits"] if h.get("about", {}) and h["about"]["domain"] == "acme.dev"]
    assert note["derived_from"]["source_urls"] == ["https://acme.dev/news/series-b"]
    assert note["excerpt"] == HIRING
    assert note["about"]["should_stop"] is False


def test_never_another_accounts_a_members_own_or_an_unpromoted_entry(
    known, admin_actor, member_actor, rival_actor
):
    for actor in (admin_actor, member_actor):
        found = hits(knowledge_search(actor=actor, query="enterprise deals champion", limit=20))
        assert ("business_memory", "my_enterprise_notes") not in found
        assert ("business_memory", "guess:enterprise_pricing") not in found
        assert len([h for h in found if h == ("prospect_notes", "acme.dev")]) == 1
    rival = knowledge_search(actor=rival_actor, query="enterprise deals champion", limit=20)
    assert hits(rival) == [
        ("business_memory", "rule:enterprise_deals"),
        ("prospect_notes", "acme.dev"),
    ]
    ids = {h.note.id for h in rival.hits if h.note} | {h.entry.id for h in rival.hits if h.entry}
    ours = knowledge_search(actor=admin_actor, query="enterprise deals champion", limit=20)
    assert ids.isdisjoint({h.note.id for h in ours.hits if h.note})
    assert ids.isdisjoint({h.entry.id for h in ours.hits if h.entry})


def test_a_suppressed_company_is_flagged(known, admin_actor, account):
    suppression_add(account=account, kind="domain", value="acme.dev")
    data = search_data(knowledge_search(actor=admin_actor, query="hiring account executives"))
    acme = next(h for h in data["hits"] if h["about"] and h["about"]["domain"] == "acme.dev")
    assert acme["about"]["should_stop"] is True
    assert [r["code"] for r in acme["about"]["stop_reasons"]] == ["suppressed"]


def test_kinds_and_domain_narrow_the_search(known, admin_actor):
    only_notes = knowledge_search(actor=admin_actor, query="enterprise", kinds=["prospect_notes"])
    assert {kind for kind, _ in hits(only_notes)} == {"prospect_notes"}
    only_globex = knowledge_search(
        actor=admin_actor, query="funding", kinds=["prospect_notes"], domain="cfo@globex.io"
    )
    assert hits(only_globex) == [("prospect_notes", "globex.io")]
    entries_too = knowledge_search(actor=admin_actor, query="enterprise", domain="globex.io")
    assert {kind for kind, _ in hits(entries_too)} == {"business_memory", "prospect_notes"}


def test_an_entry_shown_counts_as_a_use(known, admin_actor, rest):
    """The operation counts what it shows (the search itself writes nothing)."""
    knowledge_search(actor=admin_actor, query="enterprise deals", kinds=["business_memory"])
    entry = Entry.objects.get(account=admin_actor.account, key="rule:enterprise_deals")
    assert entry.access_count == 0
    rest("query=enterprise+deals&kinds=business_memory")
    entry.refresh_from_db()
    assert entry.access_count == 1


def test_the_answer_stays_within_its_cap(known, admin_actor, settings):
    settings.KNOWLEDGE = {"PAYLOAD_MAX_BYTES": 1200}
    result = knowledge_search(actor=admin_actor, query="enterprise", limit=20)
    assert result.truncated is True
    assert 0 < len(result.hits) < 3
    assert len(json.dumps(search_data(result))) <= 1200 + 200  # the cap is on the hits


def test_with_the_provider_down_nothing_is_compared_and_the_answer_says_so(
    known, admin_actor, gemini
):
    gemini.mode = "503"
    result = knowledge_search(actor=admin_actor, query="enterprise")
    assert result.hits == []
    assert result.not_compared == 3  # two notes and one promoted entry
    assert "Nothing was compared" in search_data(result)["note"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 1001}, "query"),
        ({"query": "a\x00b"}, "query"),
        ({"query": "ok", "kinds": []}, "kinds"),
        ({"query": "ok", "kinds": ["emails"]}, "kinds"),
        ({"query": "ok", "kinds": ["prospect_notes", "prospect_notes"]}, "kinds"),
        ({"query": "ok", "limit": 0}, "limit"),
        ({"query": "ok", "limit": 21}, "limit"),
        ({"query": "ok", "limit": True}, "limit"),
    ],
)
def test_bad_arguments_are_refused_by_field(admin_actor, arguments, field):
    with pytest.raises(ValidationFailed) as refused:
        knowledge_search(actor=admin_actor, **arguments)
    assert field in refused.value.details["fields"]


@pytest.fixture
def rest(api_for, module_admin):
    """Knowledge search over REST with a read-only token, answers checked against OpenAPI."""
    api = api_for(module_admin, scopes=["outreach_read"])

    def get(query: str):
        path = "/api/v1/knowledge/search"
        return api.call("get", f"{path}?{query}", path)

    return get


def test_over_rest_with_kinds_in_the_query_string(known, rest):
    response = rest("query=enterprise+deals&kinds=business_memory")
    assert response.status_code == 200, response.content
    assert [h["key"] for h in response.json()["data"]["hits"]] == ["rule:enterprise_deals"]
    both = rest("query=enterprise&kinds=business_memory,prospect_notes&limit=20").json()["data"]
    assert {h["kind"] for h in both["hits"]} == {"business_memory", "prospect_notes"}


def test_a_search_is_counted_as_one_use_of_the_accounts_knowledge(known, rest, account):
    rest("query=enterprise+deals")
    rest("query=hiring&domain=someone@Acme.dev")
    rest("query=ok&limit=21")  # refused: not a use
    events = UsageEvent.objects.filter(account=account, memory="knowledge").order_by("created_at")
    assert [(e.memory, e.kind, e.subject) for e in events] == [
        ("knowledge", "search", ""),
        ("knowledge", "search", "acme.dev"),
    ]
    assert all(e.oauth_application is not None for e in events)


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("query=", 400, "validation_error"),
        ("query=ok&kinds=emails", 400, "validation_error"),
        ("query=ok&limit=21", 400, "validation_error"),
        ("query=ok&domain=not+a+domain", 400, "invalid_domain"),
        ("query=ok&colour=red", 200, None),  # unknown query parameters are ignored
    ],
)
def test_bad_arguments_over_rest(rest, query, status, code):
    response = rest(query)
    assert response.status_code == status, response.content
    if code:
        assert response.json()["error"]["code"] == code


def test_text_without_words_is_never_compared(known, admin_actor, committed):
    result = knowledge_search(actor=admin_actor, query="🙂 ???")
    assert result.hits == []
    assert "no words" in search_data(result)["note"]
    save_note(admin_actor, domain="acme.dev", title="???", body="!!! ... ---")
    found = knowledge_search(actor=admin_actor, query="hiring account executives", limit=20)
    assert all(h.distance == h.distance for h in found.hits)  # no NaN
    assert "???" not in [h.title for h in found.hits]


def test_a_flood_of_bad_items_is_reported_briefly(rest):
    response = rest("query=ok&kinds=" + ",".join(["x"] * 2000))
    assert response.status_code == 400
    assert len(response.content) < 10_000
    assert "more than 20 problems" in response.content.decode()


def test_a_parameter_given_twice_is_refused(rest):
    response = rest("query=ok&domain=acme.dev&domain=globex.io")
    assert response.status_code == 400
    assert "domain" in response.json()["error"]["details"]["fields"]


def test_too_many_query_fields_is_a_400_in_the_error_envelope(rest):
    response = rest("query=x" + "&kinds=business_memory" * 1200)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
