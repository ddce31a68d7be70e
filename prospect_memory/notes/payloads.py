"""The answers of prospect memory's operations: the ``data`` of every tool and endpoint.

One builder per answer, with the English an agent reads in it, shaped by the JSON Schemas
in ``prospect_memory.notes.schemas``. Builders take what services and selectors return and never
query.
"""

from __future__ import annotations

from prospect_memory.core.integrity import integrity_data
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
    return moment.isoformat().replace("+00:00", "Z")


def note_data(view: NoteView) -> dict:
    data = {
        "id": view.id,
        "title": view.title,
        "body": view.body,
        "source_urls": view.source_urls,
        "observed_at": view.observed_at.isoformat(),
        "stale": view.stale,
        "age_days": view.age_days,
        "created_at": _time(view.created_at),
        "attribution": {"member": view.member, "oauth_client": view.oauth_client},
    }
    if view.flags:
        data["integrity"] = integrity_data(view.flags)
    return data


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
        "notes": [dict(payload) for payload in recall.note_payloads],
        "overlap_pairs": [
            {"note_ids": list(pair.note_ids), "distance": round(pair.distance, 4)}
            for pair in recall.overlap_pairs
        ],
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
