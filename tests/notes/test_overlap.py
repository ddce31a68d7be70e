"""Overlap on save: near duplicates, overlaps, shared sources, and what was skipped."""

import pytest

from prospect_memory.notes.models import Note
from tests.factories import overlap_of, save_note

pytestmark = pytest.mark.django_db

SERIES_B = "Acme raised a Series B of 40M led by Example Ventures."


def test_first_note_has_nothing_to_overlap(admin_actor):
    overlap = overlap_of(save_note(admin_actor))
    assert overlap["near_duplicates"] == overlap["overlaps"] == overlap["shared_sources"] == []
    assert (overlap["compared"], overlap["skipped"], overlap["semantic_check"]) == (
        0,
        0,
        "complete",
    )


def test_near_duplicate_comes_back_with_the_full_body(admin_actor):
    first = save_note(admin_actor, body=SERIES_B, source_urls=["https://acme.dev/a"])
    again = save_note(admin_actor, body=SERIES_B + "!", source_urls=["https://news.example/acme"])
    [dup] = overlap_of(again)["near_duplicates"]
    assert dup["id"] == str(first.note.id)
    assert dup["body"] == SERIES_B
    assert dup["title"] == "Funding"
    assert dup["distance"] <= 0.10
    assert dup["source_urls"] == ["https://acme.dev/a"]
    assert dup["observed_at"] == first.note.observed_at.isoformat()


def test_overlap_comes_back_with_a_300_character_excerpt(admin_actor):
    long_body = (
        "Acme closed a 40M Series B round, led by Example Ventures, in November. Existing "
        "investors Seedcamp and Point Nine joined the round; the money goes to hiring "
        "engineers for the data platform and opening a sales office in Paris, according to "
        "the founder, who also said the company will double its support team next year."
    )
    assert len(long_body) > 300
    first = save_note(admin_actor, body=long_body, source_urls=["https://acme.dev/a"])
    result = save_note(
        admin_actor,
        body="Acme closed a 40M Series B round, led by Example Ventures, in November. Existing "
        "investors Seedcamp and Point Nine joined the round; the money goes to hiring "
        "engineers for the data platform.",
        source_urls=["https://acme.dev/b"],
    )
    data = overlap_of(result)
    assert data["near_duplicates"] == []
    [item] = data["overlaps"]
    assert item["id"] == str(first.note.id)
    assert 0.10 < item["distance"] <= 0.30
    assert item["excerpt"] == long_body[:300] + "…"
    assert "body" not in item


def test_unrelated_note_is_in_no_bucket(admin_actor):
    save_note(admin_actor, body=SERIES_B)
    data = overlap_of(
        save_note(
            admin_actor,
            body="Acme runs on Django and PostgreSQL, deployed on AWS.",
            source_urls=["https://acme.dev/stack"],
        )
    )
    assert data["near_duplicates"] == data["overlaps"] == data["shared_sources"] == []
    assert data["compared"] == 1


def test_shared_sources_compare_normalised_urls(admin_actor):
    first = save_note(admin_actor, source_urls=["https://acme.dev/news?id=1", "https://acme.dev/x"])
    result = save_note(
        admin_actor,
        body="Something else entirely about the office move.",
        source_urls=["HTTPS://ACME.DEV:443/news?id=1#para", "http://acme.dev/x"],
    )
    [shared] = overlap_of(result)["shared_sources"]
    assert shared == {
        "note_id": str(first.note.id),
        "urls": ["HTTPS://ACME.DEV:443/news?id=1#para"],  # http vs https differ
    }


def test_overlap_never_looks_at_another_domain_or_account(admin_actor, rival_actor):
    save_note(rival_actor, body=SERIES_B)  # same domain, other account
    save_note(admin_actor, domain="other.dev", body=SERIES_B)  # same account, other domain
    data = overlap_of(save_note(admin_actor, body=SERIES_B))
    assert data["near_duplicates"] == data["shared_sources"] == []
    assert data["compared"] == 0


def test_notes_without_embeddings_are_counted_as_skipped(admin_actor):
    save_note(admin_actor, body=SERIES_B)
    save_note(admin_actor, body="Acme hires in Berlin.", source_urls=["https://acme.dev/jobs"])
    Note.objects.filter(body_bytes=len(SERIES_B)).update(
        embedding=None, embedding_status="pending", embedding_model=""
    )
    data = overlap_of(save_note(admin_actor, body=SERIES_B, source_urls=["https://acme.dev/c"]))
    assert data["near_duplicates"] == []  # the twin has no vector yet
    assert (data["compared"], data["skipped"], data["semantic_check"]) == (1, 1, "partial")
    assert "not proof" in data["semantic_check_note"]


def test_vectors_of_another_model_are_not_compared(admin_actor):
    save_note(admin_actor, body=SERIES_B)
    Note.objects.update(embedding_model="some-older-model")
    data = overlap_of(save_note(admin_actor, body=SERIES_B, source_urls=["https://acme.dev/c"]))
    assert data["skipped"] == 1
    assert data["near_duplicates"] == []


def test_with_the_semantic_model_a_finding_in_other_words_is_recognised(admin_actor, settings):
    """The promise of SPEC 14, as an agent meets it: a finding saved once, then the same
    fact found on another page in other words, comes back as a near duplicate or overlap."""
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {},
    }
    first = save_note(
        admin_actor,
        title="Hiring AEs",
        body="Brightwave Logistics is hiring six account executives for the DACH region.",
    )
    unrelated = save_note(
        admin_actor, title="Stack", body="Brightwave runs Oracle Transportation Management."
    )
    again = save_note(
        admin_actor,
        title="Sales hiring",
        body="Brightwave is recruiting 6 AEs to sell in Germany, Austria and Switzerland.",
        source_urls=["https://jobs.example/brightwave"],
    )
    overlap = overlap_of(again)
    found = {d["id"] for d in overlap["near_duplicates"] + overlap["overlaps"]}
    assert str(first.note.id) in found
    assert str(unrelated.note.id) not in found
    assert overlap["semantic_check"] == "complete"
