"""Keys merged into another entry (aliases): the entry a key stands for, a key taken by one,
and the aliases that leave with the entry they joined."""

from __future__ import annotations

from datetime import datetime

from prospect_memory.business.access import Place
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
)
from prospect_memory.business.services.events import KIT, record_event
from prospect_memory.business.services.places import in_place, live_in
from prospect_memory.business.visibility import (
    unexpired,
)


def release_aliases(entries: list[Entry], now: datetime) -> list[Entry]:
    """The entries merged into ``entries`` (which are leaving) leave with them, as evicted:
    each keeps its own value and can be restored for RETIRED_KEEP_DAYS, like any eviction,
    instead of going for good with the entry it had joined."""
    aliases = list(
        Entry.objects.filter(alias_of__in=entries, status=Entry.Status.MERGED)
        .select_for_update(no_key=True)
        .order_by("id")
    )
    for alias in aliases:
        alias.status, alias.alias_of, alias.retired_at = Entry.Status.EVICTED, None, now
        alias.save(update_fields=["status", "alias_of", "retired_at"])
        record_event(KIT, EntryEvent.Action.EVICT, alias)
    return aliases


def kept_for_alias(place: Place, alias: Entry, now: datetime) -> Entry | None:
    """The live entry ``alias`` (a key merged into another entry of ``place``) stands for,
    locked. An alias of an entry that expired meanwhile leaves with it, and the key is free
    again (None)."""
    kept = unexpired(live_in(place)).select_for_update().filter(pk=alias.alias_of_id).first()
    if kept is None and alias.alias_of is not None:
        release_aliases([alias.alias_of], now)
    return kept


def key_taken(place: Place, key: str, entry: Entry) -> bool:
    """Whether ``key`` is a live entry or an alias of ``place`` other than ``entry``."""
    rows = in_place(place).filter(key=key).exclude(pk=entry.pk)
    return (
        unexpired(rows.filter(status=Entry.Status.LIVE)).exists()
        or rows.filter(status=Entry.Status.MERGED).exists()
    )
