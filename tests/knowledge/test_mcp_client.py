"""outreach_search_knowledge through the official MCP client against a live Kit, in all
three protocol modes: an agent stores a confident rule and notes on two companies, then
asks one question and gets both kinds back, with the suppressed company flagged."""

import pytest

from outreach.services import suppression_add
from tests import factories
from tests.mcp_client import MODES, data, error, run, token_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_asks_one_question_across_everything(live_kit, account, mode):
    admin = factories.member(account, "agent@acme-sales.example", admin=True)
    suppression_add(account=account, kind="domain", value="initech.com")
    token = token_for(live_kit, admin)

    async def steps(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["outreach_search_knowledge"].annotations.read_only_hint is True
        for domain, body in [
            ("acme.dev", "Acme is hiring account executives for its enterprise team."),
            ("initech.com", "Initech is hiring account executives in Austin."),
        ]:
            data(
                await client.call_tool(
                    "outreach_save_prospect_research",
                    {
                        "domain": domain,
                        "title": "Hiring",
                        "body": body,
                        "source_urls": [f"https://{domain}/careers"],
                        "observed_at": "2026-11-20",
                    },
                )
            )
        data(
            await client.call_tool(
                "outreach_store_business_memory",
                {
                    "key": "rule:ae_hiring",
                    "value": {"rule": "Companies hiring account executives reply more"},
                    "category": "insight",
                    "confidence": 85,
                    "source": {"pipeline_id": "weekly_outreach"},
                },
            )
        )
        found = data(
            await client.call_tool(
                "outreach_search_knowledge",
                {"query": "which companies are hiring account executives?", "limit": 5},
            )
        )
        kinds = {hit["kind"] for hit in found["hits"]}
        assert kinds == {"business_memory", "prospect_notes"}
        about = {h["about"]["domain"]: h["about"] for h in found["hits"] if h["about"]}
        assert about["initech.com"]["should_stop"] is True
        assert about["acme.dev"]["should_stop"] is False
        rule = next(h for h in found["hits"] if h["kind"] == "business_memory")
        assert rule["derived_from"]["pipeline_id"] == "weekly_outreach"
        bad = await client.call_tool("outreach_search_knowledge", {"query": "x", "limit": 50})
        assert error(bad)["code"] == "validation_error"

    run(live_kit, token, mode, steps)
