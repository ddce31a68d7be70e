"""Prospect memory's operator commands."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from prospect_memory.core.crypto import Keyring
from prospect_memory.notes.models import Note
from prospect_memory.notes.selectors import dossier_recall

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_seed_demo_research_shows_every_case():
    run("seed_demo", "--allow-insecure-demo")
    out = run("seed_demo_research")
    assert "Saved 14 demo notes" in out
    from outreach.access import Actor
    from outreach.models import Member

    owner = Member.objects.get(account__slug="demo", user__username="demo@kit.test")
    actor = Actor.for_member(owner)
    acme = dossier_recall(actor=actor, domain="acme.dev")
    assert acme.note_count == 4
    assert [n["stale"] for n in acme.note_payloads] == [False, False, False, True]
    assert dossier_recall(actor=actor, domain="initech.com").should_stop is True
    assert dossier_recall(actor=actor, domain="globex.io").compaction_suggested is True
    assert dossier_recall(actor=actor, domain="vandelay.es").should_stop is True  # suppressed
    assert "already present" in run("seed_demo_research")
    assert Note.objects.count() == 14


def test_seed_demo_research_needs_the_demo_account():
    with pytest.raises(CommandError, match="seed_demo"):
        run("seed_demo_research")


def test_generate_encryption_key_prints_a_usable_key():
    key = run("generate_encryption_key").strip()
    Keyring.from_strings([key])


def test_backfill_embeddings_command(admin_actor):
    from tests.factories import save_note

    note = save_note(admin_actor).note
    Note.objects.filter(id=note.id).update(
        embedding=None, embedding_status="pending", embedding_model=""
    )
    assert "Notes: 1 embedded by kit-local-hash-v1, 0 wait." in run("backfill_embeddings")
    assert Note.objects.get(id=note.id).embedding_status == "ready"


def test_backfill_embeddings_goes_on_until_nothing_waits(admin_actor):
    """An upgrade's re-embedding, run by hand: a batch at a time, each kept, with how many
    rows still wait after each."""
    from tests.factories import save_note

    for n in range(5):
        save_note(admin_actor, body=f"Acme finding number {n}.")
    Note.objects.update(embedding=None, embedding_status="pending", embedding_model="")
    out = run("backfill_embeddings", "--limit", "2", "--all")
    assert "Notes: 2 embedded by kit-local-hash-v1, 3 wait." in out
    assert "Notes: 4 embedded by kit-local-hash-v1, 1 wait." in out
    assert "Notes: 5 embedded by kit-local-hash-v1, 0 wait." in out
    assert not Note.objects.exclude(embedding_status="ready").exists()
    with pytest.raises(CommandError, match="at least 1"):
        run("backfill_embeddings", "--limit", "0")
