"""Django admin moderation: staff read decrypted notes, delete and restore through services."""

import pytest

from outreach.access import Actor
from prospect_memory.notes.models import AuditEvent, Compaction, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests.factories import SECRET

pytestmark = pytest.mark.django_db


def test_note_list_shows_no_content(admin_client, notes):
    page = admin_client.get("/admin/prospect_memory/note/").content.decode()
    assert str(notes[0].id) in page
    assert "acme.dev" in page
    assert SECRET not in page
    assert "Title 0" not in page


def test_note_list_filters(admin_client, notes):
    for query in [
        "?status__exact=active",
        "?fresh=stale",
        "?fresh=fresh",
        "?embedding_status__exact=ready",
        "?q=acme.dev",
    ]:
        assert admin_client.get(f"/admin/prospect_memory/note/{query}").status_code == 200


def test_staff_see_the_decrypted_note(admin_client, notes):
    page = admin_client.get(f"/admin/prospect_memory/note/{notes[0].id}/change/").content.decode()
    assert "Title 0" in page
    assert SECRET.replace("'", "&#x27;") in page or SECRET in page


def test_staff_delete_goes_through_the_service(admin_client, notes):
    response = admin_client.post(
        f"/admin/prospect_memory/note/{notes[0].id}/delete/", {"post": "yes"}
    )
    assert response.status_code == 302
    assert not Note.objects.filter(id=notes[0].id).exists()
    event = AuditEvent.objects.get(action="delete")
    assert event.actor == "admin"  # the staff user
    assert event.member is None


def test_bulk_delete_action(admin_client, notes):
    admin_client.post(
        "/admin/prospect_memory/note/",
        {"action": "delete_notes", "_selected_action": [str(n.id) for n in notes[:2]]},
    )
    assert Note.objects.count() == 1
    assert AuditEvent.objects.filter(action="delete").count() == 2


def test_restore_action_calls_the_service(admin_client, module_admin, notes):
    result = dossier_compact(
        actor=Actor.for_member(module_admin), domain="acme.dev", expected_note_count=3, body="m"
    )
    detail = admin_client.get(f"/admin/prospect_memory/compaction/{result.compaction_id}/change/")
    page = detail.content.decode()
    for note in notes:
        assert str(note.id) in page
    admin_client.post(
        "/admin/prospect_memory/compaction/",
        {"action": "restore", "_selected_action": [str(result.compaction_id)]},
    )
    assert Note.objects.filter(status="active").count() == 3
    assert Compaction.objects.get().restored_at is not None
    # A second restore is refused by the service, shown as a message, nothing changes.
    response = admin_client.post(
        "/admin/prospect_memory/compaction/",
        {"action": "restore", "_selected_action": [str(result.compaction_id)]},
        follow=True,
    )
    assert "already been restored" in response.content.decode()


def test_audit_events_are_read_only(admin_client, notes):
    event = AuditEvent.objects.first()
    assert admin_client.get("/admin/prospect_memory/auditevent/").status_code == 200
    assert admin_client.get("/admin/prospect_memory/auditevent/add/").status_code == 403
    assert (
        admin_client.get(f"/admin/prospect_memory/auditevent/{event.pk}/delete/").status_code == 403
    )
    page = admin_client.get("/admin/prospect_memory/auditevent/").content.decode()
    assert SECRET not in page


def test_notes_cannot_be_added_or_edited_in_admin(admin_client, notes):
    assert admin_client.get("/admin/prospect_memory/note/add/").status_code == 403
    response = admin_client.post(
        f"/admin/prospect_memory/note/{notes[0].id}/change/", {"observed_at": "2020-01-01"}
    )
    assert response.status_code == 403


def test_members_who_are_not_staff_cannot_use_admin(client, module_admin):
    client.force_login(module_admin.user)
    response = client.get("/admin/prospect_memory/note/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_outreach_models_are_in_admin(admin_client, notes):
    for model in ["account", "member", "campaign", "prospect", "message", "reply", "suppression"]:
        assert admin_client.get(f"/admin/outreach/{model}/").status_code == 200
