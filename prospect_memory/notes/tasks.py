"""Celery tasks: thin, id-based, idempotent. The work lives in the embedding pipeline.

Their names are pinned to where they were first declared (``prospect_memory.tasks``): a
task queued by an earlier release still finds its function.
"""

from __future__ import annotations

from celery import shared_task

from prospect_memory.core import embedding_pipeline
from prospect_memory.notes.embeddings import (
    NOTES,
    account_mark_for_reembedding,
    dossier_reembed,
)


@shared_task(name="prospect_memory.tasks.embed_note", **embedding_pipeline.EMBEDDING_TASK_OPTIONS)
def embed_note(self, note_id: str) -> str:
    """Embed one note; skip if it is gone or already embedded for its content and model."""
    return embedding_pipeline.embed_one(NOTES, note_id)


@shared_task(
    name="prospect_memory.tasks.backfill_embeddings", **embedding_pipeline.EMBEDDING_TASK_OPTIONS
)
def backfill_embeddings(self, limit: int = 1000) -> int:
    """Embed active notes that are pending or were embedded by another model."""
    return embedding_pipeline.backfill(NOTES, limit=limit)


@shared_task(
    name="prospect_memory.tasks.reembed_dossier", **embedding_pipeline.EMBEDDING_TASK_OPTIONS
)
def reembed_dossier(self, dossier_id: int) -> int:
    """Re-embed one dossier's notes with the current model (after a model change)."""
    return dossier_reembed(dossier_id=dossier_id)


@shared_task(
    name="prospect_memory.tasks.reembed_account", **embedding_pipeline.EMBEDDING_TASK_OPTIONS
)
def reembed_account(self, account_id: int) -> int:
    """Re-embed every note of one account with the current model, dossier by dossier."""
    dossier_ids = account_mark_for_reembedding(account_id=account_id)
    for dossier_id in dossier_ids:
        reembed_dossier.delay(dossier_id)
    return len(dossier_ids)
