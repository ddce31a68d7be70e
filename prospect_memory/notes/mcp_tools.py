"""Prospect memory's operations served as MCP tools, registered at ``ready()``."""

from outreach.mcp.registry import registry
from prospect_memory.notes.operations import MCP_OPERATIONS


def register() -> None:
    registry.register(*MCP_OPERATIONS)
