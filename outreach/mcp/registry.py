"""The tool registry: what an agent can call, with schemas and the scope each needs.

Apps register their tools at ``ready()``; outreach's MCP endpoint serves whatever is
registered and knows nothing about the apps (prospect memory registers its tools here,
never the other way round).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from outreach.access import MEMBER, MODULE_ADMIN, Actor

READ = "outreach_read"
WRITE = "outreach_write"


@dataclass(frozen=True)
class ToolCall:
    """What a handler gets: the acting member's account, and the validated arguments."""

    actor: Actor
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    #: Schema of ``data``; the result's structured content is ``{"data": ...}``.
    data_schema: dict[str, Any]
    scope: str
    handler: Callable[[ToolCall], dict[str, Any]]
    #: Who may call it: any member of an account with Outreach, or a module admin.
    role: str = MEMBER
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    _validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scope not in (READ, WRITE):
            raise ValueError(f"tool {self.name}: unknown scope {self.scope!r}")
        if self.role not in (MEMBER, MODULE_ADMIN):
            raise ValueError(f"tool {self.name}: unknown role {self.role!r}")
        Draft202012Validator.check_schema(self.input_schema)
        object.__setattr__(self, "_validator", Draft202012Validator(self.input_schema))

    @property
    def output_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"data": self.data_schema},
            "required": ["data"],
        }

    def argument_errors(self, arguments: Any) -> dict[str, list[str]]:
        """Schema problems of ``arguments``, by field (``"(arguments)"`` for the whole)."""
        problems: dict[str, list[str]] = {}
        for error in sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in error.path) or "(arguments)"
            if error.validator == "additionalProperties":
                unknown = sorted(set(arguments) - set(self.input_schema.get("properties", {})))
                message = f"unknown argument(s) {', '.join(unknown)}; allowed: " + ", ".join(
                    sorted(self.input_schema.get("properties", {}))
                )
            elif error.validator == "required":
                message = error.message.replace("'", "", 2)
            else:
                message = error.message if len(error.message) < 300 else error.message[:300] + "…"
            problems.setdefault(where, []).append(message)
        return problems

    def listing(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                "openWorldHint": False,
            },
        }


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools and self._tools[tool.name] != tool:
            raise ValueError(f"an MCP tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def all(self) -> list[Tool]:
        return [self._tools[name] for name in sorted(self._tools)]


registry = ToolRegistry()
