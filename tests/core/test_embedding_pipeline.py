"""A change of embedding model (SPEC 14): vectors of the old model are never compared with
the new one's, the backfill re-embeds in the background, and the memory health page shows
the model in force and how far it has come, for the account it is about only."""

import pytest
from django.core.management import call_command
from django.test import Client

from prospect_memory.business.services.store import entry_store
from prospect_memory.notes.models import Note
from tests.factories import save_note

pytestmark = pytest.mark.django_db


def health(member) -> str:
    browser = Client()
    browser.force_login(member.user)
    page = browser.get("/health/")
    assert page.status_code == 200
    return page.content.decode()


def test_the_new_model_takes_over_in_the_background(
    module_admin, admin_actor, member_actor, rival_actor, settings
):
    save_note(admin_actor, body="Acme raised a Series B of 40M.")
    save_note(admin_actor, body="Acme is hiring account executives in Berlin.")
    entry_store(actor=admin_actor, key="icp_definition", value={"industry": ["SaaS"]})
    # Neither another account's rows nor a member's own context are counted here.
    save_note(rival_actor, body="Another account's note.")
    entry_store(actor=member_actor, key="my_tone", value="warm", layer="member")
    entry_store(actor=rival_actor, key="icp_definition", value={"industry": ["Retail"]})
    page = health(module_admin)
    assert "kit-local-hash-v1" in page
    assert "2 of 2" in page
    assert "1 of 1" in page

    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {},
    }
    page = health(module_admin)
    assert "multilingual-e5-small-q4" in page
    assert "calibrate_embeddings on 600 pairs" in page
    assert "0 of 2" in page
    assert "0 of 1" in page
    assert "2 of the notes wait for multilingual-e5-small-q4" in page

    call_command("backfill_embeddings", verbosity=0)
    page = health(module_admin)
    assert "2 of 2" in page
    assert "1 of 1" in page
    assert "wait for" not in page
    assert set(Note.objects.values_list("embedding_model", flat=True)) == {
        "multilingual-e5-small-q4"
    }


def test_a_model_that_cannot_run_leaves_notes_pending_until_it_can(admin_actor, settings, tmp_path):
    """A missing model package (a worker installed without it) is the install's fault, not
    the note's: the note stays pending and the backfill embeds it once the model runs."""
    import json
    import shutil

    from prospect_memory.core import embedding_pipeline
    from prospect_memory.core.embeddings import ProviderUnavailable, local_model
    from prospect_memory.notes.embeddings import NOTES

    broken = tmp_path / "broken"
    shutil.copytree(local_model.DEFAULT_MODEL_DIR, broken)
    manifest = json.loads((broken / "manifest.json").read_text())
    manifest["model"]["package"] = "a_model_package_not_installed"
    (broken / "manifest.json").write_text(json.dumps(manifest))
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {"model_dir": str(broken)},
    }
    note = Note.objects.get(pk=save_note(admin_actor, body="Acme raised a Series B.").note.id)
    with pytest.raises(ProviderUnavailable, match="missing"):
        embedding_pipeline.embed_one(
            NOTES, note.pk
        )  # a worker's task: retried, never marked failed
    note.refresh_from_db()
    assert note.embedding_status == "pending"

    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "EMBEDDING_OPTIONS": {}}
    call_command("backfill_embeddings", verbosity=0)
    note.refresh_from_db()
    assert (note.embedding_status, note.embedding_model) == ("ready", "multilingual-e5-small-q4")


def test_a_row_one_model_failed_is_tried_again_by_the_next(admin_actor, settings):
    from prospect_memory.core import embedding_pipeline
    from prospect_memory.notes.embeddings import NOTES

    note = Note.objects.get(pk=save_note(admin_actor, body="Acme raised a Series B.").note.id)
    Note.objects.filter(pk=note.pk).update(embedding_status="failed")
    assert embedding_pipeline.backfill(NOTES) == 0  # failed by this model: left alone
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {},
    }
    assert embedding_pipeline.backfill(NOTES) == 1
    note.refresh_from_db()
    assert (note.embedding_status, note.embedding_model) == ("ready", "multilingual-e5-small-q4")


def test_an_account_between_the_english_model_and_the_multilingual_one(
    admin_actor, rival_actor, settings
):
    """An install upgraded from the English model: until the backfill reaches a note, a new
    note is not compared with it (the save says how many it skipped), knowledge search
    counts it as not compared, and nothing fails; then the same finding in German is found
    in the English note. Another account's notes are never counted."""
    from prospect_memory.knowledge.selectors import knowledge_search

    def use(model: str) -> None:
        settings.PROSPECT_MEMORY = {
            **settings.PROSPECT_MEMORY,
            "EMBEDDING_PROVIDER": "semantic",
            # The model at its own pace: a busy machine is not what these test.
            "EMBED_TIME_BUDGET_SECONDS": 60.0,
            "EMBEDDING_OPTIONS": {"model": model},
        }

    use("all-minilm-l6-v2")
    english = save_note(
        admin_actor,
        title="Hiring AEs",
        body="Nordlicht Software is hiring eight account executives in Munich.",
    ).note
    save_note(rival_actor, body="Another account's note about Nordlicht Software.")
    assert Note.objects.get(pk=english.id).embedding_model == "all-MiniLM-L6-v2-int8"

    use("multilingual-e5-small")
    german = "Nordlicht Software sucht in München acht Account Executives."
    before = save_note(admin_actor, title="Vertrieb", body=german).overlap
    assert (before.skipped, before.near_duplicates, before.overlaps) == (1, [], [])
    found = knowledge_search(actor=admin_actor, query="Wer stellt Vertriebler ein?")
    assert found.not_compared == 1  # the English note; the German one is compared

    call_command("backfill_embeddings", verbosity=0)
    assert Note.objects.get(pk=english.id).embedding_model == "multilingual-e5-small-q4"
    again = save_note(admin_actor, title="Vertrieb", body=german).overlap
    assert again.skipped == 0
    assert str(english.id) in {str(n["id"]) for n in again.near_duplicates + again.overlaps}
