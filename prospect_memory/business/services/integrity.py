"""Memory integrity in business memory (SPEC 15): which flags a write keeps, the hold on
flagged text an agent would bring into the shared layer, clearing flags, and checking what
is stored again."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from outreach.access import Actor
from outreach.validation import FieldProblems
from prospect_memory.business.access import WRITABLE_LAYERS, Place, require_layer_writer
from prospect_memory.business.errors import IntegrityHold
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
)
from prospect_memory.business.records import EntryView, Source, StoreResult, source_of
from prospect_memory.business.rules import (
    clean_choice,
    clean_expected_version,
    clean_key,
    entry_flags,
)
from prospect_memory.business.services import promotion
from prospect_memory.business.services.entry_fields import version_mismatch
from prospect_memory.business.services.events import record_event
from prospect_memory.business.services.lock import live_entry, lock_shelf
from prospect_memory.core.integrity import (
    MAX_FLAGS,
    SOURCE_IDS,
    Flag,
    dumps,
    integrity_data,
    value_texts,
)
from prospect_memory.core.models import FLAG_FIELDS


def is_agent(actor: Actor) -> bool:
    """Writing through an OAuth client (an agent), not on a page or a signed-in session."""
    return actor.oauth_application is not None


def written_flags(
    actor: Actor,
    current: Entry | None,
    key: str,
    stored: Any,
    source: Source | None,
    found: list[Flag],
) -> tuple[list[Flag], list[Flag]]:
    """The flags a write keeps and the flags of the text it brings, from ``found`` (what the
    check found in the stored value).

    Text the entry already had keeps its flags as they were (cleared ones stay cleared, so
    an agent's clean append never re-flags what a person reviewed); new text is flagged
    when an agent writes it. A person's own new text is their decision and is not flagged.

    What the write brings is what the check finds now in a string it changed, or did not
    find in the entry as it was: an order begun in one string (an item, the key, a source
    id) and finished in another the write adds is the write's, wherever it starts."""
    carried_over = current.flags if current else []
    if not found and not carried_over:
        return [], []  # nothing flagged before or now (most writes): nothing to compare
    before = dict(value_texts(current.value)) if current else {}
    after = dict(value_texts(stored))
    old_source = source_ids(current) if current else {}
    new_source = {name: getattr(source, name) for name in SOURCE_IDS} if source else {}

    def field_unchanged(name: str) -> bool:
        if name == "key":
            return current is not None
        if name.startswith("source."):
            name = name.removeprefix("source.")
            return current is not None and old_source.get(name) == new_source.get(name)
        return name in before and before[name] == after.get(name)

    def unchanged(flag: Flag) -> bool:
        """Every string the finding runs through is as it was (a stored flag knows only
        its own)."""
        return all(field_unchanged(name) for name in flag.fields or (flag.field,))

    found_before = set()
    if current is not None and found:
        # Judged as the write reads it (a hidden character from before the check is U+FFFD
        # on both sides), so a person's review of the text it keeps still stands.
        old = entry_flags(current.key, current.value, source_of(current))
        found_before = {_same_finding(flag) for flag in old}
    new = [f for f in found if not (unchanged(f) and _same_finding(f) in found_before)]
    carried = [f for f in carried_over if unchanged(f)]
    if not is_agent(actor):
        return carried, new
    if len(carried) + len(new) > MAX_FLAGS:  # a row keeps ten: what the write brings first
        return new + carried, new
    return carried + new, new


def _same_finding(flag: Flag) -> tuple[object, ...]:
    """A flag as one finding: its kind, its span and the text it matched (which reaches
    into the strings after its own when an order runs on)."""
    return (flag.kind, flag.field, flag.start, flag.end, flag.text)


def stored_value(row: Entry | EntryVersion) -> Any:
    """An entry's or a kept version's value as it was written: what the check judges (its
    readers receive a hidden character kept from before the check as U+FFFD, which would
    hide the order it cuts)."""
    return json.loads(type(row).value_json.stored_text(row))


def source_ids(entry: Entry) -> dict[str, str]:
    return {name: getattr(entry, f"source_{name}") for name in SOURCE_IDS}


def would_hold(actor: Actor, layer: str, flags: list[Flag]) -> bool:
    """Whether :func:`hold_flagged` refuses a write that brings ``flags``."""
    return layer == Layer.ACCOUNT and is_agent(actor) and bool(flags)


def hold_flagged(actor: Actor, layer: str, key: str, flags: list[Flag], *, version: int) -> None:
    """An agent never brings flagged text into the account's shared layer: the write is
    refused with what was found, nothing is stored, and a person decides (SPEC 15)."""
    if not would_hold(actor, layer, flags):
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
        problems.add(
            "expected_version",
            "expected_version is required: the version you read (only that version is cleared)",
        )
    problems.raise_if_any()
    assert expected is not None  # required above
    require_layer_writer(actor, layer)
    place = Place.of(actor, layer)
    with transaction.atomic():
        lock_shelf(place)
        entry = live_entry(place, key)
        if expected != entry.version:
            raise version_mismatch(key, layer, expected, entry.version)
        if entry.flagged_at is not None:
            entry.clear_flags()
            entry.save(update_fields=FLAG_FIELDS)
            record_event(actor, EntryEvent.Action.UNFLAG, entry)
            promotion.schedule([entry])
    return StoreResult(entry=EntryView.of(entry), created=False, previous_version=entry.version)


def entries_rescan(*, batch_size: int = 500) -> tuple[int, int]:
    """Check every entry and kept version no person has reviewed with today's integrity
    check: (rows read, rows whose flags changed). Entries whose flags changed are brought
    up to date in the knowledge index."""
    seen = changed = 0
    unreviewed: tuple[QuerySet[Entry] | QuerySet[EntryVersion], ...] = (
        Entry.objects.filter(integrity_reviewed_at__isnull=True),
        EntryVersion.objects.filter(integrity_reviewed_at__isnull=True),
    )
    for rows in unreviewed:
        rows = rows.order_by("pk")
        last = None
        while batch := list((rows.filter(pk__gt=last) if last else rows)[:batch_size]):
            moved: list[Entry] = []
            for row in batch:
                assert isinstance(row, Entry | EntryVersion)
                seen += 1
                key = row.key if isinstance(row, Entry) else row.entry.key
                flags = entry_flags(key, stored_value(row), source_of(row))
                if dumps(flags) != dumps(row.flags):
                    row.set_flags(flags)
                    row.save(update_fields=FLAG_FIELDS)
                    changed += 1
                    if isinstance(row, Entry):
                        moved.append(row)
            if rows.model is Entry:
                with transaction.atomic():
                    promotion.schedule(moved)
            last = batch[-1].pk
    return seen, changed
