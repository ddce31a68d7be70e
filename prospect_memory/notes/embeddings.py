"""Notes in the shared embedding pipeline: what a note's vector is made of, which notes a
backfill looks at, and re-embedding a dossier or an account after a model change."""

from __future__ import annotations

from prospect_memory.core import embedding_pipeline
from prospect_memory.notes.models import Dossier, Note
from prospect_memory.notes.rules import embedding_input

NOTES = embedding_pipeline.EmbeddingTarget(
    model=Note,
    text=lambda note: embedding_input(note.title, note.body),
    backlog=lambda: Note.objects.filter(status=Note.Status.ACTIVE).order_by("created_at"),
    task="prospect_memory.tasks.embed_note",
)


def dossier_reembed(*, dossier_id: int) -> int:
    """Re-embed one dossier's notes (archived ones too) with the current model."""
    dossier = Dossier.objects.filter(pk=dossier_id).first()
    if dossier is None:
        return 0
    rows = Note.objects.filter(account_id=dossier.account_id, dossier=dossier)
    embedding_pipeline.mark_for_reembedding(rows)
    return embedding_pipeline.embed_rows(
        NOTES, rows.exclude(embedding_status=embedding_pipeline.READY)
    )


def account_mark_for_reembedding(*, account_id: int) -> list[int]:
    """Mark an account's notes of another model pending; returns its dossier ids."""
    embedding_pipeline.mark_for_reembedding(Note.objects.filter(account_id=account_id))
    return list(Dossier.objects.filter(account_id=account_id).values_list("pk", flat=True))
