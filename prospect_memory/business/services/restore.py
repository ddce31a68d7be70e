"""Bringing entries back: a kept version, an eviction, a merge made by consolidation undone.
Each under the layer's lock."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from outreach.access import Actor
from outreach.validation import FieldProblems
from prospect_memory.business.access import (
    WRITABLE_LAYERS,
    Place,
    require_layer_writer,
    retired_for_actor,
)
from prospect_memory.business.embeddings import ENTRIES
from prospect_memory.business.errors import (
    KeyTaken,
    NotFound,
)
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Strategy,
)
from prospect_memory.business.records import EntryView, StoreResult, source_of
from prospect_memory.business.rules import (
    clean_choice,
    clean_expected_version,
    clean_key,
    embedding_input,
    entry_flags,
)
from prospect_memory.business.services import promotion
from prospect_memory.business.services.aliases import key_taken
from prospect_memory.business.services.entry_fields import (
    embedding_text_of,
    mark_written,
    set_value,
    version_mismatch,
)
from prospect_memory.business.services.events import record_event
from prospect_memory.business.services.eviction import make_room, retire
from prospect_memory.business.services.history import keep_version
from prospect_memory.business.services.integrity import hold_flagged, stored_value
from prospect_memory.business.services.lock import live_entry, lock_shelf
from prospect_memory.business.services.places import in_place, live_in
from prospect_memory.business.visibility import expired_live
from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings.budget import Embedded


def version_restore(
    *,
    actor: Actor,
    key: object,
    version: object,
    layer: object = Layer.ACCOUNT,
    expected_version: object = None,
) -> StoreResult:
    """Make a kept version current again, as a new version (the current one is kept)."""
    problems = FieldProblems()
    layer = clean_choice(layer, WRITABLE_LAYERS, "layer", problems)
    key = clean_key(key, problems)
    expected = clean_expected_version(expected_version, problems)
    number = version if isinstance(version, int) and not isinstance(version, bool) else 0
    if number < 1:
        problems.add("version", "version must be the number of a kept version")
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    with transaction.atomic():
        lock_shelf(place)
        now = timezone.now()
        entry = live_entry(place, key)
        if expected is not None and expected != entry.version:
            raise version_mismatch(key, layer, expected, entry.version)
        kept = EntryVersion.objects.filter(entry=entry, version=number).first()
        if kept is None:
            raise NotFound(
                f"{layer} entry {key!r} keeps no version {number}; its history lists the "
                "versions that can be restored.",
                details={"layer": layer, "key": key, "version": number},
            )
        # The kept version is read by today's check (it may predate it), unless a person
        # cleared that version's flags.
        flags = (
            []
            if kept.integrity_reviewed_at
            else entry_flags(key, stored_value(kept), source_of(kept))
        )
        hold_flagged(actor, layer, key, flags, version=entry.version)
        was = embedding_text_of(entry)
        keep_version(entry)
        previous = entry.version
        entry.version += 1
        entry.strategy = Strategy.RESTORE
        entry.set_flags(flags, now)
        entry.integrity_reviewed_at = kept.integrity_reviewed_at
        entry.category, entry.confidence = kept.category, kept.confidence
        entry.source_pipeline_id = kept.source_pipeline_id
        entry.source_execution_id = kept.source_execution_id
        entry.source_step_id = kept.source_step_id
        entry.source_extracted_at = kept.source_extracted_at
        mark_written(entry, actor, now)
        now_text = embedding_input(key, kept.category, kept.value)
        set_value(entry, kept.value_json, now_text, was, Embedded.none())
        entry.save()
        record_event(actor, EntryEvent.Action.RESTORE_VERSION, entry, number)
        if entry.embedding_status == embedding_pipeline.PENDING:
            embedding_pipeline.enqueue(ENTRIES, entry.pk)
        promotion.schedule([entry])
    return StoreResult(entry=EntryView.of(entry), created=False, previous_version=previous)


def eviction_restore(*, actor: Actor, entry_id: object) -> StoreResult:
    """Bring an evicted or expired entry back to its layer (an expiry is removed)."""
    entry = retired_for_actor(actor, entry_id)
    require_layer_writer(actor, entry.layer)
    hold_flagged(actor, entry.layer, entry.key, entry.flags, version=entry.version)
    place = Place.of_entry(entry)
    with transaction.atomic():
        lock_shelf(place)
        now = timezone.now()
        entry = retired_for_actor(actor, entry_id, lock=True)
        if key_taken(place, entry.key, entry):
            raise KeyTaken(
                f"The {entry.layer} layer has a live entry {entry.key!r} again; delete or "
                "rename it first, then restore this one.",
                details={"layer": entry.layer, "key": entry.key, "entry_id": str(entry.pk)},
            )
        # A live twin of the key that has expired leaves the live set for good.
        for twin in expired_live(live_in(place)).filter(key=entry.key).exclude(pk=entry.pk):
            retire(twin, Entry.Status.EXPIRED, now)
            promotion.schedule([twin])
        evicted = make_room(actor, place, now, keep_out=entry)
        previous = entry.version
        entry.status, entry.retired_at, entry.expires_at = Entry.Status.LIVE, None, None
        entry.save(update_fields=["status", "retired_at", "expires_at"])
        record_event(actor, EntryEvent.Action.RESTORE_EVICTION, entry)
        promotion.schedule([entry, *evicted])
    return StoreResult.back(entry, previous, evicted)


def merge_undo(*, actor: Actor, key: object, layer: object = Layer.ACCOUNT) -> StoreResult:
    """Make an entry that consolidation merged into another one live again, with its own
    value (a new version; the entry it had joined keeps everything written since)."""
    problems = FieldProblems()
    layer = clean_choice(layer, WRITABLE_LAYERS, "layer", problems)
    key = clean_key(key, problems)
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    return _undo_merge(actor, Place.of(actor, layer), key)


def merge_undo_entry(*, actor: Actor, entry: Entry) -> StoreResult:
    """Kit staff undoing a merge in the admin, whoever's layer it is in."""
    require_layer_writer(actor, entry.layer)
    return _undo_merge(actor, Place.of_entry(entry), entry.key)


def _undo_merge(actor: Actor, place: Place, key: str) -> StoreResult:
    layer = place.layer
    with transaction.atomic():
        lock_shelf(place)
        now = timezone.now()
        entry = (
            in_place(place).select_for_update().filter(status=Entry.Status.MERGED, key=key).first()
        )
        if entry is None:
            raise NotFound(
                f"No {layer} entry {key!r} was merged into another one; the entry page of the "
                "entry it joined lists its merges.",
                details={"layer": layer, "key": key},
            )
        hold_flagged(actor, layer, key, entry.flags, version=entry.version)
        if key_taken(place, key, entry):
            raise KeyTaken(
                f"The {layer} layer has a live entry {key!r} again; delete or rename it first, "
                "then undo the merge.",
                details={"layer": layer, "key": key},
            )
        for twin in expired_live(live_in(place)).filter(key=key):
            retire(twin, Entry.Status.EXPIRED, now)
            promotion.schedule([twin])
        evicted = make_room(actor, place, now, keep_out=entry)
        previous = entry.version
        keep_version(entry)
        entry.version += 1
        entry.strategy = Strategy.UNMERGE
        entry.status, entry.alias_of = Entry.Status.LIVE, None
        written = entry.written_at
        mark_written(entry, actor, now)
        entry.kept_apart = True  # a person's decision: the next runs leave it apart
        entry.written_at = written  # its own value again, as old as it was
        entry.save()
        record_event(actor, EntryEvent.Action.UNMERGE, entry)
        promotion.schedule([entry, *evicted])
    return StoreResult.back(entry, previous, evicted)
