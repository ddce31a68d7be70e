"""Counting uses of entries shown by a read that does not count them itself (a key matched
without meaning, an entry shown by knowledge search). Recall and search by meaning count
in their own statement."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from outreach.access import Actor
from prospect_memory.business.models import Entry
from prospect_memory.business.records import EntryView


def entries_used(actor: Actor, views: list[EntryView]) -> None:
    """Count one use of each entry shown, and show each its count as the primary now
    holds it (the entries may have been read from a replica, or counted since)."""
    if not views:
        return
    now = timezone.now()
    with transaction.atomic():
        rows = Entry.objects.filter(account=actor.account, pk__in=[v.id for v in views])
        # Locked in id order, like the search statement, so the two never deadlock.
        locked = rows.select_for_update(no_key=True).order_by("id")
        counts = {str(pk): count for pk, count in locked.values_list("pk", "access_count")}
        Entry.objects.filter(account=actor.account, pk__in=list(counts)).update(
            access_count=F("access_count") + 1,
            last_accessed_at=now,
            used_at=now,
            idle_periods_charged=0,
        )
    for view in views:
        if view.id in counts:  # else deleted since it was read: nothing counted
            view.access_count = counts[view.id] + 1
            view.last_accessed_at = now
