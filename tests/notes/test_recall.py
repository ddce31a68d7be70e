"""dossier_recall: notes, freshness, overlap pairs, relationship, stop conditions, payload cap."""

import random
from datetime import timedelta

import pytest

from outreach.renderers import dumps
from outreach.services import suppression_add
from prospect_memory.notes import answers
from prospect_memory.notes.models import Note
from prospect_memory.notes.payloads import recall_data
from prospect_memory.notes.rules import utc_today
from prospect_memory.notes.selectors import dossier_recall
from tests import factories
from tests.factories import save_note

pytestmark = pytest.mark.django_db


def days_ago(n: int) -> str:
    return (utc_today() - timedelta(days=n)).isoformat()


def test_unknown_domain_is_not_known_and_stale(admin_actor):
    data = recall_data(dossier_recall(actor=admin_actor, domain="founder@acme.dev"))
    assert data["domain"] == "acme.dev"
    assert (data["known"], data["stale"], data["note_count"], data["notes"]) == (
        False,
        True,
        0,
        [],
    )
    assert data["should_stop"] is False
    assert data["relationship"]["last_reply"] is None


def test_notes_come_newest_observed_first_with_per_note_staleness(admin_actor):
    save_note(admin_actor, body="old fact", observed_at=days_ago(45))
    save_note(admin_actor, body="edge fact", observed_at=days_ago(30))
    save_note(admin_actor, body="new fact", observed_at=days_ago(1))
    data = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))
    assert [n["body"] for n in data["notes"]] == ["new fact", "edge fact", "old fact"]
    assert [n["stale"] for n in data["notes"]] == [False, False, True]
    assert [n["age_days"] for n in data["notes"]] == [1, 30, 45]
    assert data["stale"] is False
    assert data["known"] is True
    note = data["notes"][0]
    assert set(note) == {
        "id",
        "title",
        "body",
        "source_urls",
        "observed_at",
        "stale",
        "age_days",
        "created_at",
        "attribution",
    }
    assert note["attribution"] == {"member": "admin@example.com", "oauth_client": None}


def test_a_recalled_note_reads_as_every_other_answer_gives_it(admin_actor):
    """Recall builds its notes from rows, the other answers from views: the same note,
    its storing time whole seconds or not, reads the same in both."""
    from datetime import UTC, datetime

    from prospect_memory.notes.payloads import note_data
    from prospect_memory.notes.selectors import note_view

    ids = [
        save_note(admin_actor, body=f"fact {i}", observed_at=days_ago(i)).note.id for i in (1, 2)
    ]
    Note.objects.filter(id=ids[0]).update(created_at=datetime(2026, 3, 1, 9, 30, tzinfo=UTC))
    Note.objects.filter(id=ids[1]).update(
        created_at=datetime(2026, 3, 1, 9, 30, 5, 120, tzinfo=UTC)
    )
    recalled = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))["notes"]
    viewed = [note_data(note_view(Note.objects.get(id=i), domain="acme.dev")) for i in ids]
    assert recalled == viewed
    assert [n["created_at"] for n in recalled] == [
        "2026-03-01T09:30:00Z",
        "2026-03-01T09:30:05.000120Z",
    ]


def test_dossier_is_stale_when_its_newest_note_is(admin_actor):
    save_note(admin_actor, body="old", observed_at=days_ago(31))
    assert dossier_recall(actor=admin_actor, domain="acme.dev").stale is True


def test_overlap_pairs_among_the_twenty_newest(admin_actor):
    body = "Acme raised a Series B of 40M led by Example Ventures."
    a = save_note(admin_actor, body=body, observed_at=days_ago(2)).note.id
    b = save_note(admin_actor, body=body + " Confirmed.", observed_at=days_ago(1)).note.id
    save_note(admin_actor, body="Acme runs on Django.", observed_at=days_ago(1))
    data = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))
    [pair] = data["overlap_pairs"]
    assert set(pair["note_ids"]) == {str(a), str(b)}
    assert pair["distance"] <= 0.30


def test_overlap_pairs_ignore_notes_beyond_the_window(admin_actor, limits):
    limits(OVERLAP_PAIR_WINDOW=2)
    body = "Acme raised a Series B of 40M led by Example Ventures."
    save_note(admin_actor, body=body, observed_at=days_ago(10))
    save_note(admin_actor, body=body, observed_at=days_ago(9))
    save_note(admin_actor, body="Acme runs on Django.", observed_at=days_ago(1))
    save_note(admin_actor, body="Acme opened an office in Lyon.", observed_at=days_ago(1))
    assert dossier_recall(actor=admin_actor, domain="acme.dev").overlap_pairs == []


def test_overlap_pairs_compare_only_ready_vectors_of_the_current_model(admin_actor):
    body = "Acme raised a Series B of 40M led by Example Ventures."
    ids = [save_note(admin_actor, body=body, observed_at=days_ago(1)).note.id for _ in range(4)]
    Note.objects.filter(id=ids[2]).update(embedding_status="pending")
    Note.objects.filter(id=ids[3]).update(embedding_model="an-older-model")
    data = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))
    [pair] = data["overlap_pairs"]
    assert set(pair["note_ids"]) == {str(ids[0]), str(ids[1])}
    assert pair["distance"] == round(pair["distance"], 4)


def test_overlap_pairs_at_the_same_distance_come_in_the_order_of_their_ids(admin_actor):
    from uuid import UUID

    body = "Acme raised a Series B of 40M led by Example Ventures."
    for _ in range(5):
        save_note(admin_actor, body=body, observed_at=days_ago(1))
    pairs = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))["overlap_pairs"]
    assert len(pairs) == 10
    assert {p["distance"] for p in pairs} == {0.0}
    ids = [tuple(UUID(i) for i in p["note_ids"]) for p in pairs]
    assert all(a < b for a, b in ids)
    assert ids == sorted(ids)


def test_relationship_and_stop_on_negative_reply(admin_actor, account):
    campaign = factories.campaign(account, "Spring")
    prospect = factories.prospect(campaign, "ceo@acme.dev")
    factories.sent(prospect, 2)
    factories.reply(prospect, "negative")
    data = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))
    rel = data["relationship"]
    assert [c["name"] for c in rel["campaigns"]] == ["Spring"]
    assert rel["messages_sent"] == 2
    assert rel["last_reply"]["sentiment"] == "negative"
    assert rel["last_reply"]["campaign"]["name"] == "Spring"
    assert data["should_stop"] is True
    assert [r["code"] for r in data["stop_reasons"]] == ["last_reply_negative"]


@pytest.mark.parametrize(
    ("sentiment", "stop"),
    [
        ("bounce", True),
        ("negative", True),
        ("positive", False),
        ("neutral", False),
        ("out_of_office", False),
        ("unsubscribe", True),
    ],
)
def test_stop_conditions_by_last_reply(admin_actor, account, sentiment, stop):
    prospect = factories.prospect(factories.campaign(account), "ceo@acme.dev")
    factories.reply(prospect, sentiment)
    assert dossier_recall(actor=admin_actor, domain="acme.dev").should_stop is stop


def test_suppressed_domain_and_address_stop(admin_actor, account):
    suppression_add(account=account, kind="address", value="ceo@acme.dev")
    assert dossier_recall(actor=admin_actor, domain="acme.dev").should_stop is False
    recall = dossier_recall(actor=admin_actor, domain="ceo@acme.dev")
    data = recall_data(recall)
    assert data["relationship"]["suppressed"] is True
    assert data["relationship"]["suppression_matches"] == [
        {"kind": "address", "value": "ceo@acme.dev"}
    ]
    assert [r["code"] for r in data["stop_reasons"]] == ["suppressed"]

    suppression_add(account=account, kind="domain", value="acme.dev")
    assert dossier_recall(actor=admin_actor, domain="acme.dev").should_stop is True


def test_other_accounts_notes_and_relationship_are_invisible(
    admin_actor, rival_actor, other_account
):
    save_note(rival_actor, body="their research")
    prospect = factories.prospect(factories.campaign(other_account), "ceo@acme.dev")
    factories.reply(prospect, "bounce")
    suppression_add(account=other_account, kind="domain", value="acme.dev")
    data = recall_data(dossier_recall(actor=admin_actor, domain="acme.dev"))
    assert (data["known"], data["note_count"], data["notes"], data["should_stop"]) == (
        False,
        0,
        [],
        False,
    )
    assert data["relationship"]["campaigns"] == []


def test_payload_cap_keeps_newest_that_fit(admin_actor, limits):
    limits(RECALL_PAYLOAD_MAX_BYTES=25_000)
    ids = [
        save_note(admin_actor, body=f"{i} " + "x" * 9_000, observed_at=days_ago(10 - i)).note.id
        for i in range(5)
    ]
    recall = dossier_recall(actor=admin_actor, domain="acme.dev")
    assert recall.truncated is True
    assert [v["id"] for v in recall.note_payloads] == [ids[4], ids[3]]
    assert recall.omitted_note_ids == [ids[2], ids[1], ids[0]]
    assert recall.note_count == 5
    assert recall.ranking == "recency"
    assert recall.stale is False


@pytest.mark.parametrize("over", [0, 1])
def test_payload_cap_holds_to_the_byte(admin_actor, limits, over):
    for i in range(3):
        save_note(admin_actor, body=f"{i} " + "z" * 2_000, observed_at=days_ago(3 - i))
    recall = dossier_recall(actor=admin_actor, domain="acme.dev")  # made, then kept
    whole = len(dumps(recall.note_payloads))
    limits(RECALL_PAYLOAD_MAX_BYTES=whole - over)
    for _ in range(2):  # made anew, and taken from what is kept
        recall = dossier_recall(actor=admin_actor, domain="acme.dev")
        assert recall.truncated is bool(over)
        assert len(recall.note_payloads) == (2 if over else 3)
        answers.forget()


def test_payload_cap_ranks_by_query_when_given(admin_actor, limits):
    limits(RECALL_PAYLOAD_MAX_BYTES=12_000)
    filler = " ".join(["lorem ipsum dolor"] * 500)
    save_note(admin_actor, body="Hiring: Acme hires data engineers in Berlin. " + filler)
    pricing = save_note(
        admin_actor, body="Pricing: Acme charges per seat, 49 euro per month. " + filler
    ).note.id
    save_note(admin_actor, body="Office: Acme moved to a new office in Lyon. " + filler)
    recall = dossier_recall(
        actor=admin_actor, domain="acme.dev", query="Acme pricing per seat euro"
    )
    assert recall.truncated is True
    assert recall.ranking == "query"
    assert [v["id"] for v in recall.note_payloads] == [pricing]
    assert len(recall.omitted_note_ids) == 2


def test_payload_under_the_cap_is_never_truncated(admin_actor):
    for i in range(9):
        save_note(admin_actor, body=f"fact {i} " + "y" * 9_000)
    recall = dossier_recall(actor=admin_actor, domain="acme.dev")
    assert recall.truncated is False
    assert len(recall.note_payloads) == 9


@pytest.mark.django_db(transaction=True)
def test_a_recorded_recall_is_committed_and_unflushed_commit_stays_with_it(admin_actor):
    from django.db import connection

    from prospect_memory.notes.models import UsageEvent
    from prospect_memory.notes.services.notes import recall_record

    save_note(admin_actor, body="fresh fact", observed_at=days_ago(1))
    recall_record(actor=admin_actor, recall=dossier_recall(actor=admin_actor, domain="acme.dev"))
    event = UsageEvent.objects.get(account=admin_actor.account, kind="recall")
    assert (event.subject, event.from_memory) == ("acme.dev", True)
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)  # the setting ended with the usage row's commit


def test_a_notes_vector_and_ciphertexts_stay_in_its_row(account):
    """A 768-dimension vector (3 KB) and the ciphertexts stay in the heap row: comparisons
    and reads do not go to the TOAST table for them. Only a row too big for a page moves
    values out, the biggest ciphertext first, the vector last."""
    from django.db import connection

    from prospect_memory.notes.models import Dossier, Note

    dossier = Dossier.objects.create(account=account, domain="acme.dev")
    rng = random.Random(1)  # real vectors are as incompressible as random floats

    def stored(body: str) -> tuple:
        note = Note(account=account, dossier=dossier, observed_at="2026-11-01")
        note.title, note.body = "Hiring", body
        note.body_bytes = len(note.body.encode())
        note.embedding = [rng.uniform(-1, 1) for _ in range(768)]
        note.save()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL,"
                " pg_column_toast_chunk_id(title_ciphertext) IS NOT NULL,"
                " pg_column_toast_chunk_id(body_ciphertext) IS NOT NULL"
                " FROM prospect_memory_note WHERE id = %s",
                [note.id],
            )
            return cursor.fetchone()

    assert stored("Acme is hiring.") == (False, False, False)
    noise = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(9000))
    assert stored(noise) == (False, False, True)
