"""The answer of knowledge search, shaped by ``knowledge.schemas``."""

from __future__ import annotations

from outreach.renderers import dumps
from prospect_memory.business.payloads import source_data
from prospect_memory.core.integrity import integrity_data
from prospect_memory.knowledge.records import Hit, KnowledgeSearch


def size_of(data) -> int:
    """Bytes of ``data`` as the compact JSON of an answer."""
    return len(dumps(data))


def hit_data(hit: Hit) -> dict:
    data: dict = {"kind": hit.kind}
    if hit.note is not None:
        note = hit.note
        data["id"] = note.id
        data.update(title=hit.title, excerpt=hit.excerpt, distance=round(hit.distance, 4))
        data["observed_at"] = note.observed_at.isoformat()
        data["stale"] = hit.stale
        data["derived_from"] = {
            "source_urls": note.source_urls,
            "written_by": note.member,
            "oauth_client": note.oauth_client,
        }
        about = hit.about
        data["about"] = {
            "domain": note.domain,
            "should_stop": about.should_stop if about else False,
            "stop_reasons": (
                [{"code": r.code, "message": r.message} for r in about.stop_reasons]
                if about
                else []
            ),
        }
        if note.flags:
            data["integrity"] = integrity_data(note.flags)
        return data
    entry = hit.entry
    data["key"] = entry.key
    data.update(category=entry.category, confidence=entry.confidence, layer=entry.layer)
    data.update(title=hit.title, excerpt=hit.excerpt, distance=round(hit.distance, 4))
    data["updated_at"] = entry.updated_at.isoformat().replace("+00:00", "Z")
    data["stale"] = hit.stale
    data["derived_from"] = source_data(
        entry.source, written_by=entry.written_by, oauth_client=entry.oauth_client
    )
    data["about"] = None  # business memory is about the account, not one company
    if entry.flags:  # (never: flagged entries are held from the index; said for symmetry)
        data["integrity"] = integrity_data(entry.flags)
    return data


def search_data(search: KnowledgeSearch) -> dict:
    data = {
        "hits": [hit_data(h) for h in search.hits],
        "not_compared": search.not_compared,
        "truncated": search.truncated,
    }
    if search.problem:
        data["note"] = f"Nothing was compared by meaning because {search.problem}."
    return data
