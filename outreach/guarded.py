"""Writes sent before they are known to stand: each statement carries the condition under
which it writes, so a write can go out with its lock in one round trip and the database
decides, holding the lock, whether it writes anything.

The lock can be the statement's own first step (:func:`written_and`'s ``locked``): a
single statement is its own transaction, so the write needs no ``BEGIN`` and ``COMMIT``
around it. What it read before the lock is then as of the statement's start: a row lock
re-reads the row it waited for (PostgreSQL re-checks its conditions on the row's newest
version), a unique index refuses what a write that committed meanwhile made, and every
other condition must be one of those (or be checked again under the lock).

A write built this way reads its clock before it holds its lock, so the times it sets
from "now" are :class:`Stamp` values: the database writes each as its clock once the lock
is held plus its offset from the write's ``now``. That clock is the statement's own
(``statement_timestamp()``, read once the statements before it, the lock among them, are
done), or, when the lock is the statement's first step, the time it got it
(:data:`HELD_CLOCK`). A write that waited for its lock is stamped as of when it got it, as
one that read the clock once it held the lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

from pgstatements import Params, inserted_fields, native, prepared

#: The clock of the statement that writes (its start): the lock was taken before it.
STATEMENT_CLOCK = "statement_timestamp()"
#: The time the statement's own lock (:func:`written_and`'s ``locked``) was got.
HELD_CLOCK = "(SELECT now FROM held)"
#: That the statement's own lock is held (its locked rows were found): a write's condition.
HELD = "EXISTS (SELECT FROM held)"


class Stamp(datetime):
    """A time a write sets from its ``now`` (itself a Stamp, from :meth:`now`): written as
    the database's clock when the statement runs, plus the same offset. Arithmetic keeps
    the kind: ``now + timedelta(seconds=60)`` is a Stamp a minute after it."""


def written_and(
    first: tuple[str, list],
    *then: tuple[str, list],
    unwritten: str | None = None,
    locked: tuple[str, list] | None = None,
) -> tuple[str, list]:
    """One statement: ``first`` (a write that ``RETURNING`` what it wrote, perhaps nothing)
    as ``written``, then each of ``then``, which writes once for each row of ``written``
    (:func:`insert_for_written`, or its own ``FROM written``); the rows of ``written``.

    All of them see the table as it was before the statement (PostgreSQL's data-modifying
    ``WITH``): a step must not look for what another one writes.

    ``locked``, a ``SELECT ... FOR UPDATE``, is the statement's lock, taken before
    anything else: ``first``'s condition must include :data:`HELD` (its rows were found
    and are locked), and every step's times :data:`HELD_CLOCK` (each built with that
    ``clock``; one with the statement's own would be as of before the wait: refused).

    ``unwritten``, an SQL expression without parameters, is evaluated once if ``first``
    wrote nothing (a setting for the rest of the transaction, say); the statement then
    gives one row of nulls, which :func:`rows_written` leaves out.
    """
    sql, params = "WITH", []
    if locked is not None:
        if any(STATEMENT_CLOCK in step for step, _ in (first, *then)):
            raise ValueError("a step of a locked statement is stamped with HELD_CLOCK")
        # The clock is read from the locked rows: once they are locked (a volatile
        # function, in a step of its own read once).
        held = "SELECT clock_timestamp() AS now FROM locked"
        sql += f" locked AS ({locked[0]}), held AS ({held}),"
        params += locked[1]
    sql += f" written AS ({first[0]})"
    params += first[1]
    for number, (step, values) in enumerate(then):
        sql += f", step_{number} AS ({step})"
        params += values
    if unwritten is None:
        return native(f"{sql} SELECT * FROM written"), params  # noqa: S608  (built here)
    # The subquery's one row is made, its CASE evaluated, whatever ``written`` holds (a
    # volatile expression is neither pulled up nor dropped by the planner).
    otherwise = f"SELECT CASE WHEN EXISTS (SELECT FROM written) THEN NULL ELSE {unwritten} END"  # noqa: S608
    final = f"SELECT written.* FROM ({otherwise}) AS otherwise LEFT JOIN written ON true"  # noqa: S608
    return native(f"{sql} {final}"), params


def rows_written(rows: list[tuple]) -> list[tuple]:
    """The rows of a :func:`written_and` statement with ``unwritten``: what it wrote."""
    return [row for row in rows if any(value is not None for value in row)]


def insert_when(
    instance,
    *,
    now: Stamp,
    when: str,
    params: Params,
    returning: Sequence[str],
    clock: str = STATEMENT_CLOCK,
) -> tuple[str, list]:
    """The ``INSERT`` of an unsaved ``instance`` (as :func:`pgstatements.insert` writes it)
    only if the SQL condition ``when`` holds, returning the columns named; its stamps as
    of ``clock``."""
    table, names, values = _insert_of(type(instance), clock)
    sql = (
        f"INSERT INTO {table} ({names}) SELECT {values} WHERE {when} "
        f"RETURNING {_columns(type(instance), returning)}"
    )
    return sql, [*_values(instance, now, adding=True), *(params or ())]


def insert_for_written(instance, *, now: Stamp, clock: str = STATEMENT_CLOCK) -> tuple[str, list]:
    """The ``INSERT`` of ``instance`` once for each row of ``written`` (see
    :func:`written_and`): only if the first write of the statement wrote."""
    table, names, values = _insert_of(type(instance), clock)
    sql = f"INSERT INTO {table} ({names}) SELECT {values} FROM written"  # noqa: S608
    return sql, _values(instance, now, adding=True)


def update_when(
    instance,
    names: Sequence[str],
    *,
    now: Stamp,
    when: str,
    params: Params,
    returning: Sequence[str],
    clock: str = STATEMENT_CLOCK,
) -> tuple[str, list]:
    """The ``UPDATE`` of fields ``names`` of a saved ``instance`` by its primary key, only
    if the SQL condition ``when`` holds for its row, returning the columns named."""
    model = type(instance)
    table, sets, key = _update_of(model, tuple(names), clock)
    sql = (
        f"UPDATE {table} SET {sets} WHERE {key} = %s AND ({when}) "  # noqa: S608
        f"RETURNING {_columns(model, returning)}"
    )
    values = _values(instance, now, adding=False, names=tuple(names))
    return sql, [*values, prepared(model._meta.pk, instance.pk), *params]


def _values(instance, now: Stamp, *, adding: bool, names: tuple[str, ...] | None = None) -> list:
    """The parameters of :func:`_value_of` each field named (every one an ``INSERT``
    writes: None), in order."""
    values: list = []
    db = connections[DEFAULT_DB_ALIAS]
    for field, time, attname in _reading(type(instance), names):
        # A field without a pre_save of its own gives its attribute as it is.
        value = getattr(instance, attname) if attname else field.pre_save(instance, adding)
        if not time:
            values.append(prepared(field, value, db))
        elif isinstance(value, Stamp):
            values += [value - now, None]
        else:
            values += [None, prepared(field, value, db)]
    return values


@cache
def _fields_of(model, names: tuple[str, ...] | None) -> tuple:
    """The fields named (all that an ``INSERT`` writes: None), in order."""
    if names is None:
        return tuple(inserted_fields(model))
    return tuple(model._meta.get_field(name) for name in names)


@cache
def _reading(model, names: tuple[str, ...] | None) -> tuple:
    """For each of :func:`_fields_of`, whether it is a time, and the attribute its value
    is if it has no ``pre_save`` of its own."""
    return tuple(
        (
            field,
            isinstance(field, models.DateTimeField),
            field.attname if type(field).pre_save is models.Field.pre_save else None,
        )
        for field in _fields_of(model, names)
    )


def _value_of(field, clock: str) -> str:
    """A field's value in a statement: a time is ``clock`` plus the offset of a
    :class:`Stamp`, or the time given (whichever parameter is not null)."""
    if isinstance(field, models.DateTimeField):
        return f"COALESCE({clock} + %s::interval, %s::timestamptz)"
    return "%s"


@cache
def _insert_of(model, clock: str) -> tuple[str, str, str]:
    fields = inserted_fields(model)
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    values = ", ".join(_value_of(f, clock) for f in fields)
    return connection.ops.quote_name(model._meta.db_table), names, values


@cache
def _update_of(model, names: tuple[str, ...], clock: str) -> tuple[str, str, str]:
    meta = model._meta
    fields = _fields_of(model, names)
    sets = ", ".join(
        f"{connection.ops.quote_name(f.column)} = {_value_of(f, clock)}" for f in fields
    )
    quote = connection.ops.quote_name
    return quote(meta.db_table), sets, quote(meta.pk.column)


def _columns(model, names: Sequence[str]) -> str:
    return _columns_of(model, tuple(names))


@cache
def _columns_of(model, names: tuple[str, ...]) -> str:
    return ", ".join(
        connection.ops.quote_name(model._meta.get_field(name).column) for name in names
    )
