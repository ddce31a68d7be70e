"""The notes' result types: what services and selectors return and payloads read.

At the bottom of the package (they import nothing of it), so payloads, selectors and
services each import them without an import circle, not even one only type checking sees.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime

from outreach.characters import readable_name
from outreach.selectors import Relationship
from prospect_memory.core.integrity import Flag


@dataclass(frozen=True)
class NoteInput:
    title: str
    body: str
    source_urls: list[str]
    observed_at: date


@dataclass(frozen=True)
class StopReason:
    code: str
    message: str


@dataclass(frozen=True)
class NoteView:
    """A note as every interface shows it: decrypted, with freshness and attribution."""

    #: The note's UUID as text (recall reads it as text; it is only ever shown or sent).
    id: str
    domain: str
    title: str
    body: str
    source_urls: list[str]
    observed_at: date
    created_at: datetime
    stale: bool
    age_days: int
    member: str | None
    oauth_client: str | None
    #: What the integrity check found when it was written (none: clean, or cleared).
    flags: list[Flag] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Every interface shows text as readers receive it (SPEC 15, issue 37): the title
        # and body are, as decrypted (``crypto.unseal``); the labels beside them too, as
        # the recall's answer reads them (``readable_name``: a name looked at once).
        for name in ("member", "oauth_client"):
            text = getattr(self, name)
            if text:
                object.__setattr__(self, name, readable_name(text))


@dataclass(frozen=True)
class NearNotes:
    #: Notes with their cosine distance to the vector, nearest first.
    found: list[tuple[NoteView, float]]
    #: Active notes that could not be compared (no vector of this model yet).
    not_compared: int


@dataclass(frozen=True)
class NotesPage:
    count: int
    page: int
    page_size: int
    notes: list[NoteView]

    @property
    def pages(self) -> int:
        return max(-(-self.count // self.page_size), 1)


@dataclass
class Recall:
    """A recall, its notes and pairs in the answer's form already: built once from the
    rows (the payload cap measures them), with no view of each note between."""

    domain: str
    #: Each note as the answer gives it (``payloads.note_answer``), newest first.
    note_payloads: list[dict]
    note_count: int
    #: ``{"note_ids": [a, b], "distance": d}``, nearest first.
    overlap_pairs: list[dict]
    relationship: Relationship
    newest_observed_at: date | None = None
    truncated: bool = False
    omitted_note_ids: list[str] = field(default_factory=list)
    ranking: str = "recency"
    stop_reasons: list[StopReason] = field(default_factory=list)
    #: The dossier's newest note is stale, or there is none (``rules.dossier_stale``).
    stale: bool = True
    compaction_suggested: bool = False

    @property
    def known(self) -> bool:
        return self.note_count > 0

    @property
    def should_stop(self) -> bool:
        return bool(self.stop_reasons)


@dataclass
class Overlap:
    near_duplicates: list[dict] = field(default_factory=list)
    overlaps: list[dict] = field(default_factory=list)
    shared_sources: list[dict] = field(default_factory=list)
    compared: int = 0
    skipped: int = 0
    #: Why the semantic check was partial, in words an agent can act on.
    problem: str = ""


@dataclass
class SaveResult:
    note: NoteView
    note_count: int
    overlap: Overlap
    embedding_status: str
    compaction_suggested: bool


@dataclass
class DeleteResult:
    note_id: uuid.UUID
    domain: str
    also_deleted_note_ids: list[uuid.UUID]
    note_count: int


@dataclass
class CompactResult:
    compaction_id: uuid.UUID
    note: NoteView
    superseded_note_ids: list[uuid.UUID]
    note_count: int
    compaction_suggested: bool


@dataclass
class RestoreResult:
    compaction_id: uuid.UUID
    domain: str
    restored_note_ids: list[uuid.UUID]
    removed_note_id: uuid.UUID
    note_count: int
