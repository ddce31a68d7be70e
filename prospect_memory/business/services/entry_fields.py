"""The fields a write sets on an entry: its sealed value and embedding, its source, who wrote
it; and the refusal a write gets when the entry moved past the version it expected."""

from __future__ import annotations

from datetime import datetime

from outreach.access import Actor
from prospect_memory.business.errors import (
    VersionMismatch,
)
from prospect_memory.business.models import (
    Entry,
)
from prospect_memory.business.records import Source
from prospect_memory.business.rules import embedding_input
from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings.budget import Embedded


def mark_written(entry: Entry, actor: Actor, now: datetime) -> None:
    """Record who wrote the entry's new version, and that it was used."""
    entry.written_by = actor.member
    entry.written_by_label = actor.label
    entry.oauth_application = actor.oauth_application
    entry.updated_at = entry.used_at = entry.written_at = now
    entry.idle_periods_charged = 0
    entry.kept_apart = False


def set_value(entry: Entry, text: str, embedding_text: str, was: str, embedded: Embedded) -> None:
    """Seal the value; the embedding is the pre-lock vector if it was made of this very
    text, the entry's own if its text (``was``) did not change, else pending."""
    entry.value_json = text
    entry.value_bytes = len(text.encode("utf-8"))
    if embedded.vector is not None and embedded.text == embedding_text:
        entry.embedding, entry.embedding_model = embedded.vector, embedded.model
        entry.embedding_status = embedding_pipeline.READY
    elif was != embedding_text or entry.embedding_status != embedding_pipeline.READY:
        entry.embedding, entry.embedding_model = None, ""
        entry.embedding_status = embedding_pipeline.PENDING


def embedding_text_of(entry: Entry | None) -> str:
    return embedding_input(entry.key, entry.category, entry.value) if entry else ""


def apply_source(entry: Entry, source: Source | None) -> None:
    source = source or Source()
    entry.source_pipeline_id = source.pipeline_id
    entry.source_execution_id = source.execution_id
    entry.source_step_id = source.step_id
    entry.source_extracted_at = source.extracted_at


def version_mismatch(key: str, layer: str, expected: int, found: int) -> VersionMismatch:
    now = "does not exist yet" if found == 0 else f"is at version {found}"
    return VersionMismatch(
        f"{layer} entry {key!r} {now}, not version {expected}: someone changed it since you "
        "read it. Nothing was stored. Recall it again, merge your change into what is there "
        f"and pass expected_version={found}.",
        details={"key": key, "layer": layer, "expected": expected, "current_version": found},
    )
