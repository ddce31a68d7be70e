"""The answers of prospect memory's operations: the ``data`` of every tool and endpoint.

One builder per answer, with the English an agent reads in it, shaped by the JSON Schemas
in ``prospect_memory.notes.schemas``. Builders take what services and selectors return and never
query.
"""

from __future__ import annotations

from copy import deepcopy
from datetime import date, datetime

from outreach.renderers import dumps
from prospect_memory.core.integrity import Flag, integrity_data
from prospect_memory.notes.records import (
    CompactResult,
    DeleteResult,
    NotesPage,
    NoteView,
    Overlap,
    Recall,
    RestoreResult,
    SaveResult,
)


def _time(moment) -> str:
    """A time as every answer writes it: ISO 8601 in UTC, with a ``Z``. A time without a
    zone is UTC already (recall reads its rows' times so: one ``isoformat`` the less)."""
    if moment.tzinfo is None:
        return moment.isoformat() + "Z"
    return moment.isoformat().replace("+00:00", "Z")


def note_data(view: NoteView) -> dict:
    return note_answer(
        view.id,
        view.title,
        view.body,
        view.source_urls,
        view.observed_at,
        view.stale,
        view.age_days,
        view.created_at,
        view.member,
        view.oauth_client,
        view.flags,
    )


def note_answer(
    note_id: str,
    title: str,
    body: str,
    source_urls: list[str],
    observed_at: date,
    stale: bool,
    age_days: int,
    created_at: datetime,
    member: str | None,
    oauth_client: str | None,
    flags: list[Flag],
) -> dict:
    """A note as every answer gives it: from a :class:`NoteView`, or from a row where a
    recall builds no view (its text and labels already as readers receive them)."""
    data = {
        "id": note_id,
        "title": title,
        "body": body,
        "source_urls": source_urls,
        "observed_at": observed_at.isoformat(),
        "stale": stale,
        "age_days": age_days,
        "created_at": _time(created_at),
        "attribution": {"member": member, "oauth_client": oauth_client},
    }
    if flags:
        data["integrity"] = integrity_data(flags)
    return data


def _refused(*_args, **_kwargs):
    raise TypeError("a kept note answer is shared and read-only: change a copy of it")


class ReadOnlyDict(dict):
    """A dict no one may change: a note answer a process keeps is handed to every recall
    that reads its row, as it is. JSON writes it as any dict, it equals a dict of the same
    items, and ``dict(it)``, ``it.copy()`` or ``copy.deepcopy(it)`` is a plain dict to change.
    (``dict.__setitem__(it, ...)`` and C code such as ``heapq`` on a list go around it:
    a guard against mistakes, not against code that means to.)"""

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refused
    clear = pop = popitem = setdefault = update = _refused

    def __init__(self, *args, **kwargs) -> None:
        if self:  # made once: never filled again in place
            _refused()
        super().__init__(*args, **kwargs)

    def __reduce__(self):
        return ReadOnlyDict, (dict(self),)  # pickled as what it holds, read-only again

    def copy(self) -> dict:
        return dict(self)

    __copy__ = copy

    def __deepcopy__(self, memo) -> dict:
        return {key: deepcopy(item, memo) for key, item in self.items()}


class ReadOnlyList(list):
    """A list no one may change (see :class:`ReadOnlyDict`); it equals a list of the same
    items."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refused
    append = extend = insert = pop = remove = clear = sort = reverse = _refused

    def __init__(self, *args) -> None:
        if self:
            _refused()
        super().__init__(*args)

    def __reduce__(self):
        return ReadOnlyList, (list(self),)

    def copy(self) -> list:
        return list(self)

    __copy__ = copy

    def __deepcopy__(self, memo) -> list:
        return [deepcopy(item, memo) for item in self]


def read_only(value):
    """``value`` (an answer: dicts, lists, and values JSON writes) with every dict and list
    in it made read-only."""
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList(read_only(item) for item in value)
    return value


def with_freshness(answer: ReadOnlyDict, *, stale: bool, age_days: int) -> ReadOnlyDict:
    """A read-only note answer as ``answer``, fresh as ``stale`` and ``age_days`` say (its
    keys in the same order; what it holds, read-only already, shared)."""
    fresh = dict(answer)
    fresh["stale"], fresh["age_days"] = stale, age_days
    return ReadOnlyDict(fresh)


def json_size(value) -> int:
    """How many bytes ``value`` takes in an answer's JSON."""
    return len(dumps(value))


def json_array_size(sizes: list[int]) -> int:
    """How many bytes a JSON array of values of ``sizes`` takes, as :func:`json_size`
    counts it (``[``, the values with a comma between each two, ``]``)."""
    return 2 + sum(sizes) + max(len(sizes) - 1, 0)


def _campaign(campaign) -> dict:
    return {
        "id": campaign.id,
        "name": campaign.name,
        "locale": campaign.locale,
        "status": campaign.status,
    }


def recall_data(recall: Recall) -> dict:
    relationship = recall.relationship
    last = relationship.last_reply
    return {
        "domain": recall.domain,
        "known": recall.known,
        "stale": recall.stale,
        "note_count": recall.note_count,
        "notes": recall.note_payloads,
        "overlap_pairs": recall.overlap_pairs,
        "compaction_suggested": recall.compaction_suggested,
        "truncated": recall.truncated,
        "omitted_note_ids": list(recall.omitted_note_ids),
        "ranking": recall.ranking,
        "should_stop": recall.should_stop,
        "stop_reasons": [{"code": r.code, "message": r.message} for r in recall.stop_reasons],
        "relationship": {
            "campaigns": [_campaign(c) for c in relationship.campaigns],
            "messages_sent": relationship.messages_sent,
            "last_reply": (
                {
                    "sentiment": last.sentiment,
                    "received_at": _time(last.received_at),
                    "campaign": _campaign(last.campaign),
                }
                if last
                else None
            ),
            "suppressed": relationship.suppressed,
            "suppression_matches": [
                {"kind": m.kind, "value": m.value} for m in relationship.suppression_matches
            ],
        },
    }


def overlap_data(overlap: Overlap) -> dict:
    complete = overlap.skipped == 0
    if complete:
        note = ""
    else:
        why = f" because {overlap.problem}" if overlap.problem else " (embeddings pending)"
        note = (
            f"{overlap.skipped} stored note(s) were not compared by meaning{why}; empty "
            "buckets are not proof that this finding is new."
        )
    return {
        "near_duplicates": overlap.near_duplicates,
        "overlaps": overlap.overlaps,
        "shared_sources": overlap.shared_sources,
        "compared": overlap.compared,
        "skipped": overlap.skipped,
        "semantic_check": "complete" if complete else "partial",
        "semantic_check_note": note,
    }


def save_data(result: SaveResult) -> dict:
    return {
        "note": note_data(result.note),
        "note_count": result.note_count,
        "compaction_suggested": result.compaction_suggested,
        "embedding_status": result.embedding_status,
        "overlap": overlap_data(result.overlap),
    }


def compact_data(result: CompactResult) -> dict:
    return {
        "compaction_id": str(result.compaction_id),
        "note": note_data(result.note),
        "superseded_note_ids": [str(i) for i in result.superseded_note_ids],
        "note_count": result.note_count,
        "compaction_suggested": result.compaction_suggested,
    }


def restore_data(result: RestoreResult) -> dict:
    return {
        "compaction_id": str(result.compaction_id),
        "domain": result.domain,
        "restored_note_ids": [str(i) for i in result.restored_note_ids],
        "removed_note_id": str(result.removed_note_id),
        "note_count": result.note_count,
    }


def delete_data(result: DeleteResult) -> dict:
    return {
        "deleted_note_id": str(result.note_id),
        "domain": result.domain,
        "also_deleted_note_ids": [str(i) for i in result.also_deleted_note_ids],
        "note_count": result.note_count,
    }


def notes_page_data(page: NotesPage) -> dict:
    return {
        "count": page.count,
        "page": page.page,
        "pages": page.pages,
        "page_size": page.page_size,
        "notes": [{**note_data(view), "domain": view.domain} for view in page.notes],
    }
