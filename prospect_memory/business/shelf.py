"""The steps every write of a layer shares: its lock (the layer's ``Shelf`` row), its rows,
who wrote, history, events, and making room under the capacity."""

from __future__ import annotations

from django.db.models.functions import Coalesce
from django.utils import timezone

from outreach.access import Actor
from outreach.sql import lock_row
from prospect_memory.business.access import Place
from prospect_memory.business.conf import business_settings
from prospect_memory.business.errors import (
    NotFound,
    VersionMismatch,
)
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Shelf,
)
from prospect_memory.business.records import Source
from prospect_memory.business.rules import capacity, embedding_input
from prospect_memory.business.visibility import retired, unexpired
from prospect_memory.core import pipeline
from prospect_memory.core.budget import Embedded


def lock_shelf(place: Place) -> Shelf:
    """Lock (creating it on first use) the shelf of ``place``."""
    return lock_row(
        Shelf,
        key={"account": place.account_id, "layer": place.layer, "member": place.member_id},
        constraint="shelf_unique_layer",
        defaults={"created_at": timezone.now()},
    )


def in_place(place: Place):
    return Entry.objects.filter(
        account_id=place.account_id, layer=place.layer, member_id=place.member_id
    )


def live_in(place: Place):
    return in_place(place).filter(status=Entry.Status.LIVE)


def record_event(by: Actor | str, action: str, entry: Entry, version: int | None = None) -> None:
    """An event on ``entry`` (at ``version``, its current one by default), by a person or an
    agent, or by Kit itself (:data:`KIT`, ``CONSOLIDATION``)."""
    EntryEvent.record(
        by,
        account_id=entry.account_id,
        action=action,
        layer=entry.layer,
        key=entry.key,
        entry_id=entry.pk,
        version=version if version is not None else entry.version,
    )


def retire(entry: Entry, status: str, now) -> None:
    entry.status = status
    entry.retired_at = now
    entry.save(update_fields=["status", "retired_at"])
    release_aliases([entry], now)


#: Who an event names when Kit itself retired an entry.
KIT = "kit"


def release_aliases(entries: list[Entry], now) -> list[Entry]:
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


def keep_version(entry: Entry) -> None:
    """Snapshot the entry as it is before a change, and keep the newest versions only."""
    version = EntryVersion(
        account_id=entry.account_id,
        entry=entry,
        version=entry.version,
        category=entry.category,
        confidence=entry.confidence,
        source_pipeline_id=entry.source_pipeline_id,
        source_execution_id=entry.source_execution_id,
        source_step_id=entry.source_step_id,
        source_extracted_at=entry.source_extracted_at,
        strategy=entry.strategy,
        written_by=entry.written_by,
        written_by_label=entry.written_by_label,
        oauth_application_id=entry.oauth_application_id,
        written_at=entry.updated_at,
    )
    version.value_json = entry.value_json
    if entry.flagged_at is not None:
        version.integrity_json, version.flagged_at = entry.integrity_json, entry.flagged_at
    version.integrity_reviewed_at = entry.integrity_reviewed_at
    version.save(force_insert=True)
    keep = business_settings.HISTORY_VERSIONS
    stale = EntryVersion.objects.filter(entry=entry).order_by("-version")[keep:]
    EntryVersion.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()


def make_room(actor: Actor, place: Place, now, *, keep_out: Entry | None = None) -> list[Entry]:
    """Evict the lowest live entries so one more (``keep_out``, when it is already a row)
    fits the layer's capacity: lowest confidence first, then least recently used (never
    read: since it was stored), then oldest. Then keep at most the layer's capacity of
    evicted and expired entries, the most recent to leave."""
    live = unexpired(live_in(place))
    others = in_place(place)
    if keep_out is not None:
        live, others = live.exclude(pk=keep_out.pk), others.exclude(pk=keep_out.pk)
    limit = capacity(place.layer)
    over = live.count() - limit + 1
    victims: list[Entry] = []
    if over > 0:
        order = ("confidence", Coalesce("last_accessed_at", "created_at"), "created_at", "id")
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
    left = retired(others).order_by(Coalesce("retired_at", "expires_at").desc(), "-id")
    Entry.objects.filter(pk__in=list(left.values_list("pk", flat=True)[limit:])).delete()
    return victims


def mark_written(entry: Entry, actor: Actor, now) -> None:
    """Record who wrote the entry's new version, and that it was used."""
    entry.written_by = actor.member
    entry.written_by_label = actor.label
    entry.oauth_application = actor.oauth_application
    entry.updated_at = entry.used_at = entry.written_at = now
    entry.idle_periods_charged = 0
    entry.kept_apart = False


def set_value(entry: Entry, text: str, embedding_text: str, was: str, embedded: Embedded):
    """Seal the value; the embedding is the pre-lock vector if it was made of this very
    text, the entry's own if its text (``was``) did not change, else pending."""
    entry.value_json = text
    entry.value_bytes = len(text.encode("utf-8"))
    if embedded.vector is not None and embedded.text == embedding_text:
        entry.embedding, entry.embedding_model = embedded.vector, embedded.model
        entry.embedding_status = pipeline.READY
    elif was != embedding_text or entry.embedding_status != pipeline.READY:
        entry.embedding, entry.embedding_model = None, ""
        entry.embedding_status = pipeline.PENDING


def embedding_text_of(entry: Entry | None) -> str:
    return embedding_input(entry.key, entry.category, entry.value) if entry else ""


def apply_source(entry: Entry, source: Source | None) -> None:
    source = source or Source()
    entry.source_pipeline_id = source.pipeline_id
    entry.source_execution_id = source.execution_id
    entry.source_step_id = source.step_id
    entry.source_extracted_at = source.extracted_at


def version_mismatch(key: str, layer: str, expected: int, found: int) -> VersionMismatch:
    now = "does not exist yet" if found == 0 else f"is at version {found}"
    return VersionMismatch(
        f"{layer} entry {key!r} {now}, not version {expected}: someone changed it since you "
        "read it. Nothing was stored. Recall it again, merge your change into what is there "
        f"and pass expected_version={found}.",
        details={"key": key, "layer": layer, "expected": expected, "current_version": found},
    )


def key_taken(place: Place, key: str, entry: Entry) -> bool:
    """Whether ``key`` is a live entry or an alias of ``place`` other than ``entry``."""
    rows = in_place(place).filter(key=key).exclude(pk=entry.pk)
    return (
        unexpired(rows.filter(status=Entry.Status.LIVE)).exists()
        or rows.filter(status=Entry.Status.MERGED).exists()
    )


def live_entry(place: Place, key: str) -> Entry:
    entry = unexpired(live_in(place)).select_for_update().filter(key=key).first()
    if entry is None:
        raise NotFound(
            f"No {place.layer} entry {key!r} in this account's business memory.",
            details={"layer": place.layer, "key": key},
        )
    return entry


def kept_for_alias(place: Place, key: str, now) -> Entry | None:
    """The live entry ``key`` was merged into (locked), if it is an alias in ``place``. An
    alias of an entry that expired meanwhile leaves with it, and the key is free again."""
    alias = in_place(place).filter(status=Entry.Status.MERGED, key=key).only("alias_of_id").first()
    if alias is None:
        return None
    kept = unexpired(live_in(place)).select_for_update().filter(pk=alias.alias_of_id).first()
    if kept is None:
        release_aliases([alias.alias_of], now)
    return kept
