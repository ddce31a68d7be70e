"""The four business memory tools through the official MCP client against a live Kit, in
all three protocol modes: an agent reads the baseline, writes a learned pattern with its
source, merges with expected_version, and never sees another member's own context."""

import pytest

from tests import factories
from tests.mcp_client import MODES, data, error, run, token_for

pytestmark = pytest.mark.django_db(transaction=True)

RUBRIC = {"criteria": ["fit", "timing", "budget", "champion"], "weights": [0.4, 0.2, 0.2, 0.2]}


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_run_reads_and_writes_business_memory(live_kit, account, mode):
    admin = factories.member(account, "agent@acme-sales.example", admin=True)
    seller = factories.member(account, "seller@acme-sales.example")
    admin_token, seller_token = token_for(live_kit, admin), token_for(live_kit, seller)

    async def as_admin(client):
        stored = data(
            await client.call_tool(
                "outreach_store_business_memory",
                {
                    "key": "deal_score_rubric",
                    "value": RUBRIC,
                    "category": "fact",
                    "confidence": 95,
                },
            )
        )
        assert (stored["created"], stored["previous_version"]) == (True, 0)
        assert stored["entry"]["source"]["oauth_client"] == "Claude Code"
        learned = data(
            await client.call_tool(
                "outreach_store_business_memory",
                {
                    "key": "pattern:ae_hiring_replies",
                    "value": {"observation": "Companies hiring AEs reply 2x more", "n": 41},
                    "category": "insight",
                    "confidence": 72,
                    "source": {
                        "pipeline_id": "weekly_outreach",
                        "execution_id": f"run_{mode}",
                        "step_id": "analyse_replies",
                        "extracted_at": "2026-11-28T09:00:00Z",
                    },
                },
            )
        )
        assert learned["entry"]["source"]["pipeline_id"] == "weekly_outreach"
        merged = await client.call_tool(
            "outreach_store_business_memory",
            {"key": "deal_score_rubric", "value": {"criteria": []}, "expected_version": 0},
        )
        assert error(merged)["code"] == "version_mismatch"
        assert error(merged)["details"]["current_version"] == 1
        bad = await client.call_tool(
            "outreach_store_business_memory", {"key": "k", "value": 1, "confidence": 101}
        )
        assert error(bad)["code"] == "validation_error"
        return stored

    run(live_kit, admin_token, mode, as_admin)

    async def as_seller(client):
        own = data(
            await client.call_tool(
                "outreach_store_business_memory",
                {"key": "signature", "value": "Best, Sam", "layer": "member"},
            )
        )
        assert own["entry"]["layer"] == "member"
        refused = await client.call_tool(
            "outreach_store_business_memory", {"key": "deal_score_rubric", "value": {}}
        )
        assert error(refused)["code"] == "not_module_admin"
        recall = data(
            await client.call_tool(
                "outreach_recall_business_memory",
                {"key": "deal_score_rubric", "include_history": True},
            )
        )
        assert recall["found"] is True
        assert (recall["entry"]["value"], recall["entry"]["layer"]) == (RUBRIC, "account")
        assert recall["history"] == []
        missing = data(await client.call_tool("outreach_recall_business_memory", {"key": "nope"}))
        assert missing == {"found": False}
        listing = data(await client.call_tool("outreach_list_business_memory", {"limit": 2}))
        assert [e["key"] for e in listing["entries"]] == [
            "deal_score_rubric",
            "pattern:ae_hiring_replies",
        ]
        assert listing["next_cursor"]
        rest = data(
            await client.call_tool(
                "outreach_list_business_memory", {"limit": 2, "cursor": listing["next_cursor"]}
            )
        )
        assert [e["key"] for e in rest["entries"]] == ["signature"]
        assert rest["next_cursor"] is None
        found = data(
            await client.call_tool(
                "outreach_search_business_memory", {"query": "deal score rubric weights"}
            )
        )
        assert found["results"][0]["key"] == "deal_score_rubric"
        assert found["not_compared"] == 0

    run(live_kit, seller_token, mode, as_seller)

    async def admin_cannot_see_the_sellers_context(client):
        recall = data(
            await client.call_tool(
                "outreach_recall_business_memory", {"key": "signature", "layer": "merged"}
            )
        )
        assert recall == {"found": False}
        listing = data(await client.call_tool("outreach_list_business_memory", {}))
        assert "signature" not in [e["key"] for e in listing["entries"]]
        found = data(
            await client.call_tool("outreach_search_business_memory", {"query": "Best, Sam"})
        )
        assert "signature" not in [r["key"] for r in found["results"]]

    run(live_kit, admin_token, mode, admin_cannot_see_the_sellers_context)
