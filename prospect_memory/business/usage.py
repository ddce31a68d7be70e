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
    if not views:
        return
    now = timezone.now()
    with transaction.atomic():
        rows = Entry.objects.filter(account=actor.account, pk__in=[v.id for v in views])
        # Locked in id order, like the search statement, so the two never deadlock.
        ids = list(rows.select_for_update(no_key=True).order_by("id").values_list("pk", flat=True))
        Entry.objects.filter(account=actor.account, pk__in=ids).update(
            access_count=F("access_count") + 1,
            last_accessed_at=now,
            used_at=now,
            idle_periods_charged=0,
        )
    for view in views:
        view.access_count += 1
        view.last_accessed_at = now
