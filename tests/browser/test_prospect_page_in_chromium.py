"""A real browser (Debian's headless Chromium, driven by Selenium) against a live Kit.

Sign in, open the demo prospect page, see exactly three notes, follow View all, delete one
with its confirmation, and see it gone from the list and from an MCP recall. Screenshots go
to ``artifacts/`` (or ``KIT_ARTIFACTS_DIR``).
"""

import asyncio

import httpx2
import pytest
from django.contrib.auth.hashers import make_password
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from outreach.models import Member, Prospect
from tests.browser.chrome import PASSWORD, click_and_load, csp_violations, shot
from tests.helpers import token as issue_token

pytestmark = pytest.mark.django_db(transaction=True)


def mcp_recall_ids(base_url: str, token: str, domain: str) -> list[str]:
    async def main():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with http:
            transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
            async with Client(transport, mode="legacy") as client:
                result = await client.call_tool(
                    "outreach_recall_prospect_context", {"domain": domain}
                )
                return [n["id"] for n in result.structured_content["data"]["notes"]]

    return asyncio.run(main())


def test_member_reads_and_deletes_research_in_a_browser(live_kit, chromium):
    from selenium.webdriver.common.by import By

    call_command("seed_demo", "--allow-insecure-demo", verbosity=0)
    call_command("seed_demo_research", verbosity=0)
    owner = Member.objects.select_related("user").get(
        account__slug="demo", user__username="demo@kit.test"
    )
    owner.user.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    owner.user.save()
    prospect = Prospect.objects.get(account__slug="demo", email="founder@acme.dev")
    driver, base = chromium, live_kit.url

    driver.get(f"{base}/accounts/login/")
    driver.find_element(By.NAME, "username").send_keys("demo@kit.test")
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    click_and_load(driver, driver.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert "Prospects" in driver.find_element(By.TAG_NAME, "h1").text
    shot(driver, "home")

    click_and_load(driver, driver.find_element(By.LINK_TEXT, "founder@acme.dev"))
    assert driver.current_url == f"{base}/prospects/{prospect.pk}/"
    notes = driver.find_elements(By.CSS_SELECTOR, "article.note")
    assert len(notes) == 3
    assert "Series B" in notes[0].text  # newest observed first
    shot(driver, "prospect")

    click_and_load(driver, driver.find_element(By.LINK_TEXT, "View all"))
    listed = driver.find_elements(By.CSS_SELECTOR, "article.note")
    assert len(listed) == 4
    victim = listed[-1]
    victim_id = victim.get_attribute("data-note-id")
    victim_title = victim.find_element(By.TAG_NAME, "h3").text
    assert "Stale" in victim.text
    click_and_load(driver, victim.find_element(By.LINK_TEXT, "Delete"))
    assert "Delete this note?" in driver.find_element(By.TAG_NAME, "h1").text
    shot(driver, "delete-confirmation")
    click_and_load(driver, driver.find_element(By.ID, "confirm-delete"))

    remaining = driver.find_elements(By.CSS_SELECTOR, "article.note")
    assert len(remaining) == 3
    assert victim_id not in [n.get_attribute("data-note-id") for n in remaining]
    assert f"Deleted “{victim_title}”." in driver.find_element(By.CSS_SELECTOR, ".messages").text
    shot(driver, "after-delete")

    driver.get(f"{base}/health/")
    assert "Memory health" in driver.find_element(By.TAG_NAME, "h1").text
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart rect")
    shot(driver, "health")

    # The account switcher submits itself from Kit's script file (no inline handler).
    from selenium.webdriver.support.ui import Select

    switcher = Select(driver.find_element(By.ID, "account-switch"))
    old = driver.find_element(By.TAG_NAME, "html")
    switcher.select_by_visible_text("Northwind Traders")
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(expected_conditions.staleness_of(old))
    assert (
        "Now working in Northwind Traders" in driver.find_element(By.CSS_SELECTOR, ".messages").text
    )
    old = driver.find_element(By.TAG_NAME, "html")
    Select(driver.find_element(By.ID, "account-switch")).select_by_visible_text("Demo Outreach Co")
    WebDriverWait(driver, 20).until(expected_conditions.staleness_of(old))

    # The API docs render under the same policy (scripts and styles from Kit only).
    driver.get(f"{base}/api/docs/")
    WebDriverWait(driver, 20).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title")
    )
    shot(driver, "api-docs")
    # Django admin's own scripts and styles, under the same policy.
    driver.get(f"{base}/admin/login/")
    assert driver.find_elements(By.CSS_SELECTOR, "#login-form")
    assert csp_violations(driver) == []

    token = issue_token(owner, ["outreach_read"], client_name="Browser test", base_url=base)
    ids = mcp_recall_ids(base, token, "founder@acme.dev")
    assert len(ids) == 3
    assert victim_id not in ids
