"""The tests run on a real PostgreSQL 18 with pgvector, as production does."""

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from prospect_memory.notes.models import Dossier, Note

pytestmark = pytest.mark.django_db


def test_database_is_postgresql_18_with_pgvector():
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        (version,) = cursor.fetchone()
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (pgvector,) = cursor.fetchone()
    assert connection.vendor == "postgresql"
    assert int(version) >= 180000
    assert pgvector.startswith("0.8")


def test_cosine_distance_query_orders_by_similarity(account):
    dossier = Dossier.objects.create(account=account, domain="acme.dev")
    vectors = {"same": [1.0, 0.0, 0.0], "close": [0.9, 0.1, 0.0], "far": [0.0, 0.0, 1.0]}
    for name, vector in vectors.items():
        note = Note(account=account, dossier=dossier, observed_at="2026-11-01")
        note.title, note.body = name, name
        note.body_bytes = len(note.body.encode())
        note.embedding = vector
        note.save()

    rows = (
        Note.objects.filter(account=account, dossier=dossier)
        .annotate(distance=CosineDistance("embedding", [1.0, 0.0, 0.0]))
        .order_by("distance")
    )
    ordered = [(note.title, round(note.distance, 4)) for note in rows]
    assert [title for title, _ in ordered] == ["same", "close", "far"]
    assert ordered[0][1] == 0.0
    assert ordered[2][1] == 1.0


def test_the_database_has_pgvector_0_8(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone()[0].startswith("0.8")


def _kit_backend_connection():
    """Django's connection, open, idle and out of any transaction."""
    connection.ensure_connection()
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    return connection.connection


def test_the_backend_is_kits_postgresql(db):
    from django.db import connections

    from kit.postgresql.base import DatabaseWrapper

    assert isinstance(connections["default"], DatabaseWrapper)


def test_an_idle_connection_is_found_usable_without_a_round_trip(transactional_db, monkeypatch):
    raw = _kit_backend_connection()

    def no_statement(*args, **kwargs):
        raise AssertionError("the health check sent a statement")

    monkeypatch.setattr(raw, "cursor", no_statement)
    assert connection.is_usable() is True


def test_a_terminated_connection_is_found_and_the_next_query_opens_another(transactional_db):
    import select
    import time

    import psycopg

    raw = _kit_backend_connection()
    pid = raw.info.backend_pid
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    poller = select.poll()
    poller.register(raw.fileno(), select.POLLIN)
    deadline = time.monotonic() + 5
    while not poller.poll(50) and time.monotonic() < deadline:
        pass  # the server's last message is on its way
    assert connection.is_usable() is False
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    assert connection.connection is None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
