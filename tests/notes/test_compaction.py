"""Compaction, restore and delete."""

from datetime import timedelta

import pytest

from outreach.access import Actor
from outreach.errors import NotModuleAdmin
from prospect_memory.notes.errors import (
    DomainNoteLimitReached,
    NoteCountMismatch,
    NotFound,
    ValidationFailed,
)
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.rules import utc_today
from prospect_memory.notes.selectors import dossier_recall
from prospect_memory.notes.services.compaction import compaction_restore, dossier_compact
from prospect_memory.notes.services.notes import note_delete
from tests.factories import save_note

pytestmark = pytest.mark.django_db


def days_ago(n):
    return (utc_today() - timedelta(days=n)).isoformat()


@pytest.fixture
def three(admin_actor):
    return [
        save_note(
            admin_actor,
            body=f"fact {i}",
            source_urls=[f"https://acme.dev/{i}", "https://acme.dev/shared"],
            observed_at=days_ago(10 - i),
        ).note
        for i in range(3)
    ]


def test_compact_merges_all_active_notes(admin_actor, three):
    result = dossier_compact(
        actor=admin_actor,
        domain="acme.dev",
        expected_note_count=3,
        title="Everything\nknown",
        body="Merged: facts 0, 1 and 2.",
    )
    assert result.note_count == 1
    assert sorted(map(str, result.superseded_note_ids)) == sorted(n.id for n in three)
    merged = Note.objects.get(id=result.note.id)
    assert merged.title == "Everything known"
    assert merged.observed_at.isoformat() == days_ago(10)  # the earliest
    assert merged.source_urls == [
        "https://acme.dev/0",
        "https://acme.dev/shared",
        "https://acme.dev/1",
        "https://acme.dev/2",
    ]
    archived = Note.objects.filter(status="archived")
    assert archived.count() == 3
    assert {n.superseded_by_id for n in archived} == {merged.id}
    recall = dossier_recall(actor=admin_actor, domain="acme.dev")
    assert [n["body"] for n in recall.note_payloads] == ["Merged: facts 0, 1 and 2."]
    compaction = Compaction.objects.get()
    assert compaction.expected_note_count == 3
    assert AuditEvent.objects.filter(action="compact", compaction_id=compaction.id).exists()


def test_union_of_urls_may_exceed_twenty(admin_actor):
    for i in range(3):
        save_note(
            admin_actor, body=f"f{i}", source_urls=[f"https://acme.dev/{i}/{j}" for j in range(20)]
        )
    result = dossier_compact(
        actor=admin_actor, domain="acme.dev", expected_note_count=3, body="all"
    )
    assert len(result.note.source_urls) == 60


def test_stale_expected_count_changes_nothing_and_says_the_current_count(admin_actor, three):
    with pytest.raises(NoteCountMismatch) as info:
        dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=2, body="merge")
    assert info.value.http_status == 409
    assert info.value.details == {"domain": "acme.dev", "expected": 2, "current": 3}
    assert "expected_note_count=3" in info.value.message
    assert Note.objects.filter(status="active").count() == 3
    assert not Compaction.objects.exists()


def test_compact_chosen_notes(admin_actor, three):
    result = dossier_compact(
        actor=admin_actor,
        domain="acme.dev",
        expected_note_count=3,
        body="0 and 1",
        note_ids=[str(three[0].id), str(three[1].id)],
    )
    assert result.note_count == 2
    assert Note.objects.get(id=three[2].id).status == "active"


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"note_ids": ["not-a-uuid", "x"]}, ValidationFailed, "not a note id"),
        ({"note_ids": "abc"}, ValidationFailed, "must be a list"),
        ({"expected_note_count": "3"}, ValidationFailed, "whole number"),
        ({"expected_note_count": -1}, ValidationFailed, "whole number"),
        ({"body": ""}, ValidationFailed, "body is required"),
    ],
)
def test_compact_input_errors(admin_actor, three, kwargs, error, fragment):
    args = {"actor": admin_actor, "domain": "acme.dev", "expected_note_count": 3, "body": "merged"}
    args.update(kwargs)
    with pytest.raises(error, match=fragment):
        dossier_compact(**args)


def test_compact_needs_two_notes(admin_actor, three):
    with pytest.raises(ValidationFailed, match="at least two"):
        dossier_compact(
            actor=admin_actor,
            domain="acme.dev",
            expected_note_count=3,
            body="x",
            note_ids=[str(three[0].id)],
        )


def test_compact_refuses_another_accounts_note_ids(admin_actor, rival_actor, three):
    theirs = save_note(rival_actor).note.id
    with pytest.raises(NotFound) as info:
        dossier_compact(
            actor=admin_actor,
            domain="acme.dev",
            expected_note_count=3,
            body="x",
            note_ids=[str(three[0].id), str(theirs)],
        )
    assert info.value.details["note_ids"] == [str(theirs)]
    assert Note.objects.get(id=theirs).status == "active"


def test_compacting_unknown_domain_is_a_count_mismatch(admin_actor):
    with pytest.raises(NoteCountMismatch):
        dossier_compact(actor=admin_actor, domain="nobody.dev", expected_note_count=2, body="x")
    assert not Dossier.objects.exists()


# --- restore ----------------------------------------------------------------------------


def test_restore_undoes_a_compaction(admin_actor, three):
    result = dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=3, body="m")
    restored = compaction_restore(actor=admin_actor, compaction_id=str(result.compaction_id))
    assert restored.note_count == 3
    assert sorted(map(str, restored.restored_note_ids)) == sorted(n.id for n in three)
    assert not Note.objects.filter(id=result.note.id).exists()
    assert Note.objects.filter(status="active").count() == 3
    assert Note.objects.filter(superseded_by__isnull=False).count() == 0
    assert Compaction.objects.get().restored_at is not None
    assert Dossier.objects.get().active_note_count == 3
    with pytest.raises(ValidationFailed, match="already been restored"):
        compaction_restore(actor=admin_actor, compaction_id=result.compaction_id)


def test_restore_refused_when_merged_note_was_compacted_again(admin_actor, three):
    first = dossier_compact(
        actor=admin_actor,
        domain="acme.dev",
        expected_note_count=3,
        body="m1",
        note_ids=[str(three[0].id), str(three[1].id)],
    )
    second = dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=2, body="m2")
    with pytest.raises(ValidationFailed) as info:
        compaction_restore(actor=admin_actor, compaction_id=first.compaction_id)
    assert info.value.details["reason"] == "merged_note_compacted"
    compaction_restore(actor=admin_actor, compaction_id=second.compaction_id)
    compaction_restore(actor=admin_actor, compaction_id=first.compaction_id)
    assert Note.objects.filter(status="active").count() == 3


def test_restore_refused_when_it_would_break_the_cap(admin_actor, three, limits):
    result = dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=3, body="m")
    limits(DOMAIN_NOTE_LIMIT=3)
    save_note(admin_actor, body="new 1")
    with pytest.raises(DomainNoteLimitReached) as info:
        compaction_restore(actor=admin_actor, compaction_id=result.compaction_id)
    assert info.value.details["after"] == 4
    assert Note.objects.filter(status="active").count() == 2


def test_restore_of_another_accounts_compaction_is_not_found(admin_actor, rival_actor, three):
    result = dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=3, body="m")
    with pytest.raises(NotFound):
        compaction_restore(actor=rival_actor, compaction_id=result.compaction_id)
    with pytest.raises(NotFound):
        compaction_restore(actor=admin_actor, compaction_id="garbage")


# --- delete -----------------------------------------------------------------------------


def test_delete_removes_note_from_recall_and_keeps_an_audit_event(admin_actor, three):
    result = note_delete(actor=admin_actor, note_id=str(three[1].id))
    assert result.note_count == 2
    assert not Note.objects.filter(id=three[1].id).exists()
    recall = dossier_recall(actor=admin_actor, domain="acme.dev")
    assert three[1].id not in [n["id"] for n in recall.note_payloads]
    event = AuditEvent.objects.get(action="delete")
    assert str(event.note_id) == three[1].id
    assert event.actor == "admin@example.com"
    with pytest.raises(NotFound):
        note_delete(actor=admin_actor, note_id=three[1].id)


def test_deleting_a_merged_note_deletes_what_it_replaced(admin_actor, three):
    result = dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=3, body="m")
    deleted = note_delete(actor=admin_actor, note_id=result.note.id)
    assert sorted(map(str, deleted.also_deleted_note_ids)) == sorted(n.id for n in three)
    assert not Note.objects.exists()
    with pytest.raises(ValidationFailed) as info:
        compaction_restore(actor=admin_actor, compaction_id=result.compaction_id)
    assert info.value.details["reason"] == "merged_note_deleted"


def test_delete_needs_module_admin_and_the_same_account(member, rival_actor, three):
    with pytest.raises(NotModuleAdmin):
        note_delete(actor=Actor.for_member(member), note_id=three[0].id)
    with pytest.raises(NotFound):
        note_delete(actor=rival_actor, note_id=three[0].id)
    assert Note.objects.filter(id=three[0].id).exists()


def test_archived_notes_cannot_be_deleted_directly(admin_actor, three):
    dossier_compact(actor=admin_actor, domain="acme.dev", expected_note_count=3, body="m")
    with pytest.raises(NotFound):
        note_delete(actor=admin_actor, note_id=three[0].id)


def test_audit_events_hold_no_content(admin_actor, three):
    dossier_compact(
        actor=admin_actor, domain="acme.dev", expected_note_count=3, body="secret merge"
    )
    fields = {f.name for f in AuditEvent._meta.get_fields()}
    assert not fields & {"title", "body", "title_ciphertext", "body_ciphertext"}
