"""JSON Schemas of prospect memory's operations: MCP input/output schemas and the REST docs.

One source for both interfaces, so MCP and REST cannot drift apart. Limits named in the
descriptions come from the settings.
"""

from __future__ import annotations

from outreach.schema import (
    BOOLEAN,
    DATE,
    DATETIME,
    INTEGER,
    NULLABLE_STRING,
    STRING,
    UUID,
    closed_object,
)
from prospect_memory.core.integrity import with_integrity
from prospect_memory.notes.conf import notes_settings

_BODY_KB = notes_settings.BODY_MAX_BYTES // 1024

_URLS = {"type": "array", "items": STRING}


DOMAIN_INPUT = {
    "type": "string",
    "minLength": 1,
    "maxLength": 2048,
    "description": "The company: an email address, a website URL or a domain "
    "(founder@acme.dev, https://www.acme.dev/careers and acme.dev are the same company).",
}


NOTE = with_integrity(
    closed_object(
        {
            "id": UUID,
            "title": STRING,
            "body": STRING,
            "source_urls": _URLS,
            "observed_at": DATE,
            "stale": BOOLEAN,
            "age_days": INTEGER,
            "created_at": DATETIME,
            "attribution": closed_object(
                {"member": NULLABLE_STRING, "oauth_client": NULLABLE_STRING}
            ),
        }
    )
)

CAMPAIGN = closed_object({"id": INTEGER, "name": STRING, "locale": STRING, "status": STRING})

RECALL = closed_object(
    {
        "domain": STRING,
        "known": BOOLEAN,
        "stale": BOOLEAN,
        "note_count": INTEGER,
        "notes": {"type": "array", "items": NOTE},
        "overlap_pairs": {
            "type": "array",
            "items": closed_object(
                {
                    "note_ids": {"type": "array", "items": UUID, "minItems": 2, "maxItems": 2},
                    "distance": {"type": "number"},
                }
            ),
        },
        "compaction_suggested": BOOLEAN,
        "truncated": BOOLEAN,
        "omitted_note_ids": {"type": "array", "items": UUID},
        "ranking": {"type": "string", "enum": ["recency", "query"]},
        "should_stop": BOOLEAN,
        "stop_reasons": {
            "type": "array",
            "items": closed_object({"code": STRING, "message": STRING}),
        },
        "relationship": closed_object(
            {
                "campaigns": {"type": "array", "items": CAMPAIGN},
                "messages_sent": INTEGER,
                "last_reply": {
                    "anyOf": [
                        {"type": "null"},
                        closed_object(
                            {"sentiment": STRING, "received_at": DATETIME, "campaign": CAMPAIGN}
                        ),
                    ]
                },
                "suppressed": BOOLEAN,
                "suppression_matches": {
                    "type": "array",
                    "items": closed_object({"kind": STRING, "value": STRING}),
                },
            }
        ),
    }
)

OVERLAP = closed_object(
    {
        "near_duplicates": {
            "type": "array",
            "items": with_integrity(
                closed_object(
                    {
                        "id": UUID,
                        "title": STRING,
                        "body": STRING,
                        "distance": {"type": "number"},
                        "source_urls": _URLS,
                        "observed_at": DATE,
                    }
                )
            ),
        },
        "overlaps": {
            "type": "array",
            "items": with_integrity(
                closed_object(
                    {
                        "id": UUID,
                        "title": STRING,
                        "distance": {"type": "number"},
                        "excerpt": STRING,
                    }
                )
            ),
        },
        "shared_sources": {
            "type": "array",
            "items": closed_object({"note_id": UUID, "urls": _URLS}),
        },
        "compared": INTEGER,
        "skipped": INTEGER,
        "semantic_check": {"type": "string", "enum": ["complete", "partial"]},
        "semantic_check_note": STRING,
    }
)

SAVE = closed_object(
    {
        "note": NOTE,
        "note_count": INTEGER,
        "compaction_suggested": BOOLEAN,
        "embedding_status": {"type": "string", "enum": ["ready", "pending", "failed"]},
        "overlap": OVERLAP,
    }
)

COMPACT = closed_object(
    {
        "compaction_id": UUID,
        "note": NOTE,
        "superseded_note_ids": {"type": "array", "items": UUID},
        "note_count": INTEGER,
        "compaction_suggested": BOOLEAN,
    }
)

RESTORE = closed_object(
    {
        "compaction_id": UUID,
        "domain": STRING,
        "restored_note_ids": {"type": "array", "items": UUID},
        "removed_note_id": UUID,
        "note_count": INTEGER,
    }
)

DELETE = closed_object(
    {
        "deleted_note_id": UUID,
        "domain": STRING,
        "also_deleted_note_ids": {"type": "array", "items": UUID},
        "note_count": INTEGER,
    }
)

RECALL_INPUT = closed_object(
    {
        "domain": DOMAIN_INPUT,
        "query": {
            "type": "string",
            "maxLength": 1000,
            "description": "What you are looking for. Used to rank notes only when the dossier "
            "is larger than one answer can carry.",
        },
    },
    required=["domain"],
)

SAVE_INPUT = closed_object(
    {
        "domain": DOMAIN_INPUT,
        "body": {
            "type": "string",
            "description": f"One finding in markdown, at most {_BODY_KB} KB. Facts, not opinions.",
        },
        "title": {
            "type": "string",
            "description": "A one-line summary "
            f"(cut to {notes_settings.TITLE_MAX_CHARS} characters).",
        },
        "source_urls": {
            "type": "array",
            "items": STRING,
            "description": f"{notes_settings.SOURCE_URLS_MIN} to {notes_settings.SOURCE_URLS_MAX} "
            "http(s) URLs where the finding can be checked.",
        },
        "observed_at": {
            "type": "string",
            "description": "The date the finding was true (YYYY-MM-DD), e.g. the article's date.",
        },
    },
    required=["domain", "body", "source_urls", "observed_at"],
)

COMPACT_INPUT = closed_object(
    {
        "domain": DOMAIN_INPUT,
        "expected_note_count": {
            "type": "integer",
            "minimum": 0,
            "description": "note_count from the recall the merge was written from.",
        },
        "body": {
            "type": "string",
            "description": f"The merged dossier in markdown, at most {_BODY_KB} KB.",
        },
        "title": STRING,
        "note_ids": {
            "type": "array",
            "items": STRING,
            "description": "The notes to merge; all active notes when left out.",
        },
    },
    required=["domain", "expected_note_count", "body"],
)

LIST_INPUT = closed_object(
    {
        "domain": {**DOMAIN_INPUT, "description": "Only this company (email, URL or domain)."},
        "stale": {"type": "boolean", "description": "true: only stale notes; false: only fresh."},
        "page": {"type": "integer", "minimum": 1, "maximum": notes_settings.LIST_PAGE_MAX},
        "page_size": {
            "type": "integer",
            "minimum": 1,
            "maximum": notes_settings.LIST_PAGE_SIZE_MAX,
            "description": f"1-{notes_settings.LIST_PAGE_SIZE_MAX}, "
            f"default {notes_settings.LIST_PAGE_SIZE}.",
        },
    },
    required=[],
)

NOTES_PAGE = closed_object(
    {
        "count": INTEGER,
        "page": INTEGER,
        "pages": INTEGER,
        "page_size": INTEGER,
        "notes": {
            "type": "array",
            "items": {
                **NOTE,
                "properties": {**NOTE["properties"], "domain": STRING},
                "required": [*NOTE["required"], "domain"],
            },
        },
    }
)

NOTE_ID_INPUT = closed_object({"note_id": {"type": "string", "description": "The note's id."}})

UNFLAG = closed_object({"note": NOTE})

COMPACTION_ID_INPUT = closed_object(
    {"compaction_id": {"type": "string", "description": "The compaction's id."}}
)
