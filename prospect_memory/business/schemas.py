"""JSON Schemas of business memory's operations: MCP tool schemas and the REST docs.

Limits named in the descriptions come from ``business.conf``; the service checks every
rule again (sizes, merges, versions), so the schemas describe rather than decide alone.
"""

from __future__ import annotations

from outreach.schema import (
    BOOLEAN,
    DATETIME,
    INTEGER,
    NULLABLE_DATETIME,
    NULLABLE_STRING,
    STRING,
    UUID,
    closed_object,
)
from prospect_memory.business.conf import business_settings as limits
from prospect_memory.business.models import KEY_CHARACTERS, KEY_HINT, Category, Layer
from prospect_memory.business.rules import READ_LAYERS, STORE_STRATEGIES
from prospect_memory.core.integrity import with_integrity

KEY = {
    "type": "string",
    "minLength": 1,
    "maxLength": limits.KEY_MAX_CHARS,
    # Input may be upper case: keys are lower-cased before they are checked and stored.
    "pattern": f"^[A-Za-z0-9][A-Z{KEY_CHARACTERS}]*$",
    "description": f"1 to {limits.KEY_MAX_CHARS} characters of {KEY_HINT}; upper case is "
    "lower-cased. E.g. icp_definition or voice:banned_phrases.",
}
WRITE_LAYER = {
    "type": "string",
    "enum": [Layer.ACCOUNT, Layer.MEMBER],
    "description": "account (shared with everyone in the account; needs an Outreach module "
    "admin) or member (your own context, seen by you alone). Default account.",
}
READ_LAYER = {
    "type": "string",
    "enum": list(READ_LAYERS),
    "description": "merged (default: your own entry wins over the account's for the same "
    "key), account or member.",
}
CATEGORY = {"type": "string", "enum": list(Category.values)}

SOURCE_INPUT = closed_object(
    {
        "pipeline_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "execution_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "step_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "extracted_at": {"type": "string", "description": "When it was extracted (ISO 8601)."},
    },
    required=[],
)

SOURCE = closed_object(
    {
        "pipeline_id": NULLABLE_STRING,
        "execution_id": NULLABLE_STRING,
        "step_id": NULLABLE_STRING,
        "extracted_at": NULLABLE_DATETIME,
        "written_by": NULLABLE_STRING,
        "oauth_client": NULLABLE_STRING,
    }
)

_ENTRY_PROPERTIES = {
    "key": STRING,
    "layer": {"type": "string", "enum": [Layer.ACCOUNT, Layer.MEMBER]},
    "value": {"description": "Any JSON value but null."},
    "category": CATEGORY,
    "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    "source": SOURCE,
    "version": INTEGER,
    "created_at": DATETIME,
    "updated_at": DATETIME,
    "expires_at": NULLABLE_DATETIME,
    "access_count": INTEGER,
    "last_accessed_at": NULLABLE_DATETIME,
    "alias_of": STRING,
}
ENTRY = with_integrity(
    closed_object(_ENTRY_PROPERTIES, required=[k for k in _ENTRY_PROPERTIES if k != "alias_of"])
)

_VERSION_PROPERTIES = {
    "version": INTEGER,
    "value": {"description": "The value at that version."},
    "category": CATEGORY,
    "confidence": INTEGER,
    "source": SOURCE,
    "strategy": STRING,
    "written_at": DATETIME,
}
VERSION = with_integrity(closed_object(_VERSION_PROPERTIES))

STORE_INPUT = closed_object(
    {
        "key": KEY,
        "value": {
            "not": {"type": "null"},
            "description": f"Any JSON value but null, at most {limits.VALUE_MAX_BYTES:,} bytes "
            "as compact JSON.",
        },
        "layer": WRITE_LAYER,
        "category": {**CATEGORY, "description": "fact (default), insight, preference or outcome."},
        "confidence": {
            "type": "integer",
            "minimum": 0,
            "maximum": 100,
            "description": f"How sure you are, 0-100 (default {limits.CONFIDENCE_DEFAULT}).",
        },
        "source": {
            **SOURCE_INPUT,
            "description": "Where it came from: pipeline_id, execution_id, step_id, "
            "extracted_at. Kit adds who wrote it and through which client.",
        },
        "ttl_seconds": {
            "type": ["integer", "null"],
            "minimum": limits.TTL_MIN_SECONDS,
            "maximum": limits.TTL_MAX_SECONDS,
            "description": f"Expire after this many seconds ({limits.TTL_MIN_SECONDS} to "
            f"{limits.TTL_MAX_SECONDS:,}). On an update, leave it out to keep the current "
            "expiry; null removes it.",
        },
        "strategy": {
            "type": "string",
            "enum": list(STORE_STRATEGIES),
            "description": "When the key exists: overwrite (default), append (to an array), "
            "increment (a number), max or min.",
        },
        "expected_version": {
            "type": "integer",
            "minimum": 0,
            "description": "The version you read (0: must not exist yet). If it changed, "
            "nothing is stored and the answer is version_mismatch with the current version.",
        },
    },
    required=["key", "value"],
)

STORE = closed_object(
    {
        "entry": ENTRY,
        "created": BOOLEAN,
        "previous_version": INTEGER,
        "evicted": {
            "type": "array",
            "items": closed_object({"key": STRING, "confidence": INTEGER}),
        },
    }
)

RECALL_INPUT = closed_object(
    {
        "key": KEY,
        "layer": READ_LAYER,
        "include_history": {
            "type": "boolean",
            "description": f"Also return the kept versions ({limits.HISTORY_VERSIONS} newest).",
        },
    },
    required=["key"],
)

RECALL = closed_object(
    {
        "found": BOOLEAN,
        "entry": ENTRY,
        "history": {"type": "array", "items": VERSION},
    },
    required=["found"],
)

LIST_INPUT = closed_object(
    {
        "layer": READ_LAYER,
        "category": CATEGORY,
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": limits.LIST_LIMIT_MAX,
            "description": f"1-{limits.LIST_LIMIT_MAX}, default {limits.LIST_LIMIT_DEFAULT}.",
        },
        "cursor": {"type": "string", "description": "next_cursor of the previous page."},
    },
    required=[],
)

PAGE = closed_object({"entries": {"type": "array", "items": ENTRY}, "next_cursor": NULLABLE_STRING})

SEARCH_INPUT = closed_object(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": limits.SEARCH_QUERY_MAX_CHARS,
            "pattern": "^[^\\u0000]*$",
            "description": "What you want to know, in words.",
        },
        "layer": READ_LAYER,
        "category": CATEGORY,
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": limits.SEARCH_LIMIT_MAX,
            "description": f"1-{limits.SEARCH_LIMIT_MAX} (default {limits.SEARCH_LIMIT_MAX}).",
        },
    },
    required=["query"],
)

SEARCH = closed_object(
    {
        "results": {
            "type": "array",
            "items": {
                **ENTRY,
                "properties": {**ENTRY["properties"], "distance": {"type": ["number", "null"]}},
                "required": [*ENTRY["required"], "distance"],
            },
        },
        "not_compared": INTEGER,
        "note": STRING,
    },
    required=["results", "not_compared"],
)

KEY_IN_LAYER_INPUT = closed_object(
    {
        "key": KEY,
        "layer": WRITE_LAYER,
        "expected_version": STORE_INPUT["properties"]["expected_version"],
    },
    required=["key"],
)

HISTORY_INPUT = closed_object({"key": KEY, "layer": WRITE_LAYER}, required=["key"])

UNFLAG_INPUT = closed_object(
    {
        "key": KEY,
        "layer": WRITE_LAYER,
        "expected_version": {
            "type": "integer",
            "minimum": 1,
            "description": "The version you read: only that version's flags are cleared.",
        },
    },
    required=["key", "expected_version"],
)

HISTORY = closed_object({"entry": ENTRY, "history": {"type": "array", "items": VERSION}})

DELETE = closed_object({"deleted": BOOLEAN, "key": STRING, "layer": STRING, "version": INTEGER})

RESTORE_VERSION_INPUT = closed_object(
    {
        "key": KEY,
        "version": {"type": "integer", "minimum": 1, "description": "The version to restore."},
        "layer": WRITE_LAYER,
        "expected_version": STORE_INPUT["properties"]["expected_version"],
    },
    required=["key", "version"],
)

EVICTIONS_INPUT = closed_object({"layer": WRITE_LAYER}, required=[])

EVICTIONS = closed_object(
    {
        "evictions": {
            "type": "array",
            "items": {
                **ENTRY,
                "properties": {
                    **ENTRY["properties"],
                    "id": UUID,
                    "status": {"type": "string", "enum": ["evicted", "expired"]},
                    "left_at": NULLABLE_DATETIME,
                },
                "required": [*ENTRY["required"], "id", "status", "left_at"],
            },
        }
    }
)

EVICTION_ID_INPUT = closed_object(
    {"entry_id": {"type": "string", "description": "The entry's id."}}
)
