"""Celery tasks: thin, id-based, idempotent. The work lives in services and embeddings."""

from __future__ import annotations

import logging
import uuid

from celery import shared_task
from django.db import transaction

from prospect_memory.embeddings import RetryableEmbeddingError
from prospect_memory.services import (
    account_mark_for_reembedding,
    dossier_reembed,
    embeddings_backfill,
    note_embed,
)

logger = logging.getLogger(__name__)

_retrying = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (RetryableEmbeddingError,),
    "retry_backoff": 2,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 8,
    "soft_time_limit": 120,
    "time_limit": 150,
}


def enqueue_embed_note(note_id: uuid.UUID) -> None:
    """Queue the embedding of a note once the current transaction commits.

    Without a broker (the default set-up) tasks would run inline and make the request wait
    on the provider that has just failed it; the note stays pending for the next
    ``backfill_embeddings`` run instead.
    """
    from kit.celery import app

    if app.conf.task_always_eager:
        logger.info("no Celery broker: note %s stays pending until the next backfill", note_id)
        return
    transaction.on_commit(lambda: _send_embed(note_id))


def _send_embed(note_id: uuid.UUID) -> None:
    # The note is committed already; if the broker is unreachable the periodic backfill
    # embeds it later, so the save still succeeds.
    try:
        embed_note.apply_async(args=[str(note_id)], retry=False)
    except Exception:
        logger.warning("could not queue the embedding of note %s; backfill will", note_id)


@shared_task(**_retrying)
def embed_note(self, note_id: str) -> str:
    """Embed one note; skip if it is gone or already embedded for its content and model."""
    return note_embed(note_id=note_id)


@shared_task(**_retrying)
def backfill_embeddings(self, limit: int = 1000) -> int:
    """Embed active notes that are pending or were embedded by another model."""
    return embeddings_backfill(limit=limit)


@shared_task(**_retrying)
def reembed_dossier(self, dossier_id: int) -> int:
    """Re-embed one dossier's notes with the current model (after a model change)."""
    return dossier_reembed(dossier_id=dossier_id)


@shared_task(**_retrying)
def reembed_account(self, account_id: int) -> int:
    """Re-embed every note of one account with the current model, dossier by dossier."""
    dossier_ids = account_mark_for_reembedding(account_id=account_id)
    for dossier_id in dossier_ids:
        reembed_dossier.delay(dossier_id)
    return len(dossier_ids)
