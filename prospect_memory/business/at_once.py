"""A store in one round trip (SPEC 12): the layer's lock, the entry with its event and
usage row (for an update, the version it replaces), its promotion and the commit, sent
together, the entry's write guarded by what the store read before the lock.

- A new key: written only if the key is still free in its layer (no live entry, expired
  or not, and no alias) and the layer's counts leave room (:meth:`Counts.leave_room`, as
  the locked path decides it on the shelf's counts).
- An update: written only if the entry's row is still the very one read (its ``xmin``:
  any change since, a recall's count among them, makes a new one) and unexpired.

The database checks the guard once it holds the layer's lock. If it fails, nothing but
the lock was taken: the store takes the locked path (``store``), which reads the key
under the lock and decides there. The event, usage row, kept version and promotion are
written only with the entry (:func:`outreach.guarded.written_and`; the promotion, in its
own savepoint, only if the row this write made exists), times from the database's clock
once the lock is held (:class:`outreach.guarded.Stamp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.db import DatabaseError, connection, models

from outreach.guarded import (
    Stamp,
    insert_for_written,
    insert_when,
    rows_written,
    update_when,
    written_and,
)
from outreach.sql import run_transaction
from prospect_memory.business import promotion
from prospect_memory.business.access import Place
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion, Shelf
from prospect_memory.business.rules import capacity
from prospect_memory.business.shelf import (
    SHELF_LEAVES_ROOM,
    Target,
    beyond_history,
    in_place_sql,
    place_params,
    shelf_lock,
)
from prospect_memory.business.visibility import unexpired_sql
from prospect_memory.core.models import UsageEvent


@dataclass(frozen=True)
class Sent:
    """What became of a write sent at once."""

    written: bool
    #: Its promotion was recorded with it (the entry is in the knowledge index as written).
    promoted: bool = False
    #: The failure of its promotion, undone alone, if it failed (the write stands).
    undone: DatabaseError | None = None


def new_entry(
    place: Place,
    entry: Entry,
    event: EntryEvent,
    usage: UsageEvent,
    *,
    now: Stamp,
    promote: bool,
) -> Sent:
    """Write ``entry`` (a new key's) with its event and usage row (and, if ``promote``,
    its promotion as :func:`promotion.in_write` makes it), if the key is free and the
    layer has room."""
    limit = capacity(place.layer)
    guard = _new_key_guard(place.layer)
    params = [*place_params(place), entry.key, *place_params(place), limit, limit]
    write = insert_when(entry, now=now, when=guard, params=params, returning=_STAMPED)
    made = (_MADE.format(table=Entry._meta.db_table), [entry.account_id, entry.pk])
    return _sent(place, entry, write, [event, usage], made, promote, now=now)


def new_version(
    place: Place,
    target: Target,
    entry: Entry,
    fields: list[str],
    kept: EntryVersion,
    event: EntryEvent,
    usage: UsageEvent,
    *,
    now: Stamp,
    promote: bool,
) -> Sent:
    """Write ``fields`` of ``entry`` (``target``'s entry, changed), the version it replaces
    (``kept``), its event and usage row (and its promotion, as :func:`new_entry`), if its
    row is still the one ``target`` read."""
    params = [target.seen, *place_params(place)]
    write = update_when(
        entry, fields, now=now, when=_unchanged(place.layer), params=params, returning=_STAMPED
    )
    made = (_MADE.format(table=EntryVersion._meta.db_table), [kept.account_id, kept.pk])
    steps = [kept, beyond_history(kept, a_step=True), event, usage]
    return _sent(place, entry, write, steps, made, promote, now=now)


def _sent(
    place: Place,
    entry: Entry,
    write: tuple[str, list],
    then: list,
    made: tuple[str, list],
    promote: bool,
    *,
    now: Stamp,
) -> Sent:
    """Lock, write, promote and commit in one round trip; the commit waits for the disk
    only if the write wrote (a transaction that wrote nothing but took the lock need not).
    ``made`` is the condition that the write wrote (a row it made exists): the promotion,
    a statement of its own, stands on it."""
    steps = [s if isinstance(s, tuple) else insert_for_written(s, now=now) for s in then]
    indexed = promotion.in_write(entry, only_if=made) if promote else None
    # A caller's transaction keeps its own setting.
    unwritten = None if connection.in_atomic_block else _NOT_DURABLE
    statements = [shelf_lock(place), written_and(write, *steps, unwritten=unwritten)]
    rows, undone = run_transaction(*statements, optional=[indexed] if indexed else [])
    written = rows[1] if unwritten is None else rows_written(rows[1])
    if not written:
        return Sent(written=False)
    for name, value in zip(_STAMPED, written[0], strict=True):
        setattr(entry, name, value)  # as the database wrote them
    return Sent(written=True, promoted=indexed is not None and undone is None, undone=undone)


#: That the write wrote: the row it made (a new entry, or the version an update keeps).
_MADE = "EXISTS (SELECT FROM {table} WHERE account_id = %s AND id = %s)"

#: A transaction that took the lock and wrote nothing commits without waiting for the disk.
_NOT_DURABLE = "set_config('synchronous_commit', 'off', true)"


#: The entry's times, as the database writes them (a stamp becomes its clock).
_STAMPED = [f.attname for f in Entry._meta.concrete_fields if isinstance(f, models.DateTimeField)]


@cache
def _new_key_guard(layer: str) -> str:
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    return f"""
    NOT EXISTS (SELECT FROM {Entry._meta.db_table} e
                 WHERE {in_place_sql(layer, "e")} AND e.key = %s
                   AND e.status IN ('{live}', '{merged}'))
    AND EXISTS (SELECT FROM {Shelf._meta.db_table} s
                 WHERE {in_place_sql(layer, "s")} AND {SHELF_LEAVES_ROOM})"""  # noqa: S608


@cache
def _unchanged(layer: str) -> str:
    return f"xmin = %s::xid AND {in_place_sql(layer, '')} AND {unexpired_sql('')}"
