"""Building blocks of the JSON Schemas operations declare. One schema per operation serves
MCP (``inputSchema``, ``outputSchema``) and the REST docs (OpenAPI), so these few shapes are
written once here, beside the operation registry, for every app that declares operations."""

from __future__ import annotations

from typing import Any

#: A JSON Schema, as a dict.
Schema = dict[str, Any]

STRING = {"type": "string"}
NULLABLE_STRING = {"type": ["string", "null"]}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
DATE = {"type": "string", "format": "date"}
DATETIME = {"type": "string", "format": "date-time"}
NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}


def closed_object(properties: Schema, *, required: list[str] | None = None) -> Schema:
    """An object of exactly these properties, all required unless ``required`` says which."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


#: What a refused call carries, over REST and MCP alike (SPEC 6, 7 and 18): a stable
#: ``code`` to branch on, a ``message`` that says what to do next, and ``details``.
ERROR_OBJECT = {
    "type": "object",
    "properties": {
        "code": STRING,
        "message": STRING,
        "details": {"type": "object"},
    },
    "required": ["code", "message", "details"],
}
ERROR_ENVELOPE = {
    "type": "object",
    "properties": {"error": ERROR_OBJECT},
    "required": ["error"],
}


def result_schema(data_schema: Schema) -> Schema:
    """An answer is ``{"data": ...}`` or ``{"error": ...}``, never both.

    MCP clients validate a tool's structured content against its ``outputSchema``; the
    TypeScript SDK does so for refused calls too, so the schema admits both forms."""
    return {
        "type": "object",
        "properties": {"data": data_schema, "error": ERROR_OBJECT},
        "oneOf": [{"required": ["data"]}, {"required": ["error"]}],
        "additionalProperties": False,
    }
