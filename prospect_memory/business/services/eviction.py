"""Entries leaving a layer: making room under its capacity (the lowest entries evicted, the
layer's kept evictions trimmed), and an entry's retirement, with the keys merged into it."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Q
from django.db.models.functions import Coalesce

from outreach.access import Actor
from prospect_memory.business.access import Place
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
)
from prospect_memory.business.rules import capacity
from prospect_memory.business.services.aliases import release_aliases
from prospect_memory.business.services.counts import Counts
from prospect_memory.business.services.events import record_event
from prospect_memory.business.services.places import in_place
from prospect_memory.business.visibility import (
    RETIRED,
    UNEXPIRED,
    retired,
)


def make_room(
    actor: Actor,
    place: Place,
    now: datetime,
    *,
    keep_out: Entry | None = None,
    counts: Counts | None = None,
) -> list[Entry]:
    """Evict the lowest live entries so one more (``keep_out``, when it is already a row)
    fits the layer's capacity: lowest confidence first, then least recently used (never
    read: since it was stored), then oldest. Then keep at most the layer's capacity of
    evicted and expired entries, the most recent to leave.

    ``counts`` are the layer's (from :func:`lock_key`, under the same lock, nothing changed
    since), or one statement counts both; the rows themselves are read only when something
    must go."""
    limit = capacity(place.layer)
    if counts is not None and counts.leave_room(limit):
        return []
    others = in_place(place)
    if keep_out is not None:
        others = others.exclude(pk=keep_out.pk)
    if counts is None:
        counts = Counts(
            **others.aggregate(
                live=Count("pk", filter=Q(status=Entry.Status.LIVE) & UNEXPIRED),
                left=Count("pk", filter=RETIRED),
            )
        )
    over = counts.live - limit + 1
    victims: list[Entry] = []
    if over > 0:
        order = ("confidence", Coalesce("last_accessed_at", "created_at"), "created_at", "id")
        live = others.filter(UNEXPIRED, status=Entry.Status.LIVE)
        chosen = list(live.order_by(*order).values_list("pk", flat=True)[:over])
        # Locked in id order, as searches lock, so the two never deadlock (the shelf lock
        # keeps other writers of the layer out meanwhile).
        victims = list(
            Entry.objects.filter(pk__in=chosen).select_for_update(no_key=True).order_by("id")
        )
        for victim in victims:
            retire(victim, Entry.Status.EVICTED, now)
            record_event(actor, EntryEvent.Action.EVICT, victim)
        victims.sort(key=lambda e: chosen.index(e.pk))
    if victims or counts.left > limit:  # the victims (and their aliases) have just left
        left = retired(others).order_by(Coalesce("retired_at", "expires_at").desc(), "-id")
        Entry.objects.filter(pk__in=list(left.values_list("pk", flat=True)[limit:])).delete()
    return victims


def retire(entry: Entry, status: str, now: datetime) -> None:
    entry.status = status
    entry.retired_at = now
    entry.save(update_fields=["status", "retired_at"])
    release_aliases([entry], now)
