"""Business memory in Django admin: values only on detail pages for staff with the view
permission; deletes and restores through the services, under their permissions."""

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from prospect_memory.business.models import Entry, EntryEvent
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db

VALUE = {"tone": "SECRET-VOICE"}
_staff_numbers = itertools.count()


def staff(*codenames):
    user = get_user_model().objects.create_user(
        f"staff-{next(_staff_numbers)}", password="x", is_staff=True
    )
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label="business_memory", codename=codename)
        )
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def entries(admin_actor, member_actor, capacity):
    capacity(ACCOUNT_CAPACITY=1)
    entry_store(actor=admin_actor, key="old", value="SECRET-OLD", confidence=5)
    entry_store(actor=admin_actor, key="brand_voice", value=VALUE)
    entry_store(actor=member_actor, key="signature", value="Best", layer="member")
    capacity(ACCOUNT_CAPACITY=10)
    return Entry.objects.get(key="brand_voice"), Entry.objects.get(key="old")


def test_lists_show_no_values_and_details_need_the_view_permission(entries):
    voice, _ = entries
    nobody = staff()
    assert nobody.get(f"/admin/business_memory/entry/{voice.pk}/change/").status_code == 403
    viewer = staff("view_entry")
    listing = viewer.get("/admin/business_memory/entry/").content.decode()
    assert "brand_voice" in listing
    assert "SECRET-VOICE" not in listing
    for query in ("?layer__exact=member", "?confidence_band=high", "?expiry=none", "?q=brand"):
        assert viewer.get(f"/admin/business_memory/entry/{query}").status_code == 200
    detail = viewer.get(f"/admin/business_memory/entry/{voice.pk}/change/").content.decode()
    assert "SECRET-VOICE" in detail


def test_deleting_needs_the_permission_and_goes_through_the_service(entries):
    voice, _ = entries
    staff("view_entry").post(f"/admin/business_memory/entry/{voice.pk}/delete/", {"post": "yes"})
    assert Entry.objects.filter(pk=voice.pk).exists()
    staff("view_entry", "delete_entry").post(
        f"/admin/business_memory/entry/{voice.pk}/delete/", {"post": "yes"}
    )
    assert not Entry.objects.filter(pk=voice.pk).exists()
    assert EntryEvent.objects.filter(action="delete", key="brand_voice").exists()


def test_restoring_an_eviction_needs_the_restore_permission(entries):
    _, old = entries
    assert old.status == "evicted"
    action = {"action": "restore", "_selected_action": [str(old.pk)]}
    staff("view_evictedentry").post("/admin/business_memory/evictedentry/", action)
    assert Entry.objects.get(pk=old.pk).status == "evicted"
    staff("view_evictedentry", "restore_evictedentry").post(
        "/admin/business_memory/evictedentry/", action
    )
    assert Entry.objects.get(pk=old.pk).status == "live"


def test_an_evicted_entrys_value_needs_the_entrys_view_permission(entries):
    _, old = entries
    path = f"/admin/business_memory/evictedentry/{old.pk}/change/"
    seeing_it_left = staff("view_evictedentry").get(path)
    assert seeing_it_left.status_code == 200
    assert "SECRET-OLD" not in seeing_it_left.content.decode()
    reading_values = staff("view_evictedentry", "view_entry").get(path)
    assert "SECRET-OLD" in reading_values.content.decode()


def test_staff_delete_a_members_own_entry_through_the_service(entries):
    signature = Entry.objects.get(key="signature")
    staff("view_entry", "delete_entry").post(
        f"/admin/business_memory/entry/{signature.pk}/delete/", {"post": "yes"}
    )
    assert not Entry.objects.filter(pk=signature.pk).exists()
    assert EntryEvent.objects.filter(action="delete", key="signature", layer="member").exists()


def test_an_entry_with_history_is_deleted_from_its_admin_page(entries, admin_actor):
    voice, _ = entries
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "v2"})
    client = staff("view_entry", "delete_entry")
    assert client.get(f"/admin/business_memory/entry/{voice.pk}/delete/").status_code == 200
    client.post(f"/admin/business_memory/entry/{voice.pk}/delete/", {"post": "yes"})
    assert not Entry.objects.filter(pk=voice.pk).exists()


def test_an_evicted_entry_is_not_offered_for_deletion(entries):
    _, old = entries
    client = staff("view_entry", "delete_entry")
    response = client.post(f"/admin/business_memory/entry/{old.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert Entry.objects.filter(pk=old.pk).exists()


def test_searching_the_admin_for_a_malformed_id_is_not_an_error(entries):
    client = staff("view_entry", "view_entryevent", "view_evictedentry")
    for model in ("entry", "entryevent", "evictedentry"):
        assert client.get(f"/admin/business_memory/{model}/?q=not-a-uuid").status_code == 200
