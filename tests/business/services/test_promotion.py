"""Promotion into the knowledge index (SPEC 13): account entries of confidence 70 or more,
after their write commits; out again when they fall below, go or leave; repaired by the
backfill when the task is lost."""

from datetime import timedelta

import pytest
from django.utils import timezone

from prospect_memory.business import tasks
from prospect_memory.business.models import Entry, Promotion
from prospect_memory.business.services.delete import entry_delete
from prospect_memory.business.services.promotion import promotion_lag, promotions_backfill
from prospect_memory.business.services.store import entry_store

# Promotion runs once the write commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)


def promoted() -> dict[str, int]:
    return dict(Promotion.objects.values_list("entry__key", "version"))


def store(actor, key, confidence, **fields):
    fields.setdefault("value", {"about": key})
    return entry_store(actor=actor, key=key, confidence=confidence, **fields)


def test_an_entry_is_promoted_at_70_and_not_at_69(admin_actor):
    store(admin_actor, "rule:enterprise", 69)
    assert promoted() == {}
    store(admin_actor, "rule:enterprise", 70)
    assert promoted() == {"rule:enterprise": 2}
    store(admin_actor, "rule:enterprise", 69)
    assert promoted() == {}
    store(admin_actor, "rule:enterprise", 95)
    assert promoted() == {"rule:enterprise": 4}


def test_a_later_write_moves_the_promotion_to_its_version(admin_actor):
    store(admin_actor, "icp_definition", 90)
    entry_store(actor=admin_actor, key="icp_definition", value={"industry": ["SaaS"]})
    assert promoted() == {"icp_definition": 2}


def test_a_members_own_entries_are_never_promoted(member_actor):
    store(member_actor, "my_territory", 100, layer="member")
    assert promoted() == {}


def test_delete_eviction_and_expiry_take_an_entry_out(admin_actor, capacity):
    store(admin_actor, "deleted", 90)
    entry_delete(actor=admin_actor, key="deleted")
    assert promoted() == {}

    capacity(ACCOUNT_CAPACITY=1)
    store(admin_actor, "evicted", 80)
    store(admin_actor, "kept", 90)  # evicts the other
    assert promoted() == {"kept": 1}

    Entry.objects.filter(key="kept").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert promotion_lag(account=admin_actor.account).leaving == 1
    assert promotions_backfill() == {"promoted": 0, "removed": 1, "current": 0}
    assert promoted() == {}


def test_with_the_worker_down_a_write_succeeds_and_the_backfill_promotes(admin_actor):
    from kit.celery import app

    app.conf.task_always_eager = False  # a broker, and no worker consuming it
    try:
        app.control.purge()
        stored = store(admin_actor, "pattern:ae_hiring", 85)
        assert stored.created
        assert promoted() == {}
        lag = promotion_lag(account=admin_actor.account)
        assert (lag.waiting, lag.leaving) == (1, 0)
        assert lag.oldest_write == stored.entry.updated_at
        app.control.purge()  # the worker was killed: the queued promotion is lost
    finally:
        app.conf.task_always_eager = True
    assert tasks.backfill_promotions.delay().get() == {"promoted": 1, "removed": 0, "current": 0}
    assert promoted() == {"pattern:ae_hiring": 1}
    assert promotion_lag(account=admin_actor.account).waiting == 0


def test_with_the_broker_unreachable_a_write_succeeds_and_the_backfill_promotes(admin_actor):
    from kit.celery import app

    broker = app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = "redis://127.0.0.1:9/0"  # nothing listens there
    app._pool = None  # connect anew, to the unreachable broker
    app.amqp._producer_pool = None
    try:
        assert store(admin_actor, "rule:discounts", 90).created
    finally:
        app.conf.task_always_eager, app.conf.broker_url = True, broker
        app._pool = None
        app.amqp._producer_pool = None
    assert Entry.objects.filter(key="rule:discounts").exists()
    assert promoted() == {}
    promotions_backfill()
    assert promoted() == {"rule:discounts": 1}


def test_without_a_broker_a_store_promotes_in_its_own_transaction(admin_actor):
    from django.db import transaction

    with transaction.atomic():
        store(admin_actor, "rule:fit", 90)
        assert promoted() == {"rule:fit": 1}  # before the commit: nothing left for after it
        store(admin_actor, "rule:fit", 40)
        assert promoted() == {}
        transaction.set_rollback(True)
    assert promoted() == {}  # it went with the write
    assert not Entry.objects.filter(key="rule:fit").exists()


def test_without_a_broker_a_failing_promotion_never_fails_the_store(admin_actor, caplog):
    """SPEC 13: the store's own promotion statement fails (the index refuses every row):
    the write stands, whole, and its promotion is tried again after the commit, then left
    to the backfill."""
    from django.db import connection

    from prospect_memory.business.models import EntryEvent
    from prospect_memory.core.models import UsageEvent

    table = Promotion._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION kit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'the index refuses'; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER kit_test_refuse BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION kit_test_refuse()"
        )
    try:
        stored = store(admin_actor, "rule:fit", 90)
        assert stored.created
        entry = Entry.objects.get(key="rule:fit")
        assert (entry.version, entry.confidence, entry.status) == (1, 90, "live")
        assert EntryEvent.objects.filter(key="rule:fit").count() == 1
        assert UsageEvent.objects.filter(subject="rule:fit", kind="store").count() == 1
        assert promoted() == {}
        assert "the index refuses" in caplog.text
        stored = store(admin_actor, "rule:fit", 95)  # and the next write of it too
        assert stored.entry.version == 2
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER kit_test_refuse ON {table}")
            cursor.execute("DROP FUNCTION kit_test_refuse()")
    assert promoted() == {}
    promotions_backfill()
    assert promoted() == {"rule:fit": 2}


def test_without_a_broker_a_promotion_refused_in_the_write_is_made_after_its_commit(admin_actor):
    """The index refuses the store's own promotion statement once: the promotion is tried
    again right after the commit, and stands."""
    from django.db import connection

    table = Promotion._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("CREATE SEQUENCE kit_test_refusals")
        cursor.execute(
            "CREATE FUNCTION kit_test_refuse_once() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF nextval('kit_test_refusals') = 1 THEN "
            "RAISE EXCEPTION 'the index refuses once'; END IF; RETURN NEW; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER kit_test_refuse_once BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION kit_test_refuse_once()"
        )
    try:
        assert store(admin_actor, "rule:fit", 90).created
        assert promoted() == {"rule:fit": 1}  # after the commit, with no backfill
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER kit_test_refuse_once ON {table}")
            cursor.execute("DROP FUNCTION kit_test_refuse_once()")
            cursor.execute("DROP SEQUENCE kit_test_refusals")
