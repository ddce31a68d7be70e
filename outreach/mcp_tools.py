"""Outreach's own MCP tool: the writing guide."""

from outreach.guides import LOCALES, writing_guide
from outreach.mcp.registry import READ, Tool, ToolCall, registry

GUIDE_DATA = {
    "type": "object",
    "properties": {
        "locale": {"type": "string"},
        "language": {"type": "string"},
        "version": {"type": "string"},
        "title": {"type": "string"},
        "guide": {"type": "string"},
    },
    "required": ["locale", "language", "version", "title", "guide"],
    "additionalProperties": False,
}


def _guide(call: ToolCall) -> dict:
    from outreach.access import require_outreach

    require_outreach(call.actor)
    return writing_guide(call.arguments["locale"]).as_data()


GUIDE = Tool(
    name="outreach_get_writing_guide",
    title="Get Kit's writing guide for a language",
    description=(
        "Read this before drafting any outreach, in the campaign's locale (en, de, fr, es, "
        "pl). It lists the patterns that make a message read as machine-written, each with "
        "a bad and a better example, plus length and subject-line rules. Apply it to every "
        "draft; the version field changes when the guide does."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "locale": {
                "type": "string",
                "enum": list(LOCALES),
                "description": "The campaign's language.",
            }
        },
        "required": ["locale"],
        "additionalProperties": False,
    },
    data_schema=GUIDE_DATA,
    scope=READ,
    handler=_guide,
    read_only=True,
    idempotent=True,
)


def register() -> None:
    registry.register(GUIDE)
