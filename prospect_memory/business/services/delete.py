"""Deleting a live entry for good, by its layer's writer or by Kit staff in the admin, under
the layer's lock; an event keeps who deleted which key."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from outreach.access import Actor
from outreach.validation import FieldProblems
from prospect_memory.business.access import (
    WRITABLE_LAYERS,
    Place,
    require_layer_writer,
)
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Promotion,
)
from prospect_memory.business.records import DeleteResult
from prospect_memory.business.rules import (
    clean_choice,
    clean_expected_version,
    clean_key,
)
from prospect_memory.business.services.aliases import release_aliases
from prospect_memory.business.services.entry_fields import (
    version_mismatch,
)
from prospect_memory.business.services.events import record_event
from prospect_memory.business.services.lock import live_entry, lock_shelf
from prospect_memory.core.models import delete_in_account


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
    entry = live_entry(place, key)
    if expected is not None and expected != entry.version:
        raise version_mismatch(key, place.layer, expected, entry.version)
    record_event(actor, EntryEvent.Action.DELETE, entry)
    version = entry.version
    release_aliases([entry], timezone.now())
    # Each statement names the account: the entry's kept versions, its place in the
    # knowledge index, then the entry (its aliases left with ``release_aliases``).
    account_id = entry.account_id
    delete_in_account(EntryVersion, account_id, entry_id=entry.pk)
    delete_in_account(Promotion, account_id, entry_id=entry.pk)
    delete_in_account(Entry, account_id, pk=entry.pk)
    return DeleteResult(key=key, layer=place.layer, version=version)
