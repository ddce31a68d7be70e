"""Business memory entries in the shared embedding pipeline."""

from __future__ import annotations

from prospect_memory.business.models import Entry
from prospect_memory.business.rules import embedding_input
from prospect_memory.core import pipeline

ENTRIES = pipeline.EmbeddingTarget(
    model=Entry,
    text=lambda entry: embedding_input(entry.key, entry.category, entry.value),
    backlog=lambda: Entry.objects.filter(status=Entry.Status.LIVE).order_by("created_at"),
    task="prospect_memory.business.tasks.embed_entry",
)
