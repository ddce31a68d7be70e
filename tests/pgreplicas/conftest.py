"""A real streaming replica of the test database, for the tests of reading from replicas.

The session's standby is ``pg_basebackup`` of the test PostgreSQL (``kit.standby``), started
as a hot standby that streams its WAL; ``replica`` makes it the project's ``replica1`` for
one test. Tests that use them are marked ``replica`` (tests/conftest.py).
"""

import shutil
import tempfile
import time
from pathlib import Path

import pytest
from django.db import connections
from django.db.utils import load_backend

from kit.standby import Standby
from pgreplicas import routing
from tests.helpers import wait_for

ALIAS = "replica1"
TODAY = time.strftime("%Y-%m-%d")
BODY = "Acme raised a Series B of 40M led by Example Ventures."


@pytest.fixture(scope="session")
def standby(django_db_setup, django_db_blocker):
    from django.db import connection

    # A short path of its own (a socket's path has a length limit) that the server's user
    # can reach.
    parent = Path(tempfile.mkdtemp(prefix="kit-standby-"))
    parent.chmod(0o755)
    server = Standby(connection.settings_dict, parent / "replica").create().start()
    yield server
    server.delete()
    shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def replica(standby, transactional_db, settings):
    """The standby as the project's one replica, running and replaying, for one test."""
    if not (standby.pgdata / "postmaster.pid").exists():
        standby.start()
    with standby.connect() as admin:
        admin.execute("SELECT pg_wal_replay_resume()")
    # A connection made here, not named in the settings: Django's test case lets a test use
    # such a connection (one named there must be declared before the test starts).
    configured = connections.configure_settings(
        {"default": connections.settings["default"], ALIAS: standby.settings()}
    )
    backend = load_backend(configured[ALIAS]["ENGINE"])
    connections[ALIAS] = backend.DatabaseWrapper(configured[ALIAS], ALIAS)
    settings.DATABASE_REPLICAS = [ALIAS]
    settings.DATABASE_REPLICA_RETRY_SECONDS = 0.2
    routing.forget()
    yield standby
    with standby.connect() as admin:
        admin.execute("SELECT pg_wal_replay_resume()")
    connections[ALIAS].close()
    del connections[ALIAS]
    routing.forget()


def caught_up(standby: Standby) -> None:
    """Wait until the standby has replayed everything the primary has written."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint")
        (written,) = cursor.fetchone()

    def replayed():
        with standby.connect() as admin:
            (lsn,) = admin.execute(
                "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint"
            ).fetchone()
        return lsn >= written

    wait_for(replayed, timeout=30, what="the standby to replay the primary's WAL")


def call(actor, operation, **arguments):
    """``operation`` for ``actor`` as the MCP and REST adapters run it."""
    from outreach import operations, scopes

    return operations.execute(operation, actor=actor, granted=scopes.ALL, arguments=arguments)


class Paused:
    """The standby's replay paused (``pg_wal_replay_pause()``) while the block runs."""

    def __init__(self, standby: Standby):
        self.standby = standby

    def __enter__(self):
        caught_up(self.standby)
        with self.standby.connect() as admin:
            admin.execute("SELECT pg_wal_replay_pause()")
            wait_for(
                lambda: (
                    admin.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0]
                    == "paused"
                ),
                timeout=10,
                what="the replay to pause",
            )
        return self

    def __exit__(self, *exc_info):
        with self.standby.connect() as admin:
            admin.execute("SELECT pg_wal_replay_resume()")


def save(actor, body=BODY, domain="acme.dev"):
    """A note saved by ``actor`` as an agent saves it: a write on the primary."""
    from prospect_memory.notes import operations as notes

    return call(
        actor,
        notes.NOTE_SAVE,
        domain=domain,
        body=body,
        source_urls=["https://acme.dev/news"],
        observed_at=TODAY,
    )


@pytest.fixture
def admin(account):
    from outreach.access import Actor
    from tests import factories

    return Actor.for_member(factories.member(account, "writer@example.com", admin=True))
