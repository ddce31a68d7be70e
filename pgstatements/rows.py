"""A Django model's rows as statements :mod:`pgstatements.rounds` sends: an insert or
update built once per model and field set, values prepared as ``Model.save`` prepares them
(without its per-call overhead), a row locked or a counter taken in one upsert, and vectors
in pgvector's binary form."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from pgvector import Vector
from pgvector.django import VectorField
from psycopg import adapt, pq

from pgstatements.rounds import run_one

M = TypeVar("M", bound=models.Model)


def take_slot(model, *, key: Mapping[str, Any], counter: str, limit: int) -> int | None:
    """Add one to ``model``'s ``counter`` for the row at ``key``, unless it is at ``limit``.

    One atomic upsert (the row is created at 1 if missing), so concurrent callers can never
    take more than ``limit`` slots between them. Returns the new count, or None when the
    row was already at the limit. ``key`` names the model's fields of a unique constraint.
    """
    return slot_taken(run_one(*slot_statement(model, key=key, counter=counter, limit=limit)))


def slot_statement(model, *, key: Mapping[str, Any], counter: str, limit: int) -> tuple[str, list]:
    """:func:`take_slot`'s statement and parameters, to send with others; its rows read by
    :func:`slot_taken`."""
    if limit < 1:
        raise ValueError("take_slot needs a limit of at least 1 (callers treat 0 as 'off')")
    meta = model._meta
    columns = [meta.get_field(name).column for name in key]
    count = meta.get_field(counter).column
    names = ", ".join(columns)
    values = ", ".join(["%s"] * len(columns))
    sql = (
        f"INSERT INTO {meta.db_table} AS row ({names}, {count}) VALUES ({values}, 1) "  # noqa: S608
        f"ON CONFLICT ({names}) DO UPDATE SET {count} = row.{count} + 1 "
        f"WHERE row.{count} < %s RETURNING {count}"
    )
    return sql, [*key.values(), limit]


def slot_taken(rows: Sequence[tuple]) -> int | None:
    """The new count :func:`slot_statement` returned, or None: no slot was left."""
    return rows[0][0] if rows else None


def lock_row(model, *, key: Mapping[str, Any], constraint: str, defaults: Mapping[str, Any]):
    """The row of ``model`` at ``key``, created from ``defaults`` if missing, locked until
    the end of the current transaction, in one statement.

    ``INSERT ... ON CONFLICT ... DO UPDATE`` takes the row lock whether it inserts or finds
    the row, so two transactions asking for the same row queue behind each other, and the
    first write of a key cannot race another. Returns a model instance (``from_db``).
    """
    rows = run_one(*lock_statement(model, key=key, constraint=constraint, defaults=defaults))
    return locked_row(model, rows)


def locked_row(model, rows: Sequence[tuple]):
    """The model instance of the row :func:`lock_statement` returned."""
    (row,) = rows
    concrete = model._meta.concrete_fields
    return model.from_db(connection.alias, [field.attname for field in concrete], row)


def lock_statement(
    model, *, key: Mapping[str, Any], constraint: str, defaults: Mapping[str, Any]
) -> tuple[str, list]:
    """:func:`lock_row`'s statement and parameters, to send with others (its row comes back
    with every concrete column)."""
    meta = model._meta
    values = {**defaults, **key}
    fields = [meta.get_field(name) for name in values]
    names = ", ".join(field.column for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    first = fields[0].column
    returning = ", ".join(field.column for field in meta.concrete_fields)
    sql = (
        f"INSERT INTO {meta.db_table} AS row ({names}) VALUES ({marks}) "  # noqa: S608
        f"ON CONFLICT ON CONSTRAINT {constraint} DO UPDATE SET {first} = row.{first} "
        f"RETURNING {returning}"
    )
    return sql, [prepared(field, values[field.name]) for field in fields]


def vector_param(values) -> Vector | None:
    """A vector (a list of floats) as a parameter of a statement :func:`run` sends, in
    pgvector's binary form: 4 bytes a dimension, made in 17 us for 384 of them, where
    writing them out as text took 0.1-0.4 ms (each float's shortest decimal form). The
    statement gives its type (a column, or ``::vector``)."""
    return None if values is None else Vector(values)


class _VectorDumper(adapt.Dumper):
    # The type is left for PostgreSQL to infer from the statement (oid 0): the extension's
    # type has an oid of its own in each database.
    format = pq.Format.BINARY

    def dump(self, obj: Vector) -> bytes:
        return obj.to_binary()


class _VectorTextDumper(adapt.Dumper):
    format = pq.Format.TEXT

    def dump(self, obj: Vector) -> bytes:
        return obj.to_text().encode()


def adapt_vectors(sender, connection, **kwargs) -> None:
    """``connection_created``: let the new connection send :func:`vector_param` parameters."""
    if connection.vendor == "postgresql":
        adapters = connection.connection.adapters
        adapters.register_dumper(Vector, _VectorTextDumper)
        adapters.register_dumper(Vector, _VectorDumper)  # preferred: the last registered


def prepared(field, value, db=None):
    """``value`` of ``field`` as ``Model.save`` prepares it; a vector in its binary form.
    ``db`` is the default database's connection wrapper, if the caller has it at hand (the
    shortcuts are decided for that database, the only one these statements run on)."""
    as_they_are, sized = _preparation(field)
    kind = type(value)
    if kind not in as_they_are and isinstance(value, Enum):
        # A choice (``Layer.ACCOUNT``) as its plain value: psycopg finds no adapter for
        # the enum's own class and searches its ancestry on every statement (2 us each).
        value = value.value
        kind = type(value)
    if kind in as_they_are:
        if kind is not datetime or value.utcoffset() is not None:  # a naive one: its warning
            return value
    elif kind is int and sized is not None:
        return sized(value)
    if isinstance(field, VectorField) and isinstance(value, list):
        return vector_param(value)
    return field.get_db_prep_save(value, db or connections[DEFAULT_DB_ALIAS])


@cache
def _preparation(field) -> tuple[tuple[type, ...], type | None]:
    """What ``field.get_db_prep_save`` does, for fields of Django's own classes whose
    preparation only checks the type: the types of value it gives back as they are (a
    string for a ``CharField``, a flag, a native UUID, an aware time, a key of another row
    by the same rule), and the column-sized integer it wraps a whole number in, if it does
    (psycopg would pick a size by the value: a statement prepared once per size)."""
    kind, db = type(field), connections[DEFAULT_DB_ALIAS]
    if kind is models.ForeignKey:
        return _preparation(field.target_field)
    if kind in (models.CharField, models.TextField):
        return (str, type(None)), None
    if kind is models.BooleanField:
        return (bool, type(None)), None
    if kind is models.UUIDField and db.features.has_native_uuid_field:
        return (uuid.UUID, type(None)), None
    if kind is models.DateTimeField and db.vendor == "postgresql":
        return (datetime, type(None)), None  # PostgreSQL's adapter takes times as they are
    sizes = getattr(db.ops, "integerfield_type_map", {})
    if kind in _INTEGER_FIELDS and field.get_internal_type() in sizes:
        return (type(None),), sizes[field.get_internal_type()]
    return (), None


_INTEGER_FIELDS = (
    models.IntegerField,
    models.SmallIntegerField,
    models.BigIntegerField,
    models.PositiveIntegerField,
    models.PositiveSmallIntegerField,
    models.PositiveBigIntegerField,
)


def insert(instance) -> tuple[str, list]:
    """The prepared ``INSERT`` of an unsaved model ``instance`` and its parameters, for
    :func:`run` to send with others in one round trip.

    Every concrete column is written (an auto-increment id is left to the database and not
    read back, so the instance keeps ``pk`` None); values are prepared as ``Model.save``
    prepares them (``pre_save``, then ``get_db_prep_save``).
    """
    model, db = type(instance), connections[DEFAULT_DB_ALIAS]
    sql, fields = _insert_of(model)
    return sql, [prepared(field, field.pre_save(instance, True), db) for field in fields]


def update(instance, names: Sequence[str], *, matching: Sequence[str] = ()) -> tuple[str, list]:
    """The prepared ``UPDATE`` of ``names`` (field names) of a saved ``instance``, by its
    primary key and, as the instance holds them, the fields ``matching`` names too (a
    table distributed by a column finds the row's shard by it), and its parameters."""
    model = type(instance)
    sql, fields, matched = _update_of(model, tuple(names), tuple(matching))
    values = [prepared(field, field.pre_save(instance, False)) for field in fields]
    keys = [prepared(field, getattr(instance, field.attname)) for field in matched]
    return sql, [*values, prepared(model._meta.pk, instance.pk), *keys]


def new_row(model: type[M], **values: Any) -> M:
    """An unsaved ``model`` instance, as ``model(**values)`` makes it, by the positional
    constructor Django's ``from_db`` uses: ``values`` by attribute name (``account_id``) or
    a related row by its field's name (``member``), every other field its default.

    Django's keyword constructor looks for each of the model's fields among the keywords
    (23 us for an entry, against 5 positionally): a store makes three or four rows."""
    args, related = [], []
    for field, attname, name, relation in _constructor(model):
        if attname in values:
            args.append(values.pop(attname))
        elif relation and name in values:
            row = values.pop(name)
            args.append(None if row is None else getattr(row, field.target_field.attname))
            related.append((field, row))
        else:
            args.append(field.get_default())
    if values:
        raise TypeError(f"{model.__name__} has no field {', '.join(values)}")
    instance = model(*args)
    for field, row in related:
        field.set_cached_value(instance, row)  # as the keyword constructor keeps it
    return instance


@cache
def _constructor(model) -> tuple:
    return tuple(
        (field, field.attname, field.name, field.is_relation)
        for field in model._meta.concrete_fields
    )


def inserted_fields(model) -> list:
    """The fields :func:`insert` writes: every concrete one but an id the database makes."""
    return _insert_of(model)[1]


@cache
def _insert_of(model) -> tuple[str, list]:
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not (f.primary_key and f.db_returning)]
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    table = connection.ops.quote_name(meta.db_table)
    return f"INSERT INTO {table} ({names}) VALUES ({marks})", fields  # noqa: S608  (model names)


@cache
def _update_of(model, names: tuple[str, ...], matching: tuple[str, ...]) -> tuple[str, list, list]:
    meta = model._meta
    quote = connection.ops.quote_name
    fields = [meta.get_field(name) for name in names]
    matched = [meta.get_field(name) for name in matching]
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    where = " AND ".join(
        [f"{quote(meta.pk.column)} = %s", *(f"{quote(f.column)} = %s" for f in matched)]
    )
    return f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {where}", fields, matched  # noqa: S608
