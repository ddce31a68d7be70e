"""Business memory entries in the shared embedding pipeline."""

from __future__ import annotations

from prospect_memory.business.models import Entry, Layer
from prospect_memory.business.rules import embedding_input
from prospect_memory.core import embedding_pipeline

ENTRIES = embedding_pipeline.EmbeddingTarget(
    model=Entry,
    text=lambda entry: embedding_input(entry.key, entry.category, entry.value),
    backlog=lambda: Entry.objects.filter(status=Entry.Status.LIVE).order_by("created_at"),
    task="prospect_memory.business.tasks.embed_entry",
    revision="version",
    written_at="updated_at",
    shared=lambda rows: rows.filter(layer=Layer.ACCOUNT),
)


def account_reembed(*, account_id: int) -> int:
    """Re-embed an account's entries (every layer) with the current model."""
    rows = Entry.objects.filter(account_id=account_id)
    embedding_pipeline.mark_for_reembedding(rows)
    return embedding_pipeline.embed_rows(
        ENTRIES, rows.exclude(embedding_status=embedding_pipeline.READY)
    )
