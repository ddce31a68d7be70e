"""Limits and counts of business memory under real concurrency (threads, one connection
each, committed transactions)."""

import json
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from prospect_memory.business.errors import VersionMismatch
from prospect_memory.business.models import Entry
from prospect_memory.business.selectors.recall import entry_recall
from prospect_memory.business.services.consolidate import retired_purge
from prospect_memory.business.services.restore import eviction_restore
from prospect_memory.business.services.store import entry_store

# Real threads racing: seconds each (the slow marker).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def together(count: int, work) -> list:
    """Run ``work(i)`` in ``count`` threads released at once; the outcomes, in no order."""
    barrier = threading.Barrier(count)
    outcomes: list = []

    def run(i):
        try:
            barrier.wait()
            outcomes.append(work(i))
        except Exception as error:  # collected and asserted on by the test
            outcomes.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return outcomes


def fill(actor, count: int) -> None:
    """``count`` live account entries, written straight to the table."""
    now = timezone.now()
    entries = []
    for i in range(count):
        entry = Entry(
            id=uuid.uuid4(),
            account=actor.account,
            layer="account",
            key=f"filler_{i:04d}",
            confidence=50 + i % 40,
            created_at=now,
            updated_at=now,
            value_bytes=1,
            strategy="overwrite",
        )
        entry.value_json = json.dumps(i)
        entries.append(entry)
    Entry.objects.bulk_create(entries)


def wait_for_a_lock_wait(sessions: int = 1) -> None:
    """Until ``sessions`` sessions of this database wait for a lock another one holds."""
    waiting = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE wait_event_type = 'Lock' AND datname = current_database()"
    )
    for _ in range(1000):
        with connection.cursor() as cursor:
            cursor.execute(waiting)
            if cursor.fetchone()[0] >= sessions:
                return
        time.sleep(0.01)
    pytest.fail(f"fewer than {sessions} sessions waited for a lock")


def started(outcomes: dict, name: str, work) -> threading.Thread:
    """``work()`` in a thread of its own (its own connection), started; what it returns, or
    the exception it raised, goes to ``outcomes[name]``."""

    def run():
        try:
            outcomes[name] = work()
        except Exception as error:  # asserted on by the test
            outcomes[name] = error
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def paused(module, name: str, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Make ``module.name`` wait, once called, until the test sets ``go``: (reached, go)."""
    reached, go = threading.Event(), threading.Event()
    function = getattr(module, name)

    def waiting(*args, **kwargs):
        reached.set()
        go.wait(30)
        return function(*args, **kwargs)

    monkeypatch.setattr(module, name, waiting)
    return reached, go


def live_count(account) -> int:
    return Entry.objects.filter(account=account, status="live").count()


def test_eight_writers_creating_the_1001st_entry_evict_exactly_one(admin_actor):
    fill(admin_actor, 1000)
    outcomes = together(
        8, lambda i: entry_store(actor=admin_actor, key="the_new_one", value=i, confidence=99)
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sum(o.created for o in outcomes) == 1
    assert sum(len(o.evicted) for o in outcomes) == 1
    assert live_count(admin_actor.account) == 1000
    assert Entry.objects.filter(status="evicted").count() == 1


def test_eight_writers_of_distinct_new_keys_never_pass_the_capacity(admin_actor):
    fill(admin_actor, 996)
    outcomes = together(
        8, lambda i: entry_store(actor=admin_actor, key=f"fresh_{i}", value=i, confidence=99)
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert live_count(admin_actor.account) == 1000
    assert sum(len(o.evicted) for o in outcomes) == 4


@pytest.mark.slow
def test_eight_writers_incrementing_a_counter_a_hundred_times_add_exactly_800(admin_actor):
    entry_store(actor=admin_actor, key="deals_touched", value=0)

    def hundred(_):
        for _ in range(100):
            entry_store(actor=admin_actor, key="deals_touched", value=1, strategy="increment")
        return "done"

    outcomes = together(8, hundred)
    assert outcomes == ["done"] * 8
    entry = Entry.objects.get(key="deals_touched")
    assert (entry.value, entry.version) == (800, 801)


def test_eight_readers_a_hundred_times_count_exactly_800_accesses(admin_actor):
    entry_store(actor=admin_actor, key="icp_definition", value={"industry": ["SaaS"]})

    def hundred(_):
        for _ in range(100):
            assert entry_recall(actor=admin_actor, key="icp_definition").found
        return "done"

    assert together(8, hundred) == ["done"] * 8
    assert Entry.objects.get(key="icp_definition").access_count == 800


def test_two_writers_with_the_same_expected_version_one_wins(admin_actor):
    entry_store(actor=admin_actor, key="voice", value={"tone": "warm"})
    outcomes = together(
        2,
        lambda i: entry_store(
            actor=admin_actor, key="voice", value={"tone": f"take {i}"}, expected_version=1
        ),
    )
    wins = [o for o in outcomes if not isinstance(o, Exception)]
    losses = [o for o in outcomes if isinstance(o, VersionMismatch)]
    assert (len(wins), len(losses)) == (1, 1)
    assert losses[0].details["current_version"] == 2
    assert Entry.objects.get(key="voice").value == wins[0].entry.value


def test_searches_and_recalls_of_the_same_entries_at_once_never_deadlock(admin_actor):
    from prospect_memory.business.selectors.search import entries_search

    for i in range(30):
        entry_store(actor=admin_actor, key=f"signal_{i}", value={"signal": f"hiring wave {i}"})

    def mixed(i):
        for n in range(15):
            if (i + n) % 3:
                assert entries_search(actor=admin_actor, query="hiring wave signal").results
            else:
                assert entry_recall(actor=admin_actor, key=f"signal_{n}").found
        return "done"

    assert together(8, mixed) == ["done"] * 8
    total = sum(Entry.objects.values_list("access_count", flat=True))
    assert total == 8 * 10 * 20 + 8 * 5  # 10 searches of 20 results and 5 recalls each


def test_a_store_through_an_alias_and_a_search_that_saw_it_live_never_deadlock(admin_actor):
    """A search locks its results in id order; a store of a merged key locks the entry it
    stands for. If the store held the alias row first and the kept entry has the smaller
    id, a search whose snapshot still saw the alias live would hold the one and wait for
    the other."""
    from prospect_memory.business.selectors.search import entries_search

    rule = {"rule": "Enterprise deals need a champion and a security review"}
    for key in ("rule_a", "rule_b"):
        entry_store(actor=admin_actor, key=key, value=rule, confidence=80)
    kept, alias = Entry.objects.filter(key__in=["rule_a", "rule_b"]).order_by("id")
    go, held = threading.Event(), threading.Event()

    def hold_the_kept_entry():  # someone reading it, long enough to line the others up
        with transaction.atomic():
            Entry.objects.select_for_update(no_key=True).filter(pk=kept.pk).get()
            held.set()
            go.wait(30)

    outcomes: dict = {}
    holder = started(outcomes, "holder", hold_the_kept_entry)
    assert held.wait(10)
    search = started(
        outcomes, "search", lambda: entries_search(actor=admin_actor, query="enterprise champion")
    )
    wait_for_a_lock_wait()  # the search, its snapshot taken, waits for the kept entry
    Entry.objects.filter(pk=alias.pk).update(status="merged", alias_of=kept)  # a merge
    store = started(
        outcomes, "store", lambda: entry_store(actor=admin_actor, key=alias.key, value=rule)
    )
    wait_for_a_lock_wait(2)  # the store waits for the kept entry too
    go.set()
    for thread in (holder, search, store):
        thread.join(60)
    assert not [o for o in outcomes.values() if isinstance(o, Exception)], outcomes
    assert outcomes["store"].entry.alias_of == kept.key


def test_a_recall_during_evictions_finds_the_entry_or_says_so(admin_actor, settings):
    settings.BUSINESS_MEMORY = {**getattr(settings, "BUSINESS_MEMORY", {}), "ACCOUNT_CAPACITY": 20}
    fill(admin_actor, 20)

    def work(i):
        if i < 4:  # writers, each evicting the lowest-confidence fillers
            for n in range(5):
                entry_store(actor=admin_actor, key=f"new_{i}_{n}", value=n, confidence=99)
            return "wrote"
        found = [entry_recall(actor=admin_actor, key=f"filler_{n:04d}").found for n in range(20)]
        return found

    outcomes = together(8, work)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert live_count(admin_actor.account) == 20
    assert Entry.objects.filter(status="live", key__startswith="new_").count() == 20


def test_an_entry_restored_while_consolidation_purges_stays(admin_actor):
    """A person restores an eviction (29 days old) while a purge that sees it as 30 days
    old runs: the purge waits for the restore and leaves the restored entry alone."""
    result = entry_store(actor=admin_actor, key="kept_by_a_person", value=1, confidence=80)
    Entry.objects.filter(pk=result.entry.id).update(
        status="evicted", retired_at=timezone.now() - timedelta(days=29)
    )
    restored, release = threading.Event(), threading.Event()

    def restore():
        with transaction.atomic():
            eviction_restore(actor=admin_actor, entry_id=result.entry.id)
            restored.set()
            release.wait(30)

    outcomes: dict = {}
    person = started(outcomes, "restore", restore)
    assert restored.wait(30)
    job = started(outcomes, "purge", lambda: retired_purge(now=timezone.now() + timedelta(days=2)))
    wait_for_a_lock_wait()  # the purge waits for the restore
    release.set()
    person.join(30)
    job.join(30)
    assert outcomes == {"restore": None, "purge": 0}
    entry = Entry.objects.get(pk=result.entry.id)
    assert (entry.status, entry.retired_at) == ("live", None)


def test_a_purge_and_a_restore_that_makes_room_never_deadlock(admin_actor, settings, monkeypatch):
    """A restore into a full layer makes room (deleting the oldest evictions) while the
    purge deletes old evictions of the same layer: one waits for the other, in the order
    every writer locks (the layer, then rows by id), and both finish."""
    from prospect_memory.business.services import restore

    settings.BUSINESS_MEMORY = {**getattr(settings, "BUSINESS_MEMORY", {}), "ACCOUNT_CAPACITY": 3}
    ids = sorted(
        entry_store(actor=admin_actor, key=f"k{i}", value=i, confidence=80).entry.id
        for i in range(6)
    )
    now = timezone.now()
    Entry.objects.filter(pk__in=ids[:-1]).update(
        status="evicted", retired_at=now - timedelta(days=40)
    )
    Entry.objects.filter(pk=ids[-1]).update(status="evicted", retired_at=now - timedelta(days=29))
    making_room, go = paused(restore, "make_room", monkeypatch)
    outcomes: dict = {}
    person = started(
        outcomes, "restore", lambda: eviction_restore(actor=admin_actor, entry_id=ids[-1])
    )
    assert making_room.wait(30)
    job = started(outcomes, "purge", lambda: retired_purge(now=now + timedelta(days=2)))
    wait_for_a_lock_wait()  # the purge waits for the restore
    go.set()
    person.join(60)
    job.join(60)
    assert not [o for o in outcomes.values() if isinstance(o, Exception)], outcomes
    assert Entry.objects.get(pk=ids[-1]).status == "live"
    assert not Entry.objects.filter(pk__in=ids[:-1]).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("existing", [False, True], ids=["new key", "update"])
def test_a_store_that_waited_for_the_layers_lock_is_stamped_after_the_wait(admin_actor, existing):
    from prospect_memory.business.access import Place
    from prospect_memory.business.services.lock import lock_shelf

    if existing:
        entry_store(actor=admin_actor, key="new", value=1)
    holder, released = holding(lambda: lock_shelf(Place.of(admin_actor, "account")), 0.5)
    written = entry_store(actor=admin_actor, key="new", value=2, ttl_seconds=60)
    holder.join(10)
    assert written.entry.version == (2 if existing else 1)
    new = Entry.objects.get(key="new")
    assert (new.updated_at if existing else new.created_at) >= released["at"]
    assert new.expires_at >= released["at"] + timedelta(seconds=60)  # a full minute to live
    assert written.entry.updated_at == new.updated_at  # the answer says what was stored


@pytest.mark.parametrize("inside", [False, True], ids=["on its own", "in a caller's transaction"])
@pytest.mark.parametrize("confidence", [None, 90], ids=["kept out", "promoted"])
@pytest.mark.parametrize("layer", ["account", "member"])
def test_a_key_stored_while_a_store_of_it_waited_for_the_lock_is_written_as_an_update(
    admin_actor, layer, confidence, inside
):
    """A store reads before its statement and its statement reads as of its start, before
    its wait for the layer's lock: the key another store wrote meanwhile is refused by its
    unique index, and the store writes it as an update under the lock (in a caller's
    transaction too, which goes on; with its promotion, at the version written)."""
    from prospect_memory.business.models import Promotion

    entry_store(actor=admin_actor, key="other", value=0, layer=layer)  # the layer's shelf
    stored, go = threading.Event(), threading.Event()

    def store(key, value):
        return entry_store(
            actor=admin_actor, key=key, value=value, layer=layer, confidence=confidence
        )

    def first():
        with transaction.atomic():  # holds the layer's lock until it commits
            store("icp", {"v": 1})
            stored.set()
            go.wait(30)

    def second():
        if not inside:
            return store("icp", {"v": 2})
        with transaction.atomic():
            written = store("icp", {"v": 2})
            store("after", 3)
            return written

    outcomes: dict = {}
    holder = started(outcomes, "first", first)
    assert stored.wait(30)
    waiting = started(outcomes, "second", second)
    wait_for_a_lock_wait()  # the second store's statement waits for the first's lock
    go.set()
    holder.join(30)
    waiting.join(30)
    assert not [o for o in outcomes.values() if isinstance(o, Exception)], outcomes
    written = outcomes["second"]
    assert (written.created, written.entry.version, written.previous_version) == (False, 2, 1)
    entry = Entry.objects.get(key="icp", layer=layer, status="live")
    assert entry.value == {"v": 2}
    assert [v.value for v in entry.versions.all()] == [{"v": 1}]
    assert Entry.objects.filter(key="after").exists() == inside
    promoted = Promotion.objects.filter(entry=entry).values_list("version", flat=True)
    assert list(promoted) == ([2] if confidence and layer == "account" else [])


def holding(lock, seconds: float) -> tuple[threading.Thread, dict]:
    """A session that takes ``lock()`` in a transaction and holds it, changing nothing, for
    ``seconds``, started and holding: (its thread, ``at``: when it let go)."""
    held, released = threading.Event(), {}

    def hold():
        try:
            with transaction.atomic():
                lock()
                held.set()
                time.sleep(seconds)
                released["at"] = timezone.now()
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    return thread, released


def row_of(entry_id):
    """Lock an entry's row as a promotion does (without changing it)."""
    return lambda: Entry.objects.select_for_update(no_key=True).get(pk=entry_id)


def test_an_update_that_waited_for_the_entrys_row_is_stamped_after_the_wait(admin_actor):
    entry = entry_store(actor=admin_actor, key="k", value=1).entry
    holder, released = holding(row_of(entry.id), 0.5)
    written = entry_store(actor=admin_actor, key="k", value=2)
    holder.join(10)
    assert written.entry.version == 2
    assert written.entry.updated_at >= released["at"]


def test_an_entry_that_expired_while_its_row_was_held_is_not_merged_into(admin_actor, capacity):
    """Its expiry is judged once its row is the store's: the increment starts a new entry,
    as the locked path decides it, and stays (not the expired 5 brought back as 7)."""
    capacity(TTL_MIN_SECONDS=1)
    entry = entry_store(actor=admin_actor, key="k", value=5, ttl_seconds=1).entry
    holder, _ = holding(row_of(entry.id), 1.5)  # the entry expires meanwhile
    written = entry_store(actor=admin_actor, key="k", value=2, strategy="increment")
    holder.join(10)
    assert (written.created, written.entry.value) == (True, 2)
    assert entry_recall(actor=admin_actor, key="k").entry.value == 2
