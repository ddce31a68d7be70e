"""JSON Schemas of knowledge search: the MCP tool's and the REST docs'. Limits named in
the descriptions come from ``knowledge.conf``; the selector checks every rule again."""

from __future__ import annotations

from outreach.schema import (
    BOOLEAN,
    DATE,
    DATETIME,
    NULLABLE_DATETIME,
    NULLABLE_STRING,
    STRING,
    closed_object,
)
from prospect_memory.core.integrity import with_integrity
from prospect_memory.knowledge.conf import knowledge_settings as limits
from prospect_memory.knowledge.selectors import KINDS

SEARCH_INPUT = closed_object(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": limits.QUERY_MAX_CHARS,
            "pattern": "^[^\\u0000]*$",
            "description": 'The question, in words: "which companies are hiring account '
            'executives?", "what is our rule for enterprise deals?"',
        },
        "kinds": {
            "type": "array",
            "items": {"type": "string", "enum": list(KINDS)},
            "minItems": 1,
            "uniqueItems": True,
            "description": "What to search: business_memory (the account's promoted entries) "
            "and/or prospect_notes (every company's notes). Default both.",
        },
        "domain": {
            "type": "string",
            "minLength": 1,
            "maxLength": 320,
            "description": "Only this company's notes (a domain or an email address); "
            "business memory is about the account, not one company, and is still searched "
            "unless kinds leaves it out.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": limits.LIMIT_MAX,
            "description": f"1-{limits.LIMIT_MAX} hits (default {limits.LIMIT_DEFAULT}).",
        },
    },
    required=["query"],
)

_SOURCE = {
    "type": "object",
    "description": "Where it came from: the note's source URLs, or the entry's pipeline, "
    "execution, step and extraction time; and who wrote it through which client.",
    "properties": {
        "source_urls": {"type": "array", "items": STRING},
        "pipeline_id": NULLABLE_STRING,
        "execution_id": NULLABLE_STRING,
        "step_id": NULLABLE_STRING,
        "extracted_at": NULLABLE_DATETIME,
        "written_by": NULLABLE_STRING,
        "oauth_client": NULLABLE_STRING,
    },
    "additionalProperties": False,
}

_ABOUT = {
    "type": ["object", "null"],
    "description": "The company a note is about, and whether it must not be contacted "
    "(null for business memory).",
    "properties": {
        "domain": STRING,
        "should_stop": BOOLEAN,
        "stop_reasons": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"code": STRING, "message": STRING},
                "required": ["code", "message"],
            },
        },
    },
    "required": ["domain", "should_stop", "stop_reasons"],
}

HIT = with_integrity(
    closed_object(
        {
            "kind": {"type": "string", "enum": list(KINDS)},
            "id": {"type": "string", "description": "A note's id (prospect_notes)."},
            "key": {"type": "string", "description": "An entry's key (business_memory)."},
            "category": {
                "type": "string",
                "description": "An entry's category (business_memory): how to weigh it.",
            },
            "confidence": {
                "type": "integer",
                "description": "An entry's confidence, 0-100 (business_memory).",
            },
            "layer": {
                "type": "string",
                "description": "An entry's layer (business_memory): always account, as only "
                "the account's shared entries are searched.",
            },
            "title": STRING,
            "excerpt": {
                "type": "string",
                "description": f"The first {limits.EXCERPT_CHARS} characters of the note's body or "
                "the entry's value.",
            },
            "distance": {"type": "number", "description": "Cosine distance to the query."},
            "observed_at": DATE,
            "updated_at": DATETIME,
            "stale": BOOLEAN,
            "derived_from": _SOURCE,
            "about": _ABOUT,
        },
        required=["kind", "title", "excerpt", "distance", "stale", "derived_from", "about"],
    )
)

SEARCH = closed_object(
    {
        "hits": {"type": "array", "items": HIT},
        "not_compared": {
            "type": "integer",
            "description": "Notes and entries not compared by meaning yet (no vector): an "
            "empty answer with not_compared above 0 is not proof that nothing is known.",
        },
        "truncated": BOOLEAN,
        "note": STRING,
    },
    required=["hits", "not_compared", "truncated"],
)
