"""Storing an entry (SPEC 12): a write merged by strategy, under the layer's lock, with the
version check, capacity, aliases, integrity, history, events and usage in one transaction.

Before any lock a store reads the entry it will most likely change (none: a new key),
embeds and checks integrity on the value it will most likely store, and composes its rows.
It sends them at once (``store_round_trip``): one round trip that locks the layer, writes if the
database finds what was read still so, and commits. Otherwise (the entry changed or left,
an alias, a full layer, a version or integrity refusal to decide) it takes the locked
path: the key read under the lock, everything decided there, as the guards would.

When the stored text turns out different from the one embedded (a concurrent merge, an
alias), the entry is stored pending and embedded after the commit: without a broker once
the answer is written when the provider had answered, else by the pipeline's task or
backfill.

A provider that takes time is not asked before the answer at all (``EMBED_AFTER_ANSWER``):
nothing in a store's answer needs the vector, so the entry is stored pending and embedded
after the commit, by a worker with a broker, else by the request's own worker once the
answer is written (``outreach.after_answer``); the caller waits for the database only. A
store outside a request without a broker (a task, a command) still waits for its
vector."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, transaction

import pgstatements as sql
from outreach import after_answer
from outreach.access import Actor
from outreach.errors import KitError
from outreach.guarded import Stamp
from outreach.validation import FieldProblems
from pgstatements import new_row, run_with_optional
from prospect_memory.business.access import WRITABLE_LAYERS, Place, require_layer_writer
from prospect_memory.business.conf import business_settings
from prospect_memory.business.embeddings import ENTRIES
from prospect_memory.business.models import (
    Category,
    Entry,
    EntryEvent,
    EntryVersion,
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
from prospect_memory.business.services import promotion, store_round_trip
from prospect_memory.business.services.aliases import kept_for_alias
from prospect_memory.business.services.entry_fields import (
    apply_source,
    embedding_text_of,
    mark_written,
    set_value,
    version_mismatch,
)
from prospect_memory.business.services.events import event_on
from prospect_memory.business.services.eviction import make_room, retire
from prospect_memory.business.services.history import history_statements, version_of
from prospect_memory.business.services.integrity import (
    hold_flagged,
    is_agent,
    source_ids,
    would_hold,
    written_flags,
)
from prospect_memory.business.services.lock import Target, likely_target, lock_key
from prospect_memory.business.visibility import is_expired
from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings import get_provider
from prospect_memory.core.embeddings.budget import Embedded, embed_within_budget
from prospect_memory.core.integrity import SOURCE_IDS, Flag
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

    # Read the entry the write will most likely change (no lock); embed and check integrity
    # on the value it will most likely store (again under the lock if that turns out not
    # to be the value stored). An overwrite stores the value given whatever the read
    # finds: its checks run while the database reads.
    with sql.Meanwhile(lambda: _Early.of(key, strategy, value, category, source)) as early:
        target = likely_target(place, key)
    before = target.entry if target else None
    name = before.key if before else key
    guess = _predict(before, strategy, value, category)
    done = early.result if early.done else None
    if done is not None and done.key == name and guess is not None and guess[1] is value:
        checked = done.checked
        same = guess[0] == done.category and done.embedded is not None
        embedded = done.embedded if same else _embed(name, guess)
    else:
        embedded, checked = _embed(name, guess), _checked(name, guess, source)
    write = _Write(
        actor, layer, value, category, confidence, source, ttl, strategy, embedded, checked
    )
    if target is None or target.own:
        stored = _store_in_one_round_trip(write, place, key, target, expected)
        if stored is not None:
            return stored
    return _store_locked(write, place, key, expected)


@dataclass(frozen=True)
class _Write:
    """What a store was asked to write, checked, with what it found before the lock."""

    actor: Actor
    layer: str
    value: Any
    category: str | None
    confidence: int | None
    source: Source | None
    ttl: Any
    strategy: str
    embedded: Embedded
    checked: tuple[str, str, list[Flag]] | None


@dataclass
class _Rows:
    """The rows a write makes of the entry it changes (None: a new one), not yet written."""

    entry: Entry
    new_flags: list[Flag]  # flags of the text the write brings
    kept: EntryVersion | None  # the version an update replaces
    event: EntryEvent
    usage: UsageEvent
    changed: bool  # whether the knowledge index may have to follow


def _compose(write: _Write, place: Place, key: str, current: Entry | None, now: datetime) -> _Rows:
    """The entry ``write`` makes of ``current`` (changed in place) as of ``now``, and its
    other rows; a refusal of the merge or of the stored size raises (``KitError``)."""
    stored = _merged(write.strategy, current, write.value)
    text = encode_value(stored)
    checked, actor = write.checked, write.actor
    if checked is not None and checked[:2] == (key, text):
        scanned = checked[2]  # checked while the read was out, on this very text
    else:
        scanned = entry_flags(key, stored, write.source)
    flags, new = written_flags(actor, current, key, stored, write.source, scanned)
    was = embedding_text_of(current)
    was_indexed = current is not None and promotion.qualifies(current)
    same_text = current is not None and current.value_json == text and current.key == key
    if same_text and current is not None and write.source is not None:
        same_text = source_ids(current) == {n: getattr(write.source, n) for n in SOURCE_IDS}
    kept = None
    if current is None:
        confidence = write.confidence
        entry = new_row(
            Entry,
            account_id=place.account_id,
            layer=write.layer,
            member_id=place.member_id,
            key=key,
            category=write.category or Category.FACT,
            confidence=(
                confidence if confidence is not None else business_settings.CONFIDENCE_DEFAULT
            ),
            created_at=now,
            expires_at=expires_at(write.ttl if write.ttl is not UNSET else None, now),
        )
    else:
        entry, kept = current, version_of(current)
        entry.version += 1
        entry.category = write.category or entry.category
        if write.confidence is not None:
            entry.confidence = write.confidence
        if write.ttl is not UNSET:
            entry.expires_at = expires_at(write.ttl, now)
    apply_source(entry, write.source)
    mark_written(entry, actor, now)
    entry.strategy = write.strategy
    entry.set_flags(flags, now)
    if not is_agent(actor):
        entry.integrity_reviewed_at = now  # a person wrote it: their decision
    elif new or not same_text:
        # A person's review covered the text they read: an agent's text is not reviewed
        # (a later scan, a restore of this version, check it again).
        entry.integrity_reviewed_at = None
    set_value(entry, text, embedding_input(key, entry.category, stored), was, write.embedded)
    event = event_on(actor, EntryEvent.Action.STORE, entry)
    usage = UsageEvent.build(
        actor,
        memory=UsageEvent.Memory.BUSINESS,
        kind=UsageEvent.Kind.STORE,
        subject=key if write.layer == Layer.ACCOUNT else "",  # a member's keys stay theirs
    )
    event.created_at = usage.created_at = now
    # An entry that qualified for the index neither before nor after this write has
    # nothing to bring there. Search reads only promoted entries that still qualify, so
    # a promotion a lost task left behind is never shown meanwhile.
    changed = was_indexed or promotion.qualifies(entry)
    return _Rows(entry, new, kept, event, usage, changed)


def _store_in_one_round_trip(
    write: _Write, place: Place, key: str, target: Target | None, expected: int | None
) -> StoreResult | None:
    """The store in one round trip, if what was read before the lock still holds under it
    (``store_round_trip``); None, having written nothing, if it does not or a refusal is to be
    decided under the lock."""
    current = target.entry if target else None
    found = current.version if current else 0
    if expected is not None and expected != found:
        return None
    now = Stamp.now(UTC)
    try:
        rows = _compose(write, place, key, current, now)
    except KitError:
        return None
    if would_hold(write.actor, write.layer, rows.new_flags):
        return None
    entry, promote = rows.entry, rows.changed
    if current is None:
        sent = store_round_trip.new_entry(
            place, entry, rows.event, rows.usage, now=now, promote=promote
        )
    else:
        assert target is not None  # an update: of the entry read
        assert rows.kept is not None
        sent = store_round_trip.new_version(
            place, target, entry, _written(entry), rows.kept, rows.event, rows.usage,
            now=now, promote=promote,
        )  # fmt: skip
    if not sent.written:
        return None
    _after_commit(write, rows, promoted=sent.promoted, undone=sent.undone)
    return StoreResult(entry=EntryView.of(entry), created=current is None, previous_version=found)


def _store_locked(write: _Write, place: Place, key: str, expected: int | None) -> StoreResult:
    """The store under the layer's lock: the key read there and everything decided there."""
    actor, layer = write.actor, write.layer
    with transaction.atomic():
        # The database's clock once the layer is ours: what it writes is as of then.
        current, counts, now = lock_key(place, key)
        alias = None
        if current is not None and current.status == Entry.Status.MERGED:
            # A key merged into another entry writes that entry, as it reads it.
            kept = kept_for_alias(place, current, now)
            if kept is not None:
                alias, key = key, kept.key
            current = kept
        if current is not None and is_expired(current, now):
            retire(current, Entry.Status.EXPIRED, now)
            promotion.schedule([current])
            current = None  # counts is None: the key had a row
        found = current.version if current else 0
        if expected is not None and expected != found:
            raise version_mismatch(key, layer, expected, found)
        rows = _compose(write, place, key, current, now)
        hold_flagged(actor, layer, key, rows.new_flags, version=found)
        evicted = make_room(actor, place, now, counts=counts) if current is None else []
        entry = rows.entry
        indexed = promotion.in_write(entry) if rows.changed else None
        # The version it replaces, the entry, its event, the usage row (and, without a
        # broker, its promotion) in one round trip. A promotion never fails the write: if
        # its statement fails, it alone is undone and is tried again after the commit.
        undone = run_with_optional(
            *(history_statements(rows.kept) if rows.kept else []),
            sql.insert(entry) if current is None else sql.update(entry, _written(entry)),
            sql.insert(rows.event),
            sql.insert(rows.usage),
            optional=[indexed] if indexed else [],
        )
        promoted = indexed is not None and undone is None
        _after_commit(write, rows, promoted=promoted, undone=undone, evicted=evicted)
    view = EntryView.of(entry)
    if alias is not None:
        view.alias_of, view.key = view.key, alias
    return StoreResult(
        entry=view,
        created=current is None,
        previous_version=found,
        evicted=evicted_summary(evicted),
    )


def _after_commit(
    write: _Write,
    rows: _Rows,
    *,
    promoted: bool,
    undone: DatabaseError | None,
    evicted: list[Entry] | tuple[()] = (),
) -> None:
    """What a store schedules for after its commit (on the locked path, from inside its
    transaction): the embedding of a text the provider did not see, and the promotions the
    write did not record itself (its evictions' too)."""
    entry = rows.entry
    if entry.embedding_status == embedding_pipeline.PENDING:
        # The provider answered before the lock, for a text the write did not store
        # (an alias, a concurrent merge), or was not asked before the answer: it can be
        # asked for this one.
        embedded = write.embedded
        embedding_pipeline.enqueue(
            ENTRIES, entry.pk, answered=embedded.vector is not None, asked=embedded.asked
        )
    if undone is not None:
        logger.warning(
            "entry %s: promotion failed with the write (%s); tried after it", entry.pk, undone
        )
    promotion.schedule([entry, *evicted] if rows.changed and not promoted else evicted)


def _written(entry: Entry) -> list[str]:
    """The fields an update of ``entry`` writes: every one a store sets (the vector only
    when the write replaced it; not the counts of reads, which it never changes)."""
    unread = entry.get_deferred_fields()
    return [name for name, attname in _STORE_SETS if attname not in unread]


#: What a store of an existing entry may change (not its place, key, birth, reads or
#: status: a store writes a live entry, and leaves its reads to the readers).
_STORE_SETS = [
    (f.name, f.attname)
    for f in Entry._meta.concrete_fields
    if not f.primary_key
    and f.name
    not in {
        "account", "layer", "member", "key", "created_at", "access_count",
        "last_accessed_at", "status", "retired_at", "alias_of",
    }
]  # fmt: skip


def _merged(strategy: str, entry: Entry | None, value: Any) -> Any:
    """What ``strategy`` stores over ``entry`` (None: a new key's); an overwrite does not
    read the value it replaces."""
    current = entry.value if entry is not None and strategy != Strategy.OVERWRITE else None
    return merged_value(strategy, current, value, exists=entry is not None)


def _predict(
    before: Entry | None, strategy: str, value: Any, category: str | None
) -> tuple[str, Any] | None:
    """The (category, value) a write will most likely store, or None if it cannot be told."""
    try:
        stored = _merged(strategy, before, value)
    except KitError:  # the write will refuse it under the lock; nothing to embed
        return None
    return (category or (before.category if before else Category.FACT), stored)


@dataclass(frozen=True)
class _Early:
    """An overwrite's integrity check and embedding, done while its read is with the
    database, for the value given stored under the key asked, as a new key's (or a changed
    entry's of the category it would have)."""

    key: str
    category: str
    checked: tuple[str, str, list[Flag]] | None
    #: None if the provider takes time: it would keep the read's snapshot open meanwhile.
    embedded: Embedded | None

    @classmethod
    def of(
        cls, key: str, strategy: str, value: Any, category: str | None, source: Source | None
    ) -> _Early | None:
        if strategy != Strategy.OVERWRITE:  # what a merge stores depends on what is read
            return None
        guess = (category or Category.FACT, value)
        embedded = _embed(key, guess) if get_provider().immediate else None
        return cls(key, guess[0], _checked(key, guess, source), embedded)


def _checked(
    key: str, guess: tuple[str, Any] | None, source: Source | None
) -> tuple[str, str, list[Flag]] | None:
    """The key, stored form and integrity flags of a predicted write, or None."""
    if guess is None:
        return None
    try:
        return key, encode_value(guess[1]), entry_flags(key, guess[1], source)
    except KitError:  # refused under the lock, where it counts
        return None


def _embeds_before_answering() -> bool:
    """Whether a store makes its vector before it answers: always with a provider that
    answers at once, and with nothing to hand the work to (no broker, and no answer to
    write first: a task, a command); otherwise only when ``EMBED_AFTER_ANSWER`` is off
    (the stored entry is pending, embedded after the commit: by a worker, or by this
    request's own once its answer is written)."""
    return (
        get_provider().immediate
        or not business_settings.EMBED_AFTER_ANSWER
        or not (embedding_pipeline.queued() or after_answer.available())
    )


def _embed(key: str, guess: tuple[str, Any] | None) -> Embedded:
    if guess is None or not _embeds_before_answering():
        return Embedded.none()
    category, stored = guess
    return embed_within_budget(embedding_input(key, category, stored))
