"""Reading business memory: list order, pages and cursors; search with its filters, access
counts and key fallback; expiry hidden from every read; evictions kept for a while, then
purged; the arguments of every read and restore checked, over REST."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from outreach.errors import NotFound, ValidationFailed
from pgstatements import run_one
from prospect_memory.business.models import Entry
from prospect_memory.business.selectors.listing import entries_list, evictions_list
from prospect_memory.business.selectors.recall import entry_history, entry_recall
from prospect_memory.business.selectors.search import entries_search
from prospect_memory.business.selectors.statements import readable, uncompared_statements
from prospect_memory.business.services.consolidate import retired_purge
from prospect_memory.business.services.restore import eviction_restore
from prospect_memory.business.services.store import entry_store
from prospect_memory.business.tasks import consolidate_memory
from prospect_memory.core.models import UsageEvent

pytestmark = pytest.mark.django_db


def store(actor, key, **fields):
    fields.setdefault("value", {"about": key})
    return entry_store(actor=actor, key=key, **fields)


def keys(rows) -> list[str]:
    return [getattr(r, "entry", r).key for r in rows]


def backdate(key: str, **fields) -> None:
    Entry.objects.filter(key=key).update(**fields)


# --- list --------------------------------------------------------------------------------


def test_list_orders_by_confidence_then_last_use_and_pages_with_a_cursor(admin_actor):
    now = timezone.now()
    for key, confidence in [("a", 90), ("b", 50), ("c", 50), ("d", 50), ("e", 10)]:
        store(admin_actor, key, confidence=confidence)
    backdate("b", created_at=now - timedelta(days=9), last_accessed_at=now - timedelta(days=1))
    backdate("c", created_at=now - timedelta(days=5), last_accessed_at=None)
    backdate("d", created_at=now - timedelta(days=2), last_accessed_at=None)
    seen, cursor, pages = [], None, 0
    while True:
        page = entries_list(actor=admin_actor, limit=2, cursor=cursor)
        seen += keys(page.entries)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    # Equal confidence: the most recently used (or, never used, stored) first.
    assert seen == ["a", "b", "d", "c", "e"]
    assert pages == 3
    # Listing is not a use.
    assert set(Entry.objects.values_list("access_count", flat=True)) == {0}


def test_list_filters_by_layer_and_category(admin_actor, member_actor):
    store(admin_actor, "icp", category="fact")
    store(admin_actor, "pattern", category="insight")
    store(member_actor, "signature", layer="member", category="preference")
    assert keys(entries_list(actor=member_actor, layer="member").entries) == ["signature"]
    assert keys(entries_list(actor=member_actor, layer="account", category="insight").entries) == [
        "pattern"
    ]
    assert sorted(keys(entries_list(actor=member_actor).entries)) == ["icp", "pattern", "signature"]
    # The member's own context is not the admin's to list.
    assert sorted(keys(entries_list(actor=admin_actor).entries)) == ["icp", "pattern"]


@pytest.mark.parametrize("limit", [0, 101, True, "5", 2.0])
def test_a_list_limit_outside_1_to_100_is_refused(admin_actor, limit):
    with pytest.raises(ValidationFailed) as refused:
        entries_list(actor=admin_actor, limit=limit)
    assert "limit" in refused.value.details["fields"]


def test_a_cursor_of_another_list_or_a_forged_one_is_refused(admin_actor):
    for i in range(3):
        store(admin_actor, f"k{i}", category="fact")
    cursor = entries_list(actor=admin_actor, category="fact", limit=1).next_cursor
    for other in [
        {"category": "insight", "cursor": cursor},
        {"layer": "account", "category": "fact", "cursor": cursor},
        {"cursor": cursor[:-2] + "xx"},
        {"cursor": "not-a-cursor"},
    ]:
        with pytest.raises(ValidationFailed) as refused:
            entries_list(actor=admin_actor, **other)
        assert "cursor" in refused.value.details["fields"]


# --- search ------------------------------------------------------------------------------


def test_search_counts_each_result_as_an_access(admin_actor):
    store(admin_actor, "icp_definition", value={"industry": ["SaaS", "fintech"]})
    store(admin_actor, "brand_voice", value={"tone": "warm"})
    found = entries_search(actor=admin_actor, query="industry SaaS fintech", limit=1)
    [hit] = found.results
    assert hit.entry.key == "icp_definition"
    assert hit.entry.access_count == 1
    counts = dict(Entry.objects.values_list("key", "access_count"))
    assert counts == {"icp_definition": 1, "brand_voice": 0}


def test_an_entry_shown_takes_its_count_from_the_row_it_counted(admin_actor):
    """A view read before other readers counted (or read from a replica behind) shows the
    count the primary's row has after this use, not its own plus one."""
    from prospect_memory.business.records import EntryView
    from prospect_memory.business.usage import entries_used

    store(admin_actor, "icp_definition", value={"industry": ["SaaS"]})
    view = EntryView.of(Entry.objects.get(key="icp_definition"))
    assert view.access_count == 0
    backdate("icp_definition", access_count=5)  # counted by others meanwhile
    entries_used(admin_actor, [view])
    assert view.access_count == 6
    assert Entry.objects.get(key="icp_definition").access_count == 6


def test_search_filters_by_layer_and_category(admin_actor, member_actor):
    store(admin_actor, "voice", value={"tone": "warm"}, category="preference")
    store(admin_actor, "tone_result", value={"tone": "warm works"}, category="outcome")
    store(member_actor, "my_tone", value={"tone": "warm"}, layer="member", category="preference")
    found = entries_search(actor=member_actor, query="tone warm", category="preference")
    assert sorted(keys(found.results)) == ["my_tone", "voice"]
    found = entries_search(actor=member_actor, query="tone warm", layer="member")
    assert keys(found.results) == ["my_tone"]
    assert "my_tone" not in keys(entries_search(actor=admin_actor, query="tone warm").results)


def test_with_the_provider_down_search_matches_keys_and_says_nothing_was_compared(
    admin_actor, gemini
):
    gemini.mode = "503"
    store(admin_actor, "voice:banned_phrases", value=["synergy"])
    store(admin_actor, "icp_definition", value={"industry": ["SaaS"]})
    found = entries_search(actor=admin_actor, query="banned phrases")
    assert keys(found.results) == ["voice:banned_phrases"]
    assert found.results[0].distance is None
    assert found.not_compared == 2
    assert found.problem


def test_entries_without_a_vector_are_matched_on_keys_the_searcher_may_read(
    admin_actor, member_actor, rival_actor, gemini
):
    gemini.mode = "503"  # every entry stays without a vector
    store(admin_actor, "tone:shared", value={"tone": "warm"}, category="preference")
    store(admin_actor, "tone:outcome", value={"tone": "warm"}, category="outcome")
    store(member_actor, "tone:mine", value={"tone": "warm"}, layer="member")
    store(admin_actor, "tone:admins_own", value={"tone": "warm"}, layer="member")
    store(rival_actor, "tone:rivals", value={"tone": "warm"})
    gemini.mode = "ok"  # the query has a vector; no entry has one to compare with it
    found = entries_search(actor=member_actor, query="tone")
    assert sorted(keys(found.results)) == ["tone:mine", "tone:outcome", "tone:shared"]
    assert {r.distance for r in found.results} == {None}
    assert found.not_compared == 3
    found = entries_search(actor=member_actor, query="tone", category="preference")
    assert keys(found.results) == ["tone:shared"]
    assert found.not_compared == 1
    found = entries_search(actor=member_actor, query="tone", layer="member")
    assert keys(found.results) == ["tone:mine"]
    assert keys(entries_search(actor=rival_actor, query="tone").results) == ["tone:rivals"]


@pytest.mark.parametrize("current", ["current-model", "kit's 100% model"])
def test_the_count_of_entries_not_compared_is_exact_whatever_the_models_name(
    admin_actor, member_actor, rival_actor, current
):
    """The count names the model in its statement (for the indexes): every vector of another
    model and every entry without one is counted once, among the searcher's entries only,
    whatever the model's name holds."""
    for i in range(3):
        store(admin_actor, f"shared:{i}", value={"tone": "warm"})
        store(member_actor, f"mine:{i}", value={"tone": "warm"}, layer="member")
        store(admin_actor, f"admins_own:{i}", value={"tone": "warm"}, layer="member")
        store(rival_actor, f"rivals:{i}", value={"tone": "warm"})
    entries = Entry.objects.all()
    entries.update(embedding_model=current)
    # In each layer and account: ready vectors of models named before and after the
    # current one, vectors still to come, and one entry expired (never counted).
    for key, status, model in [
        ("shared:0", "ready", "a-model"),
        ("mine:0", "ready", "z-model"),
        ("admins_own:0", "ready", "a-model"),
        ("rivals:0", "ready", "z-model"),
        ("shared:1", "pending", current),
        ("mine:1", "failed", ""),
        ("admins_own:1", "pending", current),
        ("rivals:1", "pending", current),
        ("shared:2", "pending", current),
    ]:
        entries.filter(key=key).update(embedding_status=status, embedding_model=model)
    entries.filter(key="shared:2").update(expires_at=timezone.now() - timedelta(days=1))

    def not_compared(actor, layer="merged"):
        sql = uncompared_statements(current)["not_compared"]
        ((count,),) = run_one(sql, {**readable(actor, layer), "category": None})
        return count

    assert not_compared(member_actor) == 4  # shared 0, 1; mine 0, 1
    assert not_compared(member_actor, "member") == 2
    assert not_compared(member_actor, "account") == 2
    assert not_compared(admin_actor) == 4  # shared 0, 1; their own 0, 1
    assert not_compared(rival_actor) == 2


def test_search_says_how_many_entries_it_could_not_compare(admin_actor, member_actor):
    for key in ("tone:a", "tone:b", "tone:c"):
        store(admin_actor, key, value={"tone": "warm"})
    store(member_actor, "tone:mine", value={"tone": "warm"}, layer="member")
    Entry.objects.filter(key="tone:a").update(embedding_model="an-older-model")
    Entry.objects.filter(key="tone:b").update(embedding_status="pending", embedding=None)
    found = entries_search(actor=member_actor, query="tone warm")
    assert found.not_compared == 2
    assert sorted(r.entry.key for r in found.results if r.distance is not None) == [
        "tone:c",
        "tone:mine",
    ]


def test_the_key_fallback_leaves_out_entries_compared_by_their_vector(admin_actor, capacity):
    capacity(SEARCH_MAX_DISTANCE=0.0001)
    store(admin_actor, "tone:ready", value={"tone": "warm"})  # compared, too far: not shown
    store(admin_actor, "tone:pending", value={"tone": "warm"})
    Entry.objects.filter(key="tone:pending").update(embedding=None, embedding_status="pending")
    found = entries_search(actor=admin_actor, query="tone")
    assert keys(found.results) == ["tone:pending"]
    assert found.results[0].distance is None
    assert found.not_compared == 1


@pytest.mark.parametrize(
    ("query", "limit"),
    [("", None), ("   ", None), ("x" * 1001, None), ("a\x00b", None), ("ok", 21)],
)
def test_bad_search_arguments_are_refused(admin_actor, query, limit):
    with pytest.raises(ValidationFailed):
        entries_search(actor=admin_actor, query=query, limit=limit)


# --- expiry, evictions, purge -------------------------------------------------------------


def test_an_expired_entry_is_in_no_read(admin_actor):
    store(admin_actor, "weekly_signal", value="hot signal", ttl_seconds=60)
    backdate("weekly_signal", expires_at=timezone.now() - timedelta(seconds=1))
    assert not entry_recall(actor=admin_actor, key="weekly_signal").found
    assert entries_list(actor=admin_actor).entries == []
    assert entries_search(actor=admin_actor, query="weekly signal hot").results == []
    with pytest.raises(NotFound):
        entry_history(actor=admin_actor, key="weekly_signal")


def test_evictions_are_kept_for_30_days_then_purged(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    for confidence, key in enumerate(["old", "recent", "kept", "newest"], start=1):
        store(admin_actor, key, confidence=confidence)
        if key == "kept":  # "old" was evicted: a month passes
            backdate("old", retired_at=timezone.now() - timedelta(days=31))
    assert keys(evictions_list(actor=admin_actor)) == ["recent"]
    old = Entry.objects.get(key="old")
    with pytest.raises(NotFound):
        eviction_restore(actor=admin_actor, entry_id=old.pk)
    assert consolidate_memory.delay().get()["purged"] == 1
    assert sorted(Entry.objects.values_list("key", flat=True)) == ["kept", "newest", "recent"]
    assert retired_purge() == 0


def test_a_layer_keeps_at_most_its_capacity_of_evicted_entries(admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    for i in range(7):
        store(admin_actor, f"k{i}", confidence=10 + i)
    assert Entry.objects.filter(status="live").count() == 2
    evicted = Entry.objects.filter(status="evicted")
    # The newest evictions are the ones kept.
    assert sorted(evicted.values_list("key", flat=True)) == ["k3", "k4"]


# --- metering -----------------------------------------------------------------------------


def test_usage_names_account_keys_but_not_a_members_own(admin_actor, member_actor):
    from outreach import scopes
    from outreach.operations import execute
    from prospect_memory.business.operations import RECALL

    store(admin_actor, "icp_definition")
    store(member_actor, "my_secret_plan", layer="member")
    for key in ("icp_definition", "my_secret_plan"):
        execute(RECALL, actor=member_actor, granted=scopes.ALL, arguments={"key": key})
    subjects = set(
        UsageEvent.objects.filter(memory="business", kind="recall").values_list(
            "subject", flat=True
        )
    )
    assert subjects == {"icp_definition", ""}


# --- the other operations' arguments, over REST --------------------------------------------


@pytest.fixture
def rest(client, bearer):
    auth = bearer

    def call(method, path, body=None):
        url = f"/api/v1/business-memory/{path}"
        if method == "get":
            return client.get(url, body or {}, **auth)
        if method == "delete":
            return client.delete(f"{url}?{body or ''}", **auth)
        return client.post(url, json.dumps(body or {}), content_type="application/json", **auth)

    return call


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("get", "entries/icp", {"include_history": "yes"}, "include_history"),
        ("get", "entries/icp", {"layer": "team"}, "layer"),
        ("get", "entries", {"limit": "0"}, "limit"),
        ("get", "entries", {"limit": "101"}, "limit"),
        ("get", "entries", {"category": "rumour"}, "category"),
        ("get", "search", {"query": ""}, "query"),
        ("get", "search", {"query": "x" * 1001}, "query"),
        ("get", "search", {"query": "a\x00b"}, "query"),
        ("get", "search", {"query": "ok", "limit": "21"}, "limit"),
        ("get", "evictions", {"layer": "merged"}, "layer"),
        ("delete", "entries/icp", "expected_version=-1", "expected_version"),
        ("post", "entries/icp/versions/0/restore", {}, "version"),
        ("post", "entries/bad%20key/versions/1/restore", {}, "key"),
        ("post", "evictions/not-a-uuid/restore", {}, None),
    ],
)
def test_each_bad_argument_of_the_other_operations_is_a_400_or_404(
    rest, admin_actor, method, path, body, field
):
    store(admin_actor, "icp")
    response = rest(method, path, body)
    if field is None:
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"
        return
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in error["details"]["fields"], error
    entry = Entry.objects.get()
    assert (entry.version, entry.access_count) == (1, 0)


def test_an_upper_case_key_in_a_url_is_the_lower_case_entry(rest, admin_actor):
    store(admin_actor, "icp_definition")
    response = rest("get", "entries/ICP_Definition")
    assert response.json()["data"]["entry"]["key"] == "icp_definition"


def test_a_limit_wider_than_its_column_fails_the_system_checks(capacity):
    from prospect_memory.business.checks import check_limits_fit_the_columns

    assert check_limits_fit_the_columns(None) == []
    capacity(KEY_MAX_CHARS=101, SOURCE_ID_MAX_CHARS=500)
    problems = check_limits_fit_the_columns(None)
    assert [p.id for p in problems] == ["business_memory.E001"] * 2
    assert "KEY_MAX_CHARS" in problems[0].msg


# --- what a read's counts wait for -----------------------------------------------------------


def _synchronous_commit() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_reads_counts_skip_the_disk_wait_only_in_their_own_transaction(admin_actor):
    """On their own, a read's counts and usage row commit without waiting for the disk;
    inside a caller's transaction they leave it as it was, so its writes still wait."""
    from django.db import transaction

    from outreach import scopes
    from outreach.operations import execute
    from prospect_memory.business.operations import RECALL, SEARCH

    store(admin_actor, "icp_definition")
    for operation, arguments in ((RECALL, {"key": "icp_definition"}), (SEARCH, {"query": "icp"})):
        execute(operation, actor=admin_actor, granted=scopes.ALL, arguments=arguments)
        assert _synchronous_commit() == "on"  # the setting ended with the read's transaction
        with transaction.atomic():
            execute(operation, actor=admin_actor, granted=scopes.ALL, arguments=arguments)
            assert _synchronous_commit() == "on"  # a write here would still wait for the disk
    assert Entry.objects.get(key="icp_definition").access_count >= 4
    assert UsageEvent.objects.filter(memory="business", kind__in=["recall", "search"]).count() == 4
