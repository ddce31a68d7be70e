"""The steps every write on a domain shares."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import date

from django.utils import timezone

import pgstatements as sql
from outreach.access import Actor
from pgstatements import run
from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings.budget import Embedded
from prospect_memory.core.integrity import Flag
from prospect_memory.core.models import delete_in_account
from prospect_memory.notes.embeddings import NOTES
from prospect_memory.notes.models import Compaction, Dossier, Note
from prospect_memory.notes.records import NoteView
from prospect_memory.notes.selectors import note_view


def lock_dossier(actor: Actor, domain: str, *, create: bool) -> Dossier | None:
    """Lock (creating it if asked) the dossier row of ``domain`` in the actor's account."""
    if create:
        return sql.locked_row(Dossier, sql.run_one(*lock_dossier_statement(actor, domain)))
    return Dossier.objects.select_for_update().filter(account=actor.account, domain=domain).first()


def lock_dossier_statement(actor: Actor, domain: str) -> tuple[str, list]:
    """The statement of :func:`lock_dossier` that makes the dossier if it is new, to send
    with others (its row read by ``pgstatements.locked_row(Dossier, rows)``)."""
    now = timezone.now()
    return sql.lock_statement(
        Dossier,
        key={"account": actor.account.pk, "domain": domain},
        constraint="dossier_unique_domain",
        defaults={"active_note_count": 0, "created_at": now, "updated_at": now},
    )


def set_count(dossier: Dossier, count: int) -> None:
    dossier.active_note_count = count
    run(sql.update(dossier, ["active_note_count", "updated_at"], matching=["account"]))


def new_note(actor: Actor, dossier: Dossier, **fields) -> Note:
    """Insert an active note (``fields`` as :func:`build_note` takes them); its embedding is
    queued when the provider gave none in time."""
    note = build_note(actor, dossier, **fields)
    note.save(force_insert=True)
    queue_embedding(note)
    return note


def build_note(
    actor: Actor,
    dossier: Dossier,
    *,
    title: str,
    body: str,
    source_urls: list[str],
    observed_at: date,
    embedded: Embedded,
    flags: list[Flag],
) -> Note:
    """An active note, not yet written, with what the integrity check found in it
    (``flags``, found by the caller before it took its locks; SPEC 15)."""
    note = Note(
        id=uuid.uuid4(),
        account=actor.account,
        dossier=dossier,
        source_urls=source_urls,
        observed_at=observed_at,
        created_at=timezone.now(),
        member=actor.member,
        oauth_application=actor.oauth_application,
        embedding_model=embedded.model if embedded.vector is not None else "",
        embedding=embedded.vector,
        embedding_status=(
            embedding_pipeline.READY if embedded.vector is not None else embedding_pipeline.PENDING
        ),
    )
    note.title = title
    note.body = body
    note.body_bytes = len(body.encode("utf-8"))
    note.set_flags(flags, now=note.created_at)
    if actor.oauth_application is None:
        note.integrity_reviewed_at = note.created_at  # a person's own text: their decision
    return note


def queue_embedding(note: Note) -> None:
    """Embed a written note in the background if the provider gave no vector in time."""
    if note.embedding is None:
        embedding_pipeline.enqueue(NOTES, note.id)


def written_note_view(note: Note, actor: Actor, domain: str) -> NoteView:
    """The view of a note the actor has just written (attribution from the actor, no query)."""
    note.member = actor.member
    note.oauth_application = actor.oauth_application
    return note_view(note, domain=domain)


def delete_notes(account_id: int, note_ids: Iterable[uuid.UUID]) -> int:
    """Delete these notes and, as their foreign key says, the archived notes each replaced,
    down every chain of merges; a compaction that names one as its merged note keeps its
    record, naming none. Every statement names the account; how many notes went."""
    gone = set(note_ids)
    replaced = set(gone)
    while replaced:
        rows = Note.objects.filter(account_id=account_id, superseded_by_id__in=replaced)
        replaced = set(rows.values_list("id", flat=True)) - gone
        gone |= replaced
    Compaction.objects.filter(account_id=account_id, merged_note_id__in=gone).update(
        merged_note=None
    )
    return delete_in_account(Note, account_id, id__in=gone)
