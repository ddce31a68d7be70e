"""Replicas that must not serve: one cut off from the primary (it has replayed all it received, so it looks caught up for ever), a
promoted one, one restarted that has replayed nothing yet, one that cancels a read (a
conflict with what it replays), one that is a copy of another database; and what stays the
primary's even when a replica serves the read: whether to stop contacting a company, who
the member is on the page, transaction control."""

import shutil
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection, connections
from django.db.utils import load_backend
from django.test import Client
from django.urls import reverse
from psycopg import sql

from kit.standby import Standby
from outreach import services as crm
from outreach.access import Actor
from outreach.models import Member, Suppression
from pgreplicas import routing
from prospect_memory.lifecycle import operations as lifecycle
from prospect_memory.notes import operations as notes
from prospect_memory.notes.models import Note
from tests import factories
from tests.helpers import wait_for
from tests.pgreplicas.conftest import ALIAS, BODY, Paused, call, caught_up, save


def served(alias=ALIAS):
    figures = {db: routing.READS.labels(db)._value.get() for db in ("default", alias)}
    figures["down"] = routing.SKIPS.labels(alias, "down")._value.get()
    figures["failed"] = routing.SKIPS.labels(alias, "failed")._value.get()
    return figures


def delta(before, after):
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


@pytest.fixture
def colleague(account):
    return Actor.for_member(factories.member(account, "colleague@example.com"))


def _alter(standby, name, value):
    with standby.connect() as admin_connection:
        if value is None:
            admin_connection.execute(sql.SQL("ALTER SYSTEM RESET {}").format(sql.Identifier(name)))
        else:
            admin_connection.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        admin_connection.execute("SELECT pg_reload_conf()")


def test_a_replica_cut_off_from_the_primary_is_skipped(replica, admin, colleague):
    save(admin)
    caught_up(replica)
    with replica.connect() as standby:
        conninfo = standby.execute("SHOW primary_conninfo").fetchone()[0]
    _alter(replica, "primary_conninfo", "")
    try:
        with replica.connect() as standby:
            wait_for(
                lambda: (
                    standby.execute("SELECT count(*) FROM pg_stat_wal_receiver").fetchone()[0] == 0
                ),
                timeout=20,
                what="the WAL receiver to stop",
            )
        call(admin, lifecycle.ERASE_COMPANY, domain="acme.dev", confirm="acme.dev")
        before = served()
        recall = call(colleague, notes.RECALL, domain="acme.dev")
        assert delta(before, served()) == {"default": 1, "down": 1}
        assert recall["notes"] == []  # the erasure, as the primary has it
    finally:
        _alter(replica, "primary_conninfo", conninfo)
        with replica.connect() as standby:
            wait_for(
                lambda: (
                    standby.execute("SELECT count(*) FROM pg_stat_wal_receiver").fetchone()[0] == 1
                ),
                timeout=20,
                what="the WAL receiver to start again",
            )


def test_whether_to_stop_is_the_primarys_answer(replica, admin, colleague):
    save(admin)
    with Paused(replica):
        crm.suppression_add(account=admin.account, kind=Suppression.Kind.DOMAIN, value="acme.dev")
        before = served()
        recall = call(colleague, notes.RECALL, domain="acme.dev")
        assert delta(before, served()) == {ALIAS: 1}  # the notes, from the replica
        assert recall["should_stop"] is True  # the suppression, from the primary
        # The company's page, read from the replica too, says the same.
        client = Client()
        client.force_login(colleague.member.user)
        with_page = served()
        page = client.get(reverse("company", args=["acme.dev"]))
        assert delta(with_page, served()) == {ALIAS: 1}
        assert b"Not suppressed" not in page.content


def test_a_restarted_replica_that_replayed_nothing_yet_fails_no_read(replica, admin, colleague):
    save(admin)
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
    caught_up(replica)
    connections[ALIAS].close()
    replica.stop()
    replica.start()
    with replica.connect() as standby:
        standby.execute("SELECT pg_wal_replay_pause()")
        if standby.execute("SELECT pg_last_xact_replay_timestamp() IS NOT NULL").fetchone()[0]:
            pytest.skip("a transaction was replayed as it started")
    routing.forget()
    crm.suppression_add(account=admin.account, kind="domain", value="other.dev")  # a commit
    with replica.connect() as standby:
        wait_for(
            lambda: standby.execute(
                "SELECT pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()"
            ).fetchone()[0],
            timeout=20,
            what="WAL received and not replayed",
        )
    before = served()
    recall = call(colleague, notes.RECALL, domain="acme.dev")
    assert [n["body"] for n in recall["notes"]] == [BODY]
    assert delta(before, served()) == {"default": 1}  # its lag unknown: taken as too much


def test_a_read_the_replica_cancels_is_answered_by_the_primary(replica, admin):
    save(admin)
    caught_up(replica)
    _alter(replica, "max_standby_streaming_delay", "0")
    table = Note._meta.db_table
    primary = connection.settings_dict
    attempts = []

    def lock_on_primary():
        time.sleep(0.7)
        with psycopg.connect(
            dbname=primary["NAME"], user=primary["USER"], host=primary["HOST"], port=primary["PORT"]
        ) as locker:
            locker.execute(
                sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(table))
            )
            locker.commit()

    def work():
        attempts.append(routing.reading())
        with connections[attempts[-1] or "default"].cursor() as cursor:
            cursor.execute(f'SELECT count(*), pg_sleep(3) FROM "{table}"')  # noqa: S608
            return cursor.fetchone()[0]

    try:
        thread = threading.Thread(target=lock_on_primary)
        thread.start()
        before = served()
        assert routing.read(admin.account.pk, admin.member.pk, work) == 1
        thread.join()
    finally:
        _alter(replica, "max_standby_streaming_delay", None)
    assert attempts == [ALIAS, None]
    assert delta(before, served()) == {"default": 1, "failed": 1}


def test_a_replica_of_another_database_is_skipped(replica, admin):
    save(admin)
    caught_up(replica)
    db = connections[ALIAS]
    db.close()
    name = db.settings_dict["NAME"]
    db.settings_dict["NAME"] = "postgres"
    try:
        before = served()
        recall = call(admin, notes.RECALL, domain="acme.dev")
        assert [n["body"] for n in recall["notes"]] == [BODY]
        assert delta(before, served()) == {"default": 1, "down": 1}
    finally:
        db.close()
        db.settings_dict["NAME"] = name


def test_a_demoted_admin_sees_no_admin_links_while_the_replica_is_behind(replica, admin, client):
    save(admin)
    client.force_login(admin.member.user)
    with Paused(replica):
        Member.objects.filter(pk=admin.member.pk).update(is_module_admin=False)
        page = client.get(reverse("note-list", args=["acme.dev"]))
        assert page.status_code == 200
        assert b"erase-company-link" not in page.content
        assert b"Memory health" not in page.content
        assert client.get(reverse("health")).status_code == 403


@pytest.fixture
def promoted(standby, transactional_db, settings):
    """A second standby of the test database, promoted: no longer anyone's replica."""
    parent = Path(tempfile.mkdtemp(prefix="kit-promoted-"))
    parent.chmod(0o755)
    server = Standby(connection.settings_dict, parent / "r").create().start()
    configured = connections.configure_settings(
        {"default": connections.settings["default"], "replica9": server.settings()}
    )
    backend = load_backend(configured["replica9"]["ENGINE"])
    connections["replica9"] = backend.DatabaseWrapper(configured["replica9"], "replica9")
    settings.DATABASE_REPLICAS = ["replica9"]
    routing.forget()
    yield server
    connections["replica9"].close()
    del connections["replica9"]
    routing.forget()
    server.delete()
    shutil.rmtree(parent, ignore_errors=True)


def test_a_promoted_replica_is_skipped(promoted, admin, colleague):
    save(admin)
    caught_up(promoted)
    with promoted.connect() as server:
        assert server.execute("SELECT pg_promote(true, 30)").fetchone()[0]
    call(admin, lifecycle.ERASE_COMPANY, domain="acme.dev", confirm="acme.dev")
    before = served("replica9")
    recall = call(colleague, notes.RECALL, domain="acme.dev")
    assert recall["notes"] == []
    assert delta(before, served("replica9")) == {"default": 1, "down": 1}


def test_revocations_are_read_on_the_primary_while_the_replica_is_behind(
    replica, admin, colleague, client
):
    from outreach.models import Account
    from tests.helpers import bearer

    save(admin)
    headers = bearer(colleague.member)
    client.force_login(colleague.member.user)
    assert client.get(reverse("api-recall"), {"domain": "acme.dev"}, **headers).status_code == 200
    with Paused(replica):
        Member.objects.filter(pk=colleague.member.pk).delete()  # the seat removed
        recall = reverse("api-recall")
        assert client.get(recall, {"domain": "acme.dev"}, **headers).status_code == 401
        assert client.get(recall, {"domain": "acme.dev"}).status_code == 401
        assert client.get(reverse("company", args=["acme.dev"])).status_code == 403
        Account.objects.filter(pk=admin.account.pk).update(subscription_status="canceled")
        client.force_login(admin.member.user)
        assert client.get(reverse("company", args=["acme.dev"])).status_code == 403
        refused = client.get(recall, {"domain": "acme.dev"}, **bearer(admin.member))
        assert refused.status_code == 403


def test_transaction_control_alone_goes_to_the_primary(replica, admin):
    from pgstatements import run

    seen = []

    def work():
        with connections["default"].cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute("CREATE TEMPORARY TABLE kit_probe (x int)")
        run(("ROLLBACK", None))  # ends the primary's transaction, not a replica's
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT to_regclass('pg_temp.kit_probe') IS NULL")
            seen.append(cursor.fetchone()[0])
        return routing.reading()

    caught_up(replica)
    assert routing.read(admin.account.pk, admin.member.pk, work) == ALIAS
    assert seen == [True]
