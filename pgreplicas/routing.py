"""Which database a read goes to: a streaming replica when one has caught up, else the
primary.

A read-only operation runs its work inside :func:`read`. There, Django's queries of the
apps named in ``DATABASE_REPLICA_READ_APPS`` and the statements :mod:`pgstatements` sends
that cannot write go to the replica :func:`read` chose (:class:`ReplicaRouter`); every
write, every read inside a transaction of the primary and every other app's query (the
session, the user, OAuth tokens) stays on the primary.

A replica serves a member's read only when

- it answers (one that does not is left alone for ``DATABASE_REPLICA_RETRY_SECONDS``),
- it lags the primary by at most ``DATABASE_REPLICA_MAX_LAG_SECONDS``, and
- it has replayed the primary's WAL up to where it was after that member's last write
  (:func:`wrote` keeps that position on the primary, so every web node knows it): a member
  reads what they wrote, exactly, however long the replica takes; a fixed time pin after a
  write would be too short on a slow replica and needlessly long on a fast one.

Otherwise the primary serves it, and ``kit_replica_skips_total`` says why. A replica lost in
the middle of a read has that read run again on the primary: nothing fails.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from prometheus_client import Counter, Gauge

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Where each member's last write reached (``pgreplicas.models.WritePosition``).
POSITIONS = "kit_write_position"

#: The database chosen for the read running in this context (None: no read is running).
_READING: contextvars.ContextVar[str | None] = contextvars.ContextVar("replica", default=None)

READS = Counter(
    "kit_database_reads",
    "Read-only operations and pages served, by the database that served them.",
    ["database"],
)
SKIPS = Counter(
    "kit_replica_skips",
    "Reads a replica did not serve, by replica and why: down (it did not answer, or is not "
    "a streaming copy of the primary), lagging (past DATABASE_REPLICA_MAX_LAG_SECONDS), "
    "behind (it has not yet replayed the reader's own last write) or failed (it cancelled "
    "the read: the primary answered).",
    ["database", "reason"],
)
LAG = Gauge(
    "kit_replica_lag_seconds",
    "How far each replica's replay was behind the primary when last asked.",
    ["database"],
    multiprocess_mode="mostrecent",
)

#: Where the replica stands: which server and database it is, whether it is replaying a
#: primary's WAL at all (a promoted replica is not), whether its WAL receiver is streaming
#: (one cut off from the primary would otherwise look caught up for ever: it has replayed
#: all it received), its replay position in bytes of WAL, and its lag in seconds: none when
#: everything it received is replayed, else the time since the last transaction it replayed
#: was committed on the primary (which overstates the lag after a quiet spell: the safe
#: side; unknown, as after a restart, is taken as infinite).
_PROBE = """
SELECT (SELECT system_identifier FROM pg_control_system()), current_database(),
       pg_is_in_recovery(),
       coalesce((SELECT status = 'streaming' FROM pg_stat_wal_receiver), false),
       (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint,
       CASE WHEN pg_last_wal_receive_lsn() IS NULL
                 OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
            ELSE coalesce(extract(epoch FROM clock_timestamp()
                                  - pg_last_xact_replay_timestamp()), 'Infinity')
       END::float8
"""

#: The primary's server and database, which a replica must be a copy of.
_PRIMARY = "SELECT (SELECT system_identifier FROM pg_control_system()), current_database()"

_POSITION = f"""
SELECT lsn FROM {POSITIONS}
 WHERE account_id = %s AND member_id = %s
"""  # noqa: S608  (a constant)

# After a write: the primary's insert position covers the write's commit record. Kept
# without waiting for the disk: a position lost in a crash is an earlier one kept (never
# a later one), so what the member wrote last may be read from the primary.
_FORGET = f"""
DELETE FROM {POSITIONS}
 WHERE account_id = %s AND (%s::bigint IS NULL OR member_id = %s::bigint)
"""  # noqa: S608  (a constant)

_WROTE = f"""
INSERT INTO {POSITIONS} (account_id, member_id, lsn)
SELECT %s, %s, (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed
    ON CONFLICT (account_id, member_id)
    DO UPDATE SET lsn = greatest({POSITIONS}.lsn, excluded.lsn)
"""  # noqa: S608  (a constant)


def replicas() -> list[str]:
    """The replicas' database aliases, in the order of ``DATABASE_REPLICA_URLS``."""
    return list(getattr(settings, "DATABASE_REPLICAS", ()))


def reading() -> str | None:
    """The replica serving the read running now, if one does."""
    alias = _READING.get()
    return None if alias == DEFAULT_DB_ALIAS else alias


class ReplicaRouter:
    """Django's database router: reads of the replicated apps inside :func:`read` go to
    its replica; everything else, and every write, to the primary."""

    def db_for_read(self, model: type[Any] | None, **hints: Any) -> str | None:
        alias = reading()
        if alias is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return None
        if model is None or model._meta.app_label in settings.DATABASE_REPLICA_READ_APPS:
            return alias
        # Said outright: left to Django, a row related to one read on the replica (a
        # note's member, a dossier's account) would be read there too.
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database: a replica holds the primary's rows

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


@dataclass
class _State:
    down_until: float = 0.0


_STATES: dict[str, _State] = {}
_STATES_LOCK = threading.Lock()
_TURN = itertools.count()


def _state(alias: str) -> _State:
    with _STATES_LOCK:
        return _STATES.setdefault(alias, _State())


def read(account_id: int, member_id: int, work: Callable[[], T]) -> T:
    """``work``, a read of this member's, served by a replica that may serve it (the
    primary otherwise); if the replica is lost while it runs, run again on the primary.
    ``work`` may thus run twice: what a read writes (a use counted) belongs after it."""
    aliases = replicas()
    if not aliases:
        return work()
    if connections[DEFAULT_DB_ALIAS].in_atomic_block or _READING.get() is not None:
        return work()  # inside a transaction (or a read) already: read as it does
    alias = _choose(aliases, account_id, member_id)
    if alias is not None:
        token = _READING.set(alias)
        replica = connections[alias]
        replica.errors_occurred = False  # Django marks a connection whose statement failed
        try:
            result = work()
        except DatabaseError as error:
            if not replica.errors_occurred:
                raise  # the primary's failure (a write of the read's): not a replica's to mend
            # Lost midway, or a query the replica cancelled (a conflict with what it
            # replays): the primary answers instead. A read's own error meets it again there.
            logger.warning(
                "a read on replica %s failed, read again on the primary: %s", alias, error
            )
            if _answers(alias):
                SKIPS.labels(alias, "failed").inc()
            else:
                _down(alias)
        else:
            READS.labels(alias).inc()
            return result
        finally:
            _READING.reset(token)
    READS.labels(DEFAULT_DB_ALIAS).inc()
    token = _READING.set(DEFAULT_DB_ALIAS)  # a read inside this one is this one's
    try:
        return work()
    finally:
        _READING.reset(token)


def streamed(account_id: int, member_id: int, make: Callable[[], Iterator[T]]) -> Iterator[T]:
    """The items of ``make()`` (a generator: nothing runs until the first is asked for), a
    read of this member's on the database :func:`read` would choose, chosen now and in
    force while each item is produced: a streamed answer is read after its view returned.

    If the replica fails before the first item, the primary produces them all; after it,
    the stream ends there (what was sent cannot be taken back; an export's file then has
    no manifest, which is how a reader knows it is cut short).
    """
    alias = None
    if replicas() and not connections[DEFAULT_DB_ALIAS].in_atomic_block:
        alias = _choose(replicas(), account_id, member_id)
    chosen = alias or DEFAULT_DB_ALIAS
    items = make()
    try:
        first = _next_on(chosen, items)
    except DatabaseError as error:
        if alias is None:
            raise
        logger.warning("a stream on %s failed, read again on the primary: %s", alias, error)
        SKIPS.labels(alias, "failed").inc()
        chosen, items = DEFAULT_DB_ALIAS, make()
        first = _next_on(chosen, items)
    READS.labels(chosen).inc()
    return _produced(chosen, first, items)


_END = object()


def _next_on(alias: str, items: Iterator[T]) -> Any:
    """The next of ``items``, produced with ``alias`` chosen (``_END`` after the last)."""
    token = _READING.set(alias)
    try:
        return next(items, _END)
    finally:
        _READING.reset(token)


def _produced(alias: str, first: Any, items: Iterator[T]) -> Iterator[T]:
    # Closed with the answer (a client that went away too): ``items`` is closed then, on
    # its database, so a snapshot it holds ends at once, not when it is collected.
    try:
        item = first
        while item is not _END:
            yield item
            item = _next_on(alias, items)
    finally:
        token = _READING.set(alias)
        try:
            close = getattr(items, "close", None)
            if close is not None:
                close()
        finally:
            _READING.reset(token)


def wrote(account_id: int, member_id: int) -> None:
    """Remember where the primary's WAL is after this member's write (once it commits),
    so their next reads wait for a replica that has replayed it."""
    if not replicas():
        return
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        transaction.on_commit(lambda: _remember(account_id, member_id))
    else:
        _remember(account_id, member_id)


def forget_writer(account_id: int, member_id: int | None = None) -> int:
    """Forget where a member's writes reached (every member's of the account when
    ``member_id`` is None): a member who leaves, an account erased. How many were kept."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(_FORGET, [account_id, member_id, member_id])
        return int(cursor.rowcount)


def _remember(account_id: int, member_id: int) -> None:
    # The write is done: failing to remember it costs the member a read of a replica that
    # may not have it yet, never the answer to the write.
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(_WROTE, [account_id, member_id])
    except DatabaseError as error:
        logger.warning("the write position of a member was not kept: %s", error)


def _position(account_id: int, member_id: int) -> int:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(_POSITION, [account_id, member_id])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _choose(aliases: list[str], account_id: int, member_id: int) -> str | None:
    """The first replica, taken in turns, that answers, keeps up and has replayed this
    member's last write."""
    needed: int | None = None
    now = time.monotonic()
    start = next(_TURN) % len(aliases)
    for alias in aliases[start:] + aliases[:start]:
        state = _state(alias)
        if state.down_until > now:
            SKIPS.labels(alias, "down").inc()
            continue
        try:
            replayed, lag = _probe(alias)
        except Exception as error:
            logger.warning("replica %s skipped: %s", alias, error)
            _down(alias)
            continue
        LAG.labels(alias).set(lag)
        if lag > settings.DATABASE_REPLICA_MAX_LAG_SECONDS:
            SKIPS.labels(alias, "lagging").inc()
            continue
        if needed is None:
            needed = _position(account_id, member_id)
        if replayed < needed:
            SKIPS.labels(alias, "behind").inc()
            continue
        return alias
    return None


def _probe(alias: str) -> tuple[int, float]:
    """The replica's replay position and lag; an error if it is not a streaming copy of
    the primary's database."""
    with connections[alias].cursor() as cursor:
        cursor.execute(_PROBE)
        row = cursor.fetchone()
    if row is None:
        raise DatabaseError(f"{alias} did not say where it stands")
    system, database, recovering, streaming, replayed, lag = row
    if (system, database) != _primary():
        raise DatabaseError(f"{alias} is not a copy of the primary's database")
    if not recovering or replayed is None:
        raise DatabaseError(f"{alias} is not replaying a primary's WAL (promoted?)")
    if not streaming:
        raise DatabaseError(f"{alias} is not receiving the primary's WAL")
    return int(replayed), float(lag)


_PRIMARY_IS: list[tuple[int, str]] = []


def _primary() -> tuple[int, str]:
    """The primary's server and database (asked once per process)."""
    if not _PRIMARY_IS:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(_PRIMARY)
            system, database = cursor.fetchone()
        _PRIMARY_IS.append((int(system), str(database)))
    return _PRIMARY_IS[0]


def _answers(alias: str) -> bool:
    """Whether ``alias``'s connection still works (the failure was the read's own)."""
    db = connections[alias]
    return db.connection is not None and db.is_usable()


def _down(alias: str) -> None:
    """Leave ``alias`` alone for a while, and drop its connection."""
    _state(alias).down_until = time.monotonic() + settings.DATABASE_REPLICA_RETRY_SECONDS
    SKIPS.labels(alias, "down").inc()
    with contextlib.suppress(DatabaseError):
        connections[alias].close()


def forget() -> None:
    """Forget every replica's state (tests: a replica started again is tried at once)."""
    with _STATES_LOCK:
        _STATES.clear()
    _PRIMARY_IS.clear()
