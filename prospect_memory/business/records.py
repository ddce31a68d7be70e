"""Business memory's result types: what its services and selectors return, its payloads
read, and the pages show. At the bottom of the package (they import nothing of it), so no
import circle exists, not even one only type checking sees."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.utils import timezone

from outreach.characters import cut
from prospect_memory.business.models import Entry
from prospect_memory.core.integrity import Flag, readable, readable_json


@dataclass(frozen=True)
class Source:
    """Where an entry came from, as the caller said (Kit adds who, through what, when)."""

    pipeline_id: str = ""
    execution_id: str = ""
    step_id: str = ""
    extracted_at: datetime | None = None


#: Characters of a value a list shows.
PREVIEW_CHARS = 80


def shown_source(source: Source) -> Source:
    """A source as readers receive it (see :func:`_shown`)."""
    ids = (source.pipeline_id, source.execution_id, source.step_id)
    shown = tuple(readable(text) if text else text for text in ids)
    return source if shown == ids else Source(*shown, source.extracted_at)


def _shown(view) -> None:
    """Every interface shows an entry's text as readers receive it (SPEC 15, issue 37):
    its value is, as decrypted (``crypto.unseal``), but for a character JSON escaped
    (``\\u202e``), looked at decoded; its source and labels too."""
    if "\\u" in view.value_json:
        view.value_json = readable_json(view.value_json)
    view.source = shown_source(view.source)
    view.written_by = readable(view.written_by) if view.written_by else view.written_by
    view.oauth_client = readable(view.oauth_client) if view.oauth_client else view.oauth_client


def client_name(entry: Entry) -> str | None:
    if not entry.oauth_application_id:
        return None
    if hasattr(entry, "client_name"):  # read with the row (``shown``)
        return entry.client_name
    return entry.oauth_application.name


def source_of(row) -> Source:
    """The source an entry or a kept version was written with."""
    return Source(
        pipeline_id=row.source_pipeline_id,
        execution_id=row.source_execution_id,
        step_id=row.source_step_id,
        extracted_at=row.source_extracted_at,
    )


@dataclass
class EntryView:
    """An entry as every interface shows it: decrypted, with its provenance. The value is
    decoded from its stored JSON when first asked for (a page that lists entries shows a
    preview of the text and never pays for decoding a large value)."""

    id: str
    key: str
    layer: str
    value_json: str
    category: str
    confidence: int
    source: Source
    version: int
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    access_count: int
    last_accessed_at: datetime | None
    written_by: str
    oauth_client: str | None
    alias_of: str | None = None
    status: str = Entry.Status.LIVE
    retired_at: datetime | None = None
    #: The last write by a member or an agent (consolidation's versions are not one).
    written_at: datetime | None = None
    #: What the integrity check found in the current version (none: clean, or cleared).
    flags: list[Flag] = field(default_factory=list)
    flagged_at: datetime | None = None

    def __post_init__(self) -> None:
        _shown(self)

    @cached_property
    def value(self):
        return json.loads(self.value_json)

    @property
    def preview(self) -> str:
        """The start of the value's compact JSON, for a list."""
        text = self.value_json
        return cut(text, PREVIEW_CHARS)

    @classmethod
    def of(cls, entry: Entry) -> EntryView:
        return cls(
            id=str(entry.pk),
            key=entry.key,
            layer=str(entry.layer),
            value_json=entry.value_json,
            category=str(entry.category),
            confidence=entry.confidence,
            source=source_of(entry),
            version=entry.version,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            expires_at=entry.expires_at,
            access_count=entry.access_count,
            last_accessed_at=entry.last_accessed_at,
            written_by=entry.written_by_label,
            oauth_client=client_name(entry),
            status=str(entry.status),
            retired_at=entry.retired_at,
            written_at=entry.written_at,
            flags=entry.flags,
            flagged_at=entry.flagged_at,
        )


@dataclass
class VersionView:
    version: int
    value_json: str
    category: str
    confidence: int
    source: Source
    strategy: str
    written_by: str
    oauth_client: str | None
    written_at: datetime
    flags: list[Flag] = field(default_factory=list)

    def __post_init__(self) -> None:
        _shown(self)

    @cached_property
    def value(self):
        return json.loads(self.value_json)


@dataclass
class Recall:
    found: bool
    entry: EntryView | None = None
    history: list[VersionView] | None = None


@dataclass
class Page:
    entries: list[EntryView]
    next_cursor: str | None


@dataclass
class SearchResult:
    entry: EntryView
    #: Cosine distance to the query; None for an entry matched on its key only.
    distance: float | None


@dataclass
class Search:
    results: list[SearchResult] = field(default_factory=list)
    #: Entries not compared by meaning (embedding pending, failed, another model's, or the
    #: provider unreachable): they were matched on their key instead.
    not_compared: int = 0
    problem: str = ""


@dataclass(frozen=True)
class NearEntries:
    #: Promoted entries with their cosine distance to the vector, nearest first.
    found: list[tuple[EntryView, float]]
    #: Promoted entries that could not be compared (no vector of this model yet).
    not_compared: int


def evicted_summary(entries: list[Entry]) -> list[dict]:
    return [{"key": e.key, "confidence": e.confidence} for e in entries]


@dataclass
class StoreResult:
    entry: EntryView
    created: bool
    previous_version: int
    evicted: list[dict] = field(default_factory=list)

    @classmethod
    def back(cls, entry: Entry, previous: int, evicted: list[Entry]) -> StoreResult:
        """An entry brought back (a restore, an undone merge) and what made room for it."""
        return cls(
            entry=EntryView.of(entry),
            created=False,
            previous_version=previous,
            evicted=evicted_summary(evicted),
        )


@dataclass
class DeleteResult:
    key: str
    layer: str
    version: int


@dataclass
class Report:
    """What a run did (or, dry, would do) in one account."""

    account: str
    dry_run: bool
    purged: int = 0
    #: Of ``purged``, the account layer's.
    purged_shared: int = 0
    #: (key, layer, confidence before, after)
    demoted: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: (alias key, kept key, layer, distance)
    merged: list[tuple[str, str, str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class PromotionLag:
    #: Entries that qualify but are not yet in the index at their current version.
    waiting: int
    #: Promotions of entries that no longer qualify (knowledge search already skips them).
    leaving: int
    #: When the longest-waiting of them was written (None: nothing waits).
    oldest_write: datetime | None

    @property
    def seconds(self) -> float:
        if self.oldest_write is None:
            return 0.0
        return max((timezone.now() - self.oldest_write).total_seconds(), 0.0)
