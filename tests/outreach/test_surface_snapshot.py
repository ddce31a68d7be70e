"""What clients see of the agent surface, pinned: the MCP tools/list answer and the OpenAPI
document. A change shows up here as a diff to look at; when it is intended, rewrite the
snapshot with ``KIT_UPDATE_SNAPSHOTS=1 scripts/test tests/outreach/test_surface_snapshot.py``."""

import json
import os
from pathlib import Path

from drf_spectacular.generators import SchemaGenerator

from outreach.mcp.protocol import Caller, handle

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "surface.json"


def surface() -> dict:
    tools = handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={},
        caller=Caller(actor=None, scopes=frozenset()),
    ).body["result"]["tools"]
    openapi = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps({"tools": tools, "openapi": openapi}, sort_keys=True))


def test_the_agent_surface_matches_its_snapshot():
    current = surface()
    if os.environ.get("KIT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(SNAPSHOT.read_text())
    assert current["tools"] == pinned["tools"], "MCP tools/list changed; see the module docstring"
    assert current["openapi"] == pinned["openapi"], "OpenAPI changed; see the module docstring"
