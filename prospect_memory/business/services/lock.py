"""The layer's lock (its ``Shelf`` row, created on first use) and what a write reads
under it: the key's row and the layer's counts in one round trip, or, before any lock, the
entry the write will most likely change; and the prepared statements those reads run, one
set per layer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.utils import timezone

from pgstatements import lock_row, lock_statement, run, with_generic_plan
from prospect_memory.business.access import Place
from prospect_memory.business.errors import (
    NotFound,
)
from prospect_memory.business.models import (
    Entry,
    Shelf,
)
from prospect_memory.business.rules import capacity
from prospect_memory.business.services.counts import Counts
from prospect_memory.business.services.places import in_place_sql, live_in
from prospect_memory.business.visibility import (
    unexpired,
    unexpired_sql,
)


def lock_shelf(place: Place) -> Shelf:
    """Lock (creating it on first use) the shelf of ``place``."""
    shelf: Shelf = lock_row(Shelf, **_shelf_of(place))
    return shelf


def shelf_lock(place: Place) -> tuple[str, list[Any]]:
    """The statement of :func:`lock_shelf`, to send with others."""
    return lock_statement(Shelf, **_shelf_of(place))


def _shelf_of(place: Place) -> dict[str, Any]:
    return {
        "key": {"account": place.account_id, "layer": place.layer, "member": place.member_id},
        "constraint": "shelf_unique_layer",
        "defaults": {"created_at": timezone.now()},
    }


def lock_key(place: Place, key: str) -> tuple[Entry | None, Counts | None, datetime]:
    """Lock the shelf of ``place``, then ``key``'s row in it (live, possibly past its expiry,
    locked; or an alias, read: the caller locks the entry it stands for); read without its
    vector, in one round trip of prepared statements, run in this order by the database.
    With no such row, the layer's counts too. And the database's clock once the lock is
    held: what the write stamps, and judges expiry by (as every read does).

    The shelf's own counts (kept by the database, see ``Shelf``) come back with its lock.
    Taking every live entry with an expiry as already gone, they are at least the counts;
    while those leave room, they are all a new entry needs. Else (a full layer, a shelf
    never counted) the layer is counted, in a second round trip, and the counts written
    back: an eviction is decided on a count, and counts that went wrong outside Kit heal.
    """
    statements = layer_statements(place.layer)
    params = {"account": place.account_id, "member": place.member_id, "key": key}
    (shelf,), own, alias, ((now,),) = run(
        shelf_lock(place),
        (statements["key"], params),
        (statements["alias"], params),
        (_CLOCK, None),
    )
    if own or alias:  # one or the other: a key is one live entry or one alias
        return Entry.from_db(connection.alias, UNVECTORED, (own or alias)[0]), None, now
    live, left, expiring = (shelf[at] for at in _SHELF_COUNTS_AT)
    if live is not None:
        at_most = Counts(live, left + expiring)
        if at_most.leave_room(capacity(place.layer)):
            return None, at_most, now
    _, counted, _ = run(*with_generic_plan((statements["counts"], params)))
    return None, Counts(*counted[0]), now


#: The database's clock as the statement runs (after the ones sent before it).
_CLOCK = "SELECT statement_timestamp()"


#: Where the shelf's counts are in the row its lock statement returns (every column).
_SHELF_COUNTS_AT = [
    [f.attname for f in Shelf._meta.concrete_fields].index(name)
    for name in ("live_entries", "left_entries", "expiring_entries")
]


@dataclass(frozen=True)
class Target:
    """The live entry a write of a key would most likely change, read without a lock."""

    entry: Entry  # read as :func:`lock_key` reads it: every column but the vector
    #: The version of its row that was read (``xmin``): a write sent on the strength of
    #: this read stands only if the row is still that one when the write holds the lock.
    seen: str
    #: The key's own entry (not the one an alias of the key stands for).
    own: bool


def likely_target(place: Place, key: str) -> Target | None:
    """The live entry a write of ``key`` would change, read without a lock (a guess the
    write checks under it): the key's own, or the entry it was merged into; in one
    prepared statement."""
    params = {"account": place.account_id, "member": place.member_id, "key": key}
    rows = run((layer_statements(place.layer)["target"], params))[0]
    if not rows:
        return None
    *columns, seen, own = rows[0]
    return Target(Entry.from_db(connection.alias, UNVECTORED, columns), seen, own)


def live_entry(place: Place, key: str) -> Entry:
    entry: Entry | None = unexpired(live_in(place)).select_for_update().filter(key=key).first()
    if entry is None:
        raise NotFound(
            f"No {place.layer} entry {key!r} in this account's business memory.",
            details={"layer": place.layer, "key": key},
        )
    return entry


#: The entry columns a write reads back (all but the vector, which it replaces or keeps).
UNVECTORED = [f.attname for f in Entry._meta.concrete_fields if f.name != "embedding"]


@cache
def layer_statements(layer: str) -> dict[str, str]:
    """The statements of one layer, its conditions as constants: each matches the layer's
    own indexes, so PostgreSQL keeps one generic plan for it instead of planning each call."""
    table = Entry._meta.db_table
    shelf = Shelf._meta.db_table

    place, shelf_place = in_place_sql(layer, "e", named=True), in_place_sql(layer, "s", named=True)
    columns = ", ".join(
        f"e.{f.column}" for f in Entry._meta.concrete_fields if f.name != "embedding"
    )
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    evicted, gone = Entry.Status.EVICTED.value, Entry.Status.EXPIRED.value
    unexpired = unexpired_sql()
    return {
        # One row at most between the two: a key is one live entry or one alias of its
        # layer. The live one is locked; an alias is not: no other writer changes it under
        # the shelf's lock, and the entry it stands for, which the store then locks, may
        # have the smaller id: searches lock in id order, so holding the alias first
        # while waiting for it would deadlock with one that saw the alias still live.
        "key": f"""
    SELECT {columns} FROM {table} e
     WHERE {place} AND e.key = %(key)s AND e.status = '{live}'
       FOR UPDATE OF e""",  # noqa: S608  (names from the models, values are parameters)
        "alias": f"""
    SELECT {columns} FROM {table} e
     WHERE {place} AND e.key = %(key)s AND e.status = '{merged}'""",  # noqa: S608
        # ``likely_target``: the key's live unexpired entry, or the one its alias stands for,
        # with the version of its row read and whether it is the key's own.
        "target": f"""
    WITH own AS (
        SELECT {columns}, e.xmin::text AS seen FROM {table} e
         WHERE {place} AND e.key = %(key)s AND e.status IN ('{live}', '{merged}')
           AND {unexpired})
    SELECT *, true FROM own WHERE status = '{live}'
     UNION ALL
    SELECT {columns}, e.xmin::text, false FROM {table} e JOIN own ON e.id = own.alias_of_id
     WHERE own.status = '{merged}' AND {place} AND e.status = '{live}' AND {unexpired}""",  # noqa: S608
        # ``make_room``'s two counts, as visibility.UNEXPIRED and RETIRED say (the few live
        # entries with an expiry from their own index, ``entry_expiring``), written back to
        # the shelf as the three it keeps.
        "counts": f"""
    WITH counted AS (
        SELECT (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}') AS live,
               (SELECT count(*) FROM {table} e
                 WHERE {place} AND e.status IN ('{evicted}', '{gone}')) AS gone,
               (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}'
                   AND e.expires_at IS NOT NULL) AS expiring,
               (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}'
                   AND e.expires_at <= statement_timestamp()) AS expired),
    written AS (
        UPDATE {shelf} s SET live_entries = c.live, left_entries = c.gone,
               expiring_entries = c.expiring
          FROM counted c WHERE {shelf_place})
    SELECT live - expired, gone + expired FROM counted""",  # noqa: S608  (names from the models)
    }
