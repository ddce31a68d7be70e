"""A store in one round trip (SPEC 12): the layer's lock, the entry with its event and
usage row (for an update, the version it replaces) in one statement, which is its own
transaction (with its promotion, when it has one, in a transaction of the two), the
entry's write guarded by what the store read before the lock.

- A new key: written only if the key is still free in its layer (no live entry, expired
  or not, and no alias) and the layer's counts leave room (:meth:`Counts.leave_room`, as
  the locked path decides it on the shelf's counts).
- An update: written only if the entry's row is still the very one read (its ``xmin``:
  any change since, a recall's count among them, makes a new one) and unexpired.

The statement locks the layer's shelf row first (``SELECT ... FOR UPDATE``: not found, a
new key's shelf without room among them, nothing is locked nor written), an update's
entry row next, then reads the clock. What it reads is as of its start, before any wait
for a lock, so every guard is one the database checks again on what committed meanwhile:
the shelf's counts are re-read on its newest row once locked, an update's row is written
only if its newest version is still the one read (PostgreSQL re-checks a row that changed
while the statement waited for it), and a key written meanwhile is refused by the key's
unique index (``entry_account_key_live``, ``entry_member_key_live``: the store then takes
the locked path, as for any guard).

If a guard fails, nothing was written: the store takes the locked path (``store``), which
reads the key under the lock and decides there. The event, usage row, kept version and
promotion are written only with the entry (:func:`outreach.guarded.written_and`; the
promotion, in its own savepoint, only if the row this write made exists), times from the
database's clock once the lock is held (:class:`outreach.guarded.Stamp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, models

from outreach.guarded import (
    HELD,
    HELD_CLOCK,
    Stamp,
    insert_for_written,
    insert_when,
    rows_written,
    update_when,
    written_and,
)
from pgstatements import run_transaction
from prospect_memory.business.access import Place
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion, Shelf
from prospect_memory.business.rules import capacity
from prospect_memory.business.services import promotion
from prospect_memory.business.services.counts import SHELF_LEAVES_ROOM
from prospect_memory.business.services.history import beyond_history
from prospect_memory.business.services.lock import Target
from prospect_memory.business.services.places import in_place_sql, place_params
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
    lock = (_shelf_lock(place.layer, room=True), [*place_params(place), limit, limit])
    params = [*place_params(place), entry.key]
    write = insert_when(
        entry, now=now, when=_new_key_guard(place.layer), params=params, returning=_STAMPED,
        clock=HELD_CLOCK,
    )  # fmt: skip
    made = (_MADE.format(table=Entry._meta.db_table), [entry.account_id, entry.pk])
    return _sent(entry, lock, write, [event, usage], made, promote, now=now)


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
    lock = (_row_lock(place.layer), [*place_params(place), entry.pk])
    params = [target.seen, *place_params(place)]
    write = update_when(
        entry, fields, now=now, when=_unchanged(place.layer), params=params, returning=_STAMPED,
        clock=HELD_CLOCK,
    )  # fmt: skip
    made = (_MADE.format(table=EntryVersion._meta.db_table), [kept.account_id, kept.pk])
    steps = [kept, beyond_history(kept, a_step=True), event, usage]
    return _sent(entry, lock, write, steps, made, promote, now=now)


def _sent(
    entry: Entry,
    lock: tuple[str, list[Any]],
    write: tuple[str, list[Any]],
    then: list[Any],
    made: tuple[str, list[Any]],
    promote: bool,
    *,
    now: Stamp,
) -> Sent:
    """Lock and write in one statement, in one round trip with its promotion if it has one
    (and its commit); the commit waits for the disk only if the write wrote (a transaction
    that wrote nothing but took the lock need not). ``made`` is the condition that the
    write wrote (a row it made exists): the promotion, a statement of its own, stands on it."""
    steps = [
        s if isinstance(s, tuple) else insert_for_written(s, now=now, clock=HELD_CLOCK)
        for s in then
    ]
    indexed = promotion.in_write(entry, only_if=made) if promote else None
    # A caller's transaction keeps its own setting.
    unwritten = None if connection.in_atomic_block else _NOT_DURABLE
    statement = written_and(write, *steps, unwritten=unwritten, locked=lock)
    try:
        rows, undone = run_transaction(statement, optional=[indexed] if indexed else [])
    except IntegrityError as error:
        if _constraint_of(error) in _KEY_TAKEN:
            return Sent(written=False)  # a store of the key committed while this one waited
        raise
    written = rows[0] if unwritten is None else rows_written(rows[0] or [])
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


#: The unique indexes that refuse a key written since the statement began.
_KEY_TAKEN = {"entry_account_key_live", "entry_member_key_live"}


def _constraint_of(error: IntegrityError) -> str | None:
    diag = getattr(error.__cause__, "diag", None)
    return diag.constraint_name if diag is not None else None


@cache
def _shelf_lock(layer: str, *, room: bool) -> str:
    """The layer's shelf row, locked (for a new key: only if it leaves room, re-checked on
    its newest version once locked)."""
    leaves_room = f" AND {SHELF_LEAVES_ROOM}" if room else ""
    return f"""
    SELECT FROM {Shelf._meta.db_table} s
     WHERE {in_place_sql(layer, "s")}{leaves_room} FOR UPDATE"""


@cache
def _row_lock(layer: str) -> str:
    """The layer's shelf row, then the entry's row, locked in that order (the locked path's
    order): the entry's row may be held by a session that leaves it as it is (a promotion
    locks it), so the clock that judges its expiry and stamps the write is read once both
    are held."""
    return f"""
    WITH shelf AS ({_shelf_lock(layer, room=False)})
    SELECT FROM {Entry._meta.db_table} e
     WHERE e.id = %s AND EXISTS (SELECT FROM shelf) FOR NO KEY UPDATE"""  # noqa: S608


@cache
def _new_key_guard(layer: str) -> str:
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    return f"""
    {HELD} AND NOT EXISTS (SELECT FROM {Entry._meta.db_table} e
                 WHERE {in_place_sql(layer, "e")} AND e.key = %s
                   AND e.status IN ('{live}', '{merged}'))"""


@cache
def _unchanged(layer: str) -> str:
    unexpired = unexpired_sql("", now=HELD_CLOCK)
    return f"{HELD} AND xmin = %s::xid AND {in_place_sql(layer, '')} AND {unexpired}"
