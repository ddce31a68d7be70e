"""Business memory's part in erasures: a departing member's own context, and the layers'
locks taken before an account's rows go."""

from __future__ import annotations

from django.db.models import Q

from outreach.models import Member
from prospect_memory.business.access import Place
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Shelf,
)
from prospect_memory.business.services.lock import lock_shelf
from prospect_memory.core.lifecycle.removing import (
    FORMER_MEMBER,
    forget_admin_log,
)


def member_leaving(member: Member, names: set[str]) -> dict[str, int]:
    """The member's own context (entries with their versions, evictions, aliases and
    vectors; the events that name its keys) goes; what they wrote for the account stays
    the account's, attributed to :data:`FORMER_MEMBER`."""
    account_id = member.account_id
    # Their own layer's writes wait, as every write of a layer waits on its shelf.
    lock_shelf(Place(account_id, Layer.MEMBER, member.pk))
    own = Entry.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member)
    own_ids = list(own.values_list("id", flat=True))
    # Every entry they ever had was stored by them once: Kit's own events about it (an
    # eviction, a merge) name it by id even after the entry is gone.
    own_events = EntryEvent.objects.filter(account_id=account_id, layer=Layer.MEMBER)
    ever_ids = {
        *own_ids,
        *own_events.filter(member=member).exclude(entry_id=None).values_list("entry_id", flat=True),
    }
    counts = {
        "own_entries": len(own_ids),
        "own_versions": EntryVersion.objects.filter(entry_id__in=own_ids).count(),
    }
    counts["own_events"], _ = own_events.filter(
        Q(member=member) | Q(entry_id__in=ever_ids)
    ).delete()
    counts["admin_log_entries"] = forget_admin_log(Entry, ever_ids)
    own.delete()
    Shelf.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member).delete()
    # What stays the account's no longer names them.
    EntryEvent.objects.filter(account_id=account_id).filter(
        Q(member=member) | Q(actor__in=names)
    ).update(member=None, actor=FORMER_MEMBER)
    written = Q(written_by=member) | Q(written_by_label__in=names)
    for row in (Entry, EntryVersion):
        row.objects.filter(account_id=account_id).filter(written).update(
            written_by=None, written_by_label=FORMER_MEMBER
        )
    return counts


def lock_account(account_id: int) -> None:
    """Every layer's lock, in id order, as each writer of a layer takes its own: a store
    under way finishes first, and the deletion of entries (which updates their shelves'
    counts) never waits on a store that waits on an entry."""
    list(Shelf.objects.filter(account_id=account_id).select_for_update().order_by("id"))
