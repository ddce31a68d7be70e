"""The approximate nearest-neighbour index of notes (pgvector HNSW), for knowledge search.

A vector column of no fixed size cannot be indexed, and the size is the embedding model's;
so the index is on the expression ``embedding::vector(D)``, partial to one model's ready,
active notes: one index per model, named after it. Migration 0009 builds it for the
configured provider, concurrently (writes go on while it builds); ``manage.py
knowledge_index`` builds it after a model change and drops those of other models.

Search asks the index only for accounts with more than KNOWLEDGE_EXACT_MAX_NOTES active
notes, with iterative scans so the account filter still finds enough neighbours; smaller
accounts, a search within one company, and any model without a valid index are searched
exactly (every candidate compared), which at that size is faster and never misses.
"""

from __future__ import annotations

import hashlib
import time

from django.db import connection
from psycopg import sql

from prospect_memory.core.embeddings import EmbeddingProvider
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.models import Note

#: How long a process trusts what it last saw of an index (built, dropped, invalid).
_SEEN_SECONDS = 60.0
_seen: dict[str, tuple[float, bool]] = {}


def index_name(model: str) -> str:
    return "note_knn_" + hashlib.sha256(model.encode()).hexdigest()[:16]


def indexed_expression(dimensions: int, *, table_alias: str = "") -> str:
    """The indexed expression; a query must order by exactly this to use the index."""
    column = f"{table_alias}.embedding" if table_alias else "embedding"
    return f"({column}::vector({int(dimensions)}))"


def _definition(model: str, dimensions: int) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING hnsw "
        "({expression} vector_cosine_ops) WITH (m = {m}, ef_construction = {ef}) "
        "WHERE embedding_model = {model} AND embedding_status = 'ready' AND status = 'active'"
    ).format(
        name=sql.Identifier(index_name(model)),
        table=sql.Identifier(Note._meta.db_table),
        expression=sql.SQL(indexed_expression(dimensions)),
        m=sql.Literal(notes_settings.KNOWLEDGE_INDEX_M),
        ef=sql.Literal(notes_settings.KNOWLEDGE_INDEX_EF_CONSTRUCTION),
        model=sql.Literal(model),
    )


def _valid(model: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s",
            [index_name(model)],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def index_ready(model: str) -> bool:
    """Whether ``model``'s notes have a valid index (looked up once a minute per process)."""
    now = time.monotonic()
    seen = _seen.get(model)
    if seen is None or now - seen[0] > _SEEN_SECONDS:
        seen = (now, _valid(model))
        _seen[model] = seen
    return seen[1]


def build_index(provider: EmbeddingProvider) -> float:
    """Build the index of ``provider``'s notes if it is missing (or left invalid by a build
    that failed); how many seconds it took. Concurrently: writes are not blocked."""
    model = provider.model
    started = time.monotonic()
    with connection.cursor() as cursor:
        if not _valid(model):
            cursor.execute(
                sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(
                    sql.Identifier(index_name(model))
                )
            )
            memory = int(notes_settings.KNOWLEDGE_INDEX_BUILD_MEMORY_MB)
            cursor.execute(f"SET maintenance_work_mem = '{memory}MB'")
            cursor.execute(_definition(model, provider.dimensions))
    _seen.pop(model, None)
    return time.monotonic() - started


def drop_other_indexes(provider: EmbeddingProvider) -> list[str]:
    """Drop the note indexes of models other than ``provider``'s; their names."""
    keep = index_name(provider.model)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s",
            [Note._meta.db_table, "note\\_knn\\_%"],
        )
        names = [name for (name,) in cursor.fetchall() if name != keep]
        for name in names:
            cursor.execute(
                sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name))
            )
    _seen.clear()
    return names
