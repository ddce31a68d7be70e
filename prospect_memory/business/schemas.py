"""JSON Schemas of business memory's operations: MCP tool schemas and the REST docs.

Limits named in the descriptions come from ``business.conf``; the service checks every
rule again (sizes, merges, versions), so the schemas describe rather than decide alone.
"""

from __future__ import annotations

from prospect_memory.business.conf import business_settings as limits
from prospect_memory.business.models import KEY_CHARACTERS, KEY_HINT, Category, Layer
from prospect_memory.business.rules import READ_LAYERS, STORE_STRATEGIES
from prospect_memory.core.integrity import with_integrity

_STRING = {"type": "string"}
_NULLABLE_STRING = {"type": ["string", "null"]}
_DATETIME = {"type": "string", "format": "date-time"}
_NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}
_INTEGER = {"type": "integer"}


def _object(properties: dict, *, required: list[str] | None = None) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


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

SOURCE_INPUT = _object(
    {
        "pipeline_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "execution_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "step_id": {"type": "string", "maxLength": limits.SOURCE_ID_MAX_CHARS},
        "extracted_at": {"type": "string", "description": "When it was extracted (ISO 8601)."},
    },
    required=[],
)

SOURCE = _object(
    {
        "pipeline_id": _NULLABLE_STRING,
        "execution_id": _NULLABLE_STRING,
        "step_id": _NULLABLE_STRING,
        "extracted_at": _NULLABLE_DATETIME,
        "written_by": _NULLABLE_STRING,
        "oauth_client": _NULLABLE_STRING,
    }
)

_ENTRY_PROPERTIES = {
    "key": _STRING,
    "layer": {"type": "string", "enum": [Layer.ACCOUNT, Layer.MEMBER]},
    "value": {"description": "Any JSON value but null."},
    "category": CATEGORY,
    "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    "source": SOURCE,
    "version": _INTEGER,
    "created_at": _DATETIME,
    "updated_at": _DATETIME,
    "expires_at": _NULLABLE_DATETIME,
    "access_count": _INTEGER,
    "last_accessed_at": _NULLABLE_DATETIME,
    "alias_of": _STRING,
}
ENTRY = with_integrity(
    _object(_ENTRY_PROPERTIES, required=[k for k in _ENTRY_PROPERTIES if k != "alias_of"])
)

_VERSION_PROPERTIES = {
    "version": _INTEGER,
    "value": {"description": "The value at that version."},
    "category": CATEGORY,
    "confidence": _INTEGER,
    "source": SOURCE,
    "strategy": _STRING,
    "written_at": _DATETIME,
}
VERSION = with_integrity(_object(_VERSION_PROPERTIES))

STORE_INPUT = _object(
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

STORE = _object(
    {
        "entry": ENTRY,
        "created": {"type": "boolean"},
        "previous_version": _INTEGER,
        "evicted": {
            "type": "array",
            "items": _object({"key": _STRING, "confidence": _INTEGER}),
        },
    }
)

RECALL_INPUT = _object(
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

RECALL = _object(
    {
        "found": {"type": "boolean"},
        "entry": ENTRY,
        "history": {"type": "array", "items": VERSION},
    },
    required=["found"],
)

LIST_INPUT = _object(
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

PAGE = _object({"entries": {"type": "array", "items": ENTRY}, "next_cursor": _NULLABLE_STRING})

SEARCH_INPUT = _object(
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

SEARCH = _object(
    {
        "results": {
            "type": "array",
            "items": {
                **ENTRY,
                "properties": {**ENTRY["properties"], "distance": {"type": ["number", "null"]}},
                "required": [*ENTRY["required"], "distance"],
            },
        },
        "not_compared": _INTEGER,
        "note": _STRING,
    },
    required=["results", "not_compared"],
)

KEY_IN_LAYER_INPUT = _object(
    {
        "key": KEY,
        "layer": WRITE_LAYER,
        "expected_version": STORE_INPUT["properties"]["expected_version"],
    },
    required=["key"],
)

HISTORY_INPUT = _object({"key": KEY, "layer": WRITE_LAYER}, required=["key"])

UNFLAG_INPUT = _object(
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

HISTORY = _object({"entry": ENTRY, "history": {"type": "array", "items": VERSION}})

DELETE = _object(
    {"deleted": {"type": "boolean"}, "key": _STRING, "layer": _STRING, "version": _INTEGER}
)

RESTORE_VERSION_INPUT = _object(
    {
        "key": KEY,
        "version": {"type": "integer", "minimum": 1, "description": "The version to restore."},
        "layer": WRITE_LAYER,
        "expected_version": STORE_INPUT["properties"]["expected_version"],
    },
    required=["key", "version"],
)

EVICTIONS_INPUT = _object({"layer": WRITE_LAYER}, required=[])

EVICTIONS = _object(
    {
        "evictions": {
            "type": "array",
            "items": {
                **ENTRY,
                "properties": {
                    **ENTRY["properties"],
                    "id": {"type": "string", "format": "uuid"},
                    "status": {"type": "string", "enum": ["evicted", "expired"]},
                    "left_at": _NULLABLE_DATETIME,
                },
                "required": [*ENTRY["required"], "id", "status", "left_at"],
            },
        }
    }
)

EVICTION_ID_INPUT = _object({"entry_id": {"type": "string", "description": "The entry's id."}})
