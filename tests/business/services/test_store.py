"""Storing business memory: the five strategies, versions, expected_version, history,
capacity and eviction, expiry, and the writer's role."""

from datetime import timedelta

import pytest
from django.utils import timezone

from outreach.errors import NotModuleAdmin
from prospect_memory.business.errors import MergeTypeMismatch, VersionMismatch
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion
from prospect_memory.business.selectors.listing import evictions_list
from prospect_memory.business.selectors.recall import entry_recall
from prospect_memory.business.services.delete import entry_delete
from prospect_memory.business.services.restore import eviction_restore, version_restore
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db

ICP = {
    "industry": ["SaaS", "DevTools"],
    "headcount": "11-200",
    "geography": ["US", "EU"],
    "signals": ["hiring AEs", "raised Series A"],
    "disqualifiers": ["agencies", "crypto"],
}


def store(actor, key="icp_definition", value=ICP, **kw):
    return entry_store(actor=actor, key=key, value=value, **kw)


def test_a_new_entry_with_its_provenance(admin_actor):
    result = store(
        admin_actor,
        key="ICP_Definition",
        category="fact",
        confidence=90,
        source={
            "pipeline_id": "icp_builder",
            "execution_id": "run_0192",
            "step_id": "step_3",
            "extracted_at": "2026-11-04T14:22:00Z",
        },
    )
    assert (result.created, result.previous_version, result.evicted) == (True, 0, [])
    entry = result.entry
    assert (entry.key, entry.layer, entry.version, entry.confidence) == (
        "icp_definition",
        "account",
        1,
        90,
    )
    assert entry.value == ICP
    assert entry.source.pipeline_id == "icp_builder"
    assert entry.written_by == "admin@example.com"
    stored = Entry.objects.get()
    assert b"SaaS" not in bytes(stored.value_ciphertext)  # encrypted at rest
    assert stored.embedding_status == "ready"


def test_defaults_and_an_update_keeps_what_it_does_not_name(admin_actor):
    first = store(admin_actor, value={"a": 1}, ttl_seconds=3600, category="insight", confidence=80)
    assert first.entry.category == "insight"
    later = store(admin_actor, value={"a": 2})
    assert later.entry.category == "insight"
    assert later.entry.confidence == 80
    assert later.entry.expires_at == first.entry.expires_at
    cleared = store(admin_actor, value={"a": 3}, ttl_seconds=None)
    assert cleared.entry.expires_at is None
    fresh = store(admin_actor, key="other", value=1)
    assert (fresh.entry.category, fresh.entry.confidence) == ("fact", 50)


@pytest.mark.parametrize(
    ("strategy", "existing", "given", "stored"),
    [
        ("overwrite", [1], {"x": 1}, {"x": 1}),
        ("append", [1, 2], 3, [1, 2, 3]),
        ("append", [1, 2], [3, 4], [1, 2, 3, 4]),
        ("append", [], {"a": 1}, [{"a": 1}]),
        ("increment", 10, 5, 15),
        ("increment", 10, -15, -5),
        ("increment", 1.5, 2, 3.5),
        ("max", 10, 5, 10),
        ("max", 10, 50, 50),
        ("min", 10, 5, 5),
        ("min", 10.5, 50, 10.5),
    ],
)
def test_strategies_merge_into_the_existing_value(admin_actor, strategy, existing, given, stored):
    store(admin_actor, key="k", value=existing)
    result = store(admin_actor, key="k", value=given, strategy=strategy)
    assert result.entry.value == stored
    assert (result.created, result.previous_version, result.entry.version) == (False, 1, 2)


@pytest.mark.parametrize(
    ("strategy", "given", "stored"),
    [
        ("overwrite", 3, 3),
        ("append", 3, [3]),
        ("append", [3], [3]),
        ("increment", 3, 3),
        ("increment", "ten", "ten"),
        ("max", [1], [1]),
        ("min", {"a": 1}, {"a": 1}),
    ],
)
def test_a_new_key_stores_the_given_value_under_every_strategy(
    admin_actor, strategy, given, stored
):
    assert store(admin_actor, key="k", value=given, strategy=strategy).entry.value == stored


@pytest.mark.parametrize(
    ("strategy", "existing", "given", "types"),
    [
        ("append", {"a": 1}, 2, ("object", "number")),
        ("append", "text", "more", ("string", "string")),
        ("increment", "10", 1, ("string", "number")),
        ("increment", [1], 1, ("array", "number")),
        ("max", {"a": 1}, 1, ("object", "number")),
        ("min", True, 1, ("boolean", "number")),
    ],
)
def test_a_type_conflict_changes_nothing(admin_actor, strategy, existing, given, types):
    store(admin_actor, key="k", value=existing)
    with pytest.raises(MergeTypeMismatch) as refused:
        store(admin_actor, key="k", value=given, strategy=strategy)
    assert (refused.value.details["stored_type"], refused.value.details["given_type"]) == types
    entry = Entry.objects.get()
    assert (entry.value, entry.version) == (existing, 1)
    assert not EntryVersion.objects.exists()


def test_expected_version_guards_against_blind_overwrites(admin_actor):
    with pytest.raises(VersionMismatch) as missing:
        store(admin_actor, value=1, expected_version=3)
    assert missing.value.details["current_version"] == 0
    assert not Entry.objects.exists()
    store(admin_actor, value=1, expected_version=0)
    with pytest.raises(VersionMismatch):
        store(admin_actor, value=2, expected_version=0)
    store(admin_actor, value=2, expected_version=1)
    with pytest.raises(VersionMismatch) as stale:
        store(admin_actor, value=3, expected_version=1)
    assert stale.value.details["current_version"] == 2
    assert "expected_version=2" in stale.value.message
    assert Entry.objects.get().value == 2


def test_history_keeps_every_change_and_the_newest_twenty(admin_actor, capacity):
    store(admin_actor, value=0, confidence=10)
    for i in range(1, 25):
        store(admin_actor, value=i, strategy="overwrite", source={"step_id": f"s{i}"})
    recall = entry_recall(actor=admin_actor, key="icp_definition", include_history=True)
    assert recall.entry.version == 25
    versions = [v.version for v in recall.history]
    assert versions == list(range(24, 4, -1))
    newest = recall.history[0]
    assert (newest.value, newest.strategy, newest.source.step_id) == (23, "overwrite", "s23")
    assert EntryVersion.objects.count() == 20


def test_restoring_a_version_is_a_new_version(admin_actor):
    store(admin_actor, value={"tone": "formal"}, confidence=60)
    store(admin_actor, value={"tone": "casual"}, confidence=90)
    result = version_restore(actor=admin_actor, key="icp_definition", version=1)
    assert (result.entry.value, result.entry.confidence, result.entry.version) == (
        {"tone": "formal"},
        60,
        3,
    )
    history = entry_recall(actor=admin_actor, key="icp_definition", include_history=True).history
    assert [(v.version, v.value) for v in history] == [
        (2, {"tone": "casual"}),
        (1, {"tone": "formal"}),
    ]
    assert EntryEvent.objects.filter(action="restore_version").exists()


def test_capacity_evicts_the_lowest_confidence_then_least_recently_used(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=3)
    store(admin_actor, key="high", value=1, confidence=90)
    store(admin_actor, key="low_used", value=1, confidence=20)
    store(admin_actor, key="low_unused", value=1, confidence=20)
    entry_recall(actor=admin_actor, key="low_used")
    result = store(admin_actor, key="new", value=1, confidence=5)
    assert result.evicted == [{"key": "low_unused", "confidence": 20}]
    live = set(Entry.objects.filter(status="live").values_list("key", flat=True))
    assert live == {"high", "low_used", "new"}
    # Updating an entry of a full layer evicts nothing.
    assert store(admin_actor, key="new", value=2).evicted == []


def test_an_evicted_entry_is_restored_and_makes_room(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    store(admin_actor, key="a", value=1, confidence=10)
    store(admin_actor, key="b", value=1, confidence=60)
    store(admin_actor, key="c", value=1, confidence=70)
    [evicted] = evictions_list(actor=admin_actor)
    assert (evicted.key, evicted.status) == ("a", "evicted")
    assert not entry_recall(actor=admin_actor, key="a").found
    restored = eviction_restore(actor=admin_actor, entry_id=evicted.id)
    assert restored.entry.key == "a"
    assert restored.evicted == [{"key": "b", "confidence": 60}]
    assert entry_recall(actor=admin_actor, key="a").entry.value == 1


def test_an_evicted_key_written_again_cannot_be_restored_over_it(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=1)
    store(admin_actor, key="a", value=1, confidence=10)
    store(admin_actor, key="b", value=1)
    [evicted] = evictions_list(actor=admin_actor)
    capacity(ACCOUNT_CAPACITY=5)
    store(admin_actor, key="a", value=2)
    from prospect_memory.business.errors import KeyTaken

    with pytest.raises(KeyTaken):
        eviction_restore(actor=admin_actor, entry_id=evicted.id)


def test_expired_entries_disappear_at_once_and_can_be_restored(admin_actor):
    store(admin_actor, key="weekly_signal", value="hot", ttl_seconds=60)
    Entry.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert not entry_recall(actor=admin_actor, key="weekly_signal").found
    [expired] = evictions_list(actor=admin_actor)
    assert expired.key == "weekly_signal"
    # A new write of the key starts afresh; the expired one stays restorable until then.
    created = store(admin_actor, key="weekly_signal", value="cold")
    assert (created.created, created.entry.version) == (True, 1)
    assert Entry.objects.filter(status="expired").count() == 1


def test_delete_removes_the_entry_and_its_history(admin_actor):
    store(admin_actor, value=1)
    store(admin_actor, value=2)
    result = entry_delete(actor=admin_actor, key="icp_definition")
    assert (result.key, result.version) == ("icp_definition", 2)
    assert not Entry.objects.exists()
    assert not EntryVersion.objects.exists()
    assert EntryEvent.objects.filter(action="delete").exists()


def test_only_module_admins_write_the_account_layer(member_actor):
    with pytest.raises(NotModuleAdmin):
        store(member_actor, value=1)
    own = store(member_actor, key="signature", value="Best, Ann", layer="member")
    assert own.entry.layer == "member"


def test_the_member_layer_wins_in_merged_reads(admin_actor, member_actor):
    store(admin_actor, key="tone", value="formal")
    store(member_actor, key="tone", value="playful", layer="member")
    assert entry_recall(actor=member_actor, key="tone").entry.value == "playful"
    assert entry_recall(actor=member_actor, key="tone", layer="account").entry.value == "formal"
    assert entry_recall(actor=admin_actor, key="tone").entry.value == "formal"


def test_recall_counts_each_access(admin_actor):
    store(admin_actor, value=1)
    for expected in (1, 2, 3):
        recall = entry_recall(actor=admin_actor, key="icp_definition")
        assert recall.entry.access_count == expected
    assert Entry.objects.get().last_accessed_at is not None


def test_each_version_says_how_it_came_about(admin_actor):
    store(admin_actor, key="deals", value=1)
    store(admin_actor, key="deals", value=2, strategy="increment")
    store(admin_actor, key="deals", value=10, strategy="max")
    version_restore(actor=admin_actor, key="deals", version=1)
    history = entry_recall(actor=admin_actor, key="deals", include_history=True).history
    assert [(v.version, v.value, v.strategy) for v in history] == [
        (3, 10, "max"),
        (2, 3, "increment"),
        (1, 1, "overwrite"),
    ]
    assert Entry.objects.get(key="deals").strategy == "restore"


def test_the_oldest_eviction_is_restored_when_the_layer_is_full(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    for confidence, key in enumerate("abcd", start=1):
        store(admin_actor, key=key, value=1, confidence=confidence)  # c evicts a, d evicts b
    a = Entry.objects.get(key="a")
    restored = eviction_restore(actor=admin_actor, entry_id=a.pk)
    assert (restored.entry.key, restored.evicted) == ("a", [{"key": "c", "confidence": 3}])
    assert Entry.objects.get(pk=a.pk).status == "live"


def test_kept_evictions_are_the_most_recent_to_leave_expiry_included(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    store(admin_actor, key="a", value=1, confidence=10)
    store(admin_actor, key="b", value=1, confidence=20)
    store(admin_actor, key="c", value=1, confidence=30)  # evicts a, an hour ago
    Entry.objects.filter(key="a").update(retired_at=timezone.now() - timedelta(hours=1))
    Entry.objects.filter(key="b").update(expires_at=timezone.now() - timedelta(seconds=1))
    store(admin_actor, key="d", value=1, confidence=40)  # b has expired: room without eviction
    store(admin_actor, key="e", value=1, confidence=50)  # evicts c
    left = {e.key for e in evictions_list(actor=admin_actor)}
    assert left == {"b", "c"}  # a left first and goes
