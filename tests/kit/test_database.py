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
