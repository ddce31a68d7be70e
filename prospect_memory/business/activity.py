"""Business memory's part of the activity page: its entry events. A module admin sees the
account's shared layer; everyone sees their own context, and no one another member's."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Min
from django.db.models.functions import Coalesce

from outreach.access import Actor, is_module_admin
from prospect_memory.business.access import live_entries
from prospect_memory.business.models import Entry, EntryEvent, Layer
from prospect_memory.core.activity import Source, columns


def events(actor: Actor) -> models.QuerySet:
    own = Entry.objects.filter(account=actor.account, layer=Layer.MEMBER, member=actor.member)
    # Kit's own events on a member's entries (an eviction) name no member: the entry does.
    visible = models.Q(layer=Layer.MEMBER) & (
        models.Q(member=actor.member) | models.Q(entry_id__in=own.values("pk"))
    )
    if is_module_admin(actor):
        visible |= models.Q(layer=Layer.ACCOUNT)
    return EntryEvent.objects.filter(account=actor.account).filter(visible)


def shape(found: models.QuerySet) -> models.QuerySet:
    return columns(
        found,
        kind="entries",
        subject=models.F("key"),
        item=models.F("entry_id"),
    )


def current(actor: Actor, items: list[str]) -> dict[str, int | None]:
    """The entries of ``items`` (ids) that are still live, each with the oldest version
    whose value is still kept: an event about an entry deleted since, or evicted, links to
    nothing rather than to what now has its key."""
    ids = []
    for item in items:
        try:
            ids.append(uuid.UUID(item))
        except ValueError:
            continue
    live = (
        live_entries(actor, None)
        .filter(pk__in=ids)
        .annotate(oldest=Coalesce(Min("versions__version"), "version"))
        .values_list("pk", "oldest")
    )
    return {str(pk): oldest for pk, oldest in live}


SOURCE = Source(
    kind="entries",
    events=events,
    shape=shape,
    labels={
        EntryEvent.Action.STORE: "stored",
        EntryEvent.Action.DELETE: "deleted",
        EntryEvent.Action.EVICT: "evicted",
        EntryEvent.Action.RESTORE_VERSION: "restored an older version of",
        EntryEvent.Action.RESTORE_EVICTION: "restored the evicted",
        EntryEvent.Action.DEMOTE: "lowered the confidence of",
        EntryEvent.Action.MERGE: "merged",
        EntryEvent.Action.UNMERGE: "undid the merge of",
        EntryEvent.Action.UNFLAG: "cleared the flags of",
    },
    current=current,
)
