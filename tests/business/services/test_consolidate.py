"""Consolidation (SPEC 13) with a fixed clock: purge, demotion arithmetic, merges into
aliases and their undo, idempotence, the run report, and the command."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from prospect_memory.business.errors import KeyTaken
from prospect_memory.business.models import ConsolidationRun, Entry, EntryVersion, Promotion
from prospect_memory.business.selectors.listing import entries_list
from prospect_memory.business.selectors.recall import entry_recall
from prospect_memory.business.services.consolidate import consolidate
from prospect_memory.business.services.restore import merge_undo
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def idle(key: str, days: float) -> None:
    Entry.objects.filter(key=key).update(used_at=NOW - timedelta(days=days))


def confidence(key: str) -> int:
    return Entry.objects.get(key=key).confidence


@pytest.mark.parametrize(
    ("days", "before", "after"),
    [(29, 80, 80), (30, 80, 70), (60, 80, 60), (95, 80, 50), (95, 15, 0), (400, 80, 0)],
)
def test_demotion_is_10_points_per_full_30_idle_days(admin_actor, days, before, after):
    entry_store(actor=admin_actor, key="pattern", value={"n": 1}, confidence=before)
    idle("pattern", days)
    report = consolidate(account=admin_actor.account, now=NOW)
    assert confidence("pattern") == after
    assert len(report.demoted) == (before != after)
    # A second run changes nothing.
    assert consolidate(account=admin_actor.account, now=NOW).demoted == []
    assert confidence("pattern") == after


def test_a_demotion_is_a_version_by_consolidation_and_the_next_period_counts_on(admin_actor):
    entry_store(actor=admin_actor, key="pattern", value={"n": 1}, confidence=80)
    idle("pattern", 35)
    consolidate(account=admin_actor.account, now=NOW)
    entry = Entry.objects.get(key="pattern")
    assert (entry.version, entry.strategy, entry.written_by_label) == (2, "demote", "consolidation")
    assert EntryVersion.objects.get(entry=entry).confidence == 80
    # The job's own write is not a use: 25 days later (60 idle) one more period is due.
    consolidate(account=admin_actor.account, now=NOW + timedelta(days=25))
    assert confidence("pattern") == 60
    # A read is a use: the idle time starts again.
    entry_recall(actor=admin_actor, key="pattern")
    consolidate(account=admin_actor.account, now=timezone.now() + timedelta(days=29))
    assert confidence("pattern") == 60


def test_a_demotion_below_70_takes_an_entry_out_of_the_knowledge_index(admin_actor, committed):
    committed(entry_store, actor=admin_actor, key="rule", value={"n": 1}, confidence=75)
    assert Promotion.objects.count() == 1
    idle("rule", 31)
    committed(consolidate, account=admin_actor.account, now=NOW)
    assert confidence("rule") == 65
    assert Promotion.objects.count() == 0


def test_near_identical_entries_merge_into_an_alias_and_the_merge_is_undone(admin_actor):
    rule = {"rule": "Enterprise deals need a champion and a security review first"}
    entry_store(actor=admin_actor, key="rule:enterprise", value=rule, confidence=90)
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=rule, confidence=60)
    entry_store(actor=admin_actor, key="rule:pricing", value={"rule": "Annual plans only"})
    entry_store(  # the same value in another category stays apart
        actor=admin_actor, key="outcome:enterprise", value=rule, category="outcome"
    )
    report = consolidate(account=admin_actor.account, now=NOW)
    assert [(a, k) for a, k, _, _ in report.merged] == [
        ("rule:enterprise_deals", "rule:enterprise")
    ]
    alias = Entry.objects.get(key="rule:enterprise_deals")
    assert (alias.status, alias.alias_of.key, alias.strategy) == (
        "merged",
        "rule:enterprise",
        "merge",
    )
    assert alias.value == rule  # its own value is kept
    # Its key answers for the entry it joined; lists show that entry once.
    recall = entry_recall(actor=admin_actor, key="rule:enterprise_deals")
    assert (recall.entry.key, recall.entry.alias_of) == ("rule:enterprise_deals", "rule:enterprise")
    assert recall.entry.confidence == 90
    listed = [e.key for e in entries_list(actor=admin_actor).entries]
    assert "rule:enterprise_deals" not in listed
    # A second run changes nothing.
    assert consolidate(account=admin_actor.account, now=NOW).merged == []
    # Writing the alias key writes the entry it stands for.
    stored = entry_store(
        actor=admin_actor, key="rule:enterprise_deals", value=rule, expected_version=1
    )
    assert (stored.entry.key, stored.entry.alias_of, stored.entry.version) == (
        "rule:enterprise_deals",
        "rule:enterprise",
        2,
    )
    undone = merge_undo(actor=admin_actor, key="rule:enterprise_deals")
    assert (undone.entry.key, undone.entry.version, undone.entry.confidence) == (
        "rule:enterprise_deals",
        3,
        60,
    )
    assert Entry.objects.get(key="rule:enterprise_deals").status == "live"
    assert entry_recall(actor=admin_actor, key="rule:enterprise_deals").entry.alias_of is None


def test_a_write_through_an_alias_is_embedded_with_the_write(admin_actor):
    rule = {"rule": "Enterprise deals need a champion and a security review first"}
    entry_store(actor=admin_actor, key="rule:enterprise", value=rule, confidence=90)
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=rule, confidence=60)
    consolidate(account=admin_actor.account, now=NOW)
    changed = {"rule": "Enterprise deals need a champion, a security review and a pilot"}
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=changed)
    kept = Entry.objects.get(key="rule:enterprise")
    assert kept.value == changed
    # The vector made before the lock was of the entry it stands for, not waiting for later.
    assert (kept.embedding_status, kept.embedding is not None) == ("ready", True)


def test_an_overwrite_naming_its_category_through_an_alias_is_embedded_after_the_commit(
    admin_actor, django_capture_on_commit_callbacks
):
    # Such a write skips the read before the lock, so its vector was made of the alias's
    # key: the provider answered, so the entry it stands for is embedded once it commits.
    rule = {"rule": "Enterprise deals need a champion and a security review first"}
    entry_store(actor=admin_actor, key="rule:enterprise", value=rule, confidence=90)
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=rule, confidence=60)
    consolidate(account=admin_actor.account, now=NOW)
    changed = {"rule": "Enterprise deals need a champion, a security review and a pilot"}
    with django_capture_on_commit_callbacks(execute=True):
        entry_store(actor=admin_actor, key="rule:enterprise_deals", value=changed, category="fact")
    kept = Entry.objects.get(key="rule:enterprise")
    assert kept.value == changed
    assert (kept.embedding_status, kept.embedding is not None) == ("ready", True)


def test_evicting_an_entry_keeps_at_most_capacity_left_with_its_aliases(admin_actor, capacity):
    from prospect_memory.business.visibility import retired

    capacity(ACCOUNT_CAPACITY=2)
    rule = {"rule": "Enterprise deals need a champion"}
    entry_store(actor=admin_actor, key="a", value=rule, confidence=60)
    entry_store(actor=admin_actor, key="b", value=rule, confidence=50)
    consolidate(account=admin_actor.account, now=NOW)
    assert Entry.objects.get(key="b").status == Entry.Status.MERGED
    entry_store(actor=admin_actor, key="x", value=1, confidence=5)
    Entry.objects.filter(key="x").update(expires_at=timezone.now() - timedelta(seconds=1))
    entry_store(actor=admin_actor, key="c", value=2, confidence=80)
    entry_store(actor=admin_actor, key="d", value=3, confidence=90)  # evicts a, and b with it
    left = retired(Entry.objects.filter(account=admin_actor.account)).values_list("key", flat=True)
    assert sorted(left) == ["a", "b"]  # the oldest to leave (x) went


def test_an_alias_of_an_entry_that_expired_leaves_when_its_key_is_written(admin_actor):
    from prospect_memory.business.errors import NotFound
    from prospect_memory.business.services.restore import eviction_restore

    rule = {"rule": "Enterprise deals need a champion"}
    entry_store(actor=admin_actor, key="a", value=rule, confidence=90)
    entry_store(actor=admin_actor, key="b", value=rule, confidence=50)
    consolidate(account=admin_actor.account, now=NOW)
    old_b = Entry.objects.get(key="b")
    Entry.objects.filter(key="a").update(expires_at=NOW - timedelta(seconds=1))  # a is gone
    stored = entry_store(actor=admin_actor, key="b", value={"new": True})
    assert (stored.created, stored.entry.alias_of) == (True, None)
    with pytest.raises(NotFound):
        merge_undo(actor=admin_actor, key="b")
    # The old b left as an eviction, and cannot come back over the new one.
    assert Entry.objects.get(pk=old_b.pk).status == "evicted"
    with pytest.raises(KeyTaken):
        eviction_restore(actor=admin_actor, entry_id=old_b.pk)


def test_member_entries_merge_only_with_the_same_members(admin_actor, member_actor):
    note = {"signature": "Best, Sam"}
    entry_store(actor=member_actor, key="signature", value=note, layer="member", confidence=90)
    entry_store(actor=member_actor, key="signatures", value=note, layer="member", confidence=40)
    entry_store(actor=admin_actor, key="signature", value=note, layer="member", confidence=40)
    report = consolidate(account=admin_actor.account, now=NOW)
    assert [(a, k, layer) for a, k, layer, _ in report.merged] == [
        ("signatures", "signature", "member")
    ]
    assert Entry.objects.get(key="signature", member=admin_actor.member).status == "live"


def test_purge_removes_what_left_over_30_days_ago(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=1)
    entry_store(actor=admin_actor, key="old", value=1, confidence=1)
    entry_store(actor=admin_actor, key="new", value=2, confidence=2)  # evicts old
    Entry.objects.filter(key="old").update(retired_at=NOW - timedelta(days=31))
    assert consolidate(account=admin_actor.account, now=NOW).purged == 1
    assert not Entry.objects.filter(key="old").exists()


def test_a_dry_run_changes_nothing_and_a_run_is_recorded(admin_actor, other_admin):
    entry_store(actor=admin_actor, key="pattern", value={"n": 1}, confidence=80)
    idle("pattern", 61)
    dry = consolidate(account=admin_actor.account, dry_run=True, now=NOW)
    assert dry.demoted == [("pattern", "account", 80, 60)]
    assert confidence("pattern") == 80
    assert not ConsolidationRun.objects.exists()
    consolidate(account=admin_actor.account, now=NOW)
    run = ConsolidationRun.objects.get()
    assert (run.account, run.demoted, run.merged, run.purged) == (admin_actor.account, 1, 0, 0)


def test_the_command_consolidates_one_account_or_every_one(admin_actor, rival_actor, capsys):
    for actor in (admin_actor, rival_actor):
        entry_store(actor=actor, key="pattern", value={"n": 1}, confidence=80)
    Entry.objects.update(used_at=timezone.now() - timedelta(days=31))
    call_command("consolidate_memory", "--account", admin_actor.account.slug, "--dry-run")
    assert "would purge 0, demote 1, merge 0 in the shared layer" in capsys.readouterr().out
    assert set(Entry.objects.values_list("confidence", flat=True)) == {80}
    call_command("consolidate_memory")
    assert set(Entry.objects.values_list("confidence", flat=True)) == {70}
    assert ConsolidationRun.objects.count() == 2


@pytest.fixture
def merged(admin_actor):
    rule = {"rule": "Enterprise deals need a champion and a security review first"}
    entry_store(actor=admin_actor, key="rule:enterprise", value=rule, confidence=90)
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=rule, confidence=60)
    consolidate(account=admin_actor.account, now=NOW)
    return Entry.objects.get(key="rule:enterprise_deals")


def test_a_merge_is_undone_over_rest(merged, client, bearer):
    url = "/api/v1/business-memory/entries/rule:enterprise_deals/unmerge"
    response = client.post(url, "{}", content_type="application/json", **bearer)
    assert response.status_code == 200, response.content
    assert response.json()["data"]["entry"]["key"] == "rule:enterprise_deals"
    again = client.post(url, "{}", content_type="application/json", **bearer)
    assert again.json()["error"]["code"] == "not_found"


def test_a_merge_is_undone_from_the_page_by_a_module_admin_only(merged, module_admin, member):
    from tests.business.test_pages import browser, post

    page = browser(module_admin).get("/business-memory/account/rule:enterprise/").content.decode()
    assert "/business-memory/account/rule:enterprise_deals/unmerge/" in page
    path = "/business-memory/account/rule:enterprise_deals/unmerge/"
    assert post(browser(member), path, {}).status_code == 403
    assert post(browser(module_admin), path, {}).status_code == 302
    assert Entry.objects.get(pk=merged.pk).status == "live"


def test_a_merge_is_undone_in_the_admin_under_its_permission(merged):
    from tests.business.test_admin import staff

    action = {"action": "undo_merges", "_selected_action": [str(merged.pk)]}
    staff("view_entry").post("/admin/business_memory/entry/", action)
    assert Entry.objects.get(pk=merged.pk).status == "merged"
    staff("view_entry", "undo_merge_entry").post("/admin/business_memory/entry/", action)
    assert Entry.objects.get(pk=merged.pk).status == "live"


def test_the_health_page_shows_the_business_figures_and_the_last_run(merged, module_admin):
    from tests.business.test_pages import browser

    page = browser(module_admin).get("/health/").content.decode()
    assert "Business memory" in page
    assert "1 merged" in page


def test_an_undone_merge_stays_undone_on_the_next_run(merged, admin_actor):
    merge_undo(actor=admin_actor, key="rule:enterprise_deals")
    assert consolidate(account=admin_actor.account, now=NOW).merged == []
    assert Entry.objects.get(key="rule:enterprise_deals").status == "live"


def test_an_undone_merge_stays_undone_after_the_job_demotes_it(merged, admin_actor):
    merge_undo(actor=admin_actor, key="rule:enterprise_deals")
    later = timezone.now() + timedelta(days=31)
    report = consolidate(account=admin_actor.account, now=later)
    assert ("rule:enterprise_deals", "account", 60, 50) in report.demoted
    assert report.merged == []
    assert Entry.objects.get(key="rule:enterprise_deals").status == "live"
    # Written again by an agent, it may join the other entry on a later run.
    rule = Entry.objects.get(key="rule:enterprise").value
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=rule)
    assert [a for a, _, _, _ in consolidate(account=admin_actor.account).merged] == [
        "rule:enterprise_deals"
    ]


def test_a_demotion_does_not_make_an_idle_entry_look_fresh(admin_actor, committed):
    from prospect_memory.knowledge.selectors import knowledge_search

    committed(
        entry_store, actor=admin_actor, key="rule:discounts", value={"max": 15}, confidence=95
    )
    written = timezone.now() - timedelta(days=40)
    Entry.objects.filter(key="rule:discounts").update(
        written_at=written, updated_at=written, used_at=written
    )
    committed(consolidate, account=admin_actor.account)
    entry = Entry.objects.get(key="rule:discounts")
    assert (entry.confidence, entry.written_by_label) == (85, "consolidation")
    [hit] = knowledge_search(actor=admin_actor, query="discounts", kinds=["business_memory"]).hits
    assert hit.stale  # last written by a person or an agent 40 days ago


def test_one_run_merges_every_near_pair_so_the_next_finds_none(admin_actor):
    rule = {"rule": "Enterprise deals need a champion and a security review first"}
    for key, confidence in [("rule:a", 90), ("rule:b", 60), ("rule:c", 50)]:
        entry_store(actor=admin_actor, key=key, value=rule, confidence=confidence)
    first = consolidate(account=admin_actor.account, now=NOW)
    assert sorted((a, k) for a, k, _, _ in first.merged) == [
        ("rule:b", "rule:a"),
        ("rule:c", "rule:a"),
    ]
    assert consolidate(account=admin_actor.account, now=NOW).merged == []


def test_aliases_leave_with_their_entry_and_can_be_restored(merged, admin_actor):
    from prospect_memory.business.services.delete import entry_delete
    from prospect_memory.business.services.restore import eviction_restore

    entry_delete(actor=admin_actor, key="rule:enterprise")
    alias = Entry.objects.get(pk=merged.pk)
    assert (alias.status, alias.alias_of) == ("evicted", None)
    restored = eviction_restore(actor=admin_actor, entry_id=alias.pk)
    assert restored.entry.key == "rule:enterprise_deals"
    assert restored.entry.value == merged.value


def test_a_members_own_alias_wins_over_the_accounts_key(admin_actor, member_actor):
    note = {"subjects": ["short", "specific"]}
    entry_store(actor=member_actor, key="my:subjects", value=note, layer="member", confidence=95)
    entry_store(actor=member_actor, key="my:subjects2", value=note, layer="member", confidence=60)
    consolidate(account=admin_actor.account, now=NOW)
    entry_store(actor=admin_actor, key="my:subjects2", value={"account": True})
    recall = entry_recall(actor=member_actor, key="my:subjects2")
    assert (recall.entry.layer, recall.entry.alias_of) == ("member", "my:subjects")


def test_the_run_report_counts_the_shared_layer_only(admin_actor, member_actor):
    note = {"signature": "Best, Sam"}
    entry_store(actor=member_actor, key="signature", value=note, layer="member", confidence=90)
    entry_store(actor=member_actor, key="signatures", value=note, layer="member", confidence=40)
    report = consolidate(account=admin_actor.account, now=NOW)
    assert len(report.merged) == 1
    assert ConsolidationRun.objects.get().merged == 0
