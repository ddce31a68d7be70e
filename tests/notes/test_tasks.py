"""Celery tasks on a real worker: embeddings queued on commit, retried, backfilled."""

import pytest

from kit.celery import app
from prospect_memory.notes import tasks
from prospect_memory.notes.models import Note
from tests.factories import overlap_of, save_note
from tests.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

SERIES_B = "Acme raised a Series B of 40M led by Example Ventures."


def statuses(ids):
    return list(Note.objects.filter(id__in=ids).values_list("embedding_status", flat=True))


def test_outage_during_twenty_saves_loses_nothing_and_backfills(admin_actor, gemini, worker):
    gemini.mode = "503"
    ids = [
        save_note(
            admin_actor, body=f"{SERIES_B} Fact {i}.", source_urls=[f"https://acme.dev/{i}"]
        ).note.id
        for i in range(20)
    ]
    assert Note.objects.filter(id__in=ids).count() == 20
    assert set(statuses(ids)) == {"pending"}
    # Every save tried once inline, then the worker tried each queued task.
    wait_for(lambda: len(gemini.requests) >= 40, what="the worker's first attempts")
    assert set(statuses(ids)) == {"pending"}

    gemini.mode = "ok"
    tasks.backfill_embeddings.delay()
    wait_for(lambda: set(statuses(ids)) == {"ready"}, what="backfill")

    again = save_note(
        admin_actor, body=f"{SERIES_B} Fact 3.", source_urls=["https://news.example/"]
    )
    assert again.overlap.skipped == 0
    assert str(ids[3]) in [d["id"] for d in overlap_of(again)["near_duplicates"]]


def test_retryable_failure_is_retried_until_it_succeeds(admin_actor, gemini, worker):
    gemini.mode = "429"
    note_id = save_note(admin_actor).note.id
    wait_for(lambda: len(gemini.requests) >= 2, what="a first worker attempt")
    gemini.mode = "ok"
    wait_for(lambda: statuses([note_id]) == ["ready"], what="the retry")


def test_permanent_failure_marks_the_note_failed(admin_actor, gemini, worker):
    gemini.mode = "400"
    note_id = save_note(admin_actor).note.id
    wait_for(lambda: statuses([note_id]) == ["failed"], what="the permanent failure")
    # Failed notes are not picked up again by the periodic backfill.
    gemini.mode = "ok"
    assert tasks.backfill_embeddings.apply().get() == 0


def test_model_change_reembeds_an_account(admin_actor, rival_actor, worker):
    save_note(admin_actor)
    save_note(rival_actor)
    Note.objects.update(embedding_model="an-old-model")
    tasks.reembed_account.delay(admin_actor.account.pk)
    wait_for(
        lambda: Note.objects.filter(
            account=admin_actor.account, embedding_model="kit-local-hash-v1"
        ).exists(),
        what="re-embedding",
    )
    # Only that account was touched.
    assert Note.objects.get(account=rival_actor.account).embedding_model == "an-old-model"


def test_beat_schedules_the_backfill():
    schedule = app.conf.beat_schedule
    assert any(e["task"] == "prospect_memory.tasks.backfill_embeddings" for e in schedule.values())
