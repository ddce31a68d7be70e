"""A shelf's counts of its layer (kept by the database) agree with a count of the layer's
entries after every kind of change, in every layer of every account, and a store trusts
them only while they leave room."""

import contextlib
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from outreach.access import Actor
from prospect_memory.business.errors import NotFound
from prospect_memory.business.models import Entry, Shelf
from prospect_memory.business.services.consolidate import consolidate, retired_purge
from prospect_memory.business.services.delete import entry_delete
from prospect_memory.business.services.restore import eviction_restore, merge_undo
from prospect_memory.business.services.store import entry_store
from prospect_memory.lifecycle.erase import erase_account
from prospect_memory.lifecycle.export import export_lines
from prospect_memory.lifecycle.imports import import_lines
from tests import factories
from tests.business.test_races import fill, paused, started, together, wait_for_a_lock_wait

pytestmark = pytest.mark.django_db

RULE = {"rule": "Enterprise deals need a champion and a security review first"}


def counts_of(shelf: Shelf) -> tuple:
    return (shelf.live_entries, shelf.left_entries, shelf.expiring_entries)


def recount(shelf: Shelf) -> tuple:
    rows = Entry.objects.filter(account=shelf.account_id, layer=shelf.layer, member=shelf.member_id)
    counted = rows.aggregate(
        live=Count("pk", filter=Q(status="live")),
        left=Count("pk", filter=Q(status__in=["evicted", "expired"])),
        expiring=Count("pk", filter=Q(status="live", expires_at__isnull=False)),
    )
    return (counted["live"], counted["left"], counted["expiring"])


def every_shelf() -> dict:
    """Each shelf's counts beside its recount, by layer."""
    return {
        (s.account_id, s.layer, s.member_id): (counts_of(s), recount(s))
        for s in Shelf.objects.all()
    }


def assert_counted() -> None:
    """Every shelf's counts are its layer's (a shelf never counted fails too)."""
    shelves = every_shelf()
    assert shelves, "no shelf"
    wrong = {place: pair for place, pair in shelves.items() if pair[0] != pair[1]}
    assert not wrong, wrong


def store(actor, key, value=1, **options):
    return entry_store(actor=actor, key=key, value=value, **options)


def test_every_kind_of_change_keeps_the_counts(
    admin_actor, member_actor, rival_actor, capacity, monkeypatch
):
    capacity(ACCOUNT_CAPACITY=3, MEMBER_CAPACITY=3)
    for actor in (admin_actor, rival_actor):
        store(actor, "first", confidence=10)
    for actor in (admin_actor, member_actor, rival_actor):
        store(actor, "own", layer="member")
    assert_counted()
    store(admin_actor, "signal", ttl_seconds=60, confidence=20)  # one with an expiry
    store(admin_actor, "signal", value=2, ttl_seconds=None)  # and then without
    store(admin_actor, "weekly", ttl_seconds=60, confidence=30)
    assert counts_of(Shelf.objects.get(account=admin_actor.account, layer="account")) == (3, 0, 1)
    store(admin_actor, "fourth", confidence=90)  # evicts "first"
    store(admin_actor, "fifth", confidence=90)  # evicts "signal"
    assert_counted()
    Entry.objects.filter(key="weekly").update(expires_at=timezone.now() - timedelta(seconds=1))
    store(admin_actor, "weekly", value=3)  # the expired one is marked so, a new one made
    assert_counted()
    evicted = Entry.objects.get(account=admin_actor.account, key="first")
    entry_delete(actor=admin_actor, key="weekly")
    eviction_restore(actor=admin_actor, entry_id=evicted.pk)
    assert_counted()
    store(admin_actor, "fifth_rule", value=RULE, confidence=90)
    store(admin_actor, "fifth_rules", value=RULE, confidence=50)
    consolidate(account=admin_actor.account)  # one merges into the other: an alias
    assert Entry.objects.filter(status="merged").count() == 1
    assert_counted()
    merge_undo(actor=admin_actor, key="fifth_rules")
    assert_counted()
    later = timezone.now() + timedelta(days=31)
    Entry.objects.exclude(retired_at=None).update(retired_at=timezone.now() - timedelta(days=31))
    assert retired_purge(now=later) > 0
    assert_counted()
    for i in range(6):  # evictions past the capacity of left entries: the oldest go
        store(admin_actor, f"more_{i}", confidence=95)
    assert_counted()
    store(admin_actor, "sixth_rule", value=RULE, confidence=99)
    store(admin_actor, "sixth_rules", value=RULE, confidence=98)
    consolidate(account=admin_actor.account)  # an alias again...
    assert Entry.objects.filter(status="merged").count() == 1
    entry_delete(actor=admin_actor, key="sixth_rule")  # ...that leaves with its entry
    assert Entry.objects.get(key="sixth_rules").status == "evicted"
    assert_counted()
    fill(admin_actor, 5)  # straight into the table, in one statement
    Entry.objects.filter(key__startswith="filler_").delete()
    assert_counted()
    erase_account(rival_actor.account, by="test")
    assert_counted()
    assert not Shelf.objects.filter(account=rival_actor.account).exists()
    leaving = member_actor.member.pk
    member_actor.member.delete()  # their own layer goes with their seat
    assert_counted()
    assert not Shelf.objects.filter(member=leaving).exists()
    assert Shelf.objects.filter(member=admin_actor.member).exists()


def test_an_import_counts_its_layers(admin_actor, member_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    for key in ("a", "b", "c"):
        store(admin_actor, key, ttl_seconds=60)
    store(admin_actor, "own", layer="member")
    lines = list(export_lines(admin_actor.account, member=admin_actor.member))
    target = factories.account("kit-two")
    seat = factories.member(target, "admin@example.com", admin=True)
    import_lines(lines, target, member=seat)
    imported = Shelf.objects.filter(account=target)
    assert [counts_of(shelf) for shelf in imported] == [(None, None, None)] * 2
    # Uncounted until a store of a new key counts each layer.
    newcomer = Actor.for_member(seat)
    store(newcomer, "d", confidence=99)
    store(newcomer, "mine", layer="member")
    assert_counted()
    assert counts_of(imported.get(layer="account")) == (2, 2, 1)


def test_a_shelf_made_after_its_entries_is_counted_by_the_next_store(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=4)
    fill(admin_actor, 4)  # no shelf yet: nothing to count them in
    assert not Shelf.objects.exists()
    stored = store(admin_actor, "new_key", confidence=99)
    assert len(stored.evicted) == 1  # the layer was counted, not taken as empty
    shelf = Shelf.objects.get()
    assert counts_of(shelf) == recount(shelf) == (4, 1, 0)


def test_a_store_into_a_layer_with_room_counts_nothing(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    store(admin_actor, "a")
    store(admin_actor, "b")
    # Counts saying there is room are taken as they are (here wrongly, to show it).
    Shelf.objects.update(live_entries=0, left_entries=0, expiring_entries=0)
    assert not store(admin_actor, "c").evicted
    assert counts_of(Shelf.objects.get()) == (1, 0, 0)


def test_a_full_layer_is_counted_before_anything_is_evicted(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=3)
    store(admin_actor, "a")
    store(admin_actor, "b")
    Shelf.objects.update(live_entries=4)  # wrong, and saying the layer is full
    assert not store(admin_actor, "c").evicted  # counted: there was room
    shelf = Shelf.objects.get()
    assert counts_of(shelf) == recount(shelf) == (3, 0, 0)
    stored = store(admin_actor, "d")
    assert [e["key"] for e in stored.evicted] == ["a"]
    shelf.refresh_from_db()
    assert counts_of(shelf) == recount(shelf) == (3, 1, 0)


def test_counts_that_leave_no_room_are_counted_again_and_written_back(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=4)
    store(admin_actor, "a")
    shelf = Shelf.objects.get()
    # Full, or full if the ones with an expiry had expired.
    for i, wrong in enumerate([(4, 0, 0), (4, 0, 1), (0, 3, 2)]):
        Shelf.objects.filter(pk=shelf.pk).update(
            live_entries=wrong[0], left_entries=wrong[1], expiring_entries=wrong[2]
        )
        assert not store(admin_actor, f"k{i}").evicted  # there was room after all
        shelf.refresh_from_db()
        assert counts_of(shelf) == recount(shelf)


def test_a_taken_key_is_an_update_whatever_the_counts_say(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    store(admin_actor, "a")
    store(admin_actor, "b")
    Shelf.objects.update(live_entries=None)
    assert not store(admin_actor, "a", value=2).evicted
    assert Shelf.objects.get().live_entries is None  # an update counts nothing


@pytest.mark.django_db(transaction=True)
def test_counts_stay_exact_under_concurrent_writers(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=6)
    store(admin_actor, "seed")
    Shelf.objects.update(live_entries=None)  # the first writer counts and writes back

    def work(i):
        store(admin_actor, f"new_{i}", confidence=10 + i)
        store(admin_actor, f"new_{i}", value=2, ttl_seconds=60 if i % 2 else None)
        if i % 3 == 0:
            with contextlib.suppress(NotFound):  # another writer may have evicted it
                entry_delete(actor=admin_actor, key=f"new_{i}")
        return "done"

    assert together(8, work) == ["done"] * 8
    assert_counted()
    live = Entry.objects.filter(account=admin_actor.account, status="live").count()
    assert live <= 6


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_every_shelf_and_goes_back(admin_actor, member_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    for key in ("a", "b", "c"):
        store(admin_actor, key, ttl_seconds=60)
    store(member_actor, "own", layer="member")
    try:
        call_command("migrate", "business_memory", "0008", verbosity=0)
        fill(admin_actor, 3)  # written while nothing counts
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO business_memory_shelf (account_id, layer, member_id, "
                "created_at) VALUES (%s, 'member', %s, now())",
                [admin_actor.account.pk, admin_actor.member.pk],
            )
    finally:
        call_command("migrate", "business_memory", verbosity=0)
    assert_counted()
    mine = Shelf.objects.get(account=admin_actor.account, layer="account")
    assert counts_of(mine) == (5, 1, 2)
    assert counts_of(Shelf.objects.get(member=admin_actor.member)) == (0, 0, 0)


def test_the_counts_are_kept_whatever_the_sessions_search_path(admin_actor):
    store(admin_actor, "a")
    store(admin_actor, "b")
    table = Entry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        (schema,) = cursor.fetchone()
        cursor.execute("SET LOCAL search_path = ''")  # as a restore script's session
        cursor.execute(f'DELETE FROM "{schema}".{table} WHERE key = %s', ["a"])  # noqa: S608
        cursor.execute("RESET search_path")
    assert_counted()


def test_a_store_counts_only_its_own_layer(admin_actor, member_actor, rival_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2, MEMBER_CAPACITY=2)
    for key in ("x", "y", "z"):
        store(member_actor, key, layer="member")
        store(rival_actor, key)
    store(admin_actor, "mine")
    shelves = {(s.account_id, s.member_id): counts_of(s) for s in Shelf.objects.all()}
    assert shelves == {
        (admin_actor.account.pk, None): (1, 0, 0),
        (admin_actor.account.pk, member_actor.member.pk): (2, 1, 0),
        (rival_actor.account.pk, None): (2, 1, 0),
    }


@pytest.mark.django_db(transaction=True)
def test_an_accounts_erasure_waits_for_a_store_that_is_making_room(
    admin_actor, capacity, monkeypatch
):
    """The store holds the layer and is about to evict an entry; the erasure deletes that
    entry (whose shelf's counts its trigger updates). It takes the layer's lock first, so it
    waits for the store instead of holding the entry the store waits for."""
    from prospect_memory.business.services import store as storing

    capacity(ACCOUNT_CAPACITY=2)
    store(admin_actor, "a")
    store(admin_actor, "b")
    making_room, go = paused(storing, "make_room", monkeypatch)
    account = admin_actor.account
    outcomes: dict = {}
    writer = started(outcomes, "store", lambda: store(admin_actor, "c"))
    assert making_room.wait(30)
    eraser = started(outcomes, "erase", lambda: erase_account(account, by="t"))
    wait_for_a_lock_wait()  # the erasure waits for the layer
    go.set()
    writer.join(60)
    eraser.join(60)
    assert not [o for o in outcomes.values() if isinstance(o, Exception)], outcomes
    assert not Entry.objects.filter(account=account.pk).exists()
    assert not Shelf.objects.filter(account=account.pk).exists()


@pytest.mark.parametrize(
    ("live", "left", "expiring", "limit"),
    [(0, 0, 0, 3), (2, 0, 0, 3), (3, 0, 0, 3), (2, 2, 1, 3), (2, 3, 1, 3), (None, 0, 0, 3)],
)
def test_the_shelfs_room_in_sql_is_the_room_rule(live, left, expiring, limit):
    """What a new key's write sent at once checks in SQL, and what the locked path decides
    on the same counts, agree (a shelf never counted has no room: it is counted first)."""
    from pgstatements.rounds import run_one
    from prospect_memory.business.services.counts import SHELF_LEAVES_ROOM, Counts

    (row,) = run_one(
        f"SELECT coalesce(bool_and({SHELF_LEAVES_ROOM}), false) FROM (SELECT "  # noqa: S608
        "%s::int AS live_entries, %s::int AS left_entries, %s::int AS expiring_entries) s",
        [limit, limit, live, left, expiring],  # in the order the text names them
    )
    expected = live is not None and Counts(live, left + expiring).leave_room(limit)
    assert row[0] is expected
