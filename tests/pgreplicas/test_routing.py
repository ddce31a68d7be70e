"""Reads served by a real streaming replica: which database answers each operation, a
member reading their own writes while the replica's replay is paused, lagging and stopped
replicas skipped without a failure, a replica lost in the middle of a read, and tenancy on
the replica's path."""

import json
import time

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from outreach.access import Actor
from pgreplicas import routing
from pgreplicas.models import WritePosition
from prospect_memory.business import operations as business
from prospect_memory.knowledge import operations as knowledge
from prospect_memory.notes import operations as notes
from tests import factories
from tests.pgreplicas.conftest import ALIAS, Paused, call, caught_up, save


def recalled(actor, domain="acme.dev"):
    return [n["body"] for n in call(actor, notes.RECALL, domain=domain)["notes"]]


class Served:
    """Reads each database served while the block ran, and the replica's skips by reason."""

    def __enter__(self):
        self.before = self._now()
        return self

    def __exit__(self, *exc_info):
        after = self._now()
        self.delta = {k: after[k] - self.before[k] for k in after if after[k] != self.before[k]}

    @staticmethod
    def _now():
        figures = {db: routing.READS.labels(db)._value.get() for db in ("default", ALIAS)}
        for reason in ("down", "lagging", "behind"):
            figures[reason] = routing.SKIPS.labels(ALIAS, reason)._value.get()
        return figures


@pytest.fixture
def colleague(account):
    return Actor.for_member(factories.member(account, "colleague@example.com", admin=True))


def test_each_read_only_operation_is_served_by_the_replica(replica, admin):
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    call(admin, business.STORE, key="icp_definition", value="B2B SaaS, 50-500 staff.")
    caught_up(replica)
    reads = [
        (notes.RECALL, {"domain": "acme.dev"}),
        (notes.NOTES_LIST, {}),
        (business.LIST, {}),
        (knowledge.SEARCH, {"query": "funding round"}),
    ]
    for operation, arguments in reads:
        with Served() as served:
            call(admin, operation, **arguments)
        assert served.delta == {ALIAS: 1}, operation.name
    # Business recall and search count each access in the statement that reads: the
    # primary's, and no replica is asked.
    for operation, arguments in [
        (business.RECALL, {"key": "icp_definition"}),
        (business.SEARCH, {"query": "ideal customer"}),
    ]:
        with Served() as served:
            call(admin, operation, **arguments)
        assert served.delta == {}, operation.name
    # A write is the primary's, and its member's position is kept there.
    with Served() as served:
        save(admin, "Acme opened an office in Berlin in 2026.")
    assert served.delta == {}
    assert WritePosition.objects.filter(account_id=admin.account.pk, member_id=admin.member.pk)


def test_business_recall_counts_each_access_on_the_primary(replica, admin):
    """Recall and search count the access in the statement that finds the entry: that
    statement writes, so it runs on the primary, and no count is lost."""
    call(admin, business.STORE, key="icp_definition", value="B2B SaaS, 50-500 staff.")
    caught_up(replica)
    for _ in range(3):
        entry = call(admin, business.RECALL, key="icp_definition")["entry"]
    assert entry["access_count"] == 3


def test_a_member_reads_their_own_write_while_the_replica_is_paused(replica, admin, colleague):
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    with Paused(replica):
        save(admin, "Acme opened an office in Berlin in 2026.")
        with Served() as served:
            mine = recalled(admin)
        # The writer reads the primary: the replica has not replayed their write.
        assert "Acme opened an office in Berlin in 2026." in mine
        assert served.delta == {"default": 1, "behind": 1}
        # Another member, who wrote nothing since, reads the replica as it stands.
        with Served() as served:
            theirs = recalled(colleague)
        assert theirs == ["Acme raised a Series B of 40M led by Example Ventures."]
        assert served.delta == {ALIAS: 1}
    caught_up(replica)
    with Served() as served:
        assert "Acme opened an office in Berlin in 2026." in recalled(admin)
    assert served.delta == {ALIAS: 1}  # replayed: the replica serves the writer again


def test_a_write_inside_a_transaction_is_remembered_at_its_commit(replica, admin):
    with transaction.atomic():
        save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
        with connection.cursor() as cursor:
            cursor.execute("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint")
            (inside,) = cursor.fetchone()
        assert not WritePosition.objects.filter(member_id=admin.member.pk).exists()
    kept = WritePosition.objects.get(member_id=admin.member.pk).lsn
    assert kept > inside  # past the commit, not where the transaction stood before it


def test_a_lagging_replica_is_skipped_and_nothing_fails(replica, admin, colleague, settings):
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 0.5
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    with Paused(replica):
        save(admin, "Acme opened an office in Berlin in 2026.")
        time.sleep(1.0)
        with Served() as served:
            theirs = recalled(colleague)
        assert served.delta == {"default": 1, "lagging": 1}
        assert len(theirs) == 2  # the primary's answer, up to date
    lag = routing.LAG.labels(ALIAS)._value.get()
    assert lag > 0.5


def test_a_stopped_replica_is_skipped_then_used_again(replica, admin):
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(replica)
    recalled(admin)  # the replica's connection is open
    replica.stop()
    answers = []
    with Served() as served:
        for _ in range(5):
            answers.append(recalled(admin))
    assert answers == [["Acme raised a Series B of 40M led by Example Ventures."]] * 5
    assert served.delta["default"] == 5
    assert served.delta["down"] == 5  # asked once, then left alone while it is down
    replica.start()
    time.sleep(0.3)  # DATABASE_REPLICA_RETRY_SECONDS in these tests
    with Served() as served:
        recalled(admin)
    assert served.delta == {ALIAS: 1}


def test_a_replica_lost_in_the_middle_of_a_read_has_the_primary_answer(replica, admin):
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(replica)
    account, member = admin.account.pk, admin.member.pk

    served_by = []

    def read():
        first = recalled(admin)
        served_by.append(routing.reading())
        if len(served_by) == 1:  # the replica is lost after the read's first statements
            with connections[ALIAS].cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                (pid,) = cursor.fetchone()
            with replica.connect() as admin_connection:
                admin_connection.execute("SELECT pg_terminate_backend(%s)", [pid])
        return first, recalled(admin)

    with Served() as served:
        first, second = routing.read(account, member, read)
    assert served_by == [ALIAS, None]  # run again, on the primary
    assert first == second == ["Acme raised a Series B of 40M led by Example Ventures."]
    assert served.delta == {"default": 1, "down": 1}


def test_tenancy_holds_on_the_replica(replica, admin, colleague, other_account):
    rival = Actor.for_member(factories.member(other_account, "rival@example.org", admin=True))
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    save(rival, "Rival's own note about Acme: they churned in 2025.")
    call(admin, business.STORE, key="signature", value="Ana, Acme team", layer="member")
    call(rival, business.STORE, key="icp_definition", value="Rival's ICP: retail.")
    caught_up(replica)
    with Served() as served:
        assert recalled(admin) == ["Acme raised a Series B of 40M led by Example Ventures."]
        assert recalled(rival) == ["Rival's own note about Acme: they churned in 2025."]
        mine = [e["key"] for e in call(admin, business.LIST, layer="member")["entries"]]
        theirs = [e["key"] for e in call(colleague, business.LIST, layer="member")["entries"]]
        shared = [e["key"] for e in call(colleague, business.LIST)["entries"]]
        found = call(colleague, knowledge.SEARCH, query="churned retail ICP")
    assert served.delta == {ALIAS: 6}
    assert mine == ["signature"]
    assert theirs == []  # a member's own context is theirs alone, on the replica too
    assert "icp_definition" not in shared
    assert "churned" not in str(found)
    assert "retail" not in str(found)


def test_reads_inside_a_transaction_and_whoever_is_signed_in_read_the_primary(replica, admin):
    from django.contrib.auth import get_user_model

    from outreach.models import Member, Suppression
    from prospect_memory.notes.models import Note

    router = routing.ReplicaRouter()
    token = routing._READING.set(ALIAS)
    try:
        assert router.db_for_read(Note) == ALIAS  # the memories' data
        # Who a request is, what it may do, whether to stop: the primary.
        for model in (get_user_model(), Member, Suppression):
            assert router.db_for_read(model) == "default", model
        with transaction.atomic():
            assert router.db_for_read(Note) is None
        assert router.db_for_write(Note) == "default"
    finally:
        routing._READING.reset(token)
    assert router.db_for_read(Note) is None  # outside a read


def test_statements_go_to_a_replica_only_when_asked_and_only_reading(replica, admin):
    from pgstatements import run

    caught_up(replica)
    where = "SELECT pg_is_in_recovery()"

    def work():
        return [
            run((where, None))[0][0][0],  # not asked: the primary
            run((where, None), replica=True)[0][0][0],  # asked, and it only reads
            # Asked, but it takes row locks (a standby refuses them): the primary.
            run(("SELECT 1 FROM pg_class WHERE false FOR SHARE", None), replica=True)[0],
        ]

    primary_answer, replica_answer, locked = routing.read(admin.account.pk, admin.member.pk, work)
    assert primary_answer is False
    assert replica_answer is True
    assert locked == []


def test_pages_read_from_the_replica_and_forms_remember_the_write(replica, admin, client):
    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(replica)
    client.force_login(admin.member.user)
    with Served() as served:
        page = client.get(reverse("company", args=["acme.dev"]))
    assert page.status_code == 200
    assert b"Series B" in page.content
    assert served.delta == {ALIAS: 1}
    # A form sent is a write: the member's position is kept once, so the next page waits
    # for it; a form refused keeps none.
    note = save(admin, "Acme opened an office in Berlin in 2026.")["note"]["id"]
    WritePosition.objects.filter(member_id=admin.member.pk).delete()
    with CaptureQueriesContext(connection) as sent_queries:
        sent = client.post(reverse("note-delete", args=[note]))
    assert sent.status_code == 302
    kept = [
        q["sql"] for q in sent_queries if routing.POSITIONS in q["sql"] and "INSERT" in q["sql"]
    ]
    assert len(kept) == 1
    assert WritePosition.objects.filter(member_id=admin.member.pk).exists()
    # Refused by the operation (another version was saved since the page was opened):
    # nothing written, no position kept.
    call(admin, business.STORE, key="icp_definition", value="B2B SaaS, 50-500 staff.")
    call(admin, business.STORE, key="icp_definition", value="B2B SaaS, 50-1000 staff.")
    WritePosition.objects.filter(member_id=admin.member.pk).delete()
    refused = client.post(
        reverse("business-entry-edit", args=["account", "icp_definition"]),
        {"value": '"B2B SaaS"', "category": "preference", "confidence": 80, "expected_version": 1},
    )
    assert refused.status_code == 200
    assert b"saved" in refused.content.lower()  # their version is shown, with the conflict
    assert not WritePosition.objects.filter(member_id=admin.member.pk).exists()


def test_an_export_streams_from_the_replica_in_one_snapshot(replica, admin, colleague, client):
    from tests.helpers import bearer

    def exported(actor):
        response = client.get("/api/v1/export", **bearer(actor.member))
        assert response.status_code == 200
        records = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
        assert records[-1]["type"] == "manifest"  # whole: the file ends with its manifest
        return sorted(r["body"] for r in records if r["type"] == "note")

    save(admin, "Acme raised a Series B of 40M led by Example Ventures.")
    caught_up(replica)
    with Paused(replica):
        save(colleague, "Acme opened an office in Berlin in 2026.")
        with Served() as served:
            mine = exported(admin)  # nothing written since: the replica, as it stands
        assert mine == ["Acme raised a Series B of 40M led by Example Ventures."]
        assert served.delta == {ALIAS: 1}
        with Served() as served:
            theirs = exported(colleague)  # their own save is not replayed: the primary
        assert len(theirs) == 2
        assert served.delta == {"default": 1, "behind": 1}


def test_an_agents_knowledge_search_reads_the_replica_and_counts_on_the_primary(
    replica, admin, colleague, monkeypatch
):
    """The search reads the replica; the uses it counts and its usage row are written on
    the primary once it has read all it reads, so a search whose replica is lost midway,
    and which the primary answers again, counts each use once."""
    from oauth2_provider.models import get_application_model

    from prospect_memory.business.models import Entry
    from prospect_memory.core.models import UsageEvent
    from prospect_memory.knowledge import payloads

    call(
        admin,
        business.STORE,
        key="rule:enterprise_deals",
        value="Enterprise deals need a champion and a security review first.",
        confidence=90,
    )
    caught_up(replica)
    application = get_application_model().objects.create(
        name="Agent",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )
    agent = Actor.for_member(colleague.member, oauth_application=application)

    def searches():
        return UsageEvent.objects.filter(account=admin.account, memory="knowledge").count()

    with Paused(replica):  # the counts below are the primary's alone
        for _ in range(2):
            with Served() as served:
                hits = call(agent, knowledge.SEARCH, query="enterprise deals")["hits"]
            assert [h["key"] for h in hits if h["kind"] == "business_memory"]
            assert served.delta == {ALIAS: 1}
    assert Entry.objects.get(key="rule:enterprise_deals").access_count == 2
    assert searches() == 2

    search_data = payloads.search_data
    lost = []

    def replica_lost_midway(search):
        if not lost:  # the first run, on the replica, after its reads
            lost.append(routing.reading())
            with connections[ALIAS].cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return search_data(search)

    monkeypatch.setattr(payloads, "search_data", replica_lost_midway)
    with Served() as served:
        hits = call(agent, knowledge.SEARCH, query="enterprise deals")["hits"]
    assert lost == [ALIAS]
    assert served.delta == {"default": 1, "down": 1}  # read again on the primary
    assert [h["key"] for h in hits if h["kind"] == "business_memory"]
    assert Entry.objects.get(key="rule:enterprise_deals").access_count == 3
    assert searches() == 3
