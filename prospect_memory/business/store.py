"""Storing an entry (SPEC 12): a write merged by strategy, under the layer's lock, with the
version check, capacity, aliases, integrity, history, events and usage in one transaction.

The embedding provider is called before any lock, on the value the write will most likely
store; when the stored text turns out different (a concurrent merge, an alias), the entry
is stored pending and embedded after the commit: right after it without a broker when the
provider had answered, else by the pipeline's task or backfill."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from outreach import sql
from outreach.access import Actor
from outreach.errors import KitError
from outreach.sql import run_with_optional
from outreach.validation import FieldProblems
from prospect_memory.business import promotion
from prospect_memory.business.access import WRITABLE_LAYERS, Place, require_layer_writer
from prospect_memory.business.conf import business_settings
from prospect_memory.business.embeddings import ENTRIES
from prospect_memory.business.integrity import hold_flagged, is_agent, written_flags
from prospect_memory.business.models import (
    Category,
    Entry,
    EntryEvent,
    Layer,
    Strategy,
)
from prospect_memory.business.records import EntryView, Source, StoreResult, evicted_summary
from prospect_memory.business.rules import (
    STORE_STRATEGIES,
    UNSET,
    check_value,
    clean_category,
    clean_choice,
    clean_confidence,
    clean_expected_version,
    clean_key,
    clean_source,
    clean_ttl,
    embedding_input,
    encode_value,
    entry_flags,
    expires_at,
    merged_value,
)
from prospect_memory.business.shelf import (
    apply_source,
    embedding_text_of,
    event_on,
    kept_for_alias,
    likely_target,
    lock_key,
    make_room,
    mark_written,
    retire,
    set_value,
    version_mismatch,
    version_statements,
)
from prospect_memory.business.visibility import is_expired
from prospect_memory.core import pipeline
from prospect_memory.core.budget import Embedded, embed_within_budget
from prospect_memory.core.integrity import Flag
from prospect_memory.core.models import UsageEvent

logger = logging.getLogger(__name__)


def entry_store(
    *,
    actor: Actor,
    key: object,
    value: Any,
    layer: object = Layer.ACCOUNT,
    category: object = None,
    confidence: object = None,
    source: object = None,
    ttl_seconds: object = UNSET,
    strategy: object = Strategy.OVERWRITE,
    expected_version: object = None,
) -> StoreResult:
    """Write ``value`` under ``key`` in ``layer``, merged by ``strategy``.

    On an update, an omitted category, confidence or expiry is kept; the source describes
    the value written, so a write without one clears it (Kit still records who wrote it).
    """
    problems = FieldProblems()
    layer = clean_choice(layer, WRITABLE_LAYERS, "layer", problems)
    key = clean_key(key, problems)
    check_value(value, problems)
    category = clean_category(category, problems)
    confidence = clean_confidence(confidence, problems)
    source = clean_source(source, problems)
    ttl = clean_ttl(ttl_seconds, problems)
    strategy = clean_choice(strategy, STORE_STRATEGIES, "strategy", problems)
    expected = clean_expected_version(expected_version, problems)
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    encode_value(value)  # an oversized value is refused before anything else happens

    # Embed and check integrity before any lock, on the value this write will most likely
    # store (checked again under the lock only if the stored value turns out different).
    # An overwrite that names its category stores the same, whatever is there: no read.
    overwrite = strategy == Strategy.OVERWRITE and category is not None
    before = None if overwrite else likely_target(place, key)
    guess = _predict(before, strategy, value, category)
    embedded = _embed(before.key if before else key, guess)
    checked = _checked(before.key if before else key, guess, source)

    with transaction.atomic():
        current, counts = lock_key(place, key)
        now = timezone.now()  # once the layer is ours: what it writes is as of now
        alias = None
        if current is not None and current.status == Entry.Status.MERGED:
            # A key merged into another entry writes that entry, as it reads it.
            kept = kept_for_alias(place, current, now)
            if kept is not None:
                alias, key = key, kept.key
            current = kept
        if current is not None and is_expired(current):
            retire(current, Entry.Status.EXPIRED, now)
            promotion.schedule([current])
            current = None  # counts is None: the key had a row
        found = current.version if current else 0
        if expected is not None and expected != found:
            raise version_mismatch(key, layer, expected, found)
        stored = merged_value(
            strategy, current.value if current else None, value, exists=current is not None
        )
        text = encode_value(stored)
        same = checked is not None and checked[:2] == (key, text)
        scanned = checked[2] if same else entry_flags(key, stored, source)
        flags, new = written_flags(actor, current, key, stored, source, scanned)
        hold_flagged(actor, layer, key, new, version=found)
        was = embedding_text_of(current)
        was_indexed = current is not None and promotion.qualifies(current)
        evicted: list[Entry] = []
        history: list[tuple[str, list]] = []  # an update keeps the version it replaces
        if current is None:
            evicted = make_room(actor, place, now, counts=counts)
            entry = Entry(
                account_id=place.account_id,
                layer=layer,
                member_id=place.member_id,
                key=key,
                category=category or Category.FACT,
                confidence=(
                    confidence if confidence is not None else business_settings.CONFIDENCE_DEFAULT
                ),
                created_at=now,
                expires_at=expires_at(ttl if ttl is not UNSET else None, now),
            )
        else:
            entry = current
            history = version_statements(entry)
            entry.version += 1
            entry.category = category or entry.category
            if confidence is not None:
                entry.confidence = confidence
            if ttl is not UNSET:
                entry.expires_at = expires_at(ttl, now)
        apply_source(entry, source)
        mark_written(entry, actor, now)
        entry.strategy = strategy
        entry.set_flags(flags, now)
        if not is_agent(actor):
            entry.integrity_reviewed_at = now  # a person wrote it: their decision
        elif new:
            entry.integrity_reviewed_at = None
        set_value(entry, text, embedding_input(key, entry.category, stored), was, embedded)
        usage = UsageEvent.build(
            actor,
            memory=UsageEvent.Memory.BUSINESS,
            kind=UsageEvent.Kind.STORE,
            subject=key if layer == Layer.ACCOUNT else "",  # a member's keys stay theirs
        )
        # An entry that qualified for the index neither before nor after this write has
        # nothing to bring there. Search reads only promoted entries that still qualify, so
        # a promotion a lost task left behind is never shown meanwhile.
        changed = was_indexed or promotion.qualifies(entry)
        indexed = promotion.in_write(entry) if changed else None
        # The version it replaces, the entry, its event, the usage row (and, without a
        # broker, its promotion) in one round trip. A promotion never fails the write: if
        # its statement fails, it alone is undone and is tried again after the commit.
        undone = run_with_optional(
            *history,
            sql.insert(entry) if current is None else sql.update(entry, _written(entry)),
            sql.insert(event_on(actor, EntryEvent.Action.STORE, entry)),
            sql.insert(usage),
            optional=[indexed] if indexed else [],
        )
        if entry.embedding_status == pipeline.PENDING:
            # The provider answered before the lock, for a text the write did not store
            # (an alias, a concurrent merge): it can be asked again for this one.
            pipeline.enqueue(ENTRIES, entry.pk, answered=embedded.vector is not None)
        if undone is not None:
            logger.warning(
                "entry %s: promotion failed with the write (%s); tried after it", entry.pk, undone
            )
        in_index = indexed is not None and undone is None
        promotion.schedule([entry, *evicted] if changed and not in_index else evicted)
    view = EntryView.of(entry)
    if alias is not None:
        view.alias_of, view.key = view.key, alias
    return StoreResult(
        entry=view,
        created=current is None,
        previous_version=found,
        evicted=evicted_summary(evicted),
    )


def _written(entry: Entry) -> list[str]:
    """The fields an update of ``entry`` writes: every one it read (the vector only when
    the write replaced it)."""
    unread = entry.get_deferred_fields()
    fields = Entry._meta.concrete_fields
    return [f.name for f in fields if not f.primary_key and f.attname not in unread]


def _predict(before: Entry | None, strategy: str, value: Any, category: str | None):
    """The (category, value) a write will most likely store, or None if it cannot be told."""
    try:
        stored = merged_value(
            strategy, before.value if before else None, value, exists=before is not None
        )
    except KitError:  # the write will refuse it under the lock; nothing to embed
        return None
    return (category or (before.category if before else Category.FACT), stored)


def _checked(key: str, guess, source: Source | None) -> tuple[str, str, list[Flag]] | None:
    """The key, stored form and integrity flags of a predicted write, or None."""
    if guess is None:
        return None
    try:
        return key, encode_value(guess[1]), entry_flags(key, guess[1], source)
    except KitError:  # refused under the lock, where it counts
        return None


def _embed(key: str, guess) -> Embedded:
    if guess is None:
        return Embedded.none()
    category, stored = guess
    return embed_within_budget(embedding_input(key, category, stored))
