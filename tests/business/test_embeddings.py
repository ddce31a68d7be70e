"""Entries in the shared embedding pipeline, on a real worker: with a broker a store answers
before its vector; queued on commit when the provider fails, retried, backfilled,
re-embedded after a model change; searched by key meanwhile."""

import pytest
from django.db import connection

from outreach.access import Actor
from prospect_memory.business import tasks
from prospect_memory.business.models import Entry
from prospect_memory.business.selectors.search import entries_search
from prospect_memory.business.services.store import entry_store
from tests.helpers import token as issue_token
from tests.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def status(key: str) -> str:
    return Entry.objects.get(key=key).embedding_status


def test_an_outage_loses_nothing_and_the_worker_embeds_later(admin_actor, gemini, worker, settings):
    # A store that asks the provider itself (as without a broker) meets the outage.
    settings.BUSINESS_MEMORY = {
        **getattr(settings, "BUSINESS_MEMORY", {}),
        "EMBED_AFTER_ANSWER": False,
    }
    gemini.mode = "503"
    stored = entry_store(actor=admin_actor, key="voice:banned_phrases", value=["synergy"])
    assert stored.created
    assert status("voice:banned_phrases") == "pending"
    # Meanwhile search matches it on its key and says it was not compared.
    found = entries_search(actor=admin_actor, query="banned phrases")
    assert [r.entry.key for r in found.results] == ["voice:banned_phrases"]
    assert found.results[0].distance is None
    assert found.not_compared == 1
    wait_for(lambda: len(gemini.requests) >= 3, what="the worker's first attempt")
    gemini.mode = "ok"
    tasks.backfill_entry_embeddings.delay()
    wait_for(lambda: status("voice:banned_phrases") == "ready", what="the backfill")
    assert entries_search(actor=admin_actor, query="banned phrases").not_compared == 0


def test_with_a_broker_a_store_answers_before_its_vector(admin_actor, gemini, worker):
    gemini.delay = 0.4  # within the 1 s budget: a store that waited would answer ready
    entry_store(actor=admin_actor, key="voice:tone", value="warm and direct")
    assert status("voice:tone") == "pending"
    wait_for(lambda: status("voice:tone") == "ready", what="the worker's vector")
    assert entries_search(actor=admin_actor, query="tone of voice").not_compared == 0


def test_a_store_can_be_told_to_wait_for_its_vector(admin_actor, gemini, worker, settings):
    settings.BUSINESS_MEMORY = {
        **getattr(settings, "BUSINESS_MEMORY", {}),
        "EMBED_AFTER_ANSWER": False,
    }
    gemini.delay = 0.4
    entry_store(actor=admin_actor, key="voice:tone", value="warm and direct")
    assert status("voice:tone") == "ready"


def test_a_model_change_reembeds_one_accounts_entries(admin_actor, other_admin, worker):
    from outreach.access import Actor

    entry_store(actor=admin_actor, key="icp_definition", value={"industry": ["SaaS"]})
    entry_store(actor=Actor.for_member(other_admin), key="icp_definition", value={"x": 1})
    Entry.objects.update(embedding_model="an-old-model")
    tasks.reembed_account_entries.delay(admin_actor.account.pk)
    wait_for(
        lambda: Entry.objects.filter(
            account=admin_actor.account, embedding_model="kit-local-hash-v1"
        ).exists(),
        what="re-embedding",
    )
    assert Entry.objects.get(account__slug="rival-co").embedding_model == "an-old-model"


def test_a_failure_for_an_older_version_leaves_the_newer_one_pending(admin_actor, gemini):
    import threading

    from prospect_memory.business.embeddings import ENTRIES
    from prospect_memory.core import embedding_pipeline

    gemini.mode = "503"
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "warm"})
    entry_id = Entry.objects.get().pk
    gemini.mode, gemini.delay = "400", 1.0  # a permanent refusal, answered slowly
    outcome = []

    def embed():
        try:
            outcome.append(embedding_pipeline.embed_one(ENTRIES, entry_id))
        finally:
            connection.close()

    worker = threading.Thread(target=embed)
    worker.start()
    wait_for(lambda: gemini.requests, what="the task's request")
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "cold"})  # version 2
    worker.join(10)
    assert outcome == ["failed"]
    entry = Entry.objects.get()
    assert (entry.version, entry.embedding_status) == (2, "pending")


def test_an_entry_matched_on_its_key_is_counted_once_it_is_shown(client, module_admin, gemini):
    """Search by meaning counts what it ranks in its own statement; an entry it could only
    match on its key is counted by the operation that shows it, over REST as over MCP."""

    gemini.mode = "503"
    entry_store(actor=Actor.for_member(module_admin), key="voice:banned_phrases", value=["x"])
    bearer = issue_token(module_admin, ["outreach_read"])
    answer = client.get(
        "/api/v1/business-memory/search?query=banned+phrases",
        HTTP_AUTHORIZATION=f"Bearer {bearer}",
    )
    assert answer.status_code == 200, answer.content
    assert [r["key"] for r in answer.json()["data"]["results"]] == ["voice:banned_phrases"]
    assert Entry.objects.get(key="voice:banned_phrases").access_count == 1
