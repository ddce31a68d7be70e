"""The official MCP Python client against the live server (``live_kit``), in each protocol
era Kit serves: helpers for the tests of every memory's tools."""

import asyncio

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import READ_WRITE, token

#: The modes of the official client: the `initialize` handshake (legacy), the
#: `server/discover` probe with its fallback (auto), and the stateless 2026-07-28 protocol.
MODES = ["legacy", "auto", "2026-07-28"]

#: The tools an agent is offered (SPEC 5, 12, 13).
TOOLS = {
    "outreach_recall_prospect_context",
    "outreach_save_prospect_research",
    "outreach_compact_prospect_context",
    "outreach_get_writing_guide",
    "outreach_store_business_memory",
    "outreach_recall_business_memory",
    "outreach_list_business_memory",
    "outreach_search_business_memory",
    "outreach_search_knowledge",
}


def token_for(live_kit, member, scopes=READ_WRITE):
    """A token for the live server, as Claude Code would hold it."""
    return token(member, scopes, client_name="Claude Code", base_url=live_kit.url)


def run(live_kit, token, mode, steps):
    """Open an MCP client session and run ``steps(client)`` in it."""

    async def main():
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx2.Timeout(30.0, read=60.0),
        )
        async with http:
            transport = streamable_http_client(f"{live_kit.url}/mcp", http_client=http)
            async with Client(transport, mode=mode) as client:
                return await steps(client)

    return asyncio.run(main())


def data(result):
    assert not result.is_error, result.content[0].text
    return result.structured_content["data"]


def error(result):
    assert result.is_error
    return result.structured_content["error"]
