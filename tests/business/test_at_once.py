"""A store sent at once: one round trip after its read, and, whenever what it read no
longer holds under the lock, the locked path's outcome exactly (nothing written twice,
no count lost, no other account's or member's entry touched)."""

import pytest
from django.db import connection, transaction
from django.utils import timezone

from outreach import sql
from prospect_memory.business import store as store_module
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion
from prospect_memory.business.selectors import entry_recall
from prospect_memory.business.store import entry_store
from prospect_memory.core.models import UsageEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def round_trips(monkeypatch):
    """The round trips to the database that follow, counted."""
    sent = []
    send = sql._send

    def counted(statements, prepare=True):
        sent.append([text for text, _ in statements])
        return send(statements, prepare)

    monkeypatch.setattr(sql, "_send", counted)
    return sent


@pytest.fixture
def meanwhile(monkeypatch):
    """``meanwhile(work)``: the next store runs ``work()`` right after its read before the
    lock, as another request would between the two."""

    def arrange(work):
        read = store_module.likely_target
        done = []

        def read_then_work(place, key):
            target = read(place, key)
            if not done:
                done.append(True)
                work()
            return target

        monkeypatch.setattr(store_module, "likely_target", read_then_work)

    return arrange


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("strategy", "first", "then"),
    [("overwrite", {"a": 1}, {"a": 2}), ("increment", 1, 2), ("append", [1], 2)],
)
def test_a_store_is_its_read_and_one_round_trip(admin_actor, round_trips, strategy, first, then):
    entry_store(actor=admin_actor, key="k", value=first, category="fact")  # the shelf, counted
    round_trips.clear()
    entry_store(actor=admin_actor, key="new", value=first, strategy=strategy, category="fact")
    assert len(round_trips) == 2  # the read, then lock, write and commit
    assert any(text.startswith("WITH written") for text in round_trips[1])
    round_trips.clear()
    updated = entry_store(actor=admin_actor, key="k", value=then, strategy=strategy)
    assert len(round_trips) == 2
    assert (updated.created, updated.entry.version) == (False, 2)
    assert connection.connection.info.transaction_status.name == "IDLE"


def test_a_key_taken_since_the_read_is_written_as_an_update(admin_actor, meanwhile):
    meanwhile(lambda: entry_store(actor=admin_actor, key="icp", value={"v": 1}))
    written = entry_store(actor=admin_actor, key="icp", value={"v": 2})
    assert (written.created, written.entry.version, written.previous_version) == (False, 2, 1)
    assert Entry.objects.filter(key="icp").count() == 1
    kept = EntryVersion.objects.get(entry__key="icp")
    assert (kept.version, kept.value) == (1, {"v": 1})
    assert EntryEvent.objects.filter(key="icp", action="store").count() == 2
    assert UsageEvent.objects.filter(subject="icp", kind="store").count() == 2


def test_an_entry_changed_since_the_read_is_merged_into_what_is_there(admin_actor, meanwhile):
    entry_store(actor=admin_actor, key="wins", value=1)
    meanwhile(lambda: entry_store(actor=admin_actor, key="wins", value=10, strategy="increment"))
    written = entry_store(actor=admin_actor, key="wins", value=100, strategy="increment")
    assert (written.entry.value, written.entry.version, written.previous_version) == (111, 3, 2)
    history = EntryVersion.objects.filter(entry__key="wins").order_by("version")
    assert [(v.version, v.value) for v in history] == [(1, 1), (2, 11)]


def test_a_recall_since_the_read_keeps_its_count(admin_actor, meanwhile):
    entry_store(actor=admin_actor, key="voice", value="plain")
    meanwhile(lambda: entry_recall(actor=admin_actor, key="voice"))
    written = entry_store(actor=admin_actor, key="voice", value="warm")
    assert (written.entry.value, written.entry.version) == ("warm", 2)
    assert Entry.objects.get(key="voice").access_count == 1


def test_an_entry_that_expired_since_the_read_is_not_written_over(admin_actor, meanwhile):
    entry_store(actor=admin_actor, key="offer", value="10% off", ttl_seconds=3600)
    past = timezone.now() - timezone.timedelta(seconds=1)
    meanwhile(lambda: Entry.objects.filter(key="offer").update(expires_at=past))
    written = entry_store(actor=admin_actor, key="offer", value="15% off", strategy="append")
    assert (written.created, written.entry.value) == (True, ["15% off"])
    assert Entry.objects.get(key="offer", status="expired").value == "10% off"


def test_a_store_inside_a_callers_transaction_goes_with_it(admin_actor):
    def change_of_mind():
        with transaction.atomic():
            entry_store(actor=admin_actor, key="draft", value=1)
            entry_store(actor=admin_actor, key="draft", value=2, strategy="increment")
            assert Entry.objects.get(key="draft").value == 3
            raise RuntimeError("the caller changes its mind")

    with pytest.raises(RuntimeError):
        change_of_mind()
    assert not Entry.objects.filter(key="draft").exists()
    assert not EntryEvent.objects.filter(key="draft").exists()


def test_the_same_key_in_two_accounts_and_a_members_context_stays_apart(
    admin_actor, rival_actor, member_actor
):
    entry_store(actor=admin_actor, key="wins", value=1)
    entry_store(actor=rival_actor, key="wins", value=1)
    entry_store(actor=member_actor, key="wins", value=1, layer="member")
    for _ in range(2):  # updates, each through its own guard
        entry_store(actor=admin_actor, key="wins", value=1, strategy="increment")
        entry_store(actor=member_actor, key="wins", value=1, layer="member", strategy="increment")
    rows = {
        (e.account_id, e.layer, e.member_id): (e.version, e.value)
        for e in Entry.objects.filter(key="wins")
    }
    assert rows == {
        (admin_actor.account.pk, "account", None): (3, 3),
        (rival_actor.account.pk, "account", None): (1, 1),
        (member_actor.account.pk, "member", member_actor.member.pk): (3, 3),
    }
