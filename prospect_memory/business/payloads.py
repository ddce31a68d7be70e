"""The answers of business memory's operations, shaped by ``business.schemas``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prospect_memory.core.integrity import integrity_data

if TYPE_CHECKING:
    from prospect_memory.business.records import (
        DeleteResult,
        EntryView,
        Page,
        Recall,
        Search,
        Source,
        StoreResult,
        VersionView,
    )


def _time(moment) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def source_data(source: Source, *, written_by: str, oauth_client: str | None) -> dict:
    """Where it came from: what the caller said, and what Kit recorded."""
    return {
        "pipeline_id": source.pipeline_id or None,
        "execution_id": source.execution_id or None,
        "step_id": source.step_id or None,
        "extracted_at": _time(source.extracted_at),
        "written_by": written_by or None,
        "oauth_client": oauth_client,
    }


def entry_data(view: EntryView) -> dict:
    data = {
        "key": view.key,
        "layer": view.layer,
        "value": view.value,
        "category": view.category,
        "confidence": view.confidence,
        "source": source_data(
            view.source, written_by=view.written_by, oauth_client=view.oauth_client
        ),
        "version": view.version,
        "created_at": _time(view.created_at),
        "updated_at": _time(view.updated_at),
        "expires_at": _time(view.expires_at),
        "access_count": view.access_count,
        "last_accessed_at": _time(view.last_accessed_at),
    }
    if view.alias_of:
        data["alias_of"] = view.alias_of
    if view.flags:
        data["integrity"] = integrity_data(view.flags)
    return data


def version_data(view: VersionView) -> dict:
    data = {
        "version": view.version,
        "value": view.value,
        "category": view.category,
        "confidence": view.confidence,
        "source": source_data(
            view.source, written_by=view.written_by, oauth_client=view.oauth_client
        ),
        "strategy": view.strategy,
        "written_at": _time(view.written_at),
    }
    if view.flags:
        data["integrity"] = integrity_data(view.flags)
    return data


def store_data(result: StoreResult) -> dict:
    return {
        "entry": entry_data(result.entry),
        "created": result.created,
        "previous_version": result.previous_version,
        "evicted": list(result.evicted),
    }


def recall_data(recall: Recall) -> dict:
    data: dict = {"found": recall.found}
    if recall.entry is not None:
        data["entry"] = entry_data(recall.entry)
    if recall.history is not None:
        data["history"] = [version_data(v) for v in recall.history]
    return data


def page_data(page: Page) -> dict:
    return {"entries": [entry_data(v) for v in page.entries], "next_cursor": page.next_cursor}


def search_data(search: Search) -> dict:
    data = {
        "results": [
            {
                **entry_data(r.entry),
                "distance": round(r.distance, 4) if r.distance is not None else None,
            }
            for r in search.results
        ],
        "not_compared": search.not_compared,
    }
    if search.problem:
        data["note"] = f"Entries were matched on their keys only because {search.problem}."
    return data


def history_data(entry: EntryView, versions: list[VersionView]) -> dict:
    return {"entry": entry_data(entry), "history": [version_data(v) for v in versions]}


def delete_data(result: DeleteResult) -> dict:
    return {"deleted": True, "key": result.key, "layer": result.layer, "version": result.version}


def evictions_data(entries: list[EntryView]) -> dict:
    return {
        "evictions": [
            {
                "id": view.id,
                # A live entry whose expiry passed has left the memory all the same.
                "status": "expired" if view.status == "live" else view.status,
                "left_at": _time(view.retired_at or view.expires_at),
                **entry_data(view),
            }
            for view in entries
        ]
    }
