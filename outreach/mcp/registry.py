"""The tool registry: which operations an agent can call over MCP, and how they are listed.

Apps register their operations at ``ready()``; outreach's MCP endpoint serves whatever is
registered and knows nothing about the apps (prospect memory registers its operations here,
never the other way round).
"""

from __future__ import annotations

from typing import Any

from outreach.access import MEMBER, MODULE_ADMIN
from outreach.operations import Operation
from outreach.schema import result_schema


def output_schema(operation: Operation) -> dict[str, Any]:
    """A tool result's structured content: ``{"data": ...}``, or ``{"error": ...}`` when
    ``isError`` is true."""
    return result_schema(operation.data_schema)


def listing(operation: Operation) -> dict[str, Any]:
    """The operation as ``tools/list`` shows it."""
    return {
        "name": operation.name,
        "title": operation.title,
        "description": operation.description,
        "inputSchema": operation.input_schema,
        "outputSchema": output_schema(operation),
        "annotations": {
            "title": operation.title,
            "readOnlyHint": operation.read_only,
            "destructiveHint": operation.destructive,
            "idempotentHint": operation.idempotent,
            "openWorldHint": False,
        },
    }


def who_may_call(operation: Operation) -> str:
    """Who may call ``operation``, in words (a role decided by the arguments says so in
    its docstring's first sentence)."""
    if callable(operation.role):
        return " ".join((operation.role.__doc__ or "").split()).split(". ")[0].rstrip(".")
    return {MEMBER: "any member", MODULE_ADMIN: "Outreach module admins"}[operation.role]


def markdown_table(operations: list[Operation]) -> str:
    """The tools as docs/connect.md lists them (checked against the registry by a test)."""
    rows = [
        f"| `{operation.name}` | {operation.title} | `{operation.scope}` | "
        f"{who_may_call(operation)} |"
        for operation in operations
    ]
    return "\n".join(["| tool | what it does | scope | who |", "|---|---|---|---|", *rows])


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Operation] = {}

    def register(self, *operations: Operation) -> None:
        for operation in operations:
            known = self._tools.get(operation.name)
            if known is not None and known != operation:
                raise ValueError(f"an MCP tool named {operation.name!r} is already registered")
            self._tools[operation.name] = operation

    def get(self, name: str) -> Operation | None:
        return self._tools.get(name)

    def all(self) -> list[Operation]:
        return [self._tools[name] for name in sorted(self._tools)]


registry = ToolRegistry()
