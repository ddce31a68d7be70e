"""Celery tasks of business memory: thin, id-based, idempotent."""

from __future__ import annotations

import logging

from celery import shared_task

from prospect_memory.business.embeddings import ENTRIES, account_reembed
from prospect_memory.business.services.consolidate import accounts_to_consolidate, consolidate
from prospect_memory.business.services.promotion import promote, promotions_backfill
from prospect_memory.core import embedding_pipeline

logger = logging.getLogger(__name__)


@shared_task(**embedding_pipeline.EMBEDDING_TASK_OPTIONS)
def embed_entry(self, entry_id: str) -> str:
    """Embed one entry; skip if it is gone or already embedded for its text and model."""
    return embedding_pipeline.embed_one(ENTRIES, entry_id)


@shared_task(**embedding_pipeline.EMBEDDING_TASK_OPTIONS)
def backfill_entry_embeddings(self, limit: int = 1000) -> int:
    """Embed live entries that are pending or were embedded by another model."""
    return embedding_pipeline.backfill(ENTRIES, limit=limit)


@shared_task(**embedding_pipeline.EMBEDDING_TASK_OPTIONS)
def reembed_account_entries(self, account_id: int) -> int:
    """Re-embed every entry of one account with the current model (after a model change)."""
    return account_reembed(account_id=account_id)


@shared_task(acks_late=True)
def promote_entries(entry_ids: list[str]) -> dict[str, int]:
    """Bring these entries up to date in their account's knowledge index."""
    return promote(entry_ids)


@shared_task
def backfill_promotions(limit: int = 1000) -> dict[str, int]:
    """Promote what a lost task or a stopped worker missed; drop what no longer qualifies."""
    return promotions_backfill(limit=limit)


@shared_task
def consolidate_memory() -> dict[str, int]:
    """Consolidate every account's business memory (purge, demote, merge, report)."""
    totals = {"accounts": 0, "failed": 0, "purged": 0, "demoted": 0, "merged": 0}
    for account in accounts_to_consolidate():
        try:
            report = consolidate(account=account)
        except Exception:  # one account's failure must not stop the others
            logger.exception("consolidating account %s failed", account.slug)
            totals["failed"] += 1
            continue
        totals["accounts"] += 1
        totals["purged"] += report.purged
        totals["demoted"] += len(report.demoted)
        totals["merged"] += len(report.merged)
    return totals
