"""Writes of business memory: store with a merge strategy, delete, restore a version,
restore an eviction, and the purge of what left the memory long ago.

Every write to a layer locks that layer's :class:`Shelf` row first, so a key's existence,
``expected_version`` and the capacity count are seen in one order: concurrent creations can
never leave more live entries than the capacity, and concurrent increments never lose one.
The embedding provider is called before any lock, on the value the write will most likely
store; when the stored text turns out different (a concurrent merge), the entry is left
pending and the pipeline embeds it. Each write is one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from outreach.access import (
    MEMBER,
    MODULE_ADMIN,
    Actor,
    is_module_admin,
    require_module_admin,
    require_outreach,
)
from outreach.errors import KitError, NotModuleAdmin
from outreach.sql import lock_row
from prospect_memory.business import promotion
from prospect_memory.business.conf import business_settings
from prospect_memory.business.embeddings import ENTRIES
from prospect_memory.business.errors import IntegrityHold, KeyTaken, NotFound, VersionMismatch
from prospect_memory.business.models import (
    Category,
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Shelf,
    Strategy,
)
from prospect_memory.business.rules import (
    STORE_STRATEGIES,
    UNSET,
    FieldProblems,
    Source,
    capacity,
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
from prospect_memory.business.selectors import (
    EntryView,
    expired_live,
    is_expired,
    retired,
    retired_for_actor,
    source_of,
    unexpired,
)
from prospect_memory.core import metering, pipeline
from prospect_memory.core.budget import Embedded, embed_within_budget
from prospect_memory.core.integrity import SOURCE_IDS, Flag, dumps, integrity_data, value_texts
from prospect_memory.core.models import FLAG_FIELDS, UsageEvent

WRITABLE_LAYERS = (Layer.ACCOUNT, Layer.MEMBER)


@dataclass
class StoreResult:
    entry: EntryView
    created: bool
    previous_version: int
    evicted: list[dict] = field(default_factory=list)

    @classmethod
    def back(cls, entry: Entry, previous: int, evicted: list[Entry]) -> StoreResult:
        """An entry brought back (a restore, an undone merge) and what made room for it."""
        return cls(
            entry=EntryView.of(entry),
            created=False,
            previous_version=previous,
            evicted=_evicted(evicted),
        )


def _evicted(entries: list[Entry]) -> list[dict]:
    return [{"key": e.key, "confidence": e.confidence} for e in entries]


@dataclass
class DeleteResult:
    key: str
    layer: str
    version: int


# --- who may write -------------------------------------------------------------------------


def may_write_layer(actor: Actor, layer: str) -> bool:
    """The account layer: an Outreach module admin; a member layer: its member (or Kit
    staff moderating in the admin)."""
    if layer == Layer.ACCOUNT:
        return is_module_admin(actor)
    return actor.member is not None or actor.is_staff


def require_layer_writer(actor: Actor, layer: str) -> None:
    if layer == Layer.ACCOUNT:
        require_module_admin(actor)
        return
    require_outreach(actor)
    if not may_write_layer(actor, layer):
        raise NotModuleAdmin(
            "A member's own context is written by that member only.",
            details={"layer": layer},
        )


def layer_role(layer: object) -> str:
    """The role a write to ``layer`` needs (for the operation's declaration)."""
    return MEMBER if layer == Layer.MEMBER else MODULE_ADMIN


@dataclass(frozen=True)
class Place:
    """One layer of one account's memory: the account's, or one member's."""

    account_id: int
    layer: str
    member_id: int | None

    @classmethod
    def of(cls, actor: Actor, layer: str) -> Place:
        """The actor's own place in ``layer``."""
        if layer == Layer.ACCOUNT:
            return cls(actor.account.pk, layer, None)
        if actor.member is None:
            raise NotModuleAdmin("Only a member has an own context.", details={"layer": layer})
        return cls(actor.account.pk, layer, actor.member.pk)

    @classmethod
    def of_entry(cls, entry: Entry) -> Place:
        return cls(entry.account_id, entry.layer, entry.member_id)


# --- shared steps --------------------------------------------------------------------------


def lock_shelf(place: Place) -> Shelf:
    """Lock (creating it on first use) the shelf of ``place``."""
    return lock_row(
        Shelf,
        key={"account": place.account_id, "layer": place.layer, "member": place.member_id},
        constraint="shelf_unique_layer",
        defaults={"created_at": timezone.now()},
    )


def _in(place: Place):
    return Entry.objects.filter(
        account_id=place.account_id, layer=place.layer, member_id=place.member_id
    )


def _live(place: Place):
    return _in(place).filter(status=Entry.Status.LIVE)


def _event(actor: Actor, action: str, entry: Entry, version: int | None = None) -> None:
    EntryEvent.objects.create(
        account=actor.account,
        action=action,
        layer=entry.layer,
        key=entry.key,
        entry_id=entry.pk,
        version=version if version is not None else entry.version,
        member=actor.member,
        actor=actor.label,
        oauth_application=actor.oauth_application,
    )


def _retire(entry: Entry, status: str, now) -> None:
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
        EntryEvent.objects.create(
            account_id=alias.account_id,
            action=EntryEvent.Action.EVICT,
            layer=alias.layer,
            key=alias.key,
            entry_id=alias.pk,
            version=alias.version,
            actor=KIT,
        )
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


def _make_room(actor: Actor, place: Place, now, *, keep_out: Entry | None = None) -> list[Entry]:
    """Evict the lowest live entries so one more (``keep_out``, when it is already a row)
    fits the layer's capacity: lowest confidence first, then least recently used (never
    read: since it was stored), then oldest. Then keep at most the layer's capacity of
    evicted and expired entries, the most recent to leave."""
    live = unexpired(_live(place))
    others = _in(place)
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
            _retire(victim, Entry.Status.EVICTED, now)
            _event(actor, EntryEvent.Action.EVICT, victim)
        victims.sort(key=lambda e: chosen.index(e.pk))
    left = retired(others).order_by(Coalesce("retired_at", "expires_at").desc(), "-id")
    Entry.objects.filter(pk__in=list(left.values_list("pk", flat=True)[limit:])).delete()
    return victims


def _write(entry: Entry, actor: Actor, now) -> None:
    """Record who wrote the entry's new version, and that it was used."""
    entry.written_by = actor.member
    entry.written_by_label = actor.label
    entry.oauth_application = actor.oauth_application
    entry.updated_at = entry.used_at = entry.written_at = now
    entry.idle_periods_charged = 0
    entry.kept_apart = False


def _set_value(entry: Entry, text: str, embedding_text: str, was: str, embedded: Embedded):
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


def _embedding_text(entry: Entry | None) -> str:
    return embedding_input(entry.key, entry.category, entry.value) if entry else ""


# --- integrity (SPEC 15) ------------------------------------------------------------------


def _is_agent(actor: Actor) -> bool:
    """Writing through an OAuth client (an agent), not on a page or a signed-in session."""
    return actor.oauth_application is not None


def written_flags(
    actor: Actor, current: Entry | None, key: str, stored: Any, source: Source | None, found
) -> tuple[list[Flag], list[Flag]]:
    """The flags a write keeps and the flags of the text it brings, from ``found`` (what the
    check found in the stored value).

    Text the entry already had keeps its flags as they were (cleared ones stay cleared, so
    an agent's clean append never re-flags what a person reviewed); new text is flagged
    when an agent writes it. A person's own new text is their decision and is not flagged.
    """
    before = dict(value_texts(current.value)) if current else {}
    after = dict(value_texts(stored))
    old_source = _source_ids(current) if current else {}
    new_source = {name: getattr(source, name) for name in SOURCE_IDS} if source else {}

    def unchanged(flag: Flag) -> bool:
        if flag.field == "key":
            return current is not None
        if flag.field.startswith("source."):
            name = flag.field.removeprefix("source.")
            return current is not None and old_source.get(name) == new_source.get(name)
        return flag.field in before and before[flag.field] == after.get(flag.field)

    new = [f for f in found if not unchanged(f)]
    carried = [f for f in current.flags if unchanged(f)] if current else []
    return carried + (new if _is_agent(actor) else []), new


def _source_ids(entry: Entry) -> dict[str, str]:
    return {name: getattr(entry, f"source_{name}") for name in SOURCE_IDS}


def hold_flagged(actor: Actor, layer: str, key: str, flags: list[Flag], *, version: int) -> None:
    """An agent never brings flagged text into the account's shared layer: the write is
    refused with what was found, nothing is stored, and a person decides (SPEC 15)."""
    if layer != Layer.ACCOUNT or not _is_agent(actor) or not flags:
        return
    found = "; ".join(f'{f.field}: {f.explanation} ("{f.text}")' for f in flags[:3])
    raise IntegrityHold(
        f"Kit flagged text this write would bring into the account's shared {key!r} ({found}). "
        "Flagged text from an agent never enters the shared layer: tell the person you work "
        "for what you found; they can write it on the entry's page if it is right. Nothing "
        "was stored.",
        details={
            "key": key,
            "layer": layer,
            "current_version": version,
            "integrity": integrity_data(flags),
        },
    )


def entry_unflag(
    *, actor: Actor, key: object, layer: object = Layer.ACCOUNT, expected_version: object = None
) -> StoreResult:
    """A writer of the layer clears the flags of an entry's current version, having read it
    (audited; a newer version than the one read is refused)."""
    problems = FieldProblems()
    layer = clean_choice(layer, WRITABLE_LAYERS, "layer", problems)
    key = clean_key(key, problems)
    expected = clean_expected_version(expected_version, problems)
    if expected_version is None:
        problems.add("expected_version", "the version you read: only that version is cleared")
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    with transaction.atomic():
        lock_shelf(place)
        entry = _live_entry(place, key)
        if expected != entry.version:
            raise _version_mismatch(key, layer, expected, entry.version)
        if entry.flagged_at is not None:
            entry.clear_flags()
            entry.save(update_fields=FLAG_FIELDS)
            _event(actor, EntryEvent.Action.UNFLAG, entry)
            promotion.schedule([entry])
    return StoreResult(entry=EntryView.of(entry), created=False, previous_version=entry.version)


# --- store ---------------------------------------------------------------------------------


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
    before = _likely_target(place, key)
    guess = _predict(before, strategy, value, category)
    embedded = _embed(before.key if before else key, guess)
    checked = _checked(before.key if before else key, guess, source)

    with transaction.atomic():
        lock_shelf(place)
        now = timezone.now()
        current = _live(place).select_for_update().filter(key=key).first()
        alias = None
        if current is None:
            # A key merged into another entry writes that entry, as it reads it.
            kept = _kept_for_alias(place, key, now)
            if kept is not None:
                alias, key, current = key, kept.key, kept
        if current is not None and is_expired(current):
            _retire(current, Entry.Status.EXPIRED, now)
            promotion.schedule([current])
            current = None
        found = current.version if current else 0
        if expected is not None and expected != found:
            raise _version_mismatch(key, layer, expected, found)
        stored = merged_value(
            strategy, current.value if current else None, value, exists=current is not None
        )
        text = encode_value(stored)
        scanned = checked[1] if checked and checked[0] == text else entry_flags(key, stored, source)
        flags, new = written_flags(actor, current, key, stored, source, scanned)
        hold_flagged(actor, layer, key, new, version=found)
        was = _embedding_text(current)
        evicted: list[Entry] = []
        if current is None:
            evicted = _make_room(actor, place, now)
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
            keep_version(entry)
            entry.version += 1
            entry.category = category or entry.category
            if confidence is not None:
                entry.confidence = confidence
            if ttl is not UNSET:
                entry.expires_at = expires_at(ttl, now)
        _apply_source(entry, source)
        _write(entry, actor, now)
        entry.strategy = strategy
        entry.set_flags(flags, now)
        if not _is_agent(actor):
            entry.integrity_reviewed_at = now  # a person wrote it: their decision
        elif new:
            entry.integrity_reviewed_at = None
        _set_value(entry, text, embedding_input(key, entry.category, stored), was, embedded)
        entry.save(force_insert=current is None)
        _event(actor, EntryEvent.Action.STORE, entry)
        metering.usage_record(
            actor=actor,
            memory=UsageEvent.Memory.BUSINESS,
            kind=UsageEvent.Kind.STORE,
            subject=key if layer == Layer.ACCOUNT else "",  # a member's keys stay theirs
        )
        if entry.embedding_status == pipeline.PENDING:
            pipeline.enqueue(ENTRIES, entry.pk)
        # A new entry below the threshold has nothing to bring into the index (this saves
        # the check after commit: 1.2 to 2 ms of a store, measured with scripts/bench).
        promotion.schedule([entry, *evicted] if current or promotion.qualifies(entry) else evicted)
    view = EntryView.of(entry)
    if alias is not None:
        view.alias_of, view.key = view.key, alias
    return StoreResult(
        entry=view,
        created=current is None,
        previous_version=found,
        evicted=_evicted(evicted),
    )


def _likely_target(place: Place, key: str) -> Entry | None:
    """The live entry a write of ``key`` would change, read without a lock: the key's own,
    or the entry it was merged into."""
    # One row at most (a key is one live entry or one alias of its layer).
    statuses = [Entry.Status.LIVE, Entry.Status.MERGED]
    found = unexpired(_in(place).filter(key=key, status__in=statuses)).first()
    if found is not None and found.status == Entry.Status.MERGED:
        return unexpired(_live(place)).filter(pk=found.alias_of_id).first()
    return found


def _predict(before: Entry | None, strategy: str, value: Any, category: str | None):
    """The (category, value) a write will most likely store, or None if it cannot be told."""
    try:
        stored = merged_value(
            strategy, before.value if before else None, value, exists=before is not None
        )
    except KitError:  # the write will refuse it under the lock; nothing to embed
        return None
    return (category or (before.category if before else Category.FACT), stored)


def _checked(key: str, guess, source: Source | None) -> tuple[str, list[Flag]] | None:
    """The stored form of a predicted value and its integrity flags, or None."""
    if guess is None:
        return None
    try:
        return encode_value(guess[1]), entry_flags(key, guess[1], source)
    except KitError:  # refused under the lock, where it counts
        return None


def _embed(key: str, guess) -> Embedded:
    if guess is None:
        return Embedded.none()
    category, stored = guess
    return embed_within_budget(embedding_input(key, category, stored))


def _apply_source(entry: Entry, source: Source | None) -> None:
    source = source or Source()
    entry.source_pipeline_id = source.pipeline_id
    entry.source_execution_id = source.execution_id
    entry.source_step_id = source.step_id
    entry.source_extracted_at = source.extracted_at


def _version_mismatch(key: str, layer: str, expected: int, found: int) -> VersionMismatch:
    now = "does not exist yet" if found == 0 else f"is at version {found}"
    return VersionMismatch(
        f"{layer} entry {key!r} {now}, not version {expected}: someone changed it since you "
        "read it. Nothing was stored. Recall it again, merge your change into what is there "
        f"and pass expected_version={found}.",
        details={"key": key, "layer": layer, "expected": expected, "current_version": found},
    )


def _kept_for_alias(place: Place, key: str, now) -> Entry | None:
    """The live entry ``key`` was merged into (locked), if it is an alias in ``place``. An
    alias of an entry that expired meanwhile leaves with it, and the key is free again."""
    alias = _in(place).filter(status=Entry.Status.MERGED, key=key).only("alias_of_id").first()
    if alias is None:
        return None
    kept = unexpired(_live(place)).select_for_update().filter(pk=alias.alias_of_id).first()
    if kept is None:
        release_aliases([alias.alias_of], now)
    return kept


def _key_taken(place: Place, key: str, entry: Entry) -> bool:
    """Whether ``key`` is a live entry or an alias of ``place`` other than ``entry``."""
    rows = _in(place).filter(key=key).exclude(pk=entry.pk)
    return (
        unexpired(rows.filter(status=Entry.Status.LIVE)).exists()
        or rows.filter(status=Entry.Status.MERGED).exists()
    )


def _live_entry(place: Place, key: str) -> Entry:
    entry = unexpired(_live(place)).select_for_update().filter(key=key).first()
    if entry is None:
        raise NotFound(
            f"No {place.layer} entry {key!r} in this account's business memory.",
            details={"layer": place.layer, "key": key},
        )
    return entry


# --- delete ----------------------------------------------------------------------------------


def entry_delete(
    *,
    actor: Actor,
    key: object,
    layer: object = Layer.ACCOUNT,
    expected_version: object = None,
) -> DeleteResult:
    """Remove a live entry and its history for good; an event keeps who and which key."""
    problems = FieldProblems()
    layer = clean_choice(layer, WRITABLE_LAYERS, "layer", problems)
    key = clean_key(key, problems)
    expected = clean_expected_version(expected_version, problems)
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    with transaction.atomic():
        lock_shelf(place)
        return _delete(actor, place, key, expected)


def entry_remove(*, actor: Actor, entry: Entry) -> DeleteResult:
    """Kit staff deleting a live entry in the admin, whoever's layer it is in."""
    require_layer_writer(actor, entry.layer)
    place = Place.of_entry(entry)
    with transaction.atomic():
        lock_shelf(place)
        return _delete(actor, place, entry.key, None)


def _delete(actor: Actor, place: Place, key: str, expected: int | None) -> DeleteResult:
    entry = _live_entry(place, key)
    if expected is not None and expected != entry.version:
        raise _version_mismatch(key, place.layer, expected, entry.version)
    _event(actor, EntryEvent.Action.DELETE, entry)
    version = entry.version
    release_aliases([entry], timezone.now())
    entry.delete()
    return DeleteResult(key=key, layer=place.layer, version=version)


# --- restore ---------------------------------------------------------------------------------


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
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        problems.add("version", "version must be the number of a kept version")
    problems.raise_if_any()
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    with transaction.atomic():
        lock_shelf(place)
        now = timezone.now()
        entry = _live_entry(place, key)
        if expected is not None and expected != entry.version:
            raise _version_mismatch(key, layer, expected, entry.version)
        kept = EntryVersion.objects.filter(entry=entry, version=version).first()
        if kept is None:
            raise NotFound(
                f"{layer} entry {key!r} keeps no version {version}; its history lists the "
                "versions that can be restored.",
                details={"layer": layer, "key": key, "version": version},
            )
        # The kept version is read by today's check (it may predate it), unless a person
        # cleared that version's flags.
        flags = [] if kept.integrity_reviewed_at else entry_flags(key, kept.value, source_of(kept))
        hold_flagged(actor, layer, key, flags, version=entry.version)
        was = _embedding_text(entry)
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
        _write(entry, actor, now)
        now_text = embedding_input(key, kept.category, kept.value)
        _set_value(entry, kept.value_json, now_text, was, Embedded.none())
        entry.save()
        _event(actor, EntryEvent.Action.RESTORE_VERSION, entry, version)
        if entry.embedding_status == pipeline.PENDING:
            pipeline.enqueue(ENTRIES, entry.pk)
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
        if _key_taken(place, entry.key, entry):
            raise KeyTaken(
                f"The {entry.layer} layer has a live entry {entry.key!r} again; delete or "
                "rename it first, then restore this one.",
                details={"layer": entry.layer, "key": entry.key, "entry_id": str(entry.pk)},
            )
        # A live twin of the key that has expired leaves the live set for good.
        for twin in expired_live(_live(place)).filter(key=entry.key).exclude(pk=entry.pk):
            _retire(twin, Entry.Status.EXPIRED, now)
            promotion.schedule([twin])
        evicted = _make_room(actor, place, now, keep_out=entry)
        previous = entry.version
        entry.status, entry.retired_at, entry.expires_at = Entry.Status.LIVE, None, None
        entry.save(update_fields=["status", "retired_at", "expires_at"])
        _event(actor, EntryEvent.Action.RESTORE_EVICTION, entry)
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
        entry = _in(place).select_for_update().filter(status=Entry.Status.MERGED, key=key).first()
        if entry is None:
            raise NotFound(
                f"No {layer} entry {key!r} was merged into another one; the entry page of the "
                "entry it joined lists its merges.",
                details={"layer": layer, "key": key},
            )
        hold_flagged(actor, layer, key, entry.flags, version=entry.version)
        if _key_taken(place, key, entry):
            raise KeyTaken(
                f"The {layer} layer has a live entry {key!r} again; delete or rename it first, "
                "then undo the merge.",
                details={"layer": layer, "key": key},
            )
        for twin in expired_live(_live(place)).filter(key=key):
            _retire(twin, Entry.Status.EXPIRED, now)
            promotion.schedule([twin])
        evicted = _make_room(actor, place, now, keep_out=entry)
        previous = entry.version
        keep_version(entry)
        entry.version += 1
        entry.strategy = Strategy.UNMERGE
        entry.status, entry.alias_of = Entry.Status.LIVE, None
        written = entry.written_at
        _write(entry, actor, now)
        entry.kept_apart = True  # a person's decision: the next runs leave it apart
        entry.written_at = written  # its own value again, as old as it was
        entry.save()
        _event(actor, EntryEvent.Action.UNMERGE, entry)
        promotion.schedule([entry, *evicted])
    return StoreResult.back(entry, previous, evicted)


# --- purge -----------------------------------------------------------------------------------


def retired_purge(*, now=None, account=None, layer=None, dry_run: bool = False) -> int:
    """Delete what left the memory (evicted or expired) over RETIRED_KEEP_DAYS ago, in every
    account or one (and one layer); how many entries (``dry_run``: would be)."""
    since = (now or timezone.now()) - timedelta(days=business_settings.RETIRED_KEEP_DAYS)
    rows = Entry.objects.all() if account is None else Entry.objects.filter(account=account)
    if layer is not None:
        rows = rows.filter(layer=layer)
    rows = (
        retired(rows)
        .annotate(left_at=Coalesce("retired_at", "expires_at"))
        .filter(left_at__lt=since)
    )
    if dry_run:
        return rows.count()
    places = rows.values_list("account_id", "layer", "member_id").order_by(
        "account_id", "layer", "member_id"
    )
    deleted = 0
    for place in [Place(*row) for row in places.distinct()]:
        # One layer at a time, locked as every writer locks it (the shelf, then rows in id
        # order): what a person restored or wrote meanwhile is read after they commit and no
        # longer qualifies, and a write that makes room never waits on the purge's rows.
        with transaction.atomic():
            lock_shelf(place)
            here = rows.filter(
                account_id=place.account_id, layer=place.layer, member_id=place.member_id
            )
            leaving = list(here.select_for_update(of=("self",)).order_by("id"))
            # Expired entries never marked so still hold their aliases.
            release_aliases(
                [e for e in leaving if e.status == Entry.Status.LIVE], now or timezone.now()
            )
            _, counts = Entry.objects.filter(pk__in=[e.pk for e in leaving]).delete()
            deleted += counts.get(Entry._meta.label, 0)
    return deleted


def entries_rescan(*, batch_size: int = 500) -> tuple[int, int]:
    """Check every entry and kept version no person has reviewed with today's integrity
    check: (rows read, rows whose flags changed). Entries whose flags changed are brought
    up to date in the knowledge index."""
    seen = changed = 0
    for model in (Entry, EntryVersion):
        rows = model.objects.filter(integrity_reviewed_at__isnull=True).order_by("pk")
        last = None
        while batch := list((rows.filter(pk__gt=last) if last else rows)[:batch_size]):
            moved = []
            for row in batch:
                seen += 1
                key = row.key if model is Entry else row.entry.key
                flags = entry_flags(key, row.value, source_of(row))
                if dumps(flags) != dumps(row.flags):
                    row.set_flags(flags)
                    row.save(update_fields=FLAG_FIELDS)
                    changed += 1
                    moved.append(row)
            if model is Entry:
                with transaction.atomic():
                    promotion.schedule(moved)
            last = batch[-1].pk
    return seen, changed
