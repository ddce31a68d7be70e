"""Statements sent to PostgreSQL: prepared once per database connection, several in one
round trip.

PostgreSQL plans every statement it receives as text anew; for the bearer check and
recall, planning cost more than running (about 0.5 ms per statement against 0.05-0.35 ms
of execution). Statements run through :func:`run` are prepared on their first use on a
connection (psycopg ``prepare=True``; other queries only after their fifth, see
``DATABASES`` in the settings); after that PostgreSQL only executes them. Several
statements go out together in pipeline mode: one round trip, and their rows come back in
PostgreSQL's binary format, which psycopg loads about three times faster than text
(recall reads 100 ciphertexts and 50 timestamps).

The statements still pass through Django's connection handling: the same connection,
its health check, thread and async checks, and its error wrapping (a dropped connection is
a ``django.db.OperationalError`` like any other query's). They do not pass through a
Django cursor: they are not in ``connection.queries`` or ``CaptureQueriesContext``, and
``execute_wrapper`` does not see them; :func:`run_transaction` manages its own
transaction, and :func:`run` runs inside the caller's (outside one, statements sent
together go as one transaction, with its own ``COMMIT`` when they may write).

Whatever fails (a statement refused, a check at commit, a timeout, the connection lost,
the work done meanwhile raising), a round trip leaves its connection out of the
transaction it opened, ready for the next, or discards it for the next to open another;
the caller gets Django's database error (``tests/outreach/test_sql_failures.py``).

Prepared statements live in the database session, so a connection pooler in front of
PostgreSQL must keep sessions (PgBouncer: session pooling, or transaction pooling with
``max_prepared_statements``); with ``DATABASE_PREPARED_STATEMENTS=false`` the same
statements run unprepared.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from functools import cache, lru_cache
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, router
from django.utils.asyncio import async_unsafe
from psycopg import pq

Params = Mapping[str, Any] | Sequence[Any] | None


def run(*statements: tuple[str, Params], prepare: bool = True, replica: bool = False) -> list[Any]:
    """Execute ``(sql, params)`` pairs in order in one round trip; rows of each (a list of
    tuples, typed ``Any``: which statement returns rows is the caller's to know).

    A statement that returns no rows (an INSERT, ``BEGIN``) gives ``None``. Statements
    without parameters are sent as they are; the others are prepared and reused, unless
    ``prepare`` is false: then each is planned for its values (a plan that depends on them,
    such as whether an index serves this account, must not be reused for another).
    ``replica``: statements that only read may go where Django's routers send a read (a
    replica, inside ``pgreplicas.routing.read``); the caller says so for each read that a
    replica a few seconds behind may answer. Without it, and for any statement that may
    write, the default database.
    """
    rows, failure = _send(statements, prepare, replica=replica)
    if failure is not None:
        raise failure
    return rows


def _send(
    statements: Sequence[tuple[str, Params]], prepare: bool = True, *, replica: bool = False
) -> tuple[list[list[tuple] | None], DatabaseError | None]:
    """:func:`run`'s round trip: the rows of each statement that ran (None for one without
    rows or that did not run), and the failure that stopped the others, if one did.

    Statements that may write, sent together outside any transaction, go as a transaction
    of their own (``BEGIN`` and ``COMMIT`` in the same round trip), never in the implicit
    one PostgreSQL opens for a pipeline and commits at its end: a check made at that commit
    (a deferred foreign key) fails on no statement, and psycopg then pairs the results with
    the wrong requests (``IndexError``, or a connection left in pipeline mode), depending on
    how many reads the results took. With its own ``COMMIT`` the failure is that
    statement's. Reads alone have nothing to check at their commit and go as they are
    (the frame costs them 30 us, a fifth of a short round trip).
    """
    writes = any(_may_write(sql) for sql, _ in statements)
    db = _connection(reads=replica and not writes and all(map(_reads_only, statements)))
    raw = db.connection
    meanwhile = _MEANWHILE.get()
    if meanwhile is not None:
        _MEANWHILE.set(None)  # this round trip's alone (its work may not send another)
    framed = (
        (len(statements) > 1 or meanwhile is not None)
        and raw.autocommit
        and raw.pgconn.transaction_status == pq.TransactionStatus.IDLE
        and statements[0][0] != _BEGIN
        and writes
    )
    if framed:
        statements = [(_BEGIN, None), *statements, (_COMMIT, None)]
    # Transaction control (BEGIN, COMMIT, a savepoint) returns no rows: those statements
    # share one cursor, the others have their own to hold their rows.
    shared = None
    cursors = []
    for sql, _ in statements:
        if sql in _CONTROL:
            shared = shared or psycopg.Cursor(raw)
            cursors.append(shared)
        else:
            cursors.append((psycopg.RawCursor if type(sql) is Native else psycopg.Cursor)(raw))
    failure = None
    if db.queries_logged:  # DEBUG, or a test capturing queries: as Django's own cursors do
        _logged(db, statements)
    try:
        try:
            with db.wrap_database_errors:  # a psycopg error, as Django's
                _execute(raw, statements, cursors, prepare, meanwhile)
        except DatabaseError as error:
            failure = error
            if not _recovered(db, framed):
                return [None] * (len(statements) - 2 * framed), failure
        except BaseException:  # raised by the work done meanwhile: the statements were read
            _recovered(db, framed)
            raise
        with db.wrap_database_errors:
            rows = [c.fetchall() if c is not shared and _has_rows(c) else None for c in cursors]
        return (rows[1:-1] if framed else rows), failure
    finally:
        for cursor in cursors:
            cursor.close()


def _logged(db, statements: Sequence[tuple[str, Params]]) -> None:
    """Add the round trip's statements (not their values, not transaction control) to the
    connection's query log, where ``connection.queries`` and ``CaptureQueriesContext`` read
    what Django's own cursors ran; each names its round trip (``round_trip``), which the
    statements sent together share."""
    trip = next(_ROUND_TRIPS)
    for sql, _ in statements:
        if sql not in _CONTROL:
            db.queries_log.append({"sql": str(sql), "time": "0.000", "round_trip": trip})


#: Statement texts whose kind (:func:`_may_write`, :func:`_reads_only_text`) is kept.
_TEXTS_KEPT = 1024

#: Numbers for the round trips logged (:func:`_logged`).
_ROUND_TRIPS = itertools.count(1)


@lru_cache(maxsize=_TEXTS_KEPT)
def _may_write(sql: str) -> bool:
    """Whether ``sql`` may change rows (a row lock counts, to be safe): only then can its
    transaction's commit fail."""
    return _WRITES.search(sql) is not None


# What changes rows or locks them: the words both searches below look for.
_WRITE_WORDS = r"INSERT|UPDATE|DELETE|MERGE|TRUNCATE|COPY|CALL|FOR\s+(?:NO\s+KEY\s+|KEY\s+)?SHARE"
_WRITES = re.compile(rf"\b(?:{_WRITE_WORDS})\b", re.IGNORECASE)


def _reads_only(statement: tuple[str, Params]) -> bool:
    """Whether a statement only reads, as far as its text says (:func:`_reads_only_text`)."""
    return _reads_only_text(statement[0])


@lru_cache(maxsize=_TEXTS_KEPT)
def _reads_only_text(sql: str) -> bool:
    """Whether ``sql`` only reads: a query (``SELECT``, ``WITH``, ``VALUES``, ``SHOW``) or a
    session's setting (``SET``) naming nothing that writes, takes a lock or a sequence
    number, or a ``BEGIN`` that opens a read's transaction. Anything else, transaction
    control that ends another round trip's transaction included, goes to the default.
    Kept per text, as :func:`_may_write` is: the search reads all of a statement of a few
    KB (0.1-0.3 ms for a business list's), and the texts are the few the code builds."""
    if sql == _BEGIN:
        return True
    head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
    return head in _QUERIES and not _NOT_READS.search(sql)


_QUERIES = frozenset({"SELECT", "WITH", "VALUES", "SHOW", "SET", "(SELECT"})
_NOT_READS = re.compile(
    rf"\b(?:{_WRITE_WORDS}|LOCK|CREATE|DROP|ALTER|ANALYZE|INTO|NEXTVAL|SETVAL|PG_ADVISORY_\w+"
    r"|PG_TRY_ADVISORY_\w+|PG_NOTIFY|TXID_CURRENT|PG_CURRENT_XACT_ID)\b",
    re.IGNORECASE,
)


def _recovered(db, framed: bool) -> bool:
    """After a round trip that failed: whether its connection can be used again (it ended
    the transaction it opened, if it opened one), or it was discarded (a connection that
    was lost, or that psycopg could not take out of pipeline mode, or a framed transaction
    that could not be rolled back), for the next statement to open a new one."""
    pgconn = db.connection.pgconn
    if pgconn.status == pq.ConnStatus.OK and pgconn.pipeline_status == pq.PipelineStatus.OFF:
        # A framed transaction still open is rolled back: refused by the database (in
        # error), or left open by a failure on the client's side after its BEGIN went out
        # (a value psycopg cannot send, an interrupt), whose next COMMIT would keep half.
        if not framed or pgconn.transaction_status == pq.TransactionStatus.IDLE:
            return True
        try:  # alone, outside a pipeline (see run_with_optional)
            with db.wrap_database_errors, psycopg.Cursor(db.connection) as cursor:
                cursor.execute(_ROLLBACK)
            return True
        except DatabaseError:
            pass
    db.close()
    return False


@async_unsafe
def _connection(*, reads: bool = False):
    """The connection wrapper of the database the statements go to, its connection open
    and checked as ``connection.cursor()`` does it (the health check, the thread it belongs
    to), without the Django cursor that call also makes.

    Statements that cannot write, outside a transaction, go where Django's routers send a
    read (a replica inside ``pgreplicas.read``); any other, to the default database.
    """
    alias = DEFAULT_DB_ALIAS
    if reads and not connections[DEFAULT_DB_ALIAS].in_atomic_block:
        # A statement names no model: the routers are asked about "no model" (``None``).
        alias = router.db_for_read(None)  # type: ignore[arg-type]
    db = connections[alias]
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    return db


class Native(str):
    """A statement written with PostgreSQL's own placeholders (``$1``, ``$2``...): it goes
    out as it is, where psycopg would read any other statement through to find its ``%s``
    each time it is run (it remembers only statements of under 4 KB and 50 parameters)."""


@cache
def native(sql: str) -> Native:
    """``sql``, whose only ``%`` are its ``%s`` placeholders, as a :class:`Native` one."""
    parts = sql.split("%s")
    if any("%" in part for part in parts):
        raise ValueError("native() takes statements whose only % are %s placeholders")
    numbered = [f"{part}${number}" for number, part in enumerate(parts[:-1], start=1)]
    return Native("".join(numbered) + parts[-1])


def literal(text: str) -> str:
    """``text`` as a string literal written into a statement that :func:`run` sends with
    parameters: an escape string (``E'...'``, read the same whatever the database's
    ``standard_conforming_strings``) with its backslashes and quotes doubled, and its ``%``
    too (psycopg would read a lone one as a placeholder). For a value the planner must see
    to use a partial index, or an index's predicate, even in a generic plan; any other
    value goes as a parameter."""
    escaped = text.replace("\\", "\\\\").replace("'", "''").replace("%", "%%")
    return f"E'{escaped}'"


def _execute(raw, statements, cursors, prepare: bool, meanwhile: Meanwhile | None) -> None:
    if len(statements) == 1 and meanwhile is None:
        (sql, params), cursor = statements[0], cursors[0]
        cursor.execute(sql, params, prepare=prepare and params is not None, binary=True)
        return
    with raw.pipeline():  # each statement is on its way once executed; the rows come at exit
        for (sql, params), cursor in zip(statements, cursors, strict=True):
            cursor.execute(sql, params, prepare=prepare and params is not None, binary=True)
        if meanwhile is not None:
            # PostgreSQL holds a pipeline's rows until asked for them (a Sync, or a Flush):
            # asked now, they cross while the work runs, and only the Sync is left to wait.
            raw.pgconn.send_flush_request()
            raw.pgconn.flush()
            meanwhile.run()


class Meanwhile:
    """Work done while the database runs the next round trip: inside ``with
    Meanwhile(work) as meanwhile:``, the first round trip (:func:`run` and the others) sends
    its statements, calls ``work`` and only then waits for their rows, so the client's work
    and the database's overlap. ``meanwhile.done`` says whether it ran (no round trip in the
    block: it did not) and ``meanwhile.result`` is what it gave.

    ``work`` must not use the database, and must be short: until its statements' rows are
    read, they hold their snapshot (and a transaction of their own, outside a caller's).
    If it raises, the exception is the round trip's, once the statements' rows are read.
    If a statement fails and its answer arrives before the work's turn, the work is not
    done and the failure is raised.
    """

    def __init__(self, work: Callable[[], Any]):
        self._work = work
        self.done = False
        self.result: Any = None

    def __enter__(self) -> Meanwhile:
        self._token = _MEANWHILE.set(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _MEANWHILE.reset(self._token)

    def run(self) -> None:
        self.done = True
        self.result = self._work()


_MEANWHILE: ContextVar[Meanwhile | None] = ContextVar("kit_sql_meanwhile", default=None)


def run_transaction(
    *statements: tuple[str, Params], optional: Sequence[tuple[str, Params]] = ()
) -> tuple[list[list[tuple] | None], DatabaseError | None]:
    """``statements`` as a transaction of their own, in one round trip with its ``BEGIN``
    and ``COMMIT`` (one statement needs neither: it is sent alone; inside a caller's
    transaction: a savepoint of it, which commits with it); ``optional`` ones last, as
    :func:`run_with_optional` runs them. The rows of ``statements``, and the failure of the
    optional ones undone, if they failed.

    Any other failure undoes them all and is raised, a check made only at the commit (a
    deferred foreign key) among them. A round trip of its own is one fewer than Django's
    ``atomic`` block takes for a ``COMMIT``.
    """
    inside = connection.in_atomic_block
    if not optional and not inside:
        # :func:`_send` sends them as a transaction of their own (one statement is one
        # already) and undoes them if one fails.
        rows, failure = _send(statements)
        if failure is not None:
            raise failure
        return rows, None
    begin, end = (_SAVEPOINT_OWN, _RELEASE_OWN) if inside else (_BEGIN, _COMMIT)
    extra = [(_SAVEPOINT, None), *optional, (_RELEASE, None)] if optional else []
    rows, failure = _send([(begin, None), *statements, *extra, (end, None)])
    ran = rows[1 : 1 + len(statements)]
    if failure is None:
        return ran, None
    # Undone one statement at a time, outside a pipeline (see run_with_optional).
    if optional and _send([(_ROLLBACK_TO, None)])[1] is None:  # only the optional part failed
        run((_RELEASE, None))
        run((end, None))
        return ran, failure
    undo = [(_ROLLBACK_TO_OWN, None), (_RELEASE_OWN, None)] if inside else [(_ROLLBACK, None)]
    for statement in undo:
        if _send([statement])[1] is not None:
            break  # the caller's transaction had failed already: theirs to undo
    raise failure


_BEGIN, _COMMIT, _ROLLBACK = "BEGIN", "COMMIT", "ROLLBACK"
_SAVEPOINT_OWN = "SAVEPOINT kit_own"
_RELEASE_OWN = "RELEASE SAVEPOINT kit_own"
_ROLLBACK_TO_OWN = "ROLLBACK TO SAVEPOINT kit_own"


def run_with_optional(
    *statements: tuple[str, Params], optional: Sequence[tuple[str, Params]]
) -> DatabaseError | None:
    """:func:`run` ``statements``, then ``optional`` ones, in one round trip, inside the
    current transaction; if an optional statement fails, only the optional ones are undone
    (they run inside a savepoint) and the others stand. The failure undone, if any, for the
    caller to tell what it was for.

    For writes whose rows are not read back, with a step that must never fail them.
    """
    if not optional:
        run(*statements)
        return None
    if not connection.in_atomic_block:
        raise RuntimeError("run_with_optional needs a transaction (its savepoint is in it)")
    try:
        run(*statements, (_SAVEPOINT, None), *optional, (_RELEASE, None))
    except DatabaseError as failure:
        try:  # the savepoint exists only if every statement before it ran
            # One at a time, outside a pipeline: after a rollback psycopg forgets its
            # prepared statements and deallocates them on the server with the next
            # statement, which in a pipeline could come after a statement it prepares.
            run((_ROLLBACK_TO, None))
            run((_RELEASE, None))
        except DatabaseError:
            raise failure from None
        return failure
    return None


_SAVEPOINT = "SAVEPOINT kit_optional"
_RELEASE = "RELEASE SAVEPOINT kit_optional"
_ROLLBACK_TO = "ROLLBACK TO SAVEPOINT kit_optional"

#: The statements :func:`_send` knows return no rows.
_CONTROL = frozenset({
    _BEGIN, _COMMIT, _ROLLBACK, _SAVEPOINT_OWN, _RELEASE_OWN, _ROLLBACK_TO_OWN,
    _SAVEPOINT, _RELEASE, _ROLLBACK_TO,
})  # fmt: skip


def _has_rows(cursor: psycopg.Cursor) -> bool:
    # Cheaper than ``cursor.description``, which builds a Column object per column.
    result = cursor.pgresult
    return result is not None and result.status == pq.ExecStatus.TUPLES_OK


def reads_elsewhere() -> bool:
    """Whether a statement that only reads would now go to another database than the
    default (a replica, inside a read the routers send there)."""
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return False
    return router.db_for_read(None) != DEFAULT_DB_ALIAS  # type: ignore[arg-type]


def run_one(sql: str, params: Params, *, replica: bool = False) -> list[tuple]:
    """The rows of one prepared statement (``replica``: as :func:`run` says)."""
    rows = run((sql, params), replica=replica)[0]
    if rows is None:
        raise TypeError("run_one is for statements that return rows")
    return rows


def with_generic_plan(statement: tuple[str, Params]) -> list[tuple[str, Params]]:
    """``statement`` between two that make PostgreSQL run it with its generic plan, then
    give back the setting as it was, for :func:`run` to send together inside a transaction.

    PostgreSQL plans a prepared statement anew for each call while it guesses that plan
    cheaper than its generic one, which it does for a count over one account that its
    statistics think small: then planning costs more than counting. The settings are local
    to the transaction, so they end with it whatever happens in between.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("with_generic_plan needs a transaction (its settings are local)")
    return [(_GENERIC_PLAN, ()), statement, (_PLAN_AS_BEFORE, ())]


_GENERIC_PLAN = (
    "SELECT set_config('kit.plan_cache_mode', current_setting('plan_cache_mode'), true), "
    "set_config('plan_cache_mode', 'force_generic_plan', true)"
)
_PLAN_AS_BEFORE = (
    "SELECT set_config('plan_cache_mode', current_setting('kit.plan_cache_mode'), true)"
)
