"""Knowledge search over REST: the same operation and answer as the MCP tool."""

from __future__ import annotations

from outreach.api import OperationApi, serve
from prospect_memory.knowledge import operations


class KnowledgeSearchApi(OperationApi):
    get = serve(operations.SEARCH, operation_id="knowledge_search")
