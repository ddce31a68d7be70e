"""Knowledge search served as an MCP tool, registered at ``ready()``."""

from outreach.mcp.registry import registry
from prospect_memory.knowledge.operations import MCP_OPERATIONS


def register() -> None:
    registry.register(*MCP_OPERATIONS)
