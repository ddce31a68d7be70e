"""docs/connect.md lists exactly the tools the server offers, as the registry describes
them: a new tool cannot be left out. When a tool changes on purpose, rewrite the table with
``KIT_UPDATE_SNAPSHOTS=1 scripts/test tests/outreach/test_connect_doc.py``."""

import os
import re
from pathlib import Path

from outreach.mcp.registry import markdown_table, registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "connect.md"
BLOCK = re.compile(r"(<!-- tools: from the registry -->\n)(.*?)(\n<!-- /tools -->)", re.S)


def test_connect_lists_every_tool_the_server_offers():
    text = DOC.read_text()
    found = BLOCK.search(text)
    assert found, "docs/connect.md has lost its tools table markers"
    table = markdown_table(registry.all())
    if os.environ.get("KIT_UPDATE_SNAPSHOTS"):
        DOC.write_text(BLOCK.sub(lambda m: m.group(1) + table + m.group(3), text))
        found = BLOCK.search(DOC.read_text())
    assert found.group(2) == table, "docs/connect.md's tools differ from the registry's"
    assert len(re.findall(r"^\| `outreach_", found.group(2), re.M)) == len(registry.all())
