"""Building blocks of the JSON Schemas operations declare. One schema per operation serves
MCP (``inputSchema``, ``outputSchema``) and the REST docs (OpenAPI), so these few shapes are
written once here, beside the operation registry, for every app that declares operations."""

from __future__ import annotations

STRING = {"type": "string"}
NULLABLE_STRING = {"type": ["string", "null"]}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
DATE = {"type": "string", "format": "date"}
DATETIME = {"type": "string", "format": "date-time"}
NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}
UUID = {"type": "string", "format": "uuid"}


def closed_object(properties: dict, *, required: list[str] | None = None) -> dict:
    """An object of exactly these properties, all required unless ``required`` says which."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }
