"""A member leaves (SPEC 16): their seat removed, their user deleted, or their user
deactivated. Their own context goes (entries, versions, evictions, aliases, vectors, the
events that name its keys), their tokens for the account are revoked, and what they wrote
for the account stays, attributed to "a former member"."""

import pytest

from outreach.access import Actor
from outreach.models import Member, OAuthAccessTokenAccount
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion, Shelf
from prospect_memory.business.services.store import entry_store
from prospect_memory.core.lifecycle.removing import FORMER_MEMBER
from prospect_memory.core.models import Erasure
from prospect_memory.notes.models import AuditEvent, Note
from tests import factories
from tests.factories import save_note
from tests.helpers import bearer
from tests.lifecycle.scan import Subject, leftovers

pytestmark = pytest.mark.django_db


@pytest.fixture
def leaver(account):
    """A module admin with an own context (two versions, a second key), shared entries and
    notes they wrote, and a token."""
    seat = factories.member(account, "leaver@example.com", admin=True)
    actor = Actor.for_member(seat)
    entry_store(actor=actor, key="my_signature", value="Best, Lee", layer="member")
    entry_store(
        actor=actor, key="my_signature", value="Cheers, Lee", layer="member", expected_version=1
    )
    entry_store(actor=actor, key="my_openers", value=["Saw your post"], layer="member")
    entry_store(actor=actor, key="icp_definition", value={"headcount": "50-500"})
    save_note(actor, domain="acme.dev", body="Acme hires.")
    return seat


def subject_of(seat: Member) -> Subject:
    own = Entry.objects.filter(account=seat.account, layer="member", member=seat)
    subject = Subject(
        kind="member",
        account_id=seat.account_id,
        texts={seat.user.username, seat.user.email},
        ids=set(own.values_list("id", flat=True)),
        refs={Member: {seat.pk}},
    )
    for entry in own:
        subject.ciphertexts.add(bytes(entry.value_ciphertext))
        if entry.embedding is not None:
            subject.vectors.append(list(entry.embedding))
    for version in EntryVersion.objects.filter(entry__in=own):
        subject.ciphertexts.add(bytes(version.value_ciphertext))
    return subject


def test_a_removed_seat_takes_its_own_context_and_leaves_the_accounts(
    client, leaver, member, admin_actor
):
    entry_store(actor=Actor.for_member(member), key="my_signature", value="Ann", layer="member")
    headers = bearer(leaver)
    assert client.get("/api/v1/business-memory/entries", **headers).status_code == 200
    subject = subject_of(leaver)
    assert len(subject.ids) == 2
    assert leftovers(subject)

    leaver.delete()

    assert leftovers(subject) == []
    # Their token for the account is revoked.
    assert client.get("/api/v1/business-memory/entries", **headers).status_code == 401
    # What they wrote for the account stays, by "a former member".
    shared = Entry.objects.get(key="icp_definition")
    assert (shared.written_by_id, shared.written_by_label) == (None, FORMER_MEMBER)
    assert Note.objects.get(dossier__domain="acme.dev").member_id is None
    assert AuditEvent.objects.get(action="save").actor == FORMER_MEMBER
    assert EntryEvent.objects.get(key="icp_definition").actor == FORMER_MEMBER
    # Another member's own context is theirs and stays.
    kept = Entry.objects.get(layer="member", member=member)
    assert kept.value == "Ann"
    assert Shelf.objects.filter(member=member).exists()
    erasure = Erasure.objects.get(kind="member")
    assert erasure.counts["own_entries"] == 2
    assert erasure.counts["own_versions"] == 1
    assert erasure.actor == "membership removed"


def test_kit_events_and_admin_log_about_their_gone_entries_go_too(leaver, account):
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    from prospect_memory.business.models import EvictedEntry

    gone = Entry.objects.get(key="my_openers")
    EntryEvent.objects.create(
        account=account, action="evict", layer="member", key=gone.key, entry_id=gone.id, actor="kit"
    )
    LogEntry.objects.create(
        user=factories.member(account).user,
        content_type=ContentType.objects.get_for_model(EvictedEntry, for_concrete_model=False),
        object_id=str(gone.id),
        object_repr=gone.key,
        action_flag=CHANGE,
    )
    subject = subject_of(leaver)
    gone.delete()  # purged before the member leaves
    leaver.delete()
    assert leftovers(subject) == []
    assert not EntryEvent.objects.filter(key="my_openers").exists()


def test_a_deactivated_user_leaves_every_account(leaver, other_account):
    elsewhere = Member.objects.create(account=other_account, user=leaver.user)
    entry_store(actor=Actor.for_member(elsewhere), key="mine", value="x", layer="member")
    subject = subject_of(leaver)
    leaver.user.is_active = False
    leaver.user.save()
    assert not Member.objects.filter(user=leaver.user).exists()
    assert leftovers(subject) == []
    assert not Entry.objects.filter(account=other_account, layer="member").exists()
    assert set(Erasure.objects.values_list("actor", flat=True)) == {"user deactivated"}


def test_a_deleted_user_leaves(leaver):
    subject = subject_of(leaver)
    leaver.user.delete()
    assert leftovers(subject) == []
    assert Entry.objects.get(key="icp_definition").written_by_label == FORMER_MEMBER


def test_the_scan_fails_when_a_table_keeps_their_name(leaver):
    from tests.forgetful.models import Remembered

    Remembered.objects.create(account=leaver.account, text="ask leaver@example.com")
    subject = subject_of(leaver)
    leaver.delete()
    assert leftovers(subject) == ["forgetful.remembered.text: 1"]


def test_tokens_for_other_accounts_stay(leaver, other_account, client):
    elsewhere = Member.objects.create(account=other_account, user=leaver.user)
    here, there = bearer(leaver), bearer(elsewhere)
    leaver.delete()
    assert client.get("/api/v1/business-memory/entries", **here).status_code == 401
    assert client.get("/api/v1/business-memory/entries", **there).status_code == 200
    assert OAuthAccessTokenAccount.objects.filter(account=other_account).exists()
