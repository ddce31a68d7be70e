"""The routing's rules on their own, without a replica (fast): which statements may go to a
replica, and which models' reads the router sends there."""

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from outreach.models import Account, Member, Suppression
from pgreplicas import routing
from pgstatements.rounds import _reads_only
from prospect_memory.business.models import Entry
from prospect_memory.notes.models import Note


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "  select n.id FROM prospect_memory_note n WHERE n.account_id = %(account)s",
        "WITH ranked AS (SELECT 1) SELECT * FROM ranked",
        "SET hnsw.ef_search = 40",
        "SHOW server_version",
        "BEGIN",
    ],
)
def test_what_only_reads_may_go_to_a_replica(sql):
    assert _reads_only((sql, None))


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1)",
        "WITH gone AS (DELETE FROM t RETURNING id) SELECT * FROM gone",
        "WITH found AS (SELECT 1) UPDATE t SET x = 1",
        "SELECT * FROM t FOR UPDATE",
        "SELECT * FROM t FOR NO KEY UPDATE",
        "SELECT * FROM t FOR SHARE",
        "SELECT * FROM t FOR KEY SHARE",
        "SELECT nextval('s')",
        "SELECT pg_advisory_xact_lock(1)",
        "SELECT pg_try_advisory_lock(1)",
        "SELECT pg_notify('c', 'x')",
        "SELECT txid_current()",
        "SELECT * INTO copy FROM t",
        "LOCK TABLE t",
        "CREATE TEMPORARY TABLE t (x int)",
        "ANALYZE t",
        "COMMIT",
        "ROLLBACK",
        "RELEASE SAVEPOINT kit_optional",
        "",
    ],
)
def test_what_may_write_lock_or_end_a_transaction_goes_to_the_primary(sql):
    assert not _reads_only((sql, None))


@pytest.mark.django_db(transaction=True)
def test_the_router_sends_only_the_memories_reads_inside_a_read():
    router = routing.ReplicaRouter()
    assert router.db_for_read(Note) is None  # no read running: Django's default
    token = routing._READING.set("replica1")
    try:
        assert router.db_for_read(Note) == "replica1"
        assert router.db_for_read(Entry) == "replica1"
        assert router.db_for_read(None) == "replica1"  # a statement a caller sent there
        for model in (Account, Member, Suppression, get_user_model()):
            assert router.db_for_read(model) == "default", model
        with transaction.atomic():  # reads inside a transaction of the primary: the primary
            assert router.db_for_read(Note) is None
        assert router.db_for_write(Note) == "default"
        assert router.allow_migrate("replica1", "prospect_memory") is False
    finally:
        routing._READING.reset(token)
    primary = routing._READING.set("default")  # a read the primary serves
    try:
        assert routing.reading() is None
        assert router.db_for_read(Note) is None
    finally:
        routing._READING.reset(primary)


def test_with_no_replicas_a_read_is_the_plain_work(settings):
    settings.DATABASE_REPLICAS = []
    assert routing.read(1, 1, lambda: routing.reading()) is None
    assert list(routing.streamed(1, 1, lambda: iter([1, 2]))) == [1, 2]


@pytest.mark.django_db
def test_a_member_who_leaves_and_an_erased_account_leave_no_write_position(account):
    from pgreplicas.models import WritePosition
    from prospect_memory.lifecycle.erase import erase_account, member_leaving
    from tests import factories

    leaving = factories.member(account, "leaving@example.com")
    staying = factories.member(account, "staying@example.com")
    for seat in (leaving, staying):
        WritePosition.objects.create(account_id=account.pk, member_id=seat.pk, lsn=1)
    member_leaving(leaving, by="admin@example.com")
    assert list(WritePosition.objects.values_list("member_id", flat=True)) == [staying.pk]
    erase_account(account, by="staff@example.com")
    assert not WritePosition.objects.exists()
