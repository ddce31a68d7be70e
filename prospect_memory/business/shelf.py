"""The steps every write of a layer shares: its lock (the layer's ``Shelf`` row), its rows,
who wrote, history, events, and making room under the capacity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import connection
from django.db.models import Count, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

import pgstatements as sql
from outreach.access import Actor
from pgstatements import lock_row, lock_statement, new_row, run, with_generic_plan
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
    Layer,
    Shelf,
)
from prospect_memory.business.records import Source
from prospect_memory.business.rules import capacity, embedding_input
from prospect_memory.business.visibility import (
    RETIRED,
    UNEXPIRED,
    retired,
    unexpired,
    unexpired_sql,
)
from prospect_memory.core import pipeline
from prospect_memory.core.budget import Embedded


def lock_shelf(place: Place) -> Shelf:
    """Lock (creating it on first use) the shelf of ``place``."""
    return lock_row(Shelf, **_shelf_of(place))


def shelf_lock(place: Place) -> tuple[str, list]:
    """The statement of :func:`lock_shelf`, to send with others."""
    return lock_statement(Shelf, **_shelf_of(place))


def _shelf_of(place: Place) -> dict:
    return {
        "key": {"account": place.account_id, "layer": place.layer, "member": place.member_id},
        "constraint": "shelf_unique_layer",
        "defaults": {"created_at": timezone.now()},
    }


@dataclass(frozen=True)
class Counts:
    """A layer's live entries (unexpired) and the entries that left it (:data:`RETIRED`)."""

    live: int
    left: int

    def leave_room(self, limit: int) -> bool:
        """Room for one more live entry, and no more left entries than are kept."""
        return self.live < limit and self.left <= limit


#: :meth:`Counts.leave_room` of a layer's shelf ``s`` in SQL, its counts taken as
#: :func:`lock_key` takes them (every live entry with an expiry as already gone; never
#: counted: no room), the limit given twice.
SHELF_LEAVES_ROOM = "s.live_entries < %s AND s.left_entries + s.expiring_entries <= %s"


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
    statements = _place_statements(place.layer)
    params = {"account": place.account_id, "member": place.member_id, "key": key}
    (shelf,), own, alias, ((now,),) = run(
        shelf_lock(place),
        (statements["key"], params),
        (statements["alias"], params),
        (_CLOCK, None),
    )
    if own or alias:  # one or the other: a key is one live entry or one alias
        return Entry.from_db(connection.alias, _UNVECTORED, (own or alias)[0]), None, now
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


#: The entry columns a write reads back (all but the vector, which it replaces or keeps).
_UNVECTORED = [f.attname for f in Entry._meta.concrete_fields if f.name != "embedding"]


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
    rows = run((_place_statements(place.layer)["target"], params))[0]
    if not rows:
        return None
    *columns, seen, own = rows[0]
    return Target(Entry.from_db(connection.alias, _UNVECTORED, columns), seen, own)


def in_place_sql(layer: str, alias: str, *, named: bool = False) -> str:
    """The rows of a place of ``layer`` in table ``alias`` (none: the statement's one
    table), the layer a constant; its parameters positional (:func:`place_params`), or
    ``named`` (``account``, ``member``)."""
    table = f"{alias}." if alias else ""
    account, member = ("%(account)s", "%(member)s") if named else ("%s", "%s")
    owner = "IS NULL" if layer == Layer.ACCOUNT else f"= {member}"
    return (
        f"{table}account_id = {account} AND {table}layer = '{Layer(layer).value}' "
        f"AND {table}member_id {owner}"
    )


def place_params(place: Place) -> list:
    """The parameters of :func:`in_place_sql` for ``place``."""
    if place.layer == Layer.ACCOUNT:
        return [place.account_id]
    return [place.account_id, place.member_id]


@cache
def _place_statements(layer: str) -> dict[str, str]:
    """The statements of one layer, its conditions as constants: each matches the layer's
    own indexes, so PostgreSQL keeps one generic plan for it instead of planning each call."""
    table = Entry._meta.db_table
    shelf = Shelf._meta.db_table

    place, shelf_place = in_place_sql(layer, "e", named=True), in_place_sql(layer, "s", named=True)
    columns = ", ".join(f"e.{Entry._meta.get_field(name).column}" for name in _UNVECTORED)
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


def in_place(place: Place):
    return Entry.objects.filter(
        account_id=place.account_id, layer=place.layer, member_id=place.member_id
    )


def live_in(place: Place):
    return in_place(place).filter(status=Entry.Status.LIVE)


def record_event(by: Actor | str, action: str, entry: Entry, version: int | None = None) -> None:
    """Write :func:`event_on` ``entry``."""
    event_on(by, action, entry, version).save(force_insert=True)


def event_on(by: Actor | str, action: str, entry: Entry, version: int | None = None) -> EntryEvent:
    """An event on ``entry`` (at ``version``, its current one by default), by a person or an
    agent, or by Kit itself (:data:`KIT`, ``CONSOLIDATION``), not yet written."""
    return EntryEvent.build(
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
    run(*history_statements(version_of(entry)))


def version_of(entry: Entry) -> EntryVersion:
    """The entry as it is before a change, as its history keeps it (not yet written)."""
    version = new_row(
        EntryVersion,
        account_id=entry.account_id,
        entry_id=entry.pk,
        version=entry.version,
        category=entry.category,
        confidence=entry.confidence,
        source_pipeline_id=entry.source_pipeline_id,
        source_execution_id=entry.source_execution_id,
        source_step_id=entry.source_step_id,
        source_extracted_at=entry.source_extracted_at,
        strategy=entry.strategy,
        written_by_id=entry.written_by_id,
        written_by_label=entry.written_by_label,
        oauth_application_id=entry.oauth_application_id,
        written_at=entry.updated_at,
    )
    version.value_json = entry.value_json
    if entry.flagged_at is not None:
        version.integrity_json, version.flagged_at = entry.integrity_json, entry.flagged_at
    version.integrity_reviewed_at = entry.integrity_reviewed_at
    return version


def history_statements(version: EntryVersion) -> list[tuple[str, list]]:
    """Write ``version`` and keep the newest HISTORY_VERSIONS of its entry: to send with a
    write's other statements in one round trip."""
    return [sql.insert(version), beyond_history(version)]


def beyond_history(version: EntryVersion, *, a_step: bool = False) -> tuple[str, list]:
    """Delete the versions of ``version``'s entry past the newest HISTORY_VERSIONS, once it
    is written. ``a_step``: as a step of the statement that writes it (``at_once``), which
    does not see it among the others: one fewer of them kept, and only if the write wrote."""
    keep = business_settings.HISTORY_VERSIONS - (1 if a_step else 0)
    return _beyond_history(a_step), [version.account_id, version.entry_id, keep]


@cache
def _beyond_history(a_step: bool) -> str:
    table = EntryVersion._meta.db_table
    return f"""
    DELETE FROM {table} WHERE id IN (
        SELECT id FROM {table} WHERE account_id = %s AND entry_id = %s
         ORDER BY version DESC OFFSET %s){" AND EXISTS (SELECT FROM written)" if a_step else ""}"""  # noqa: S608


def make_room(
    actor: Actor,
    place: Place,
    now,
    *,
    keep_out: Entry | None = None,
    counts: Counts | None = None,
) -> list[Entry]:
    """Evict the lowest live entries so one more (``keep_out``, when it is already a row)
    fits the layer's capacity: lowest confidence first, then least recently used (never
    read: since it was stored), then oldest. Then keep at most the layer's capacity of
    evicted and expired entries, the most recent to leave.

    ``counts`` are the layer's (from :func:`lock_key`, under the same lock, nothing changed
    since), or one statement counts both; the rows themselves are read only when something
    must go."""
    limit = capacity(place.layer)
    if counts is not None and counts.leave_room(limit):
        return []
    others = in_place(place)
    if keep_out is not None:
        others = others.exclude(pk=keep_out.pk)
    if counts is None:
        counts = Counts(
            **others.aggregate(
                live=Count("pk", filter=Q(status=Entry.Status.LIVE) & UNEXPIRED),
                left=Count("pk", filter=RETIRED),
            )
        )
    over = counts.live - limit + 1
    victims: list[Entry] = []
    if over > 0:
        order = ("confidence", Coalesce("last_accessed_at", "created_at"), "created_at", "id")
        live = others.filter(UNEXPIRED, status=Entry.Status.LIVE)
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
    if victims or counts.left > limit:  # the victims (and their aliases) have just left
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


def kept_for_alias(place: Place, alias: Entry, now) -> Entry | None:
    """The live entry ``alias`` (a key merged into another entry of ``place``) stands for,
    locked. An alias of an entry that expired meanwhile leaves with it, and the key is free
    again (None)."""
    kept = unexpired(live_in(place)).select_for_update().filter(pk=alias.alias_of_id).first()
    if kept is None:
        release_aliases([alias.alias_of], now)
    return kept
