"""The tests run on a real PostgreSQL 18 with pgvector, as production does."""

import contextlib
import socket
import struct
import threading
import time

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from prospect_memory.notes.models import Dossier, Note
from tests.helpers import wait_for

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
    """Django's connection, newly opened, idle and out of any transaction.

    Newly opened, so that ``CONN_MAX_AGE`` cannot end it in the middle of a test: a
    connection the worker opened more than a minute ago is closed as obsolete by the
    first ``close_if_unusable_or_obsolete``, whatever its health."""
    connection.close()
    connection.ensure_connection()
    assert connection.get_autocommit()
    assert not connection.in_atomic_block
    return connection.connection


def test_the_backend_is_kits_postgresql(db):
    from django.db import connections

    from kit.postgresql.base import DatabaseWrapper

    assert isinstance(connections["default"], DatabaseWrapper)


def _between_requests(wrapper=connection):
    """What Django does at the end of one request and the start of the next."""
    wrapper.close_if_unusable_or_obsolete()
    wrapper.close_if_unusable_or_obsolete()


def test_a_connection_in_steady_use_is_found_usable_without_a_round_trip(
    transactional_db, monkeypatch
):
    raw = _kit_backend_connection()
    _between_requests()

    def no_statement(*args, **kwargs):
        raise AssertionError("the health check sent a statement")

    monkeypatch.setattr(raw, "cursor", no_statement)
    assert connection.is_usable() is True


def test_a_connection_idle_longer_than_the_setting_is_asked_with_a_statement(
    transactional_db, settings, monkeypatch
):
    settings.DATABASE_HEALTH_CHECK_IDLE_SECONDS = 0.05
    raw = _kit_backend_connection()
    connection.close_if_unusable_or_obsolete()  # a request ends
    time.sleep(0.1)
    connection.close_if_unusable_or_obsolete()  # the next starts
    sent = []
    real_cursor = raw.cursor
    monkeypatch.setattr(raw, "cursor", lambda *a, **k: sent.append(1) or real_cursor(*a, **k))
    assert connection.is_usable() is True
    assert sent == [1]


class _ForgetfulProxy:
    """TCP in front of the database's socket that can forget its connections, as a
    rebooted host or a firewall does: the next packet a client sends is answered with a
    reset, and nothing arrives before it."""

    def __init__(self, upstream: str):
        self.upstream, self.forget, self.sockets = upstream, False, []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX)
            server.connect(self.upstream)
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source, target, from_client):
        try:
            while data := source.recv(65536):
                if from_client and self.forget:
                    # A reset, as for a connection the peer does not know; the database's
                    # side of it ends too.
                    source.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    source.close()
                    _hang_up(target)
                    return
                target.sendall(data)
        except OSError:
            return

    def close(self):
        for each in (self.listener, *self.sockets):
            _hang_up(each)


def _hang_up(end: socket.socket) -> None:
    """Close ``end`` even while a thread waits on it (``close`` alone would not end it)."""
    with contextlib.suppress(OSError):
        end.shutdown(socket.SHUT_RDWR)
    end.close()


def test_a_server_that_forgot_an_idle_connection_costs_the_check_not_the_request(
    transactional_db, settings
):
    from kit.postgresql.base import DatabaseWrapper

    settings.DATABASE_HEALTH_CHECK_IDLE_SECONDS = 0.05
    configured = connection.settings_dict
    proxy = _ForgetfulProxy(f"{configured['HOST']}/.s.PGSQL.{configured.get('PORT') or 5432}")
    wrapper = DatabaseWrapper({**configured, "HOST": "127.0.0.1", "PORT": proxy.port})
    try:
        wrapper.ensure_connection()
        backend = wrapper.connection.info.backend_pid
        wrapper.close_if_unusable_or_obsolete()  # a request ends
        proxy.forget = True
        time.sleep(0.1)
        wrapper.close_if_unusable_or_obsolete()  # the next starts, after a quiet spell
        wrapper.close_if_health_check_failed()
        assert wrapper.connection is None  # found by the check: the request opens another
    finally:
        wrapper.close()
        proxy.close()
    with connection.cursor() as cursor:  # the proxied session is over before the test ends

        def gone():
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
            return cursor.fetchone()[0] == 0

        wait_for(gone, what="the proxied session's end")


def test_a_terminated_connection_is_found_and_the_next_query_opens_another(transactional_db):
    import select

    import psycopg

    raw = _kit_backend_connection()
    _between_requests()
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
